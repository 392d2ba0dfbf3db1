"""Schemathesis over every operation of /openapi.json, 20,000 requests and more, all checks.

The server is the sandbox with its quota gate lifted (``create_app(metered=False)``, a switch
only Python code can pass), so the generated requests reach the handlers instead of measuring
429s; keys and plans are still checked. A counting middleware tallies every request the server
answered by status, so the figures are the wire's, not the fuzzer's: at least ``MIN_REQUESTS``
requests and not one 5xx, and schemathesis' checks (status codes, content types, response
schemas, valid data accepted, invalid data refused, ``Allow`` headers) find nothing.

The cross-parameter rules a schema cannot state are repaired by ``_schemathesis_hooks.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from starlette.types import ASGIApp, Message, Receive, Scope, Send

import quantscope
from quantscope.sandbox.app import create_app
from quantscope.sandbox.datadir import WorldInfo, copy_world
from quantscope.sandbox.serve import SandboxServer

pytestmark = [pytest.mark.slow, pytest.mark.reliability]

SCHEMATHESIS = Path(sys.executable).with_name("schemathesis")
CHECKS = (
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_schema_conformance",
    "positive_data_acceptance",
    "negative_data_rejection",
    "allow_header_conformance",
)
MIN_REQUESTS = 20_000
# Generated cases per operation: the volume runs (fuzzing phase, one per seed) with pages capped
# at PAGE_CAP rows (a page of 1,000 evaluations costs about a second), and the full run
# (coverage, fuzzing and stateful phases) over the whole ranges. Several short volume runs, not
# one long one: Hypothesis' cost per case grows with the cases of an operation in one run
# (docs/reliability.md: ~9 ms a case at 300 per operation, ~3x that at 1,500).
VOLUME_SEEDS = (7, 8, 9, 10, 11, 12)
VOLUME_EXAMPLES = 220
PAGE_CAP = 10
FULL_EXAMPLES = 25
# schemathesis runs at once: each generates on one core (its workers are threads)
PARALLEL_RUNS = 2
RUN_TIMEOUT_S = 1500


class StatusCounter:
    """ASGI middleware: count the responses the server sent, by status."""

    def __init__(self, app: ASGIApp, counts: Counter[int]) -> None:
        self.app = app
        self.counts = counts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def counting_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                self.counts[message["status"]] += 1
            await send(message)

        await self.app(scope, receive, counting_send)


@pytest.fixture(scope="module")
def unmetered(
    sandbox_world: WorldInfo, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[SandboxServer, Counter[int]]]:
    info = copy_world(sandbox_world, tmp_path_factory.mktemp("fuzz"))
    counts: Counter[int] = Counter()
    app = create_app(info, metered=False)
    app.add_middleware(StatusCounter, counts=counts)
    with SandboxServer(info, app=app) as server:
        yield server, counts


def _schemathesis(
    server: SandboxServer, cwd: Path, seed: int, *extra: str, page_cap: int = 0
) -> subprocess.CompletedProcess[str]:
    """One schemathesis run against ``server``, to its end."""
    source = Path(quantscope.__file__).parents[1]  # src/, so the hooks import this checkout
    env = {
        **os.environ,
        "QS_FUZZ_PAGE_CAP": str(page_cap),
        "SCHEMATHESIS_HOOKS": "_schemathesis_hooks",
        "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), str(source)]),
    }
    cwd.mkdir(parents=True, exist_ok=True)
    return subprocess.run(
        [
            str(SCHEMATHESIS),
            "--config-file",
            str(Path(__file__).with_name("schemathesis.toml")),
            "run",
            f"{server.url}/openapi.json",
            "--header",
            f"X-API-Key: {server.keys['enterprise']}",
            "--checks",
            ",".join(CHECKS),
            "--seed",
            str(seed),
            "--workers",
            "2",
            "--continue-on-failure",
            "--suppress-health-check",
            "too_slow,filter_too_much",
            "--no-color",
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        cwd=cwd,
        env=env,
    )


@pytest.mark.timeout(1800)  # seven schemathesis runs; minutes on a shared 2-core machine
def test_twenty_thousand_fuzzed_requests_find_nothing(
    unmetered: tuple[SandboxServer, Counter[int]], tmp_path: Path
) -> None:
    server, counts = unmetered
    started = time.monotonic()
    volume = [
        (f"volume-{seed}", seed, ("--phases", "fuzzing", "--no-shrink"), PAGE_CAP)
        for seed in VOLUME_SEEDS
    ]
    plan = [("full", 7, (), 0), *volume]
    examples = {"full": FULL_EXAMPLES}

    def one(item: tuple[str, int, tuple[str, ...], int]) -> subprocess.CompletedProcess[str]:
        name, seed, extra, cap = item
        count = str(examples.get(name, VOLUME_EXAMPLES))
        return _schemathesis(
            server, tmp_path / name, seed, "--max-examples", count, *extra, page_cap=cap
        )

    with ThreadPoolExecutor(PARALLEL_RUNS) as pool:
        runs = list(pool.map(one, plan))
    elapsed = time.monotonic() - started
    total = sum(counts.values())
    server_errors = sum(n for status, n in counts.items() if status >= 500)
    figures = f"{total} requests in {elapsed:.0f} s, by status {dict(sorted(counts.items()))}"
    print(figures)
    for run in runs:
        assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
        assert "No issues found" in run.stdout or " passed" in run.stdout, run.stdout[-3000:]
    assert server_errors == 0, figures
    assert total >= MIN_REQUESTS, figures
