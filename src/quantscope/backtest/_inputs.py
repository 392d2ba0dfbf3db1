"""What a what-if answer is computed from, resolved once: the playbook, the operators, the
thresholds, each row's token, and the confidence of every interval.

Shared by ``sweep`` (the what-if frames), ``uncertainty`` (their intervals) and ``screen``, so
that none of them imports another for these (``sweep`` routes its intervals through
``uncertainty``: an import the other way would be a circle).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from quantscope.backtest._rules import OPERATORS, PlaybookArg, check_operator
from quantscope.backtest.features import backtest_attrs, bare, kept_playbooks
from quantscope.backtest.questions import QUESTION_OF

ThresholdsArg = Sequence[float] | np.ndarray | int | None

#: The confidence of every interval of threshold research.
CONFIDENCE = 0.95


def threshold_grid(values: np.ndarray, points: int = 101) -> np.ndarray:
    """``points`` evenly spaced quantiles of the values, as observed values, unique, ascending."""
    finite = np.asarray(values, dtype=np.float64)
    finite = finite[np.isfinite(finite)]
    if not finite.size:
        return np.array([], dtype=np.float64)
    qs = np.quantile(finite, np.linspace(0.0, 1.0, max(points, 2)), method="inverted_cdf")
    return np.unique(qs)


def _grid(criterion: str, observed: pd.Series | None, given: ThresholdsArg) -> np.ndarray:
    """The thresholds to sweep: ``given``, or quantiles of the values the trades had
    (``observed``, needed only then).
    """
    if given is None or isinstance(given, int):
        if observed is None:
            raise ValueError(f"the quantile grid of {criterion!r} needs the observed values")
        values = observed.to_numpy(dtype=np.float64, na_value=np.nan)
        return threshold_grid(values, 101 if given is None else given)
    grid = np.asarray(given, dtype=np.float64)
    if grid.ndim != 1 or np.isnan(grid).any():
        raise ValueError(f"the thresholds of {criterion!r} must be a 1-d array without NaN")
    return grid


def _operators(
    recorded: Mapping[str, str],
    criteria: Sequence[str],
    given: Sequence[str | None],
    playbook: PlaybookArg | None,
) -> list[str]:
    found: list[str] = []
    for criterion, op in zip(criteria, given, strict=True):
        if op is None and playbook is not None:
            op = _playbook_operator(playbook, criterion)
        if op is None:
            op = recorded.get(criterion)
        if op is None:
            raise ValueError(
                f"no operator known for {criterion!r}: pass operator= or a playbook "
                f"(one of {sorted(OPERATORS)})"
            )
        found.append(check_operator(op))
    return found


def _playbook_operator(playbook: PlaybookArg, criterion: str) -> str | None:
    frames = [playbook] if isinstance(playbook, pd.DataFrame) else list(playbook.values())
    for frame in map(bare, frames):  # a few dozen rows: plain lists, no pandas mask per call
        for name, op in zip(frame["criterion"].tolist(), frame["operator"].tolist(), strict=True):
            if name == criterion and not pd.isna(op):
                return str(op)
    return None


def _no_playbook(features: pd.DataFrame) -> str:
    why = backtest_attrs(features).get("playbooks_missing")
    return (
        'rule="replay" (the default) replays the playbook, and none was given: pass '
        "playbook=qsc.load_playbook(quant_id) (or {quant_id: playbook}), or make the features "
        "with bt.trade_features(trades), which keeps the quants' playbooks (with details= "
        'given: trade_features(..., playbook=...)). rule="filter" needs none but answers '
        "another question: the criterion's signal, not what applying the threshold does."
        + (f" The playbooks could not be loaded with these features: {why}" if why else "")
    )


def resolve_playbook(
    features: pd.DataFrame, playbook: PlaybookArg | None, rule: str
) -> PlaybookArg | None:
    """The playbook a sweep uses: ``playbook``, else the one the features keep; a ValueError
    naming both fixes when ``rule="replay"`` finds neither.
    """
    if rule not in QUESTION_OF:
        raise ValueError(f"rule must be one of {sorted(QUESTION_OF)}, got {rule!r}")
    found = playbook if playbook is not None else kept_playbooks(features)
    if found is None and rule == "replay":
        raise ValueError(_no_playbook(features))
    return found


def token_codes(parts: Sequence[pd.DataFrame]) -> tuple[np.ndarray, int] | None:
    """Each row's token as a code ``0 .. k-1`` (shared across the parts), and ``k``.

    None when the rows have no ``token_id`` column; a row without a token id is a token of
    its own.
    """
    if not parts or any("token_id" not in p.columns for p in parts):
        return None
    ids = pd.concat([p["token_id"].astype(object) for p in parts], ignore_index=True)
    codes, uniques = pd.factorize(ids)
    missing = codes < 0
    codes[missing] = len(uniques) + np.arange(np.count_nonzero(missing))
    return codes.astype(np.intp), len(uniques) + int(np.count_nonzero(missing))
