"""The playbook's vocabulary and pass rule, as the toolkit knows them from the contract.

docs/service-contract.md ("Playbook", "The pass rule") fixes the rule; this module is the
toolkit's own implementation of it (the toolkit never imports the sandbox). ``decide`` mirrors
the contract's arithmetic step by step, so that a replay reproduces the service's
``internalScore`` and ``passed`` exactly, not just approximately:

* ``passed_c = op_c(value_c, threshold_c)``; a missing value fails;
* ``internalScore = round(100 * sum(score_c) / sum(weight_c), 2)`` over enabled criteria, with
  ``score_c = weight_c`` when ``passed_c`` (0 when the enabled weights sum to 0);
* pass when every enabled, required criterion passes and ``internalScore >= passMark``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

import numpy as np
import pandas as pd

#: Operators (``extraInfo.operator``): a criterion passes when ``op(value, threshold)``.
OPERATORS: dict[str, Callable[[np.ndarray, np.ndarray | float], np.ndarray]] = {
    "V_GTE_T": np.greater_equal,
    "V_GT_T": np.greater,
    "V_LTE_T": np.less_equal,
    "V_LT_T": np.less,
}
#: +1 when larger values are better under the operator (raising the threshold is stricter).
DIRECTION: dict[str, int] = {"V_GTE_T": 1, "V_GT_T": 1, "V_LTE_T": -1, "V_LT_T": -1}
#: The operator that holds exactly where the other fails (``not v >= t`` is ``v < t``).
NEGATION: dict[str, str] = {
    "V_GTE_T": "V_LT_T",
    "V_GT_T": "V_LTE_T",
    "V_LTE_T": "V_GT_T",
    "V_LT_T": "V_GTE_T",
}
#: Market-cap classes and their lower bounds in USD (inclusive), smallest first.
MARKET_CAP_CLASSES: tuple[tuple[str, float], ...] = (
    ("DEGEN_CAP", 0.0),
    ("LOW_CAP", 1_000_000.0),
    ("MID_CAP", 10_000_000.0),
)
#: The playbook config type that decides each evaluation type.
CONFIG_TYPE_OF_EVALUATION: dict[str, str] = {
    "TOKEN_STATUS": "SCANNING",
    "TOKEN_BUY": "BUYING",
    "TOKEN_SELL": "BUYING",
}
#: The playbook's only interval key.
INTERVAL = "noTime"

SliceKey = tuple[str, str]  # (market-cap class, config type)


def check_operator(operator: str) -> str:
    """``operator`` when it is one the contract defines, else a ValueError naming them."""
    if operator not in OPERATORS:
        raise ValueError(f"unknown operator {operator!r}; expected one of {sorted(OPERATORS)}")
    return operator


def searchsorted_side(operator: str) -> Literal["left", "right"]:
    """The ``searchsorted`` side that splits sorted values into failing and passing ones.

    With ``p = searchsorted(sorted_values, t, side)``, the values at ``p`` and after pass
    ``t`` under ``V_GTE_T``/``V_GT_T``; the values before ``p`` pass under ``V_LT_T``/``V_LTE_T``.
    """
    return "left" if check_operator(operator) in ("V_GTE_T", "V_LT_T") else "right"


def is_looser(operator: str, threshold: np.ndarray | float, current: float) -> np.ndarray:
    """Whether ``threshold`` lets through values that ``current`` rejects."""
    return np.asarray(DIRECTION[check_operator(operator)] * (np.asarray(threshold) - current) < 0)


def market_cap_class(market_cap_usd: pd.Series | np.ndarray) -> pd.Categorical:
    """The class whose playbook decides an evaluation at this market cap (missing stays NaN)."""
    values = np.asarray(market_cap_usd, dtype=np.float64)
    bounds = np.array([lower for _, lower in MARKET_CAP_CLASSES[1:]])
    codes = np.searchsorted(bounds, values, side="right")
    codes = np.where(np.isnan(values), -1, codes)
    names = [name for name, _ in MARKET_CAP_CLASSES]
    return pd.Categorical.from_codes(codes, categories=names)


@dataclass(frozen=True)
class RuleSlice:
    """One playbook slice (market-cap class x config type): its criteria in playbook order."""

    criteria: tuple[str, ...]
    thresholds: np.ndarray  # float64 (k,)
    weights: np.ndarray  # float64 (k,)
    required: np.ndarray  # bool (k,)
    disabled: np.ndarray  # bool (k,)
    operators: tuple[str, ...]
    pass_mark: float

    def index(self, criterion: str) -> int:
        """The position of ``criterion`` in this slice (KeyError when the slice lacks it)."""
        try:
            return self.criteria.index(criterion)
        except ValueError:
            raise KeyError(f"the playbook has no criterion {criterion!r}") from None


@dataclass(frozen=True)
class Verdict:
    """The pass rule applied to rows of values."""

    internal_score: np.ndarray  # float64 (n,), 0-100, rounded to 2 decimals
    required_ok: np.ndarray  # bool (n,): every enabled, required criterion passed
    passed: np.ndarray  # bool (n,)


def decide(
    rules: RuleSlice,
    values: np.ndarray,
    forced: Collection[int] = (),
    failing: Collection[int] = (),
) -> Verdict:
    """Apply one slice's rule to ``values`` (n x k, columns in ``rules.criteria`` order).

    ``forced``: column positions that count as passed whatever their value ("would the
    evaluation pass if this criterion passed?", which is what loosening it can achieve);
    ``failing``: positions that count as failed ("would it pass anyway?").
    The arithmetic follows the contract in the same order as the service, so scores agree
    to the last bit.
    """
    values = np.asarray(values, dtype=np.float64).reshape(-1, len(rules.criteria))
    passed_c = np.empty(values.shape, dtype=bool)
    for j, op in enumerate(rules.operators):
        passed_c[:, j] = OPERATORS[op](values[:, j], rules.thresholds[j])
    passed_c[:, list(forced)] = True
    passed_c[:, list(failing)] = False
    enabled = ~rules.disabled
    scores = np.where(passed_c & enabled, rules.weights, 0.0)
    total_weight = float(rules.weights[enabled].sum())
    if total_weight > 0:
        internal = np.round(100.0 * scores.sum(axis=1) / total_weight, 2)
    else:
        internal = np.zeros(len(values))
    must = enabled & rules.required
    required_ok = np.all(passed_c | ~must, axis=1)
    return Verdict(internal, required_ok, required_ok & (internal >= rules.pass_mark))


_PLAYBOOK_COLUMNS = (
    "market_cap_class",
    "config_type",
    "criterion",
    "threshold",
    "weight",
    "required",
    "disabled",
    "operator",
    "pass_mark",
)


#: Playbooks compiled lately, by a digest of the columns the rule reads: research replays the
#: same playbook hundreds of times (a ranking, a sweep per criterion), and compiling one is
#: pandas work per slice where the digest is one hash of the columns. Slices are read-only.
_COMPILED: dict[bytes, dict[SliceKey, RuleSlice]] = {}
_COMPILED_MAX = 32


def _digest(frame: pd.DataFrame) -> bytes:
    """A digest of the rule's columns: their names and values as Python objects (``repr`` of a
    float is exact; True and 1 differ), ~3x cheaper than ``hash_pandas_object`` here.
    """
    columns = [c for c in (*_PLAYBOOK_COLUMNS, "interval") if c in frame.columns]
    text = repr([(c, frame[c].tolist()) for c in columns]).encode()
    return hashlib.blake2b(text, digest_size=16).digest()


def playbook_slices(playbook: pd.DataFrame) -> dict[SliceKey, RuleSlice]:
    """A playbook frame (``load_playbook``, possibly edited) as rule slices by (class, type).

    Only the ``noTime`` interval counts when the frame has an ``interval`` column. A missing
    flag reads as False; a missing weight as 0; a missing operator as ``V_GTE_T`` (options
    criteria); a missing pass mark is an error (the rule cannot be applied without it).
    A playbook whose rule columns equal one compiled lately is not compiled again.
    """
    missing = [c for c in _PLAYBOOK_COLUMNS if c not in playbook.columns]
    if missing:
        raise ValueError(f"the playbook frame lacks the columns {missing} (see load_playbook)")
    # Without attrs (features.bare, which imports this module): pandas deep-copies a frame's
    # attrs (the loader's provenance) into every column read, and the digest reads them all.
    playbook = pd.DataFrame(playbook, copy=False)
    key = _digest(playbook)
    found = _COMPILED.get(key)
    if found is None:
        found = _compile(playbook)
        while len(_COMPILED) >= _COMPILED_MAX:
            _COMPILED.pop(next(iter(_COMPILED)))
        _COMPILED[key] = found
    return dict(found)


def _compile(playbook: pd.DataFrame) -> dict[SliceKey, RuleSlice]:
    frame = playbook
    if "interval" in frame.columns:
        frame = frame[frame["interval"].astype("string").fillna(INTERVAL) == INTERVAL]
    dupes = frame.duplicated(["market_cap_class", "config_type", "criterion"])
    if dupes.any():
        first = frame.loc[dupes, ["market_cap_class", "config_type", "criterion"]].iloc[0]
        raise ValueError(f"the playbook has several entries for {tuple(first)}")
    slices: dict[SliceKey, RuleSlice] = {}
    groups = frame.groupby(["market_cap_class", "config_type"], observed=True, sort=False)
    for key, rows in groups:
        mc_class, config_type = (str(k) for k in key)
        marks = rows["pass_mark"].dropna().unique()
        if len(marks) != 1:
            raise ValueError(
                f"the playbook slice ({mc_class}, {config_type}) needs exactly one pass mark, "
                f"got {list(marks)}"
            )
        operators = tuple(
            check_operator(str(op)) for op in rows["operator"].astype(object).fillna("V_GTE_T")
        )
        slices[mc_class, config_type] = RuleSlice(
            criteria=tuple(str(c) for c in rows["criterion"]),
            thresholds=_frozen(rows["threshold"].to_numpy(dtype=np.float64, na_value=np.nan)),
            weights=_frozen(rows["weight"].to_numpy(dtype=np.float64, na_value=0.0)),
            required=_frozen(rows["required"].to_numpy(dtype=bool, na_value=False)),
            disabled=_frozen(rows["disabled"].to_numpy(dtype=bool, na_value=False)),
            operators=operators,
            pass_mark=float(marks[0]),
        )
    return slices


def _frozen(values: np.ndarray) -> np.ndarray:
    out = np.array(values)  # a copy of its own: the frame's buffer stays writable
    out.flags.writeable = False
    return out


PlaybookArg: TypeAlias = pd.DataFrame | Mapping[int, pd.DataFrame]


def playbooks_by_quant(
    playbook: PlaybookArg, quant_ids: Collection[int]
) -> dict[int, dict[SliceKey, RuleSlice]]:
    """The rule slices to apply to each quant in ``quant_ids``.

    ``playbook`` is one quant's frame (``load_playbook`` records the quant in its provenance:
    evaluations of another quant are then an error) or a mapping quant id -> frame.
    """
    if isinstance(playbook, pd.DataFrame):
        owner = playbook.attrs.get("quantscope", {}).get("quant_id")
        others = sorted(int(q) for q in quant_ids if owner is not None and int(q) != int(owner))
        if others:
            raise ValueError(
                f"the playbook is quant {owner}'s, but the rows include quants {others}: pass "
                "a mapping {quant_id: playbook} to replay several quants"
            )
        slices = playbook_slices(playbook)
        return {q: slices for q in quant_ids}
    lacking = sorted(int(q) for q in quant_ids if int(q) not in playbook)
    if lacking:
        raise ValueError(f"no playbook given for quants {lacking}")
    return {q: playbook_slices(playbook[int(q)]) for q in quant_ids}


def playbook_columns(playbook: PlaybookArg, quant_ids: Collection[int]) -> dict[str, Any]:
    """The rule's columns of each quant's playbook as JSON-safe lists, keyed by quant id text.

    What ``trade_features`` keeps in ``attrs["backtest"]["playbooks"]``: only the ``noTime``
    rows and the columns the pass rule reads (a few hundred values a quant, cheap for pandas
    to copy along with the frame, and writable to Parquet). ``playbooks_from_columns`` turns
    them back into frames.
    """
    frames = (
        dict.fromkeys(quant_ids, playbook)
        if isinstance(playbook, pd.DataFrame)
        else {q: playbook[int(q)] for q in quant_ids}
    )
    playbooks_by_quant(playbook, quant_ids)  # the same checks as a replay: owner, slices
    out: dict[str, Any] = {}
    for q, frame in frames.items():
        if "interval" in frame.columns:
            frame = frame[frame["interval"].astype("string").fillna(INTERVAL) == INTERVAL]
        out[str(int(q))] = {
            col: [None if pd.isna(v) else _plain(v) for v in frame[col].tolist()]
            for col in _PLAYBOOK_COLUMNS
        }
    return out


def _plain(value: object) -> str | float | bool:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, float, np.integer, np.floating)):
        return float(value)
    return str(value)


def playbooks_from_columns(columns: Mapping[str, Any]) -> dict[int, pd.DataFrame]:
    """``playbook_columns``' lists back as {quant id: playbook frame} (what ``replay`` takes)."""
    return {int(q): pd.DataFrame(dict(cols)) for q, cols in columns.items()}
