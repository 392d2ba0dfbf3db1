"""The replay's pandas path before the kernel (``_compiled``), kept as the reference that the
kernel's answers are compared with (tests/toolkit/test_backtest_kernel_*.py): rows grouped by
text keys, each group's values gathered through ``iloc``/``reindex``, ``_rules.decide`` per
group. Verbatim from ``backtest/replay.py`` at 198bf01, slow by design; not used by the toolkit.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

import numpy as np
import pandas as pd
import pytest

from quantscope.backtest._rules import (
    CONFIG_TYPE_OF_EVALUATION,
    PlaybookArg,
    RuleSlice,
    decide,
    playbooks_by_quant,
)
from quantscope.backtest.features import bare


def config_types(wide: pd.DataFrame) -> pd.Series:
    """The playbook config type deciding each row (from ``config_type`` or the evaluation type)."""
    if "config_type" in wide.columns:
        return wide["config_type"].astype("string")
    if "evaluation_type" not in wide.columns:
        raise ValueError("the rows need an evaluation_type (or config_type) column")
    kinds = wide["evaluation_type"].astype("string")
    return kinds.map(CONFIG_TYPE_OF_EVALUATION, na_action="ignore").astype("string")


def _slices(
    playbook: PlaybookArg, wide: pd.DataFrame
) -> tuple[pd.Series, list[tuple[RuleSlice, np.ndarray, np.ndarray]]]:
    """Each row's config type, and the rows of each playbook slice once: (the slice's rules,
    the rows' positions, their values in the slice's criterion order)."""
    kinds = config_types(wide).reset_index(drop=True)
    keys = pd.DataFrame(
        {
            "quant_id": wide["quant_id"].reset_index(drop=True),
            "market_cap_class": wide["market_cap_class"].astype("string").reset_index(drop=True),
            "config_type": kinds,
        }
    )
    groups = keys.groupby(list(keys.columns), dropna=True, sort=False).indices
    slices = playbooks_by_quant(playbook, {int(q) for q, _, _ in groups})
    found = []
    for (quant, mc_class, config_type), rows in groups.items():
        rules = slices[int(quant)].get((str(mc_class), str(config_type)))
        if rules is None:
            raise ValueError(f"quant {quant}'s playbook has no {config_type} slice for {mc_class}")
        values = wide.iloc[rows].reindex(columns=list(rules.criteria)).to_numpy(np.float64)
        found.append((rules, rows, values))
    return kinds, found


def _positions(rules: RuleSlice, names: Collection[str]) -> list[int]:
    return [rules.index(c) for c in names if c in rules.criteria]


def decide_rows(
    playbook: PlaybookArg,
    wide: pd.DataFrame,
    forced: Collection[str] = (),
    failing: Collection[str] = (),
) -> pd.DataFrame:
    """``replay.decide_rows``, the pandas way."""
    wide = bare(wide)
    n = len(wide)
    kinds, slices = _slices(playbook, wide)
    internal = np.full(n, np.nan)
    required_ok = pd.array(np.zeros(n, dtype=bool), dtype="boolean")
    passed = pd.array(np.zeros(n, dtype=bool), dtype="boolean")
    decided = np.zeros(n, dtype=bool)
    for rules, rows, values in slices:
        verdict = decide(rules, values, _positions(rules, forced), _positions(rules, failing))
        internal[rows] = verdict.internal_score
        required_ok[rows] = verdict.required_ok
        passed[rows] = verdict.passed
        decided[rows] = True
    required_ok[~decided] = pd.NA
    passed[~decided] = pd.NA
    return pd.DataFrame(
        {
            # Categories of the default text dtype, as the loaders' (Arrow keeps no other).
            "config_type": kinds.astype("str").astype("category"),
            "internal_score": internal,
            "required_ok": required_ok,
            "passed": passed,
        }
    )


def passed_variants(
    playbook: PlaybookArg,
    wide: pd.DataFrame,
    variants: Sequence[tuple[Collection[str], Collection[str]]],
) -> np.ndarray:
    """``replay.passed_variants``, the pandas way: groups gathered once, ``decide`` per
    variant."""
    wide = bare(wide)
    out = np.zeros((len(wide), len(variants)), dtype=bool)
    for rules, rows, values in _slices(playbook, wide)[1]:
        for j, (forced, failing) in enumerate(variants):
            verdict = decide(rules, values, _positions(rules, forced), _positions(rules, failing))
            out[rows, j] = verdict.passed
    return out


def assert_research_unchanged(
    calls: Sequence[Callable[[], pd.DataFrame]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each research call answers as it does with this reference in place of the kernel's
    verdicts: the same frame (counts exactly, sums to 1e-9), question and current thresholds."""
    from quantscope.backtest import _sample

    def verdicts(part: _sample.Part, criteria: Sequence[str], playbook: PlaybookArg) -> np.ndarray:
        # The part's rows as a frame (moved values included), decided the pandas way: no key
        # codes shared with the current thresholds, no rule slices from them.
        return passed_variants(playbook, part.rows(), _sample.variants(criteria))

    found = [call() for call in calls]
    monkeypatch.setattr(_sample, "_verdicts", verdicts)
    monkeypatch.setattr(_sample, "passed_variants", passed_variants)
    monkeypatch.setattr(_sample, "decide_rows", decide_rows)
    for table, call in zip(found, calls, strict=True):
        expected = call()
        pd.testing.assert_frame_equal(table, expected, check_exact=False, rtol=1e-9, atol=1e-9)
        assert table.attrs["what_if"]["question"] == expected.attrs["what_if"]["question"]
        assert table.attrs["what_if"]["current"] == expected.attrs["what_if"]["current"]
