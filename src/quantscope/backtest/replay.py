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

from quantscope.backtest._compiled import (
    Decided,
    RowSlices,
    Variant,
    criterion_columns,
    decide_patterns,
    row_slices,
    take_rows,
)
from quantscope.backtest._rules import PlaybookArg
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


def _decided(
    playbook: PlaybookArg, wide: pd.DataFrame, variants: Sequence[Variant]
) -> tuple[RowSlices, Decided]:
    """Each row's slice and the rule's verdicts for ``variants`` (``_compiled``: integer keys,
    one ``decide`` per distinct pass pattern).
    """
    rows = row_slices(playbook, wide)
    return rows, decide_patterns(rows, criterion_columns(wide, rows.slices), variants)


def _config_column(rows: RowSlices) -> pd.Categorical:
    """The config types as categories of the default text dtype (as the loaders'), only the
    ones present, sorted.
    """
    assert rows.config_codes is not None  # row_slices codes them
    used = np.flatnonzero(np.bincount(rows.config_codes + 1, minlength=len(rows.config_names) + 1))
    names = sorted(rows.config_names[u - 1] for u in used.tolist() if u > 0)
    remap = np.array([names.index(n) if n in names else -1 for n in rows.config_names] + [-1])
    return pd.Categorical.from_codes(
        remap[rows.config_codes], categories=pd.Index(names, dtype="str")
    )


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
    rows, found = _decided(playbook, wide, [(forced, failing)])
    missing = ~found.decided[found.key]
    required_ok = found.required_ok[found.key, 0]
    passed = found.passed[found.key, 0]
    return pd.DataFrame(
        {
            "config_type": _config_column(rows),
            "internal_score": found.internal_score[found.key, 0],
            "required_ok": pd.arrays.BooleanArray(required_ok, missing),
            "passed": pd.arrays.BooleanArray(passed, missing.copy()),
        }
    )


def passed_variants(
    playbook: PlaybookArg,
    wide: pd.DataFrame,
    variants: Sequence[tuple[Collection[str], Collection[str]]],
) -> np.ndarray:
    """``decide_rows(playbook, wide, forced, failing)["passed"]`` for each ``(forced,
    failing)`` of ``variants``, as the columns of one (rows, variants) bool array (a row
    without a slice: False), each distinct pass pattern decided once for all of them.
    """
    found = _decided(playbook, bare(wide), variants)[1]
    return take_rows(found.passed, found.key)


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
