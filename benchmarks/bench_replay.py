"""The default what-if (the pass rule replayed) against the hard-filter sweep and the floors.

Issue 22's targets, in one run on 1M trades: ``what_if`` of 1,000 thresholds under the default
rule within 2x of the same call under ``rule="filter"`` (issue 10's was 5x); the filter within
1.3x of ``np.argsort`` of the column (per-class current thresholds); ``what_if_grid`` 100 x 100
replayed within 3x of the grid floor, the filter grid within 1.5x.

**Input**: ``bench_sweep``'s 1M synthetic trades (3 quants x 3 market-cap classes,
``buy_sell_ratio`` the swept criterion) with two more criteria, ``smart_money_buys`` (a count)
and ``ai_confidence`` (0-100), and the quants' playbooks kept in ``attrs`` as ``trade_features``
keeps them, so both calls find the playbook and the current thresholds themselves. Every
BUYING slice holds the three criteria and a disabled one the trades lack; the slices differ
so that the replay is a real mix of rows, each a hard filter of its own
(``backtest/_sample.py``):

* DEGEN_CAP: ``ai_confidence`` required, the other two not, pass mark 60: a trade whose AI
  check fails is never kept, one with enough smart money is kept at every threshold, the
  rest are decided by ``buy_sell_ratio`` (quant 3's pass mark 70 needs all three);
* LOW_CAP: ``buy_sell_ratio`` required (every kept trade is decided by it), and one of the
  other two needed;
* MID_CAP: ``smart_money_buys`` weighs twice and ``ai_confidence`` is required, pass mark 50.

The current ``buy_sell_ratio`` threshold differs by class (0.9, 1.0, 1.1), so both rules
find a current threshold per row. The 1,000 thresholds are quantiles of the values.

**Cases**: ``what_if (filter)``, ``what_if(features, "buy_sell_ratio", thresholds,
rule="filter")``; ``what_if (replay)``, the same call with the default rule: per row the
verdict with the criterion failed and passed (``_sample._verdicts``), the rows moved to
always-pass, kept as they are, or dropped, then the same sweep; ``np.argsort`` of the
column; ``what_if_grid`` of ``buy_sell_ratio`` x ``ai_confidence`` (100 quantiles each) under
both rules; ``grid floor`` (``grid_floor``): buckets by ``np.searchsorted`` of the values into
the sorted thresholds, ``np.bincount`` per cell and a 2-D suffix cumulative sum, as issue 22
measured its floor.

**Checked in the warm-up**: the replayed rows equal a brute-force replay (each threshold
written into a copy of every playbook, the trades decided by ``replay.decide_rows`` and
counted) on a subsample of 2,000 trades and 20 thresholds, and on the 1M trades at three of
the thresholds; the filter's trade counts equal ``values >= t``; the filter grid equals the
floor's counts and sums; three cells of the replayed grid equal a brute-force replay with
both thresholds moved.

Run: ``python -m benchmarks.bench_replay [--trades N] [--thresholds N] [--repeat N]``.

Results: benchmarks/README.md, "replay".
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from benchmarks import bench_sweep
from benchmarks._common import BenchResult, Case, measure, print_result, ratio
from quantscope import backtest as bt
from quantscope.backtest._rules import playbook_columns
from quantscope.backtest.features import kept_playbooks
from quantscope.backtest.replay import decide_rows

DEFAULT_TRADES = 1_000_000
DEFAULT_THRESHOLDS = 1_000
DEFAULT_REPEAT = 5
CHECK_TRADES = 2_000  # the brute-force replay's subsample
CHECK_THRESHOLDS = 20
CHECK_FULL = 3  # thresholds also replayed by brute force over every trade

CRITERION = bench_sweep.CRITERION
SMART = "smart_money_buys"
AI = "ai_confidence"
DISABLED = "twitter_followers"  # in every slice, disabled, absent from the trades
CURRENT = {"DEGEN_CAP": 0.9, "LOW_CAP": 1.0, "MID_CAP": 1.1}
QUANTS = (1, 2, 3)

FILTER = "what_if (filter)"
REPLAY = "what_if (replay)"
ARGSORT = "np.argsort"
GRID_FILTER = "what_if_grid (filter)"
GRID_REPLAY = "what_if_grid (replay)"
FLOOR = "grid floor"
DEFAULT_GRID = 100  # thresholds per criterion of the grid
GRID_CRITERIA = (CRITERION, AI)
#: Issue 22's targets, each a ratio of best wall times.
TARGET_REPLAY = 2.0  # what_if (replay) / what_if (filter)
TARGET_FILTER = 1.3  # what_if (filter) / np.argsort of the column
TARGET_GRID_REPLAY = 3.0  # what_if_grid (replay) / floor
TARGET_GRID_FILTER = 1.5  # what_if_grid (filter) / floor

# class -> criterion -> (weight, required); then the pass mark
_SLICES: dict[str, tuple[dict[str, tuple[float, bool]], float]] = {
    "DEGEN_CAP": ({CRITERION: (1.0, False), SMART: (1.0, False), AI: (1.0, True)}, 60.0),
    "LOW_CAP": ({CRITERION: (1.0, True), SMART: (1.0, False), AI: (1.0, False)}, 60.0),
    "MID_CAP": ({CRITERION: (1.0, False), SMART: (2.0, False), AI: (1.0, True)}, 50.0),
}
_OTHER_THRESHOLDS = {SMART: 2.0, AI: 50.0, DISABLED: 1_000.0}


def synthetic_playbook(quant: int) -> pd.DataFrame:
    """A quant's playbook frame (the columns the pass rule reads, ``noTime`` rows only)."""
    rows = []
    for mc_class, (criteria, pass_mark) in _SLICES.items():
        if quant == 3 and mc_class == "DEGEN_CAP":
            pass_mark = 70.0
        for config_type in ("SCANNING", "BUYING"):
            for criterion, (weight, required) in [*criteria.items(), (DISABLED, (1.0, False))]:
                rows.append(
                    {
                        "market_cap_class": mc_class,
                        "config_type": config_type,
                        "criterion": criterion,
                        "interval": "noTime",
                        "threshold": CURRENT[mc_class]
                        if criterion == CRITERION
                        else _OTHER_THRESHOLDS[criterion],
                        "weight": weight,
                        "required": required,
                        "disabled": criterion == DISABLED,
                        "operator": "V_GTE_T",
                        "pass_mark": pass_mark,
                    }
                )
    frame = pd.DataFrame(rows)
    frame.attrs["quantscope"] = {"quant_id": quant}
    return frame


def synthetic_features(n: int, seed: int = 7) -> pd.DataFrame:
    """``bench_sweep``'s trades with two more criteria and the quants' playbooks in attrs."""
    frame = bench_sweep.synthetic_features(n, seed)
    rng = np.random.default_rng(seed + 1)
    frame[SMART] = rng.poisson(1.8, n).astype(np.float64)
    frame[AI] = np.round(rng.uniform(35.0, 98.0, n), 1)
    frame.attrs["backtest"] = {
        "criteria": (CRITERION, SMART, AI),
        "operators": dict.fromkeys((CRITERION, SMART, AI), "V_GTE_T"),
        "decided_thresholds": {
            (q, c): {CRITERION: CURRENT[c], SMART: 2.0, AI: 50.0} for q in QUANTS for c in CURRENT
        },
        "playbooks": playbook_columns({q: synthetic_playbook(q) for q in QUANTS}, QUANTS),
    }
    return frame


def moved(playbooks: Mapping[int, pd.DataFrame], threshold: float) -> dict[int, pd.DataFrame]:
    """Copies of the playbooks with ``CRITERION``'s threshold ``threshold`` in every slice."""
    out = {}
    for q, frame in playbooks.items():
        changed = frame.copy()
        changed.loc[changed["criterion"] == CRITERION, "threshold"] = threshold
        out[q] = changed
    return out


def brute_force(
    features: pd.DataFrame, thresholds: Sequence[float]
) -> tuple[dict[str, np.ndarray], dict[str, float]]:
    """Trades kept, wins and PnL at each threshold by deciding every trade with the changed
    playbooks (and at the current thresholds: the unchanged playbooks)."""
    playbooks = kept_playbooks(features)
    assert playbooks is not None
    win = features["profitable"].to_numpy(dtype=bool)
    pnl = features["pnl_usd"].to_numpy()

    def sums(books: Mapping[int, pd.DataFrame]) -> tuple[int, int, float]:
        kept = decide_rows(books, features)["passed"].to_numpy(dtype=bool)
        return int(kept.sum()), int((kept & win).sum()), float(pnl[kept].sum())

    found = [sums(moved(playbooks, t)) for t in thresholds]
    base = sums(playbooks)
    columns = ("trades", "wins", "total_pnl_usd")
    table = {name: np.array([f[i] for f in found]) for i, name in enumerate(columns)}
    return table, dict(zip(columns, base, strict=True))


def assert_replayed(table: pd.DataFrame, features: pd.DataFrame, rows: Sequence[int]) -> None:
    """The rows ``rows`` of a replayed what-if equal the brute-force replay, changes too."""
    thresholds = table["threshold"].to_numpy()[list(rows)]
    expected, base = brute_force(features, thresholds)
    got = table.iloc[list(rows)]
    assert got["trades"].tolist() == expected["trades"].tolist()
    assert got["wins"].tolist() == expected["wins"].tolist()
    np.testing.assert_allclose(got["total_pnl_usd"], expected["total_pnl_usd"], atol=1e-6)
    assert got["d_trades"].tolist() == (expected["trades"] - base["trades"]).tolist()
    np.testing.assert_allclose(
        got["d_total_pnl_usd"], expected["total_pnl_usd"] - base["total_pnl_usd"], atol=1e-6
    )


def grid_floor(features: pd.DataFrame, grids: Sequence[np.ndarray]) -> dict[str, np.ndarray]:
    """The floor of a 2-D sweep, as issue 22 measured it: each row's bucket per criterion by
    ``np.searchsorted`` of the values into the sorted thresholds, ``np.bincount`` of the
    trades, wins and PnL per cell, and a 2-D suffix cumulative sum (``V_GTE_T``: kept at
    ``(i, j)`` are the cells above both). No labels, no baseline, no intervals."""
    n_a, n_b = (len(g) + 1 for g in grids)
    a, b = (
        np.searchsorted(np.sort(g), features[c].to_numpy(), side="right")
        for c, g in zip(GRID_CRITERIA, grids, strict=True)
    )
    cells = a * n_b + b
    win = features["profitable"].to_numpy(dtype=bool)
    pnl = features["pnl_usd"].to_numpy()
    out = {}
    for name, weights in (("trades", None), ("wins", win), ("total_pnl_usd", pnl)):
        table = np.bincount(cells, weights=weights, minlength=n_a * n_b).reshape(n_a, n_b)
        suffix = table[::-1, ::-1].cumsum(axis=0).cumsum(axis=1)[::-1, ::-1]
        out[name] = suffix[1:, 1:]
    return out


def moved_both(
    playbooks: Mapping[int, pd.DataFrame], thresholds: Mapping[str, float]
) -> dict[int, pd.DataFrame]:
    """Copies of the playbooks with each criterion's threshold moved in every slice."""
    out = {}
    for q, frame in playbooks.items():
        changed = frame.copy()
        for criterion, threshold in thresholds.items():
            changed.loc[changed["criterion"] == criterion, "threshold"] = threshold
        out[q] = changed
    return out


def _check_grid(results: Mapping[str, object], features: pd.DataFrame, seed: int) -> None:
    """The filter grid equals the floor's counts and sums; three cells of the replayed grid
    equal a brute-force replay with both thresholds written into every playbook."""
    filtered, replayed, floor = results[GRID_FILTER], results[GRID_REPLAY], results[FLOOR]
    assert isinstance(filtered, pd.DataFrame)
    assert isinstance(replayed, pd.DataFrame)
    assert isinstance(floor, dict)
    assert replayed.attrs["what_if"]["question"] == "effect"
    assert filtered["trades"].tolist() == floor["trades"].reshape(-1).astype(int).tolist()
    assert filtered["wins"].tolist() == floor["wins"].reshape(-1).astype(int).tolist()
    np.testing.assert_allclose(
        filtered["total_pnl_usd"], floor["total_pnl_usd"].reshape(-1), rtol=1e-9, atol=1e-6
    )
    playbooks = kept_playbooks(features)
    assert playbooks is not None
    win = features["profitable"].to_numpy(dtype=bool)
    picks = np.random.default_rng(seed).choice(len(replayed), CHECK_FULL, replace=False)
    for i in sorted(picks.tolist()):
        row = replayed.iloc[i]
        books = moved_both(playbooks, {c: float(row[c]) for c in GRID_CRITERIA})
        kept = decide_rows(books, features)["passed"].to_numpy(dtype=bool)
        assert int(row["trades"]) == int(kept.sum()), (i, row["trades"], kept.sum())
        assert int(row["wins"]) == int((kept & win).sum())


def mix(features: pd.DataFrame) -> dict[str, int]:
    """How the playbooks decide the trades as ``CRITERION`` moves: kept at every threshold,
    decided by it, or never kept."""
    playbooks = kept_playbooks(features)
    assert playbooks is not None
    anyway = decide_rows(playbooks, features, failing=[CRITERION])["passed"]
    if_passed = decide_rows(playbooks, features, forced=[CRITERION])["passed"]
    anyway_, if_passed_ = anyway.to_numpy(dtype=bool), if_passed.to_numpy(dtype=bool)
    return {
        "always kept": int(anyway_.sum()),
        "decided by the criterion": int((if_passed_ & ~anyway_).sum()),
        "never kept": int((~if_passed_).sum()),
    }


def _check(results: Mapping[str, object], features: pd.DataFrame, seed: int) -> None:
    replayed, filtered = results[REPLAY], results[FILTER]
    assert isinstance(replayed, pd.DataFrame)
    assert isinstance(filtered, pd.DataFrame)
    assert replayed.attrs["what_if"]["rule"] == "replay"
    assert filtered.attrs["what_if"]["question"] == "signal"
    values = features[CRITERION].to_numpy()
    thresholds = filtered["threshold"].to_numpy()
    assert filtered["trades"].tolist() == [int((values >= t).sum()) for t in thresholds]
    picks = np.random.default_rng(seed).choice(len(replayed), CHECK_FULL, replace=False)
    assert_replayed(replayed, features, sorted(picks.tolist()))
    sub = features.iloc[: min(CHECK_TRADES, len(features))]
    grid = np.quantile(sub[CRITERION].to_numpy(), np.linspace(0.0, 1.0, CHECK_THRESHOLDS))
    assert_replayed(bt.what_if(sub, CRITERION, grid), sub, range(CHECK_THRESHOLDS))


def run(
    n_trades: int = DEFAULT_TRADES,
    n_thresholds: int = DEFAULT_THRESHOLDS,
    repeat: int = DEFAULT_REPEAT,
    *,
    grid: int = DEFAULT_GRID,
    seed: int = 7,
) -> BenchResult:
    """Time both rules on ``n_trades`` trades and ``n_thresholds`` thresholds, np.argsort of
    the column, and both rules' ``grid`` x ``grid`` grids against the floor."""
    features = synthetic_features(n_trades, seed)
    values = features[CRITERION].to_numpy()
    thresholds = np.quantile(values, np.linspace(0.0, 1.0, n_thresholds))
    grids = tuple(
        np.quantile(features[c].to_numpy(), np.linspace(0.0, 1.0, grid)) for c in GRID_CRITERIA
    )
    cases: list[Case[None]] = [
        Case(FILTER, lambda _: bt.what_if(features, CRITERION, thresholds, rule="filter")),
        Case(REPLAY, lambda _: bt.what_if(features, CRITERION, thresholds)),
        Case(ARGSORT, lambda _: np.argsort(values)),
        Case(FLOOR, lambda _: grid_floor(features, grids)),
        Case(GRID_FILTER, lambda _: bt.what_if_grid(features, GRID_CRITERIA, grids, rule="filter")),
        Case(GRID_REPLAY, lambda _: bt.what_if_grid(features, GRID_CRITERIA, grids)),
    ]

    def check(results: Mapping[str, object]) -> None:
        _check(results, features, seed)
        _check_grid(results, features, seed)

    timings = measure(cases, repeat, check=check)
    counts = mix(features)
    facts: dict[str, object] = {f"trades {k}": v for k, v in counts.items()}
    facts["brute-force replay checked"] = (
        f"{min(CHECK_TRADES, n_trades)} trades x {CHECK_THRESHOLDS} thresholds, "
        f"{n_trades} trades x {CHECK_FULL} thresholds"
    )
    checks = {"every kind of row present (always, decided, never)": min(counts.values()) > 0}
    params = {"trades": n_trades, "thresholds": n_thresholds, "grid": grid, "repeat": repeat}
    ratios = [
        ratio(timings, REPLAY, FILTER, TARGET_REPLAY, at_least=False),
        ratio(timings, FILTER, ARGSORT, TARGET_FILTER, at_least=False),
        ratio(timings, GRID_REPLAY, FLOOR, TARGET_GRID_REPLAY, at_least=False),
        ratio(timings, GRID_FILTER, FLOOR, TARGET_GRID_FILTER, at_least=False),
        ratio(timings, GRID_REPLAY, GRID_FILTER, None),
    ]
    return BenchResult("replay", params, timings, ratios, facts, checks)


def main(argv: Sequence[str] | None = None) -> BenchResult:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_replay")
    parser.add_argument("--trades", type=int, default=DEFAULT_TRADES)
    parser.add_argument("--thresholds", type=int, default=DEFAULT_THRESHOLDS)
    parser.add_argument("--repeat", type=int, default=DEFAULT_REPEAT)
    parser.add_argument("--grid", type=int, default=DEFAULT_GRID)
    args = parser.parse_args(argv)
    result = run(args.trades, args.thresholds, args.repeat, grid=args.grid)
    print_result(result)
    return result


if __name__ == "__main__":
    main()
