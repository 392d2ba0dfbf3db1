"""The baseline folded into the sweep's bucket table (``_kernel.sweep_with_baseline``), against
the masked sums it replaced, on random frames: counts exactly, sums to 1e-9, every operator,
current thresholds equal to swept ones, groups whose threshold is unknown, simulated entries
that no baseline keeps, rows without a quant, class or known type, quant ids far from zero.

Issue 22: "filter ``what_if`` ... with per-class thresholds 3.0x [``np.argsort``]"; the
previous kernel's profile: the per-row current thresholds ~30 % of the call and the
baseline's masked sums ~15 %. Each (quant, class, type) group's current threshold is now one
more bucket edge of the same table (benchmarks/bench_replay.py, benchmarks/README.md).
"""

from __future__ import annotations

import importlib

import numpy as np
import pandas as pd
import pytest

from quantscope import backtest as bt
from quantscope.backtest import _kernel, _sample
from quantscope.backtest._kernel import Outcomes, masked_sums, sweep, sweep_with_baseline
from quantscope.backtest._rules import OPERATORS

sweep_module = importlib.import_module("quantscope.backtest.sweep")

OPS = tuple(OPERATORS)
CLASSES = ("DEGEN_CAP", "LOW_CAP", "MID_CAP")
KINDS = ("TOKEN_BUY", "TOKEN_SELL", "TOKEN_STATUS")
FIELDS = ("trades", "simulated", "wins", "pnl", "gross_profit", "gross_loss", "cost")


def _assert_sums(got: _kernel.Sums, expected: _kernel.Sums) -> None:
    for name in FIELDS[:3]:
        assert np.array_equal(getattr(got, name), getattr(expected, name)), name
    for name in FIELDS[3:]:
        np.testing.assert_allclose(
            getattr(got, name), getattr(expected, name), rtol=1e-9, atol=1e-9, err_msg=name
        )


def _outcomes(rng: np.random.Generator, n: int) -> Outcomes:
    pnl = np.round(rng.normal(0.0, 50.0, n), 2)
    pnl[rng.random(n) < 0.05] = 0.0
    win = pnl > 0
    win[rng.random(n) < 0.03] ^= True  # a few wins that are not the PnL's sign
    return Outcomes(win, pnl, np.round(rng.uniform(10.0, 500.0, n), 2), rng.random(n) < 0.1)


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("k", [1, 2])
def test_the_folded_baseline_equals_a_mask_of_the_rows(seed: int, k: int) -> None:
    rng = np.random.default_rng(seed)
    n = 6_000  # above positions' SMALL: the lookup-table path
    values = [np.round(rng.normal(0.0, 2.0, n), 1) for _ in range(k)]
    values[0][rng.random(n) < 0.02] = np.inf  # a replay's always-passing values
    ops = [str(rng.choice(OPS)) for _ in range(k)]
    grids = [np.round(rng.normal(0.0, 2.0, 30), 1) for _ in range(k)]
    at: list[tuple[float, ...] | None] = [
        tuple(float(grids[i][0]) for i in range(k)),  # a current that is also swept
        tuple(0.3 + i for i in range(k)),
        tuple(np.nan if i == 0 else 1.0 for i in range(k)),  # unknown: kept on that axis
        tuple(-0.5 for _ in range(k)),
        None,  # kept by no baseline
    ]
    groups = rng.integers(0, len(at), n)
    outcomes = _outcomes(rng, n)
    found, base = sweep_with_baseline(values, grids, ops, outcomes, groups, at)
    _assert_sums(found, sweep(values, grids, ops, outcomes))
    kept = np.zeros(n, dtype=bool)
    for g, cur in enumerate(at):
        if cur is None:
            continue
        mine = groups == g
        for v, t, op in zip(values, cur, ops, strict=True):
            mine &= True if np.isnan(t) else OPERATORS[op](v, t)
        kept |= mine
    _assert_sums(base, masked_sums(kept, outcomes))


def _playbook(rng: np.random.Generator, quant: int, criteria: list[str]) -> pd.DataFrame:
    """Thresholds that differ by class and config type; one criterion disabled somewhere."""
    rows = []
    for mc_class in CLASSES:
        for config_type in ("SCANNING", "BUYING"):
            for c in criteria:
                rows.append(
                    {
                        "market_cap_class": mc_class,
                        "config_type": config_type,
                        "criterion": c,
                        "interval": "noTime",
                        "threshold": float(rng.choice([-0.5, 0.0, 0.3, 0.7])),
                        "weight": 1.0,
                        "required": bool(rng.random() < 0.5),
                        "disabled": False,
                        "operator": "V_GTE_T",
                        "pass_mark": 50.0,
                    }
                )
    out = pd.DataFrame(rows)
    out.attrs["quantscope"] = {"quant_id": quant}
    return out


def _features(
    seed: int, quants: tuple[int, ...], categorical: bool, n: int = 1_500
) -> tuple[pd.DataFrame, dict[int, pd.DataFrame]]:
    rng = np.random.default_rng(seed)
    criteria = ["a", "b"]
    frame = pd.DataFrame(
        {
            "trade_id": np.arange(n),
            "token_id": rng.integers(0, n // 5, n),
            "quant_id": pd.array(rng.choice(quants, n), dtype="Int64"),
            "market_cap_class": rng.choice(CLASSES, n),
            "evaluation_type": rng.choice(KINDS, n, p=[0.7, 0.1, 0.2]),
            "a": np.round(rng.normal(0.3, 1.0, n), 1),  # ties at every threshold
            "b": np.round(rng.normal(0.3, 1.0, n), 1),
            "pnl_usd": np.round(rng.normal(0.0, 50.0, n), 2),
            "buy_cost_usd": np.round(rng.uniform(10.0, 500.0, n), 2),
        }
    )
    frame["profitable"] = pd.array(frame["pnl_usd"] > 0, dtype="boolean")
    frame.loc[rng.random(n) < 0.03, "a"] = np.nan
    # Rows no group holds (their current threshold unknown): a key missing, or a type
    # without a config type.
    for column, hole in (("quant_id", pd.NA), ("market_cap_class", None)):
        frame.loc[rng.random(n) < 0.02, column] = hole
    frame.loc[rng.random(n) < 0.02, "evaluation_type"] = "TOKEN_OTHER"
    if categorical:
        frame = frame.astype({"market_cap_class": "category", "evaluation_type": "category"})
    books = {q: _playbook(rng, q, criteria) for q in quants}
    return frame, books


def _masked(monkeypatch: pytest.MonkeyPatch, call):  # type: ignore[no-untyped-def]
    """``call()`` with the baseline summed from a mask of the rows (the path before)."""
    with monkeypatch.context() as patched:
        patched.setattr(_sample, "baseline_groups", lambda rows, currents: None)
        return call()


@pytest.mark.parametrize(
    ("seed", "quants", "categorical"),
    [(1, (1, 2, 3), True), (2, (5_000, 5_001), False), (3, (7, 900_000), True)],
)
@pytest.mark.parametrize("rule", ["filter", "replay"])
def test_per_group_what_if_equals_the_masked_baseline(
    monkeypatch: pytest.MonkeyPatch,
    seed: int,
    quants: tuple[int, ...],
    categorical: bool,
    rule: str,
) -> None:
    frame, books = _features(seed, quants, categorical)
    before = frame.copy()
    simulated = frame.sample(frac=0.2, random_state=seed).reset_index(drop=True)
    for call in (
        lambda: bt.what_if(frame, "a", 25, playbook=books, rule=rule),
        lambda: bt.what_if(
            frame, "a", 25, playbook=books, rule=rule, simulated=simulated, bootstrap=False
        ),
        lambda: bt.what_if_grid(frame, ("a", "b"), (8, 8), playbook=books, rule=rule),
    ):
        got, expected = call(), _masked(monkeypatch, call)
        assert len(got["is_current"]) > 0
        assert got.attrs["what_if"]["current"]["a"]
        assert len(got.attrs["what_if"]["current"]["a"]) > 1  # thresholds differ by group
        pd.testing.assert_frame_equal(got, expected, check_exact=False, rtol=1e-9, atol=1e-9)
        assert got["d_trades"].tolist() == expected["d_trades"].tolist()
        mine, theirs = dict(got.attrs["what_if"]), dict(expected.attrs["what_if"])
        assert mine.pop("baseline") == pytest.approx(theirs.pop("baseline"), rel=1e-9, abs=1e-9)
        assert mine == theirs
    pd.testing.assert_frame_equal(frame, before)  # the quant ids were coded, not moved


def test_per_class_thresholds_sum_no_mask_of_the_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    """A filter what_if whose current threshold differs by class reads it from the bucket
    table: before, it built a float per row, a mask, and summed the masked outcomes."""
    from benchmarks import bench_replay

    features = bench_replay.synthetic_features(6_000)

    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("the baseline was summed from a mask of the rows")

    monkeypatch.setattr(sweep_module, "masked_sums", refused)
    monkeypatch.setattr(_sample, "baseline", refused)
    found = bt.what_if(features, bench_replay.CRITERION, 600, rule="filter", bootstrap=False)
    current = found.attrs["what_if"]["current"][bench_replay.CRITERION]
    assert current == sorted(bench_replay.CURRENT.values())
    values = features[bench_replay.CRITERION].to_numpy()
    by_class = features["market_cap_class"].astype(str).map(bench_replay.CURRENT).to_numpy()
    kept = values >= by_class
    assert found["trades"].iloc[0] - found["d_trades"].iloc[0] == int(kept.sum())
    pnl = features["pnl_usd"].to_numpy()
    assert found.attrs["what_if"]["baseline"]["total_pnl_usd"] == pytest.approx(
        float(pnl[kept].sum()), rel=1e-9
    )


@pytest.mark.parametrize("k", [1, 2])
def test_sums_a_chunk_of_rows_at_a_time_equal_a_mask_of_the_rows(
    k: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The kernel sums the rows a chunk at a time (``_kernel.CHUNK``: the chunk's temporaries
    stay in the cache); chunks differ in what they hold (simulated entries only in the later
    ones, wins that are not the PnL's sign only in the first ones) and the groups may come
    as codes of a small table (``of``), as ``_sample.baseline_groups`` gives them."""
    monkeypatch.setattr(_kernel, "CHUNK", 1)  # as small as the table allows: many chunks
    rng = np.random.default_rng(40 + k)
    n = 30_000
    values = [np.round(rng.normal(0.0, 2.0, n), 1) for _ in range(k)]
    ops = [str(rng.choice(OPS)) for _ in range(k)]
    grids = [np.round(rng.normal(0.0, 2.0, 12), 1) for _ in range(k)]
    pnl = np.round(rng.normal(0.0, 50.0, n), 2)
    win = pnl > 0
    win[: n // 3][rng.random(n // 3) < 0.05] ^= True
    simulated = np.zeros(n, dtype=bool)
    simulated[n // 2 :] = rng.random(n - n // 2) < 0.2
    outcomes = Outcomes(win, pnl, np.round(rng.uniform(10.0, 500.0, n), 2), simulated)
    at: list[tuple[float, ...] | None] = [tuple(0.2 * (i + 1) for i in range(k)), None]
    of = np.array([1, 0, 0, 1, 0])  # five codes, two groups
    codes = rng.integers(0, len(of), n)
    found, base = sweep_with_baseline(values, grids, ops, outcomes, codes, at, of=of)
    kept = of[codes] == 0
    for v, t, op in zip(values, at[0] or (), ops, strict=True):
        kept &= OPERATORS[op](v, t)
    _assert_sums(base, masked_sums(kept, outcomes))
    for cell in [(0,) * k, (5,) * k, (11,) * k, (3, 7)[:k]]:
        mask = np.ones(n, dtype=bool)
        for v, g, op, j in zip(values, grids, ops, cell, strict=True):
            mask &= OPERATORS[op](v, g[j])
        _assert_sums(_cell(found, cell), masked_sums(mask, outcomes))
    monkeypatch.setattr(_kernel, "CHUNK", 1 << 30)  # one chunk
    _assert_sums(sweep(values, grids, ops, outcomes), found)


def _cell(sums: _kernel.Sums, index: tuple[int, ...]) -> _kernel.Sums:
    return _kernel.Sums(**{f: getattr(sums, f)[index] for f in FIELDS})
