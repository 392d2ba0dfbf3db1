"""What every benchmark shares: interleaved best-of-N timing, ratios against targets, tables.

A benchmark compares a few *cases* (ways of doing the same work) in one run. ``measure`` runs
them round-robin (A B C, A B C, ...) after one untimed warm-up each, so a burst of load from
another process on the machine slows every case alike instead of one; each case's best run is
what the ratios compare (the best is the run least disturbed by the machine, the usual timeit
rule). The garbage collector stays on during the timed runs, as in a notebook; ``gc.collect()``
runs before each one so no case pays for the garbage of the one before.

Each run records wall-clock time, the process's CPU time (all its threads: for the reload
benchmark that includes the in-process sandbox server) and the CPU time of the thread that ran
the case. Targets are judged on wall time, what a user waits for (unless a ratio says it
judges CPU time: ``ratio(basis=...)``); CPU time is reported next to it because it barely
moves when other processes compete for the cores, so a ratio of CPU times cross-checks a wall
ratio taken on a busy machine.
"""

from __future__ import annotations

import gc
import math
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Generic, TextIO, TypeVar

#: Where benchmark worlds are built and kept across runs (``$QUANTSCOPE_BENCH_DIR`` overrides).
ENV_BENCH_DIR = "QUANTSCOPE_BENCH_DIR"

T = TypeVar("T")


def bench_data_dir() -> Path:
    """``$QUANTSCOPE_BENCH_DIR``, else ``<temp dir>/quantscope-bench``: worlds are reused there."""
    from_env = os.environ.get(ENV_BENCH_DIR)
    return Path(from_env) if from_env else Path(tempfile.gettempdir()) / "quantscope-bench"


@dataclass(frozen=True)
class Case(Generic[T]):
    """One way of doing the work: ``run(setup())`` is timed, ``setup`` and ``teardown`` are not.

    Without ``setup``, ``run`` gets None. ``run``'s result is dropped before the next run
    (except the warm-up's, see ``measure``) so cases do not hold each other's memory.
    """

    name: str
    run: Callable[[T], object]
    setup: Callable[[], T] | None = None
    teardown: Callable[[T], None] | None = None


@dataclass(frozen=True)
class Timing:
    """The seconds of each timed run of one case: wall clock, process CPU time and the CPU
    time of the thread that ran it (the client side, with the sandbox in another thread)."""

    name: str
    runs: tuple[float, ...]
    cpu_runs: tuple[float, ...] = ()
    thread_runs: tuple[float, ...] = ()

    @property
    def best(self) -> float:
        """The best wall-clock time."""
        return min(self.runs)

    @property
    def median(self) -> float:
        return statistics.median(self.runs)

    @property
    def best_cpu(self) -> float:
        """The best CPU time (NaN when not recorded)."""
        return min(self.cpu_runs) if self.cpu_runs else math.nan

    @property
    def best_thread(self) -> float:
        """The best CPU time of the running thread (NaN when not recorded)."""
        return min(self.thread_runs) if self.thread_runs else math.nan


@dataclass(frozen=True)
class TimedElsewhere:
    """What a case's ``run`` returns when the work ran in another process that timed itself
    (e.g. a fresh interpreter on an older commit's code): ``measure`` records these seconds
    instead of its own, which would be the waiting. ``cpu`` is that process's CPU time, so it
    stands for both the CPU and the thread columns; ``result`` goes to the warm-up's check."""

    wall: float
    cpu: float
    result: object = None


def _timed_once(case: Case[Any]) -> tuple[float, float, float, object]:
    arg = case.setup() if case.setup is not None else None
    try:
        gc.collect()
        start, start_cpu = time.perf_counter(), time.process_time()
        start_thread = time.thread_time()
        result = case.run(arg)
        elapsed, cpu = time.perf_counter() - start, time.process_time() - start_cpu
        thread = time.thread_time() - start_thread
    finally:
        if case.teardown is not None:
            case.teardown(arg)
    if isinstance(result, TimedElsewhere):
        return result.wall, result.cpu, result.cpu, result.result
    return elapsed, cpu, thread, result


def measure(
    cases: Sequence[Case[Any]],
    repeat: int,
    *,
    warmup: bool = True,
    check: Callable[[Mapping[str, object]], None] | None = None,
) -> dict[str, Timing]:
    """Time every case ``repeat`` times, interleaved; return their timings by name.

    Args:
        cases: the cases, run in this order in every round.
        repeat: timed runs per case (the best is compared; 1 is allowed for smoke tests).
        warmup: run each case once, untimed, before the timed rounds.
        check: called once with the warm-up results by case name (e.g. to assert that every
            case computed the same thing); needs ``warmup``.
    """
    if repeat < 1:
        raise ValueError(f"repeat must be >= 1, got {repeat}")
    # What lived before the benchmark is frozen out of the collector (gc.freeze): each timed
    # run's gc.collect then walks only the benchmark's own objects. In a process with a big
    # heap (a test worker) a full collection took ~2 s, 54 of them 108 s of a 3 s smoke run.
    gc.collect()
    gc.freeze()
    try:
        return _measure(cases, repeat, warmup, check)
    finally:
        gc.unfreeze()


def _measure(
    cases: Sequence[Case[Any]],
    repeat: int,
    warmup: bool,
    check: Callable[[Mapping[str, object]], None] | None,
) -> dict[str, Timing]:
    if warmup:
        results: dict[str, object] = {}
        for case in cases:
            results[case.name] = _timed_once(case)[3]
            if check is None:
                results.pop(case.name)
        if check is not None:
            check(results)
        results.clear()
    runs: dict[str, list[float]] = {case.name: [] for case in cases}
    cpu_runs: dict[str, list[float]] = {case.name: [] for case in cases}
    thread_runs: dict[str, list[float]] = {case.name: [] for case in cases}
    for _ in range(repeat):
        for case in cases:
            elapsed, cpu, thread, _result = _timed_once(case)
            del _result
            runs[case.name].append(elapsed)
            cpu_runs[case.name].append(cpu)
            thread_runs[case.name].append(thread)
    return {
        name: Timing(name, tuple(runs[name]), tuple(cpu_runs[name]), tuple(thread_runs[name]))
        for name in runs
    }


@dataclass(frozen=True)
class Ratio:
    """``numerator.best / denominator.best`` and its target (``>= target`` or ``<= target``)."""

    name: str
    numerator: str
    denominator: str
    value: float
    target: float | None = None
    at_least: bool = True
    cpu_value: float = math.nan

    def _meets(self, value: float) -> bool | None:
        if self.target is None or math.isnan(value):  # no target, or not measured
            return None
        return value >= self.target if self.at_least else value <= self.target

    @property
    def met(self) -> bool | None:
        """Whether the wall-time ratio meets the target; None when there is no target."""
        return self._meets(self.value)

    @property
    def met_cpu(self) -> bool | None:
        """Whether the CPU-time ratio meets the target; None when there is no target."""
        return self._meets(self.cpu_value)

    @property
    def target_text(self) -> str:
        if self.target is None:
            return "(reported)"
        return f"{'>=' if self.at_least else '<='} {self.target:g}"

    @property
    def verdict(self) -> str:
        """``met`` / ``NOT met`` for wall time, then for CPU time when they differ."""
        words = {True: "met", False: "NOT met", None: "-"}
        wall, cpu = words[self.met], words[self.met_cpu]
        return wall if wall == cpu else f"{wall} (CPU: {cpu})"


def ratio(
    timings: Mapping[str, Timing],
    numerator: str,
    denominator: str,
    target: float | None = None,
    *,
    at_least: bool = True,
    name: str | None = None,
    basis: str = "wall",
) -> Ratio:
    """The ratio of two cases' best wall times (and of their best CPU times), with a target.

    ``basis`` says which ratio the target judges (the "wall" column of the report): ``"wall"``
    times, the process's ``"cpu"`` times (the client's side alone when the service runs in
    another process), or the running ``"thread"``'s CPU times.
    """
    top, bottom = timings[numerator], timings[denominator]
    values = {
        "wall": top.best / bottom.best,
        "cpu": top.best_cpu / bottom.best_cpu,
        "thread": top.best_thread / bottom.best_thread,
    }
    label = {"wall": "", "cpu": " (CPU)", "thread": " (thread CPU)"}[basis]
    return Ratio(
        name or f"{numerator} / {denominator}{label}",
        numerator,
        denominator,
        values[basis],
        target,
        at_least,
        values["cpu"],
    )


def machine() -> str:
    """A line that says where the numbers were measured."""
    cores = os.cpu_count()
    return (
        f"{platform.machine()}, {cores} core(s), Python {platform.python_version()}, "
        f"{platform.system()} {platform.release()}"
    )


@dataclass
class BenchResult:
    """What one benchmark measured: parameters, timings, ratios against targets, facts.

    ``facts`` are checked observations that are not timings (requests counted, row counts,
    distinct values); ``checks`` are yes/no conditions that belong to the targets (e.g. "warm
    reload sent no request"), counted by ``all_met`` like the ratios' targets.
    """

    name: str
    params: dict[str, Any]
    timings: dict[str, Timing]
    ratios: list[Ratio]
    facts: dict[str, Any] = field(default_factory=dict)
    checks: dict[str, bool] = field(default_factory=dict)
    measured_at: datetime = field(default_factory=lambda: datetime.now(UTC))

    @property
    def all_met(self) -> bool:
        """Every ratio with a target meets it, and every check holds."""
        return all(r.met is not False for r in self.ratios) and all(self.checks.values())

    def timing_table(self) -> str:
        """The timings as a Markdown table (seconds)."""
        lines = [
            "| case | best wall (s) | median wall (s) | best CPU (s) | best thread CPU (s) "
            "| runs |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for t in self.timings.values():
            lines.append(
                f"| {t.name} | {t.best:.3f} | {t.median:.3f} | {t.best_cpu:.3f} "
                f"| {t.best_thread:.3f} | {len(t.runs)} |"
            )
        return "\n".join(lines)

    def ratio_table(self) -> str:
        """The ratios and checks as a Markdown table."""
        lines = [
            "| ratio of best times | wall | CPU | target | |",
            "|---|---:|---:|---|---|",
        ]
        for r in self.ratios:
            lines.append(
                f"| {r.name} | {r.value:.2f}x | {r.cpu_value:.2f}x | {r.target_text} "
                f"| {r.verdict} |"
            )
        for what, ok in self.checks.items():
            verdict = "met" if ok else "NOT met"
            lines.append(f"| {what} | {'yes' if ok else 'no'} | | yes | {verdict} |")
        return "\n".join(lines)

    def report(self) -> str:
        """Everything, as Markdown: parameters, timings, ratios, facts."""
        params = ", ".join(f"{k}={v}" for k, v in self.params.items())
        facts = "\n".join(f"* {k}: {v}" for k, v in self.facts.items())
        return (
            f"### {self.name} ({self.measured_at:%Y-%m-%d %H:%M} UTC)\n\n"
            f"{machine()}; {params}\n\n{self.timing_table()}\n\n{self.ratio_table()}\n"
            + (f"\n{facts}\n" if facts else "")
        )


def print_result(result: BenchResult, file: TextIO | None = None) -> None:
    """Print a result's Markdown report (stdout by default)."""
    print(result.report(), file=file or sys.stdout, flush=True)
