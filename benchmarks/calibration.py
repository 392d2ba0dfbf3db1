"""Calibration: research answers scored against the sandbox generator's planted truth.

``python -m benchmarks.calibration --seeds 1-30 --json calibration.json`` builds the sandbox
world of each seed (``sandbox.datadir.ensure_world``), serves it on loopback
(``SandboxServer``), loads every quant's closed, executed trades and their buy evaluations'
values through the toolkit over HTTP (``load_trades``, ``trade_features``), runs the research
on each world and scores it. The harness reads the generator (``sandbox.sim.criteria``) for
the truth; the toolkit never does. docs/metrics.md ("Calibration") defines every figure.

* **Planted and noise**, declared by the generator (``sandbox.sim.criteria.PLANTED``, whose
  weights ``criterion_values`` reads, and ``NOISE``; a sandbox test checks both against the
  generator). *Planted*: the next day's return is mixed into the value; *noise*: drawn
  independently of the token's path and outcome (social traits, pure noise draws, the mint
  flag). The rest (market-derived values, the rug-linked LP lock) may carry real but
  unplanted signal and are scored in neither set.
* **Cells and their truth.** A coverage cell is (quant, market-cap class, criterion,
  threshold), the threshold one of ``GRID_QUANTILES`` of the criterion's values in the
  class in a *reference world* (``--reference-seed``, 0 by default, never scored): the same
  absolute thresholds in every world (playbooks and current thresholds are the same in every
  seed), fixed before any scored world is seen. Its statistic in a world is the replayed
  what-if row against the current threshold (the decision numbers: ``win_rate``,
  ``d_win_rate``, ``d_total_pnl_usd``, ``d_roi``); its *truth* is the mean of that statistic
  over the *other* worlds of the run (leave-one-out: a world's own noise is not its truth).
* **Coverage** = share of (world, cell) intervals holding the truth, among cells whose truth
  and interval are defined. **false_positive_rate** = share of (world, quant) families with a
  noise criterion significant at 5 % in any class; **power** = share of planted (world, quant,
  criterion) significant in some class; **planted_beats_noise** = the chance that a planted
  criterion's out-of-sample signal beats a noise one's in the same (world, quant): the
  signal is the screen's ``criterion_score`` (its classes pooled, in token-clustered
  standard errors); the previous figure (raw gains, one class at a time) is reported beside.

``new`` scores ``backtest.what_if_intervals`` (coverage) and ``backtest.screen`` (the rest);
``today`` scores ``what_if``'s interval columns (Wilson; token bootstrap; ``d_win_rate`` has
none) and ``rank_criteria`` (default rule, trade permutations), with the out-of-sample signal
of ``walk_forward(split=0.5)``; the last two replay every criterion many times (~110 s a
world), so they run on the first ``--today-worlds`` seeds only (all by default).

``--work-dir`` is the store (``calibration_store``): each world's loaded features in Parquet,
keyed by the seed and the sandbox's version, and today's answers; a re-run only redoes the
research. ``--load-only`` fills it (several processes over disjoint seeds may), ``--jobs N``
researches N worlds at once, ``--group NAME=SEEDS`` scores groups of seeds apart.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing
import sqlite3
import sys
import tempfile
import time
import warnings
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from benchmarks.calibration_store import Store

QUANTS = (1, 2, 3)
GRID_QUANTILES = (0.1, 0.3, 0.5, 0.7, 0.9)
STATISTICS = ("win_rate", "d_win_rate", "d_total_pnl_usd", "d_roi")
#: planted_beats_noise pairs criteria of the same (world, quant); the by-class figure of the
#: previous harness (raw gains, one class at a time) is reported beside it.
PAIRED = ("world", "quant_id")
BY_CLASS = ("world", "quant_id", "market_cap_class")


def planted_criteria() -> frozenset[str]:
    """The criteria the generator plants (``sandbox.sim.criteria.PLANTED``, declared there)."""
    from quantscope.sandbox.sim.criteria import PLANTED

    return frozenset(PLANTED)


def noise_criteria() -> frozenset[str]:
    """The criteria drawn independently of outcomes (``sandbox.sim.criteria.NOISE``)."""
    from quantscope.sandbox.sim.criteria import NOISE as declared

    return frozenset(declared)


NOISE = noise_criteria()


def parse_seeds(text: str) -> list[int]:
    """``"1-30"``, ``"1,4,9"`` or ``"1-5,40"`` as a list of seeds."""
    seeds: list[int] = []
    for part in text.split(","):
        a, _, b = part.strip().partition("-")
        seeds.extend(range(int(a), int(b) + 1) if b else [int(a)])
    return seeds


def _full_quota(db_path: Path) -> None:
    """Forget the requests counted today on a served copy (a world of 3,000+ trades needs
    more eval-details requests than one day's enterprise quota)."""
    with contextlib.closing(sqlite3.connect(db_path)) as conn, conn:
        conn.execute("DELETE FROM quota")


def load_world(
    seed: int, data_dir: Path, quants: Sequence[int] = QUANTS
) -> tuple[list[pd.DataFrame], dict]:
    """Build (or reuse) the world, serve it, load each quant's features over HTTP."""
    from quantscope import backtest as bt
    from quantscope import loaders
    from quantscope._http.client import Client
    from quantscope.sandbox.datadir import copy_world, ensure_world
    from quantscope.sandbox.serve import SandboxServer

    t0 = time.perf_counter()
    info = ensure_world(data_dir, seed=seed, scale=1)
    t1 = time.perf_counter()
    frames = []
    with tempfile.TemporaryDirectory(prefix="calib-serve-") as tmp:
        # A copy of its own, so the built world stays pristine and the quota is full.
        served = copy_world(info, Path(tmp) / "world")
        with (
            SandboxServer(served) as server,
            Client(server.url, server.keys["enterprise"], cache_dir=tmp, progress=False) as client,
        ):
            for q in quants:
                _full_quota(served.db_path)
                trades = loaders.load_trades(q, client=client)
                frames.append(bt.trade_features(trades, confirm=True, client=client))
    t2 = time.perf_counter()
    return frames, {"build_s": t1 - t0, "load_s": t2 - t1}


def _class_rows(features: pd.DataFrame, cls: str) -> pd.DataFrame:
    rows = features[(features["market_cap_class"].astype("string") == cls).fillna(False)]
    rows.attrs = features.attrs
    return rows


def research(
    frames: list[pd.DataFrame],
    grids: dict[tuple[int, str, str], np.ndarray],
    criteria: list[str],
    today: bool = True,
    quants: Sequence[int] = QUANTS,
    screen_criteria: Sequence[str] | None = None,
    today_cells: bool = True,
) -> dict[str, Any]:
    """One world's answers: with ``today``, today's ranking and walk-forward (``rank``,
    ``oos``); without, the cells and the screen (``today_cells``: today's what-if intervals
    of the cells too, else NaN)."""
    from quantscope import backtest as bt

    cells: list[dict[str, Any]] = []
    screened, ranked, oos = [], [], []
    for q, features in zip(quants, frames, strict=True):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if not today:
                s = bt.screen(features, screen_criteria)
                s["quant_id"] = q
                screened.append(s)
            if today:
                r = bt.rank_criteria(features)
                r["quant_id"] = q
                ranked.append(r)
            for c in criteria if today else []:
                w = bt.walk_forward(features, c, split=0.5)
                for _, row in w.iterrows():
                    oos.append(
                        {
                            "quant_id": q,
                            "market_cap_class": row["market_cap_class"],
                            "criterion": c,
                            "signal": row["out_of_sample_gain"],
                        }
                    )
            for cls in () if today else ("DEGEN_CAP", "LOW_CAP", "MID_CAP"):
                rows = _class_rows(features, cls)
                if len(rows) < 30:
                    continue
                for c in criteria:
                    grid = grids.get((q, cls, c))
                    if grid is None:
                        continue
                    new = bt.what_if_intervals(rows, c, grid)
                    old = bt.what_if(rows, c, grid) if today_cells else pd.DataFrame()
                    for i, t in enumerate(grid):
                        cell = {
                            "quant_id": q,
                            "market_cap_class": cls,
                            "criterion": c,
                            "threshold": float(t),
                        }
                        for name in STATISTICS:
                            cell[name] = float(new[name].iloc[i])
                            cell[f"new_{name}_lo"] = float(new[f"{name}_lo"].iloc[i])
                            cell[f"new_{name}_hi"] = float(new[f"{name}_hi"].iloc[i])
                            lo, hi = f"{name}_lo", f"{name}_hi"
                            has = lo in old.columns and len(old)
                            cell[f"today_{name}_lo"] = float(old[lo].iloc[i]) if has else np.nan
                            cell[f"today_{name}_hi"] = float(old[hi].iloc[i]) if has else np.nan
                        cell["moved"] = new["interval"].iloc[i] == "bootstrap"
                        cells.append(cell)
    return {
        "cells": pd.DataFrame(cells),
        "screen": pd.concat(screened, ignore_index=True) if screened else pd.DataFrame(),
        "rank": pd.concat(ranked, ignore_index=True) if ranked else pd.DataFrame(),
        "oos": pd.DataFrame(oos),
    }


def thresholds(
    worlds: list[list[pd.DataFrame]], criteria: list[str], quants: Sequence[int] = QUANTS
) -> dict:
    """The fixed thresholds of each (quant, class, criterion): quantiles of the values of
    ``worlds`` pooled (the reference world alone in a run)."""
    grids = {}
    for qi, q in enumerate(quants):
        pooled = pd.concat([w[qi] for w in worlds], ignore_index=True)
        klass = pooled["market_cap_class"].astype("string")
        for cls in ("DEGEN_CAP", "LOW_CAP", "MID_CAP"):
            rows = pooled[(klass == cls).fillna(False).to_numpy()]
            for c in criteria:
                values = rows[c].dropna().to_numpy(dtype=np.float64)
                if len(values):
                    grids[q, cls, c] = np.unique(
                        np.quantile(values, GRID_QUANTILES, method="inverted_cdf")
                    )
    return grids


def coverage(cells: pd.DataFrame, method: str, rows: pd.Series | None = None) -> dict[str, Any]:
    """Share of intervals holding the leave-one-out truth, per statistic, over ``rows`` (a
    mask; default all). The truth is computed over every world's cell, scored rows or not."""
    key = ["quant_id", "market_cap_class", "criterion", "threshold"]
    out: dict[str, Any] = {}
    for name in STATISTICS:
        x = cells[[*key, "world", name, f"{method}_{name}_lo", f"{method}_{name}_hi"]].copy()
        grouped = x.groupby(key)[name]
        total, count = grouped.transform("sum"), grouped.transform("count")
        own = x[name].notna()
        truth = (total - x[name].where(own, 0.0)) / (count - own.astype(int))
        lo, hi = x[f"{method}_{name}_lo"], x[f"{method}_{name}_hi"]
        scored = truth.notna() & x[name].notna() & np.isfinite(truth)
        if rows is not None:
            scored &= rows
        has = scored & lo.notna() & hi.notna()
        inside = has & (lo <= truth + 1e-12) & (truth - 1e-12 <= hi)
        out[name] = round(float(inside.sum() / has.sum()), 4) if has.any() else None
        out[f"{name}_cells"] = int(has.sum())
        out[f"{name}_without_interval"] = int((scored & ~has).sum())
    return out


def headline(cells: pd.DataFrame, method: str, rows: pd.Series | None = None) -> dict[str, Any]:
    """Coverage of the win rate over every cell, of the changes over the cells where
    something moved (a row where nothing moved is scored apart: its truth is mostly 0);
    ``rows``: only these (e.g. one group of seeds; the truth still uses every world)."""
    every = coverage(cells, method, rows)
    moved = coverage(cells, method, cells["moved"] if rows is None else cells["moved"] & rows)
    return {
        key: (every if name == "win_rate" else moved)[key]
        for name in STATISTICS
        for key in (name, f"{name}_cells", f"{name}_without_interval")
    }


def families(table: pd.DataFrame, planted: frozenset[str]) -> dict[str, Any]:
    """False-positive rate over (world, quant) families and power over planted rows."""
    if table.empty:
        return {"false_positive_rate": None, "families": 0, "power": None, "planted_rows": 0}
    sig = table.assign(sig=table["p_value"] < 0.05)
    noise = sig[sig["criterion"].isin(NOISE)]
    fam = noise.groupby(["world", "quant_id"])["sig"].any()
    plant = sig[sig["criterion"].isin(planted)]
    rows = plant.groupby(["world", "quant_id", "criterion"])["sig"].any()
    return {
        "false_positive_rate": round(float(fam.mean()), 4),
        "families": len(fam),
        "power": round(float(rows.mean()), 4),
        "planted_rows": len(rows),
    }


def beats(signals: pd.DataFrame, planted: frozenset[str], within: Sequence[str]) -> float | None:
    """P(planted signal > noise signal) over (planted, noise) pairs in the same ``within``
    group (ties count half)."""
    if signals.empty:
        return None
    wins = pairs = 0.0
    for _, g in signals.groupby(list(within)):
        p = g.loc[g["criterion"].isin(planted), "signal"].dropna().to_numpy()
        n = g.loc[g["criterion"].isin(NOISE), "signal"].dropna().to_numpy()
        if len(p) and len(n):
            d = p[:, None] - n[None, :]
            wins += float((d > 0).sum() + 0.5 * (d == 0).sum())
            pairs += d.size
    return round(wins / pairs, 4) if pairs else None


def criterion_signals(screen: pd.DataFrame) -> pd.DataFrame:
    """The screen's out-of-sample signal of each (world, quant, criterion): its
    ``criterion_score`` (classes pooled, in token-clustered standard errors)."""
    if screen.empty:
        return pd.DataFrame(columns=["world", "quant_id", "criterion", "signal"])
    key = ["world", "quant_id", "criterion"]
    return (
        screen.groupby(key, as_index=False)["criterion_score"]
        .first()
        .rename(columns={"criterion_score": "signal"})
    )


def today_signals(oos: pd.DataFrame) -> pd.DataFrame:
    """Today's out-of-sample signal of each (world, quant, criterion): the mean over its
    classes of ``walk_forward(split=0.5)``'s out-of-sample gain."""
    if oos.empty:
        return pd.DataFrame(columns=["world", "quant_id", "criterion", "signal"])
    return oos.groupby(["world", "quant_id", "criterion"], as_index=False)["signal"].mean()


def _world(
    seed: int,
    data_dir: Path,
    store: Store | None,
    reference: int,
    grids: dict | None,
    criteria: list[str],
    today: bool,
    quants: Sequence[int] = QUANTS,
    screened: Sequence[str] | None = None,
) -> dict[str, Any]:
    """One world's features (from ``store`` when kept there), timing and research.

    The new methods' research is always run (it is what a re-run is for); today's answers are
    run with ``today`` unless the store keeps them.
    """
    kept = store.get_world(seed, quants) if store is not None else None
    if kept is None:
        frames, timing = load_world(seed, data_dir, quants)
        print(
            f"seed {seed}: built {timing['build_s']:.1f} s, loaded {timing['load_s']:.1f} s",
            file=sys.stderr,
            flush=True,
        )
        if store is not None:
            store.put_world(seed, quants, frames, timing)
    else:
        frames, timing = kept
        timing = {**timing, "kept": True}
    found: dict[str, Any] = {"frames": frames, "timing": dict(timing), "today": False}
    if grids is None:
        return found
    t0 = time.perf_counter()
    found["parts"] = research(frames, grids, criteria, False, quants, screened, today)
    found["timing"]["research_s"] = time.perf_counter() - t0
    if today:
        old = store.get_today(seed, reference) if store is not None else None
        if old is None:
            t0 = time.perf_counter()
            answers = research(frames, grids, criteria, True, quants)
            old = {"rank": answers["rank"], "oos": answers["oos"]}
            seconds = time.perf_counter() - t0
            if store is not None:
                store.put_today(seed, reference, old, seconds)
            old["timing"] = {"today_s": seconds}
        found["parts"].update(rank=old["rank"], oos=old["oos"])
        found["timing"].update(old["timing"])
        found["today"] = True
    print(f"seed {seed}: research done {found['timing']}", file=sys.stderr, flush=True)
    return found


def run(
    seeds: Sequence[int],
    data_dir: Path,
    work_dir: Path | None = None,
    reference: int = 0,
    today_worlds: int | None = None,
    quants: Sequence[int] = QUANTS,
    criteria: Sequence[str] | None = None,
    jobs: int = 1,
    groups: dict[str, Sequence[int]] | None = None,
) -> dict[str, Any]:
    """Research every world and score it: the JSON the command writes.

    ``groups``: name -> seeds, figures of each group of seeds apart (``by_group``; the truth
    of a cell is still its mean over every other world of the run).

    ``jobs``: worlds researched (and loaded, when not kept) in that many processes at once.

    ``work_dir``: the Parquet store (``calibration_store``) that keeps loaded worlds and
    today's answers; a world found there is not built or loaded again.

    ``criteria``: score (and screen) these only (default: every planted and noise criterion
    scored, every criterion screened), for a small run.
    """
    planted = planted_criteria()
    scored = sorted(criteria) if criteria is not None else sorted(planted | NOISE)
    screened = list(criteria) if criteria is not None else None
    if reference in seeds:
        raise ValueError(f"the reference world (seed {reference}) cannot be scored too")
    store = Store(work_dir) if work_dir is not None else None
    started = time.perf_counter()
    ref = _world(reference, data_dir, store, reference, None, scored, False, quants)
    grids = thresholds([ref["frames"]], scored, quants)
    parts: dict[str, list[pd.DataFrame]] = {"cells": [], "screen": [], "rank": [], "oos": []}
    timing = []
    jobs_args = [
        (
            seed,
            data_dir,
            store,
            reference,
            grids,
            scored,
            today_worlds is None or i < today_worlds,
            quants,
            screened,
        )
        for i, seed in enumerate(seeds)
    ]
    if jobs > 1:
        # Worlds are independent: research them in worker processes (results come back in
        # the seeds' order; the features stay in the workers).
        ctx = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
            answers = list(pool.map(_world_answers, jobs_args))
    else:
        answers = [_world_answers(a) for a in jobs_args]
    for seed, found in zip(seeds, answers, strict=True):
        timing.append({"seed": seed, **found["timing"]})
        for name, frame in found["parts"].items():
            if not frame.empty and (found["today"] or name in ("cells", "screen")):
                parts[name].append(frame.assign(world=seed))
    cells = pd.concat(parts["cells"], ignore_index=True)
    screen = pd.concat(parts["screen"], ignore_index=True)
    rank = pd.concat(parts["rank"], ignore_index=True) if parts["rank"] else pd.DataFrame()
    oos = pd.concat(parts["oos"], ignore_index=True) if parts["oos"] else pd.DataFrame()
    moved = cells["moved"]
    new = {
        "coverage": headline(cells, "new"),
        **families(screen, planted),
        "planted_beats_noise": beats(criterion_signals(screen), planted, PAIRED),
        "planted_beats_noise_by_class_raw_gain": beats(screen, planted, BY_CLASS),
        "planted_beats_noise_by_criterion": {
            p: beats(criterion_signals(screen), frozenset({p}), PAIRED) for p in sorted(planted)
        },
    }
    today_figures = {
        "coverage": headline(cells, "today"),
        **families(rank, planted),
        "planted_beats_noise": beats(today_signals(oos), planted, PAIRED),
        "planted_beats_noise_by_class_raw_gain": beats(oos, planted, BY_CLASS),
        "worlds_ranked": int(rank["world"].nunique()) if len(rank) else 0,
    }
    by_group = {}
    for name, members in (groups or {}).items():
        inside = cells["world"].isin(members)
        mine = screen[screen["world"].isin(members)]
        by_group[name] = {
            "seeds": sorted(members),
            "coverage": {
                k: v for k, v in headline(cells, "new", inside).items() if k in STATISTICS
            },
            **families(mine, planted),
            "planted_beats_noise": beats(criterion_signals(mine), planted, PAIRED),
        }
    cov = new["coverage"]
    return {
        "worlds": len(seeds),
        "seeds": list(seeds),
        "reference_seed": reference,
        "coverage": {k: cov[k] for k in STATISTICS},
        "false_positive_rate": new["false_positive_rate"],
        "power": new["power"],
        "planted_beats_noise": new["planted_beats_noise"],
        "new": new,
        "by_group": by_group,
        "today": today_figures,
        "coverage_every_row": coverage(cells, "new"),
        "coverage_rows_where_nothing_moved": coverage(cells, "new", ~moved),
        "today_coverage_every_row": coverage(cells, "today"),
        "moved_cell_share": round(float(moved.mean()), 4),
        "planted": sorted(planted),
        "noise": sorted(NOISE),
        "time_s": {
            "build": round(sum(t["build_s"] for t in timing), 1),
            "load": round(sum(t["load_s"] for t in timing), 1),
            "research": round(sum(t.get("research_s", 0.0) for t in timing), 1),
            "today_research": round(sum(t.get("today_s", 0.0) for t in timing), 1),
            "wall_this_run": round(time.perf_counter() - started, 1),
            "worlds_loaded_this_run": sum(not t.get("kept", False) for t in timing),
        },
        "per_world": timing,
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
    }


def _world_answers(args: tuple[Any, ...]) -> dict[str, Any]:
    """``_world`` without the features (what a worker process sends back)."""
    found = _world(*args)
    found.pop("frames", None)
    return found


def load_worlds(
    seeds: Sequence[int], data_dir: Path, work_dir: Path, quants: Sequence[int] = QUANTS
) -> dict[str, Any]:
    """Build and load the worlds of ``seeds`` into the store (those kept there are skipped):
    the slow part, done once; ``run`` then only researches."""
    store = Store(work_dir)
    timing = []
    for seed in seeds:
        found = _world(seed, data_dir, store, seed, None, [], False, quants)
        timing.append({"seed": seed, **found["timing"]})
    return {"loaded": timing}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.calibration", description=__doc__)
    parser.add_argument("--seeds", default="1-30", help="e.g. 1-30 or 1,5,9 (default 1-30)")
    parser.add_argument("--json", type=Path, help="write the figures to this file")
    parser.add_argument("--data-dir", type=Path, help="where worlds are built (default: temp)")
    parser.add_argument(
        "--work-dir",
        type=Path,
        help="the Parquet store: loaded worlds and today's answers are kept and reused",
    )
    parser.add_argument(
        "--reference-seed",
        type=int,
        default=0,
        help="the world whose values fix the thresholds (never scored)",
    )
    parser.add_argument(
        "--today-worlds",
        type=int,
        help="run today's ranking and walk-forward on the first N seeds only",
    )
    parser.add_argument(
        "--jobs", type=int, default=1, help="worlds researched at once (processes, default 1)"
    )
    parser.add_argument(
        "--group",
        action="append",
        default=[],
        metavar="NAME=SEEDS",
        help="figures of these seeds apart too, e.g. fresh=200-219 (repeatable)",
    )
    parser.add_argument(
        "--load-only",
        action="store_true",
        help="build and load the worlds into --work-dir, research nothing",
    )
    args = parser.parse_args(argv)
    seeds = parse_seeds(args.seeds)
    if args.load_only:
        if args.work_dir is None:
            parser.error("--load-only keeps the worlds in --work-dir: give one")
        with tempfile.TemporaryDirectory(prefix="calib-worlds-") as tmp:
            loaded = load_worlds(seeds, args.data_dir or Path(tmp), args.work_dir)
        print(json.dumps(loaded, indent=2, default=float))
        return 0
    if len(seeds) < 2:
        parser.error("the truth of a cell is its mean over the other worlds: give >= 2 seeds")
    with tempfile.TemporaryDirectory(prefix="calib-worlds-") as tmp:
        data_dir = args.data_dir or Path(tmp)
        result = run(
            seeds,
            data_dir,
            args.work_dir,
            args.reference_seed,
            args.today_worlds,
            jobs=args.jobs,
            groups={
                name: parse_seeds(text) for name, _, text in (g.partition("=") for g in args.group)
            },
        )
    text = json.dumps(result, indent=2, default=float)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")
    print(
        json.dumps(
            {
                k: result[k]
                for k in (
                    "worlds",
                    "coverage",
                    "false_positive_rate",
                    "power",
                    "planted_beats_noise",
                )
            },
            indent=2,
        )
    )
    print(json.dumps({"today": result["today"]}, indent=2, default=float))
    return 0


if __name__ == "__main__":
    sys.exit(main())
