"""Two whole playbooks side by side on the same history.

``compare_playbooks(a, b, features)`` replays both playbooks (every threshold, weight, flag and
pass mark, by the contract's pass rule) on the buy evaluations of the same trades, and reports
for each the trades it would have kept and how they did; with ``details`` also how many
evaluations each passes, and how many of those passes failed at the time (they have no trade:
``admits_unseen``); with ``simulated`` the simulated entries each admits. It answers the
**effect** question (``backtest.questions``): what running one playbook instead of the other
would have done, every rule replayed; ``attrs["compare_playbooks"]`` says so.
"""

from __future__ import annotations

from dataclasses import fields

import numpy as np
import numpy.typing as npt
import pandas as pd

from quantscope.backtest import _shadow
from quantscope.backtest._kernel import Outcomes, masked_sums
from quantscope.backtest._metrics import METRICS, metrics
from quantscope.backtest._rules import PlaybookArg
from quantscope.backtest.questions import QUESTION_LABELS, QUESTION_NOTES
from quantscope.backtest.replay import as_wide, decide_rows


def _outcomes(frame: pd.DataFrame, simulated: bool) -> Outcomes:
    return Outcomes(
        frame["profitable"].astype("boolean").fillna(False).to_numpy(dtype=bool),
        frame["pnl_usd"].to_numpy(dtype=np.float64, na_value=0.0),
        frame["buy_cost_usd"].to_numpy(dtype=np.float64, na_value=0.0),
        np.full(len(frame), simulated),
    )


def _kept(playbook: PlaybookArg, frame: pd.DataFrame) -> np.ndarray:
    kept: npt.NDArray[np.bool_] = (
        decide_rows(playbook, frame)["passed"].fillna(False).to_numpy(dtype=bool)
    )
    return kept


def _trade_metrics(
    playbook: PlaybookArg, features: pd.DataFrame, simulated: pd.DataFrame | None
) -> dict[str, float]:
    real = features[features["pnl_usd"].notna().to_numpy()]
    parts = [(real, False)] + ([(simulated, True)] if simulated is not None else [])
    kept = np.concatenate([_kept(playbook, f) for f, _ in parts])
    outcomes = [_outcomes(f, sim) for f, sim in parts]
    joined = Outcomes(
        *(np.concatenate([getattr(o, f.name) for o in outcomes]) for f in fields(Outcomes))
    )
    found = metrics(masked_sums(kept, joined), len(real))
    return {name: float(np.asarray(found[name])) for name in METRICS}


def _evaluation_counts(playbook: PlaybookArg, wide: pd.DataFrame) -> dict[str, float]:
    passed = _kept(playbook, wide)
    counts = {
        "evaluations": float(len(wide)),
        "evaluations_passed": float(np.count_nonzero(passed)),
        "pass_rate": float(np.count_nonzero(passed) / len(wide)) if len(wide) else np.nan,
    }
    if "evaluation_passed" in wide.columns:
        failed = ~wide["evaluation_passed"].astype("boolean").fillna(True).to_numpy(dtype=bool)
        counts["admits_unseen"] = float(np.count_nonzero(passed & failed))
    kinds = wide["evaluation_type"].astype("string").fillna("?").to_numpy()
    for kind in sorted(set(kinds)):
        counts[f"passed_{kind}"] = float(np.count_nonzero(passed & (kinds == kind)))
    return counts


@_shadow.checked()
def compare_playbooks(
    a: PlaybookArg,
    b: PlaybookArg,
    features: pd.DataFrame,
    *,
    details: pd.DataFrame | None = None,
    simulated: pd.DataFrame | None = None,
    names: tuple[str, str] = ("a", "b"),
) -> pd.DataFrame:
    """Side by side: what playbooks ``a`` and ``b`` would have passed and traded.

    Args:
        a, b: playbooks (``load_playbook`` frames, possibly edited, or {quant_id: frame}).
        features: trades with their buy evaluation's values (``trade_features``). A trade is
            kept by a playbook that passes its buy evaluation.
        details: evaluations to count passes on (eval-details rows or a wide frame), e.g.
            every evaluation of a period; ``admits_unseen`` counts those a playbook passes
            that failed at the time.
        simulated: simulated entries for failed evaluations (``simulated_entries``); each
            playbook admits those it passes (``simulated_trades``).
        names: the two columns' names.

    Returns:
        One row per figure (evaluation counts when ``details`` is given, then the trade
        metrics of ``_metrics.METRICS``), columns ``names[0]``, ``names[1]`` and ``change``
        (second minus first). Which trades each keeps: ``replay(a, features)["passed"]``.
        ``attrs["compare_playbooks"]``: ``question`` ("effect"), its ``label`` and ``note``.
    """
    columns = {}
    for name, playbook in zip(names, (a, b), strict=True):
        figures: dict[str, float] = {}
        if details is not None:
            figures.update(_evaluation_counts(playbook, as_wide(details)))
        figures.update(_trade_metrics(playbook, features, simulated))
        columns[name] = figures
    out = pd.DataFrame(columns)
    with np.errstate(invalid="ignore"):
        out["change"] = out[names[1]] - out[names[0]]
    out.index.name = "figure"
    out.attrs["compare_playbooks"] = {
        "question": "effect",
        "label": QUESTION_LABELS["effect"],
        "note": QUESTION_NOTES["effect"],
        "names": names,
    }
    return out
