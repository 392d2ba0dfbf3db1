"""The world build at scale: a 1M-trade world built in under 10 minutes with flat memory.

Issue 14 asks for a ``--scale`` world of 1M trades built in under 10 minutes with flat memory.
This benchmark builds, each in a fresh child process (``ensure_world`` into a temp directory,
as a first ``quantscope sandbox`` start would), a *reference* world (``--reference-scale``,
default 10) and then the *target* world: ``--scale N``, or the smallest scale expected to hold
``--trades`` trades (default 1,000,000) from the reference's trades per scale unit, plus 2 %.
For each build it reports:

* wall time, and CPU time (user + system) of the build process and of its staging workers
  (``getrusage`` in the child: ``RUSAGE_SELF`` + ``RUSAGE_CHILDREN``);
* peak RSS: of the build process alone (``ru_maxrss``), of its largest worker, and of the whole
  process tree, summed over ``/proc`` samples every ``--interval`` seconds (the samples are
  reported as a timeline: flat memory is a flat line, whatever the scale);
* trades, evaluations, transactions built, and the database's size on disk.

Targets (exit status 1 when one is missed): the target build's wall time under
``--minutes`` (10), its peak tree RSS within 1.5x of the reference's, and at least ``--trades``
trades built. Wall time on a shared machine depends on the load, so the CPU time is reported
next to it (and the load average before and after) for a judgement on a quiet machine.

The built worlds are deleted afterwards (a 1M-trade world is ~3 GB) unless ``--keep``.

Run: ``python -m benchmarks.bench_build [--trades N | --scale N] [--reference-scale N]``;
``python -m benchmarks build`` runs the defaults (1M trades: minutes).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks._common import BenchResult, Ratio, Timing, print_result

DEFAULT_TRADES = 1_000_000
DEFAULT_REFERENCE_SCALE = 10
DEFAULT_MINUTES = 10.0
RSS_FLAT_FACTOR = 1.5
SCALE_MARGIN = 1.02  # trades per scale unit vary by token: aim 2 % above the target
_REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Build:
    """What one build in a child process measured."""

    scale: int
    wall_s: float
    cpu_s: float  # user + system: the build process and its workers
    workers_cpu_s: float
    peak_rss: int  # bytes: the build process alone
    peak_worker_rss: int  # bytes: its largest worker (0 without workers)
    peak_tree_rss: int  # bytes: the sampled sum over the process tree
    samples: tuple[tuple[float, int], ...]  # (seconds since the process started, tree RSS bytes)
    trades: int
    evaluations: int
    transactions: int
    db_bytes: int

    @property
    def label(self) -> str:
        return f"build, scale {self.scale}"


# --- the child: one build ------------------------------------------------------------------------


def _child(directory: str, seed: int, scale: int) -> dict[str, Any]:
    """Build one world with ``ensure_world`` and say what it took (run in a fresh process)."""
    import resource

    from quantscope.sandbox.datadir import ensure_world

    start = time.perf_counter()
    info = ensure_world(directory, seed, scale)
    wall = time.perf_counter() - start
    own = resource.getrusage(resource.RUSAGE_SELF)
    workers = resource.getrusage(resource.RUSAGE_CHILDREN)
    with closing(sqlite3.connect(f"{info.db_path.resolve().as_uri()}?mode=ro", uri=True)) as conn:
        counts = {
            table: conn.execute(f"SELECT max(id) FROM {table}").fetchone()[0] or 0
            for table in ("trades", "evaluations", "transactions")
        }
    conn.close()
    return {
        "wall_s": wall,
        "cpu_s": own.ru_utime + own.ru_stime + workers.ru_utime + workers.ru_stime,
        "workers_cpu_s": workers.ru_utime + workers.ru_stime,
        "peak_rss": own.ru_maxrss * 1024,  # Linux: KiB
        "peak_worker_rss": workers.ru_maxrss * 1024,
        "db_bytes": info.db_path.stat().st_size,
        **counts,
    }


# --- the parent: run, sample, judge --------------------------------------------------------------


def _tree(pid: int) -> list[int]:
    """``pid`` and its descendants (Linux ``/proc/<pid>/task/<tid>/children``)."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        try:
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children") as f:
                    todo.extend(int(c) for c in f.read().split())
        except OSError:  # gone meanwhile
            continue
    return found


def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return 0


def _sample(pid: int, interval: float, out: list[tuple[float, int]], done: threading.Event) -> None:
    start = time.perf_counter()
    while not done.wait(interval):
        out.append((time.perf_counter() - start, sum(_rss(p) for p in _tree(pid))))


def build_in_child(directory: Path, seed: int, scale: int, interval: float = 0.5) -> Build:
    """Build the world of ``seed`` and ``scale`` in a fresh process, sampling its tree's RSS."""
    env = dict(os.environ)
    src = str(_REPO / "src")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH")) if p)
    args = [sys.executable, "-m", "benchmarks.bench_build", "--child", str(directory)]
    args += ["--seed", str(seed), "--scale", str(scale)]
    samples: list[tuple[float, int]] = []
    done = threading.Event()
    with subprocess.Popen(args, cwd=_REPO, env=env, stdout=subprocess.PIPE, text=True) as child:
        sampler = threading.Thread(target=_sample, args=(child.pid, interval, samples, done))
        sampler.start()
        try:
            output, _ = child.communicate()
        finally:
            done.set()
            sampler.join()
    if child.returncode != 0:
        raise RuntimeError(f"the scale-{scale} build failed (exit status {child.returncode})")
    got = json.loads(output.strip().splitlines()[-1])
    return Build(
        scale=scale,
        wall_s=got["wall_s"],
        cpu_s=got["cpu_s"],
        workers_cpu_s=got["workers_cpu_s"],
        peak_rss=got["peak_rss"],
        peak_worker_rss=got["peak_worker_rss"],
        peak_tree_rss=max([rss for _, rss in samples] + [got["peak_rss"]]),
        samples=tuple(samples),
        trades=got["trades"],
        evaluations=got["evaluations"],
        transactions=got["transactions"],
        db_bytes=got["db_bytes"],
    )


def scale_for(trades: int, reference: Build) -> int:
    """The smallest scale expected to hold ``trades`` trades (2 % margin), from a reference."""
    per_unit = reference.trades / reference.scale
    return max(1, math.ceil(trades * SCALE_MARGIN / per_unit))


def _mb(n: float) -> str:
    return f"{n / 2**20:,.0f} MB"


def timeline(build: Build, points: int = 10) -> str:
    """About ``points`` tree-RSS samples spread over the build: ``t s: MB`` pairs."""
    if not build.samples:
        return "(no samples: the build was shorter than the interval)"
    step = max(1, len(build.samples) // points)
    picked = list(build.samples[::step])
    if picked[-1] != build.samples[-1]:
        picked.append(build.samples[-1])
    return ", ".join(f"{t:.0f} s: {rss / 2**20:.0f}" for t, rss in picked) + " (MB)"


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.1f} / {five:.1f} / {fifteen:.1f}"


def run(
    repeat: int = 1,
    *,
    trades: int = DEFAULT_TRADES,
    scale: int | None = None,
    reference_scale: int = DEFAULT_REFERENCE_SCALE,
    minutes: float = DEFAULT_MINUTES,
    seed: int = 7,
    interval: float = 0.5,
    data_dir: Path | None = None,
    keep: bool = False,
) -> BenchResult:
    """Build the reference world, then the target world, each once per ``repeat``; judge the
    target's best wall time, its peak tree RSS against the reference's, and its trades."""
    if repeat < 1:
        raise ValueError(f"repeat must be >= 1, got {repeat}")
    root = Path(tempfile.mkdtemp(prefix="quantscope-build-", dir=data_dir))
    load_before = _load()
    builds: dict[str, list[Build]] = {}
    try:
        target_scale = scale
        for n in range(repeat):
            reference = build_in_child(root / f"ref-{n}", seed, reference_scale, interval)
            builds.setdefault("reference", []).append(reference)
            if target_scale is None:
                target_scale = scale_for(trades, reference)
            if not keep:
                shutil.rmtree(root / f"ref-{n}")
            target = build_in_child(root / f"target-{n}", seed, target_scale, interval)
            builds.setdefault("target", []).append(target)
            if not keep:
                shutil.rmtree(root / f"target-{n}")
    finally:
        if not keep:
            shutil.rmtree(root, ignore_errors=True)
    load_after = _load()
    kept = {"kept in": str(root)} if keep else {}
    ref = min(builds["reference"], key=lambda b: b.wall_s)
    best = min(builds["target"], key=lambda b: b.wall_s)
    timings = {
        b[0].label: Timing(b[0].label, tuple(x.wall_s for x in b), tuple(x.cpu_s for x in b))
        for b in builds.values()
    }
    ratios = [
        Ratio(
            f"{best.label} / {ref.label} (wall; CPU) per trade",
            best.label,
            ref.label,
            (best.wall_s / best.trades) / (ref.wall_s / ref.trades),
            cpu_value=(best.cpu_s / best.trades) / (ref.cpu_s / ref.trades),
        ),
    ]
    wanted = trades if scale is None else 0
    checks = {
        f"{best.label}: wall under {minutes:g} min": best.wall_s < minutes * 60,
        f"{best.label}: peak tree RSS within {RSS_FLAT_FACTOR}x of scale {ref.scale}'s": (
            best.peak_tree_rss <= RSS_FLAT_FACTOR * ref.peak_tree_rss
        ),
    }
    if wanted:
        checks[f"{best.label}: at least {wanted:,} trades"] = best.trades >= wanted
    facts: dict[str, Any] = {
        "load average (1/5/15 min) before, after": f"{load_before}; {load_after}",
        **kept,
    }
    for b in (ref, best):
        facts[f"{b.label}: built"] = (
            f"{b.trades:,} trades, {b.evaluations:,} evaluations, {b.transactions:,} "
            f"transactions; {_mb(b.db_bytes)} on disk"
        )
        facts[f"{b.label}: time"] = (
            f"wall {b.wall_s:.1f} s ({b.wall_s / 60:.1f} min); CPU {b.cpu_s:.1f} s "
            f"(workers {b.workers_cpu_s:.1f} s); "
            f"CPU per 1k trades {1000 * b.cpu_s / b.trades:.2f} s"
        )
        facts[f"{b.label}: peak RSS"] = (
            f"tree {_mb(b.peak_tree_rss)}; build process {_mb(b.peak_rss)}; "
            f"largest worker {_mb(b.peak_worker_rss)}"
        )
        facts[f"{b.label}: tree RSS over time (from the process's start)"] = timeline(b)
    facts[f"peak tree RSS, scale {best.scale} / scale {ref.scale}"] = (
        f"{best.peak_tree_rss / ref.peak_tree_rss:.2f}x"
    )
    return BenchResult(
        "build (issue 14)",
        {
            "seed": seed,
            "reference scale": reference_scale,
            "target scale": best.scale,
            "trades wanted": wanted or "-",
            "repeat": repeat,
        },
        timings,
        ratios,
        facts,
        checks,
    )


def main(argv: Sequence[str] | None = None) -> BenchResult | None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_build")
    parser.add_argument("--repeat", type=int, default=1)
    target = parser.add_mutually_exclusive_group()
    target.add_argument("--trades", type=int, default=DEFAULT_TRADES)
    target.add_argument("--scale", type=int, default=None)
    parser.add_argument("--reference-scale", type=int, default=DEFAULT_REFERENCE_SCALE)
    parser.add_argument("--minutes", type=float, default=DEFAULT_MINUTES)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--interval", type=float, default=0.5, help="RSS sampling, seconds")
    parser.add_argument("--keep", action="store_true", help="keep the built worlds")
    parser.add_argument("--child", metavar="DIR", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:  # one build, for build_in_child
        print(json.dumps(_child(args.child, args.seed, args.scale)), flush=True)
        return None
    result = run(
        args.repeat,
        trades=args.trades,
        scale=args.scale,
        reference_scale=args.reference_scale,
        minutes=args.minutes,
        seed=args.seed,
        interval=args.interval,
        keep=args.keep,
    )
    print_result(result)
    return result


if __name__ == "__main__":
    outcome = main()
    sys.exit(0 if outcome is None or outcome.all_met else 1)
