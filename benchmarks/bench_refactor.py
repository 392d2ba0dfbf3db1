"""The toolkit at a baseline commit against the working tree, in the same run (issue 23).

Issue 23's "Done when": the benchmarks' figures (warm loads, cold loads, catalog reads) hold
within 10 % of the code before its refactor, measured in the same run. The baseline
(``BASELINE``, ``c044274``: ``main`` before issue 23's refactor began; ``--baseline REV``) has
its ``src`` exported by ``git archive`` (``bench_loadpath.export_src``); every case runs in a
fresh interpreter per side, ``PYTHONPATH`` at that side's ``src`` (``_refactor_child.py``,
which checks it imported quantscope from there and uses only the public API), against one
sandbox world served by a child process (``bench_loadpath.ChildSandbox``). Cases, per side:

* **cold loads**: ``load_trades(trading_status="all")`` (every page) and
  ``load_evaluations(max_pages=...)`` (a few pages) on an empty cache directory;
* **warm loads**: the same calls again on the same client (the frame cache: 0 requests,
  checked on the provenance of every warm frame);
* **catalog reads**: ``connect(catalog=path)`` and ``load_trades(quant_id=q)`` /
  ``load_evaluations(quant_id=q)`` in a new process; the catalog is synced once by the working
  tree's code (``qsc.sync``, in this process) and shared by both sides when the baseline can read
  it (else the baseline syncs its own and a fact says so). No request reaches the sandbox
  during catalog reads (counted by the sandbox).

Each child times every call alone (wall and its own CPU time: the client side; imports, the
client's construction and the sync are not timed), ``INNER`` (3) times, each on a new client
and an empty cache directory (``WARM_REPEAT`` warm calls after each cold one), and reports the
fastest; the first call's CPU (lazy imports, first-time setup) is reported beside it. One
untimed warm-up round checks that both sides load the same rows (row counts and sums of
ids); then ``repeat`` interleaved rounds, the sides' order alternating each round (working
tree first after the warm-up's baseline first, then baseline first, ...). Judged:
working tree / baseline of the best CPU times (``ratio(basis="cpu")``), target <= 1.10; the
medians' ratio is reported beside it, and the load average before and after.

Run: ``python -m benchmarks.bench_refactor [--repeat N] [--baseline REV]``.

**Cold per-id loads** (``run_coldfetch``, ``--cold-details``; issues 22 and 24): the client's
cost per request of ``load_eval_details`` of quant 2's closed trades (569 evaluations at
seed 7, scale 1: one GET each, the slowest call of a panel opened on a cold cache) on the
embedded sandbox, the baseline (default ``main``) against the working tree, each side in
``repeat`` fresh interpreters (``_refactor_child.py``'s ``details`` mode) of ``INNER`` runs
on a new copy of the world. The embedded sandbox serves in the same process, so the floor is
measured beside it: the same GETs by a bare ``requests.Session`` against the same server.
Judged: the client's overhead per request, (load - bare loop) / requests, best wall of the
working tree over the baseline's, target <= ``COLD_TARGET`` (at least a third lower).
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import quantscope
from benchmarks._common import BenchResult, Ratio, Timing, bench_data_dir, print_result, ratio
from benchmarks.bench_loadpath import ChildSandbox, export_src, run_in_src
from quantscope.sandbox.datadir import copy_world, ensure_world

BASELINE = "c044274"
"""``main`` before issue 23's refactor began (2026-11-28): the figures it must hold."""

TARGET = 1.10
DEFAULT_REPEAT = 3
EVAL_PAGES = 10
WARM_REPEAT = 5
INNER = 3
PAGE_SIZE = 1000
CATALOG_QUANT = 3
CHILD = Path(__file__).with_name("_refactor_child.py")
SIDES = ("baseline", "working tree")
SYNCED = ("trades", "evaluations")
TRADES = "load_trades"
EVALUATIONS = "load_evaluations"


COLD_BASELINE = "main"
COLD_TARGET = 2 / 3
COLD_QUANT = 2


def service_calls(page_size: int, eval_pages: int) -> list[list[Any]]:
    """The cold (then warm) loads: every trade, and ``eval_pages`` pages of evaluations."""
    return [
        [TRADES, "load_trades", {"trading_status": "all", "page_size": page_size}],
        [EVALUATIONS, "load_evaluations", {"page_size": page_size, "max_pages": eval_pages}],
    ]


def catalog_calls(quant: int) -> list[list[Any]]:
    """The catalog reads: one quant's (executed: what a catalog keeps) trades and evaluations."""
    return [
        [TRADES, "load_trades", {"quant_id": quant}],
        [EVALUATIONS, "load_evaluations", {"quant_id": quant}],
    ]


def in_child(src: Path, job: Mapping[str, Any]) -> dict[str, Any]:
    """``_refactor_child.py`` on ``job`` with quantscope from ``src``: its JSON answer."""
    return run_in_src(CHILD, src, {**job, "src": str(src)})


def _sources(baseline: str, tmp: Path) -> dict[str, Path]:
    """Each side's ``src``: the baseline's exported by ``git archive`` under ``tmp``, and the
    working tree's (the one this process imported)."""
    base_src = export_src(baseline, tmp / "baseline")
    if base_src is None:
        raise RuntimeError(f"this checkout cannot export {baseline} (`git archive`)")
    return {SIDES[0]: base_src, SIDES[1]: Path(quantscope.__file__).resolve().parents[1]}


def case_name(side: str, what: str) -> str:
    return f"{what}, {side}"


def _loadavg() -> str:
    try:
        return " / ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:  # not on this platform
        return "n/a"


def _median_ratio(timings: Mapping[str, Timing], what: str) -> Ratio:
    """The medians' CPU ratio (reported, no target)."""
    top, bottom = timings[case_name(SIDES[1], what)], timings[case_name(SIDES[0], what)]
    value = statistics.median(top.cpu_runs) / statistics.median(bottom.cpu_runs)
    return Ratio(
        f"{what}: working tree / baseline, median CPU",
        top.name,
        bottom.name,
        value,
        cpu_value=value,
    )


def run(
    repeat: int = DEFAULT_REPEAT,
    *,
    baseline: str = BASELINE,
    seed: int = 7,
    scale: int = 1,
    page_size: int = PAGE_SIZE,
    eval_pages: int = EVAL_PAGES,
    quant: int = CATALOG_QUANT,
    data_dir: Path | str | None = None,
    warmup: bool = True,
    inner: int = INNER,
) -> BenchResult:
    """Measure the baseline's and the working tree's loads, ``repeat`` interleaved rounds
    after an untimed warm-up round (without ``warmup``, the first round is timed: a smoke
    run)."""
    if repeat < 1:
        raise ValueError(f"repeat must be >= 1, got {repeat}")
    load_before = _loadavg()
    info = ensure_world(data_dir if data_dir is not None else bench_data_dir(), seed, scale)
    with tempfile.TemporaryDirectory(prefix="quantscope-bench-refactor-") as tmp_name:
        tmp = Path(tmp_name)
        srcs = _sources(baseline, tmp)
        dirs: Iterator[Path] = (tmp / f"cache-{i}" for i in itertools.count())
        with ChildSandbox(copy_world(info, tmp / "world")) as server:
            url, key = server.url, server.keys["enterprise"]
            service = {"mode": "service", "url": url, "key": key, "warm_repeat": WARM_REPEAT}
            service["calls"] = service_calls(page_size, eval_pages)

            def sync(side: str, path: Path) -> None:
                job = {**service, "mode": "sync", "catalog": str(path)}
                job.update(quants=[quant], resources=list(SYNCED))
                in_child(srcs[side], {**job, "cache_dir": str(next(dirs))})

            catalogs = {side: tmp / "catalog" for side in SIDES}
            # The working tree's sync runs here (this process imported its code): one
            # interpreter fewer; the baseline's, if ever needed, runs in a child.
            with quantscope.Client(url, key, cache_dir=next(dirs), progress=False) as client:
                quantscope.sync(
                    catalogs[SIDES[1]],
                    quant_id=quant,
                    resources=SYNCED,
                    confirm=True,
                    client=client,
                )
            notes = {"catalog": "synced once by the working tree, read by both sides"}
            seen = {"catalog": 0}

            def one(side: str, mode: str) -> dict[str, Any]:
                job: dict[str, Any] = {"mode": mode, "cache_dir": str(next(dirs)), "inner": inner}
                if mode == "service":
                    return dict(in_child(srcs[side], {**service, **job})["results"])
                job.update(catalog=str(catalogs[side]), calls=catalog_calls(quant))
                before = server.stats()[0]
                results = in_child(srcs[side], job)["results"]
                seen["catalog"] += server.stats()[0] - before
                return {f"{what} catalog": measured for what, measured in results.items()}

            def first_catalog_read(side: str) -> dict[str, Any]:
                """The side's first catalog read; a baseline that cannot read the working
                tree's catalog syncs its own (and the report says so)."""
                try:
                    return one(side, "catalog")
                except RuntimeError as error:
                    if side == SIDES[1]:
                        raise
                    catalogs[side] = tmp / "catalog-baseline"
                    sync(side, catalogs[side])
                    notes["catalog"] = (
                        "the baseline could not read the working tree's catalog "
                        f"({str(error).splitlines()[-1][:200]}): each side synced its own"
                    )
                    return one(side, "catalog")

            first = {side: {**one(side, "service"), **first_catalog_read(side)} for side in SIDES}
            rows = _same_rows(first)  # both sides load the same rows
            runs: dict[str, list[dict[str, Any]]] = {}
            rounds = [first] if not warmup else []  # else the first round is the warm-up
            for done in itertools.count(1):  # the sides' order alternates: baseline first in
                if len(rounds) == repeat:  # the first round, the working tree in the second...
                    break
                order = SIDES if done % 2 == 0 else SIDES[::-1]
                rounds.append({s: {**one(s, "service"), **one(s, "catalog")} for s in order})
            for measured_round in rounds:
                for side, results in measured_round.items():
                    for what, measured in results.items():
                        runs.setdefault(case_name(side, what), []).append(measured)
            shared_note, sandbox_during_catalog = notes["catalog"], seen["catalog"]
    load_after = _loadavg()
    return _result(
        runs,
        rows,
        repeat,
        baseline,
        load_before,
        load_after,
        shared_note,
        sandbox_during_catalog,
        eval_pages,
        quant,
        warmup,
    )


def _same_rows(warmup: Mapping[str, Mapping[str, Any]]) -> dict[str, tuple[int, int]]:
    """The rows (count, sum of ids) of every call, the same on both sides (else an error)."""
    rows: dict[str, tuple[int, int]] = {}
    for what, measured in warmup[SIDES[1]].items():
        ours = (measured["rows"], measured["id_sum"])
        theirs = (warmup[SIDES[0]][what]["rows"], warmup[SIDES[0]][what]["id_sum"])
        if ours != theirs:
            raise AssertionError(f"{what}: the working tree loaded {ours}, the baseline {theirs}")
        rows[what] = ours
    return rows


def _result(
    runs: Mapping[str, Sequence[Mapping[str, Any]]],
    rows: Mapping[str, tuple[int, int]],
    repeat: int,
    baseline: str,
    load_before: str,
    load_after: str,
    shared_note: str,
    sandbox_during_catalog: int,
    eval_pages: int,
    quant: int,
    warmup: bool,
) -> BenchResult:
    timings = {
        name: Timing(
            name,
            tuple(m["wall"] for m in measured),
            tuple(m["cpu"] for m in measured),
            tuple(m["cpu"] for m in measured),
        )
        for name, measured in sorted(runs.items(), key=lambda kv: (_order(kv[0]), kv[0]))
    }
    whats = list(rows)
    ratios: list[Ratio] = []
    for what in whats:
        ratios.append(
            ratio(
                timings,
                case_name(SIDES[1], what),
                case_name(SIDES[0], what),
                TARGET,
                at_least=False,
                basis="cpu",
                name=f"{what}: working tree / baseline (best CPU)",
            )
        )
        ratios.append(_median_ratio(timings, what))
    warm = [m for name, measured in runs.items() if " warm" in name for m in measured]
    cold = [m for name, measured in runs.items() if " cold" in name for m in measured]
    facts: dict[str, Any] = {
        "baseline": f"{baseline}, its `src` from `git archive`, in a fresh interpreter per case",
        "working tree": str(Path(quantscope.__file__).resolve().parents[1]),
        "load average (1/5/15 min) before / after": f"{load_before}; {load_after}",
        "rows (count, sum of ids), the same on both sides": "; ".join(
            f"{what}: {n:,} ({s:,})" for what, (n, s) in rows.items()
        ),
        "cold loads": f"every trade (trading_status='all'), {eval_pages} pages of evaluations",
        "catalog": f"quant {quant}'s trades and evaluations, {shared_note}",
        "first call of each child (median CPU ms, baseline -> working tree)": "; ".join(
            f"{what}: {_first(runs, SIDES[0], what):.1f} -> {_first(runs, SIDES[1], what):.1f}"
            for what in whats
        ),
        "requests of cold loads (provenance)": sorted({m["requests"] for m in cold}),
        "requests of warm loads (provenance, summed)": sum(m["requests"] or 0 for m in warm),
        "requests the sandbox received during catalog reads": sandbox_during_catalog,
    }
    checks = {
        "warm loads: 0 requests and from_cache": bool(warm)
        and all(m["requests"] == 0 and m["from_cache"] for m in warm),
        "catalog reads: no request reached the sandbox": sandbox_during_catalog == 0,
    }
    return BenchResult(
        "refactor",
        {"baseline": baseline, "repeat": repeat, "warm-up round": warmup},
        timings,
        ratios,
        facts,
        checks,
    )


def _first(runs: Mapping[str, Sequence[Mapping[str, Any]]], side: str, what: str) -> float:
    """The median over rounds of the first call's CPU milliseconds in each child."""
    return 1e3 * statistics.median(m["first_cpu"] for m in runs[case_name(side, what)])


def _order(name: str) -> int:
    for i, word in enumerate((" cold", " warm", " catalog")):
        if word in name:
            return i
    return 3


def run_coldfetch(
    repeat: int = DEFAULT_REPEAT,
    *,
    baseline: str = COLD_BASELINE,
    seed: int = 7,
    scale: int = 1,
    quant: int = COLD_QUANT,
    data_dir: Path | str | None = None,
    inner: int = INNER,
) -> BenchResult:
    """The cold per-id load, baseline against working tree (module docstring): ``repeat``
    children per side, interleaved, each of ``inner`` runs on a new world and cache."""
    if repeat < 1:
        raise ValueError(f"repeat must be >= 1, got {repeat}")
    load_before = _loadavg()
    info = ensure_world(data_dir if data_dir is not None else bench_data_dir(), seed, scale)
    runs: dict[str, list[dict[str, Any]]] = {side: [] for side in SIDES}
    with tempfile.TemporaryDirectory(prefix="quantscope-bench-coldfetch-") as tmp_name:
        tmp = Path(tmp_name)
        srcs = _sources(baseline, tmp)
        world = copy_world(info, tmp / "world").db_path.parent
        for done in range(repeat):
            for side in SIDES if done % 2 == 0 else SIDES[::-1]:
                job = {"mode": "details", "world": str(world), "quant": quant, "inner": inner}
                job["cache_dir"] = str(tmp / f"{side.replace(' ', '-')}-{done}")
                runs[side].extend(in_child(srcs[side], job)["results"])
    return _cold_result(runs, baseline, quant, f"{load_before}; {_loadavg()}")


def _cold_result(
    runs: Mapping[str, Sequence[Mapping[str, Any]]], baseline: str, quant: int, load: str
) -> BenchResult:
    """Per-request milliseconds of each side's runs: the load, its estimate, the bare loop and
    the overhead (load - bare loop); the overhead's ratio judged."""
    timings: dict[str, Timing] = {}
    for side, measured in runs.items():
        n = [m["ids"] for m in measured]
        for what, wall, cpu in (
            ("load", "wall", "cpu"),
            ("estimate", "estimate_wall", "estimate_cpu"),
            ("bare requests", "bare_wall", "bare_cpu"),
        ):
            timings[f"{what} per request (ms), {side}"] = Timing(
                f"{what} per request (ms), {side}",
                tuple(1e3 * m[wall] / k for m, k in zip(measured, n, strict=True)),
                tuple(1e3 * m[cpu] / k for m, k in zip(measured, n, strict=True)),
            )
    overhead = {
        (side, kind, cpu): _overhead(timings, side, kind, cpu=cpu)
        for side in SIDES
        for kind in ("best", "median")
        for cpu in (False, True)
    }
    ratios = [
        Ratio(
            f"overhead per request (load - bare loop, {kind}): working tree / baseline",
            f"load - bare requests, {SIDES[1]}",
            f"load - bare requests, {SIDES[0]}",
            overhead[SIDES[1], kind, False] / overhead[SIDES[0], kind, False],
            COLD_TARGET if kind == "best" else None,
            at_least=False,
            cpu_value=overhead[SIDES[1], kind, True] / overhead[SIDES[0], kind, True],
        )
        for kind in ("best", "median")
    ]
    ratios += [
        ratio(
            timings,
            f"{what} per request (ms), {SIDES[1]}",
            f"{what} per request (ms), {SIDES[0]}",
            name=f"{what} per request: working tree / baseline (best wall)",
        )
        for what in ("load", "estimate")
    ]
    rows = {
        side: sorted({(m["rows"], m["id_sum"], m["requests"]) for m in runs[side]})
        for side in SIDES
    }
    facts = {
        "baseline": f"{baseline}, its `src` from `git archive`, in fresh interpreters",
        "load": f"load_eval_details of quant {quant}'s closed trades, embedded sandbox, cold",
        "ids (requests) per load": sorted({m["ids"] for m in runs[SIDES[1]]}),
        "rows, sum of ids, requests (per side)": rows,
        "load average (1/5/15 min) before; after": load,
        "overhead per request, ms (best; median; best CPU), baseline -> working tree": "; ".join(
            f"{overhead[SIDES[0], kind, cpu]:.2f} -> {overhead[SIDES[1], kind, cpu]:.2f}"
            for kind, cpu in (("best", False), ("median", False), ("best", True))
        ),
    }
    checks = {
        "both sides loaded the same rows with one request per id": rows[SIDES[0]] == rows[SIDES[1]]
        and all(m["requests"] == m["ids"] for side in SIDES for m in runs[side]),
    }
    return BenchResult(
        "coldfetch",
        {"baseline": baseline, "quant": quant, "runs per side": len(runs[SIDES[1]])},
        timings,
        ratios,
        facts,
        checks,
    )


def _overhead(timings: Mapping[str, Timing], side: str, kind: str, *, cpu: bool) -> float:
    """The client's overhead per request (ms) of ``side``: the load's time less the bare
    loop's, both best or both median, of wall or CPU time (differences of separate runs would
    be noisier than either)."""
    load = timings[f"load per request (ms), {side}"]
    bare = timings[f"bare requests per request (ms), {side}"]
    pick = min if kind == "best" else statistics.median
    if cpu:
        return pick(load.cpu_runs) - pick(bare.cpu_runs)
    return pick(load.runs) - pick(bare.runs)


def main(argv: Sequence[str] | None = None) -> BenchResult:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_refactor")
    parser.add_argument("--repeat", type=int, default=DEFAULT_REPEAT)
    parser.add_argument("--baseline", help="the commit to compare with")
    parser.add_argument(
        "--cold-details",
        action="store_true",
        help=f"the cold per-id load (run_coldfetch; baseline {COLD_BASELINE})",
    )
    args = parser.parse_args(argv)
    if args.cold_details:
        result = run_coldfetch(args.repeat, baseline=args.baseline or COLD_BASELINE)
    else:
        result = run(args.repeat, baseline=args.baseline or BASELINE)
    print_result(result)
    return result


if __name__ == "__main__":
    main()
