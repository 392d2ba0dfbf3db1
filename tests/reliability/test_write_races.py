"""Compare-and-swap under races (issue 20, item 5): writer processes of writer threads
(``_cas_writer.py``), each with a client and cache directory of its own, write one playbook
entry of the sandbox over HTTP, round after round, all from the value the round began with.

A round has one writer sent and every other refused as stale (nothing sent); the shared audit
log holds one entry a round, each replacing what the previous one read back, the last one what
the service holds at the end; no update is lost (two writers "sent" from one value). The
figures are printed (``-s``) for docs/reliability.md.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _helpers import QUANT, ApiSession, smart_money

import quantscope.loaders as L
from quantscope import audit
from quantscope._changes import same_value
from quantscope._http.client import Client
from quantscope.sandbox.serve import SandboxServer

pytestmark = [pytest.mark.slow, pytest.mark.reliability]

WRITER = Path(__file__).with_name("_cas_writer.py")
SOURCE = Path(__file__).parents[2] / "src"
CONFIG = "/api/degen/config"
ROUNDS = 15


def threshold(session: ApiSession, config_id: str) -> float:
    """The entry's threshold as the service holds it now (one plain GET, no quantscope)."""
    for element in session.ok(CONFIG, quantId=QUANT):
        for criteria in element["categories"].values():
            for criterion in criteria:
                for maps in criterion["configTypes"].values():
                    if maps["configIdsByInterval"]["noTime"] == config_id:
                        return float(maps["thresholds"]["noTime"])
    raise AssertionError(f"no entry {config_id}")


def writers(
    server: SandboxServer, config_id: str, processes: int, threads: int, tmp_path: Path
) -> list[subprocess.Popen[str]]:
    env = {
        **os.environ,
        "QUANTSCOPE_API_KEY": server.keys["enterprise"],
        "PYTHONPATH": os.pathsep.join([str(SOURCE), os.environ.get("PYTHONPATH", "")]),
    }
    argv = [sys.executable, str(WRITER), server.url, str(QUANT), config_id]
    return [
        subprocess.Popen(
            [*argv, str(p), str(threads), str(tmp_path / f"p{p}"), str(tmp_path / "audit.jsonl")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
        )
        for p in range(processes)
    ]


def race(
    server: SandboxServer, tmp_path: Path, processes: int, threads: int
) -> tuple[dict[str, Any], list[audit.AuditEntry]]:
    """``ROUNDS`` rounds of every writer writing from the value the round began with."""
    with Client(
        server.url, server.keys["enterprise"], cache_dir=str(tmp_path / "c"), progress=False
    ) as c:
        config_id = str(smart_money(L.load_playbook(QUANT, client=c))["config_id"])
    tally: Counter[str] = Counter()
    lost = 0
    errors: list[str] = []
    with ApiSession(server.url, server.keys["enterprise"]) as session:
        initial = threshold(session, config_id)
        procs = writers(server, config_id, processes, threads, tmp_path)
        try:
            for r in range(ROUNDS):
                seen = threshold(session, config_id)
                for proc in procs:
                    assert proc.stdin is not None
                    proc.stdin.write(json.dumps({"round": r, "seen": seen}) + "\n")
                    proc.stdin.flush()
                outcomes = []
                for proc in procs:
                    assert proc.stdout is not None
                    outcomes += json.loads(proc.stdout.readline())
                tally.update(o[0] for o in outcomes)
                errors += [o[1] for o in outcomes if o[0] == "error"]
                lost += max(0, sum(o[0] == "sent" for o in outcomes) - 1)
        finally:
            for proc in procs:
                assert proc.stdin is not None
                assert proc.stdout is not None
                proc.stdin.close()
                proc.wait(60)
                proc.stdout.close()
        final = threshold(session, config_id)
    entries = audit.AuditLog(tmp_path / "audit.jsonl").entries()
    # each entry replaced what the one before it read back (the first: the initial value)
    before = [initial, *(e.read_back for e in entries[:-1])]
    chained = sum(same_value(e.old_value, b) for e, b in zip(entries, before, strict=True))
    figures = {
        "writers": processes * threads,
        "attempts": processes * threads * ROUNDS,
        "sent": tally["sent"],
        "stale": tally["stale"],
        "errors": errors,
        "lost": lost,
        "entries": len(entries),
        "chained": chained,
        "verified": sum(e.verified for e in entries),
        "last_is_final": bool(entries) and same_value(entries[-1].read_back, final),
    }
    return figures, entries


@pytest.mark.parametrize(("processes", "threads"), [(1, 8), (3, 4)], ids=["threads", "processes"])
def test_writers_racing_on_one_entry_write_once_a_round_and_the_log_follows_the_service(
    fresh_sandbox: Callable[..., SandboxServer], tmp_path: Path, processes: int, threads: int
) -> None:
    figures, entries = race(fresh_sandbox(), tmp_path, processes, threads)
    print(f"\nCAS race, {processes} process(es) x {threads} threads x {ROUNDS} rounds: {figures}")
    n = processes * threads
    assert figures["errors"] == []
    assert (figures["sent"], figures["stale"], figures["lost"]) == (ROUNDS, ROUNDS * (n - 1), 0)
    assert (figures["entries"], figures["chained"], figures["verified"]) == (ROUNDS,) * 3
    assert figures["last_is_final"]
    assert all(same_value(e.read_back, e.new_value) for e in entries)
