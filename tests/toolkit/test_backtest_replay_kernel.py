"""The replay kernel (``_compiled``) against the pandas path it replaced
(``_helpers.replay_reference``), on random frames and playbooks: every operator, ties at the
threshold, NaN values and criteria the rows lack, rows without a quant, class or known type,
disabled and required criteria, weights whose sums round, more criteria than one pattern word.
The sandbox's worlds: tests/toolkit/test_backtest_replay_default.py.

Issue 22: "``replay.passed_variants`` is 67 % [of a replayed what_if]: ``replay._slices`` 55 %
and ``config_types`` 21 %, mostly pandas Arrow-string work". The rows are now keyed by integer
codes: no grouping, no text conversion of a row.
"""

from __future__ import annotations

import importlib

import numpy as np
import pandas as pd
import pytest
from _helpers import replay_reference as reference

from quantscope import backtest as bt
from quantscope.backtest import _compiled
from quantscope.backtest._rules import OPERATORS

replay_module = importlib.import_module("quantscope.backtest.replay")

CLASSES = ("DEGEN_CAP", "LOW_CAP", "MID_CAP")
KINDS = ("TOKEN_BUY", "TOKEN_SELL", "TOKEN_STATUS")
WEIGHTS = (1.0, 2.0, 0.3, 0.7, 1.1, 0.0)


def playbook(rng: np.random.Generator, quant: int, criteria: list[str], frame: pd.DataFrame):
    rows = []
    for mc_class in CLASSES:
        for config_type in ("SCANNING", "BUYING"):
            chosen = [c for c in criteria if rng.random() < 0.8] or criteria[:1]
            mark = float(rng.choice([0.0, 33.33, 50.0, 66.67, 100.0]))
            for c in chosen:
                observed = frame[c].dropna().to_numpy()
                rows.append(
                    {
                        "market_cap_class": mc_class,
                        "config_type": config_type,
                        "criterion": c,
                        "interval": "noTime",
                        "threshold": float(rng.choice(observed)) if len(observed) else 0.0,
                        "weight": float(rng.choice(WEIGHTS)),
                        "required": bool(rng.random() < 0.3),
                        "disabled": bool(rng.random() < 0.15),
                        "operator": str(rng.choice(list(OPERATORS))),
                        "pass_mark": mark,
                    }
                )
    out = pd.DataFrame(rows)
    out.attrs["quantscope"] = {"quant_id": quant}
    return out


def random_rows(
    seed: int, n: int = 3_000, k: int = 6, categorical: bool = True
) -> tuple[pd.DataFrame, dict[int, pd.DataFrame], list[str]]:
    rng = np.random.default_rng(seed)
    criteria = [f"c{i}" for i in range(k)]
    data: dict[str, object] = {
        "evaluation_id": np.arange(n),
        "quant_id": pd.array(rng.integers(1, 4, n), dtype="Int64"),
        "market_cap_class": rng.choice(CLASSES, n),
        "evaluation_type": rng.choice(KINDS, n, p=[0.7, 0.1, 0.2]),
    }
    for c in criteria:
        values = np.round(rng.normal(0.0, 1.0, n), 1)  # ties at every threshold
        values[rng.random(n) < 0.05] = np.nan
        data[c] = values
    frame = pd.DataFrame(data)
    frame.loc[rng.random(n) < 0.02, "quant_id"] = pd.NA
    frame.loc[rng.random(n) < 0.02, "market_cap_class"] = None
    frame.loc[rng.random(n) < 0.02, "evaluation_type"] = "TOKEN_OTHER"  # no config type
    if categorical:
        for col in ("market_cap_class", "evaluation_type"):
            frame[col] = frame[col].astype("category")
    books = {q: playbook(rng, q, criteria, frame) for q in (1, 2, 3)}
    lacking = f"c{k}"  # a criterion every playbook names and no row has
    for q, book in books.items():
        extra = book.drop_duplicates(["market_cap_class", "config_type"]).assign(
            criterion=lacking, weight=1.0, required=False, disabled=False, operator="V_GTE_T"
        )
        books[q] = pd.concat([book, extra], ignore_index=True)
        books[q].attrs["quantscope"] = {"quant_id": q}
    return frame, books, criteria


def variants(criteria: list[str]) -> list[tuple[list[str], list[str]]]:
    a, b = criteria[0], criteria[1]
    return [([], []), ([a], []), ([], [a]), ([a, b], []), ([a], [b]), ([], [a, b])]


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
@pytest.mark.parametrize("categorical", [True, False])
def test_passed_variants_equal_the_pandas_path(seed: int, categorical: bool) -> None:
    frame, books, criteria = random_rows(seed, categorical=categorical)
    wanted = variants(criteria)
    got = replay_module.passed_variants(books, frame, wanted)
    expected = reference.passed_variants(books, frame, wanted)
    assert got.shape == expected.shape
    assert got.sum() > 0
    assert np.array_equal(got, expected)


@pytest.mark.parametrize("seed", [5, 6])
def test_decide_rows_equal_the_pandas_path_scores_to_the_bit(seed: int) -> None:
    frame, books, criteria = random_rows(seed)
    for forced, failing in variants(criteria)[:3]:
        got = replay_module.decide_rows(books, frame, forced, failing)
        expected = reference.decide_rows(books, frame, forced, failing)
        pd.testing.assert_frame_equal(got, expected, check_exact=True)
    assert got["passed"].isna().sum() > 0  # rows without a slice: missing verdicts


def test_a_config_type_column_decides_as_the_pandas_path() -> None:
    frame, books, criteria = random_rows(7, categorical=False)
    status = frame["evaluation_type"] == "TOKEN_STATUS"
    frame["config_type"] = np.where(status, "SCANNING", "BUYING")
    got = replay_module.decide_rows(books, frame, [criteria[0]])
    pd.testing.assert_frame_equal(got, reference.decide_rows(books, frame, [criteria[0]]))


def test_more_criteria_than_one_pattern_word_and_hashed_patterns(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    frame, books, criteria = random_rows(8, n=1_500, k=70)
    expected = reference.passed_variants(books, frame, variants(criteria))
    assert np.array_equal(replay_module.passed_variants(books, frame, variants(criteria)), expected)
    monkeypatch.setattr(_compiled, "DENSE_BITS", 4)  # every pattern through the hash path
    frame, books, criteria = random_rows(9, n=1_500)
    expected = reference.passed_variants(books, frame, variants(criteria))
    assert np.array_equal(replay_module.passed_variants(books, frame, variants(criteria)), expected)


@pytest.mark.parametrize(("direct", "scan"), [(0, 1 << 16), (12, 7)])
def test_compacted_or_direct_pattern_keys_and_any_representative_decide_alike(
    direct: int, scan: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Patterns of few bits are the rows' keys as they are (``DIRECT_BITS``), others are
    compacted first; one row of each key is found scanning ``SCAN`` rows at a time."""
    monkeypatch.setattr(_compiled, "DIRECT_BITS", direct)
    monkeypatch.setattr(_compiled, "SCAN", scan)
    frame, books, criteria = random_rows(14)
    expected = reference.passed_variants(books, frame, variants(criteria))
    assert np.array_equal(replay_module.passed_variants(books, frame, variants(criteria)), expected)
    got = replay_module.decide_rows(books, frame, [criteria[0]], [criteria[1]])
    expected_rows = reference.decide_rows(books, frame, [criteria[0]], [criteria[1]])
    pd.testing.assert_frame_equal(got, expected_rows, check_exact=True)


def test_a_missing_slice_is_named_as_before() -> None:
    frame, books, _ = random_rows(10, n=200)
    books[2] = books[2][books[2]["market_cap_class"] != "MID_CAP"]
    books[2].attrs["quantscope"] = {"quant_id": 2}
    frame = frame.dropna(subset=["quant_id", "market_cap_class"])
    frame = frame[frame["evaluation_type"].isin(["TOKEN_BUY", "TOKEN_SELL"])]
    frame = frame[(frame["quant_id"] == 2) & (frame["market_cap_class"] == "MID_CAP")]
    with pytest.raises(ValueError, match="quant 2's playbook has no BUYING slice for MID_CAP"):
        replay_module.passed_variants(books, frame, [([], [])])
    with pytest.raises(ValueError, match="quant 2's playbook has no BUYING slice for MID_CAP"):
        reference.passed_variants(books, frame, [([], [])])


def test_the_verdicts_need_no_grouping_and_no_text_conversion_of_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Once a playbook is compiled (``_rules.playbook_slices``' cache), deciding rows groups
    nothing and converts no column: before, every call grouped the rows by text keys."""
    frame, books, criteria = random_rows(11, n=2_000)
    replay_module.passed_variants(books, frame, variants(criteria))  # compiles the playbooks
    calls: list[str] = []
    for owner, name in ((pd.DataFrame, "groupby"), (pd.Series, "astype"), (pd.Series, "map")):
        real = getattr(owner, name)

        def counting(self: object, *args: object, _real=real, _name=name, **kw: object):
            calls.append(_name)
            return _real(self, *args, **kw)

        monkeypatch.setattr(owner, name, counting)
    replay_module.passed_variants(books, frame, variants(criteria))
    assert calls == []


def _features(seed: int, n: int = 4_000) -> tuple[pd.DataFrame, dict[int, pd.DataFrame]]:
    frame, books, criteria = random_rows(seed, n=n)
    rng = np.random.default_rng(seed)
    frame = frame.dropna(subset=["quant_id", "market_cap_class"])
    frame = frame[frame["evaluation_type"].isin(["TOKEN_BUY", "TOKEN_SELL"])].copy()
    frame["pnl_usd"] = np.round(rng.normal(0, 40, len(frame)), 2)
    frame["buy_cost_usd"] = 100.0
    frame["profitable"] = pd.array(frame["pnl_usd"] > 0, dtype="boolean")
    frame["token_id"] = rng.integers(0, 300, len(frame))
    frame.attrs["backtest"] = {"criteria": tuple(criteria)}
    return frame.reset_index(drop=True), books


@pytest.mark.parametrize("seed", [12, 13])
def test_what_if_and_the_grid_equal_the_pandas_path(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    features, books = _features(seed)
    calls = [
        lambda: bt.what_if(features, "c0", 15, playbook=books),
        lambda: bt.what_if(features, "c1", 15, playbook=books, current=0.0),
        lambda: bt.what_if_grid(features, ("c0", "c2"), (6, 6), playbook=books),
        lambda: bt.what_if(features, "c3", 15, playbook=books, rule="filter"),
    ]
    reference.assert_research_unchanged(calls, monkeypatch)


def test_a_replayed_sweep_codes_its_keys_once_and_copies_no_frame(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 22 (replay3): "``_compiled.row_slices`` codes keys that ``_sample`` already
    coded, ``_by_rule`` copies the frame with ``frame.assign``". The rule slices now come
    from the key codes the current thresholds read, and the rows kept are index arrays."""
    features, books = _features(15)
    bt.what_if(features, "c0", 15, playbook=books)  # compiles the playbooks
    calls: list[str] = []
    for owner, name in ((_compiled, "row_slices"), (_compiled, "key_codes")):
        real = getattr(owner, name)

        def counting(*args: object, _real=real, _name=name, **kw: object):
            calls.append(_name)
            return _real(*args, **kw)

        monkeypatch.setattr(owner, name, counting)
    assigned = []
    real_assign = pd.DataFrame.assign

    def assign(self: pd.DataFrame, **kw: object) -> pd.DataFrame:
        if len(self) == len(features):
            assigned.append(sorted(kw))
        return real_assign(self, **kw)

    monkeypatch.setattr(pd.DataFrame, "assign", assign)
    bt.what_if(features, "c0", 15, playbook=books)
    assert "row_slices" not in calls
    assert calls.count("key_codes") <= 1  # the class column, once (not categorical here)
    assert assigned == []
