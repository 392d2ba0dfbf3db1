"""Replay a playbook on evaluations: what would this playbook have decided?

``replay(playbook, details)`` applies the contract's pass rule (``_rules.decide``) with the
*given* playbook's thresholds, weights, flags and pass marks to the criterion values of past
evaluations. With the playbook that was in force when the history was made, it reproduces the
service's ``internalScore`` and ``passed`` exactly (tests/test_backtest_replay.py checks it on
the sandbox); with an edited playbook it answers "what if".

Each evaluation is decided by the slice of its quant's playbook for the class of its market
cap at evaluation time and the config type of its evaluation type (``TOKEN_STATUS`` ->
``SCANNING``; ``TOKEN_BUY`` and ``TOKEN_SELL`` -> ``BUYING``).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np
import pandas as pd

from quantscope.backtest._rules import (
    CONFIG_TYPE_OF_EVALUATION,
    PlaybookArg,
    RuleSlice,
    decide,
    playbooks_by_quant,
)
from quantscope.backtest.features import bare, criteria_of, wide_details

#: The columns of replay()'s answer (service_* only when the input carries the verdicts).
REPLAY_COLUMNS = (
    "evaluation_id",
    "quant_id",
    "evaluation_type",
    "market_cap_class",
    "config_type",
    "internal_score",
    "required_ok",
    "passed",
    "service_internal_score",
    "service_passed",
    "agrees",
)


def as_wide(frame: pd.DataFrame) -> pd.DataFrame:
    """A wide frame as is; long eval-details rows pivoted by ``wide_details``."""
    is_long = {"criterion", "value"} <= set(frame.columns)
    return wide_details(frame) if is_long else frame


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
    """The rule's verdict on each row of a wide frame, in row order (positional index).

    ``forced``: criteria that count as passed whatever their value; ``failing``: criteria
    that count as failed (either is ignored where the playbook lacks the criterion). Rows
    whose quant, class or config type is unknown get missing verdicts.

    Returns ``config_type``, ``internal_score`` (float64), ``required_ok`` and ``passed``
    (boolean).
    """
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
    """``decide_rows(playbook, wide, forced, failing)["passed"]`` for each ``(forced,
    failing)`` of ``variants``, as the columns of one (rows, variants) bool array (a row
    without a slice: False), grouping and gathering the rows once for all of them."""
    wide = bare(wide)
    out = np.zeros((len(wide), len(variants)), dtype=bool)
    for rules, rows, values in _slices(playbook, wide)[1]:
        for j, (forced, failing) in enumerate(variants):
            verdict = decide(rules, values, _positions(rules, forced), _positions(rules, failing))
            out[rows, j] = verdict.passed
    return out


def replay(playbook: PlaybookArg, details: pd.DataFrame) -> pd.DataFrame:
    """Decide every evaluation of ``details`` with ``playbook``, next to the service's verdict.

    Args:
        playbook: one quant's playbook frame (``load_playbook``, possibly edited), or a mapping
            quant id -> playbook frame when the evaluations are of several quants.
        details: eval-details rows (``load_eval_details``) or a wide frame of them
            (``wide_details``, ``trade_features``).

    Returns:
        One row per evaluation (``REPLAY_COLUMNS``): the replayed ``internal_score``,
        ``required_ok`` (every enabled, required criterion passed: the service then runs its
        AI step) and ``passed``; with the service's verdicts in the input, also
        ``service_internal_score``, ``service_passed`` and ``agrees`` (both equal, exactly).
    """
    wide = as_wide(details)
    if not criteria_of(wide):
        raise ValueError("the evaluations have no criterion values to replay")
    wide = bare(wide)
    verdict = decide_rows(playbook, wide)
    out = pd.DataFrame(
        {
            "evaluation_id": wide["evaluation_id"].reset_index(drop=True),
            "quant_id": wide["quant_id"].reset_index(drop=True),
            "evaluation_type": wide["evaluation_type"].reset_index(drop=True),
            "market_cap_class": wide["market_cap_class"].reset_index(drop=True),
        }
    )
    out = pd.concat([out, verdict], axis=1)
    if {"evaluation_passed", "internal_score"} <= set(wide.columns):
        service_score = wide["internal_score"].to_numpy(dtype=np.float64, na_value=np.nan)
        service_passed = wide["evaluation_passed"].astype("boolean").reset_index(drop=True)
        out["service_internal_score"] = service_score
        out["service_passed"] = service_passed
        out["agrees"] = (out["passed"] == service_passed) & pd.array(
            service_score == out["internal_score"].to_numpy(), dtype="boolean"
        )
    return out
