"""The reliability fuzz as a job: schemathesis runs against an unmetered, counting server process.

``FuzzJob(world, workdir)()`` copies the world, serves it with its quota gate lifted and its
answers counted by status (``_unmetered_server.py``: the figures are the wire's, not the
fuzzer's), runs the plan below, ``PARALLEL_RUNS`` schemathesis processes at a time, and returns
every run's output with the server's counts. ``conftest.py`` starts it in a thread when the
session begins, so the fault tests and the soak run while it fuzzes;
``test_fuzz_schema.py`` joins it and asserts. ``cancel()`` kills what runs (a session ending
early).

The cross-parameter rules a schema cannot state are repaired by ``_schemathesis_hooks.py``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from reliability._server_process import ServerProcess

from quantscope.sandbox.datadir import WorldInfo, copy_world

SCHEMATHESIS = Path(sys.executable).with_name("schemathesis")
HERE = Path(__file__).parent
SOURCE = HERE.parents[1] / "src"  # so the hooks import this checkout
CHECKS = (
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_schema_conformance",
    "positive_data_acceptance",
    "negative_data_rejection",
    "allow_header_conformance",
)
# Generated cases per operation: the volume runs (fuzzing phase, one per seed) with pages capped
# at PAGE_CAP rows (a page of 1,000 evaluations costs about a second), and the full run
# (coverage, fuzzing and stateful phases) over the whole ranges. Several short volume runs, not
# one long one: Hypothesis' cost per case grows with the cases of an operation in one run
# (docs/reliability.md: ~9 ms a case at 300 per operation, ~3x that at 1,500).
VOLUME_SEEDS = (7, 8, 9, 10, 11, 12)
VOLUME_EXAMPLES = 220
PAGE_CAP = 10
FULL_EXAMPLES = 25
# schemathesis runs at once, each with one worker: a process generates on one core (workers are
# threads) and one worker spends ~10% less CPU a case than two (docs/reliability.md), but waits
# on each answer, so three processes keep the two cores busy
PARALLEL_RUNS = 3
WORKERS = 1
RUN_TIMEOUT_S = 1500


@dataclass(frozen=True)
class Run:
    """One schemathesis run of the plan."""

    name: str
    seed: int
    examples: int
    extra: tuple[str, ...] = ()
    page_cap: int = 0


VOLUME = ("--phases", "fuzzing", "--no-shrink")
# the full run first: the longest, so the volume runs fill the other slot around it
PLAN = (
    Run("full", 7, FULL_EXAMPLES),
    *(Run(f"volume-{seed}", seed, VOLUME_EXAMPLES, VOLUME, PAGE_CAP) for seed in VOLUME_SEEDS),
)


@dataclass(frozen=True)
class Outcome:
    """What one schemathesis run printed, and how it ended."""

    run: Run
    returncode: int
    stdout: str
    stderr: str
    elapsed_s: float = 0.0


@dataclass(frozen=True)
class FuzzResult:
    outcomes: list[Outcome]
    counts: dict[int, int]  # the server's answers, by status
    elapsed_s: float
    server_cpu_s: float


class FuzzJob:
    """The whole fuzz, to its end, when called; ``cancel()`` from another thread stops it."""

    def __init__(self, world: WorldInfo, workdir: Path) -> None:
        self.world = world
        self.workdir = workdir
        self._cancelled = threading.Event()
        self._lock = threading.Lock()
        self._running: list[subprocess.Popen[str]] = []
        self._server: ServerProcess | None = None

    def __call__(self) -> FuzzResult:
        started = time.monotonic()
        info = copy_world(self.world, self.workdir / "world")
        server = self._server = ServerProcess(info.data_dir, unmetered=True)
        try:
            server.start()
            with ThreadPoolExecutor(PARALLEL_RUNS) as pool:
                outcomes = list(pool.map(lambda run: self._schemathesis(server.url, run), PLAN))
            counts, cpu = server.counts(), server.cpu_seconds()
        finally:
            server.stop()
        return FuzzResult(outcomes, counts, time.monotonic() - started, cpu)

    def _schemathesis(self, url: str, run: Run) -> Outcome:
        """One schemathesis run against ``url``, to its end."""
        if self._cancelled.is_set():
            return Outcome(run, -1, "", "cancelled")
        started = time.monotonic()
        cwd = self.workdir / run.name
        cwd.mkdir(parents=True, exist_ok=True)
        env = {
            **os.environ,
            "QS_FUZZ_PAGE_CAP": str(run.page_cap),
            "SCHEMATHESIS_HOOKS": "_schemathesis_hooks",
            "PYTHONPATH": os.pathsep.join([str(HERE), str(SOURCE)]),
        }
        argv = [
            str(SCHEMATHESIS),
            "--config-file",
            str(HERE / "schemathesis.toml"),
            "run",
            f"{url}/openapi.json",
            "--header",
            f"X-API-Key: {self.world.keys['enterprise']}",
            "--checks",
            ",".join(CHECKS),
            "--seed",
            str(run.seed),
            "--max-examples",
            str(run.examples),
            "--workers",
            str(WORKERS),
            "--continue-on-failure",
            "--suppress-health-check",
            "too_slow,filter_too_much",
            "--no-color",
            *run.extra,
        ]
        proc = subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd, env=env
        )
        with self._lock:
            self._running.append(proc)
        try:
            stdout, stderr = proc.communicate(timeout=RUN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            stdout, stderr = proc.communicate()
            stderr += f"\ntimed out after {RUN_TIMEOUT_S} s"
        finally:
            with self._lock:
                self._running.remove(proc)
        return Outcome(run, proc.returncode, stdout, stderr, time.monotonic() - started)

    def cancel(self) -> None:
        """Start no more runs and kill the running ones (the job then returns)."""
        self._cancelled.set()
        with self._lock:
            for proc in self._running:
                proc.send_signal(signal.SIGKILL)
