"""Evaluation analytics: pass rates, criterion values by trade outcome, signal counts.

Pass rates work on evaluation frames (``load_evaluations``: one verdict per evaluation) and on
criterion frames (``load_eval_details``: one verdict per criterion result). A row without a
verdict (``passed`` missing: a disabled criterion) is in no count. Formulas: docs/metrics.md.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from quantscope.analytics._periods import period_start

OUTCOMES = ("win", "loss", "breakeven")  # a closed trade's outcome by the sign of its pnl_usd
_QUANTILES = {0.25: "q25", 0.5: "median", 0.75: "q75"}


def pass_rate(frame: pd.DataFrame) -> float:
    """Share of verdicts that passed: ``passed == True`` over non-missing ``passed``."""
    verdict = frame["passed"].astype("boolean")
    total = int(verdict.notna().sum())
    return int(verdict.sum()) / total if total else float("nan")


def pass_rates(
    frame: pd.DataFrame,
    keys: str | Sequence[str] | None = None,
    *,
    freq: str | None = None,
    time_column: str = "created_at",
) -> pd.DataFrame:
    """Pass rate per group: by column(s) (criterion, category, evaluation_type, chain, ...), by
    period of ``time_column`` (``freq`` as in trades ``by()``), or both.

    Returns:
        One row per group that occurs: ``total`` (verdicts), ``passed``, ``failed`` and
        ``pass_rate`` (passed / total; NaN when a group has no verdict, e.g. a criterion that is
        disabled everywhere).
    """
    names = [keys] if isinstance(keys, str) else list(keys or [])
    if not names and freq is None:
        raise TypeError("pass_rates() needs keys or freq; pass_rate() gives the overall rate")
    parts = {name: frame[name].reset_index(drop=True) for name in names}
    if freq is not None:
        times = pd.to_datetime(frame[time_column], utc=True).to_numpy(dtype="datetime64[ms]")
        parts["period"] = period_start(times.view(np.int64), freq).where(~np.isnat(times))
    verdict = frame["passed"].astype("boolean").reset_index(drop=True)
    parts["_passed"] = verdict.astype("Float64").astype(np.float64)  # NaN: no verdict
    grouped = pd.DataFrame(parts).groupby(
        names + (["period"] if freq else []), observed=True, dropna=False, sort=True
    )["_passed"]
    total = grouped.count().astype(np.int64)
    passed = grouped.sum().astype(np.int64)
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = np.where(total > 0, passed / total.where(total > 0, 1), np.nan)
    return pd.DataFrame(
        {"total": total, "passed": passed, "failed": total - passed, "pass_rate": rate}
    )


def trade_outcomes(trades: pd.DataFrame) -> pd.DataFrame:
    """``evaluation_id`` -> ``outcome`` (win, loss, breakeven) of the closed trades it bought."""
    closed = (trades["status"] == "Closed").to_numpy(dtype=bool, na_value=False)
    pnl = trades["pnl_usd"].to_numpy(dtype=np.float64, na_value=np.nan)
    keep = closed & np.isfinite(pnl) & trades["evaluation_id"].notna().to_numpy()
    codes = np.where(pnl[keep] > 0, 0, np.where(pnl[keep] < 0, 1, 2))
    return pd.DataFrame(
        {
            "evaluation_id": trades["evaluation_id"].to_numpy()[keep].astype(np.int64),
            "outcome": pd.Categorical.from_codes(codes, categories=list(OUTCOMES), ordered=True),
        }
    )


def criterion_values(
    details: pd.DataFrame, trades: pd.DataFrame, criterion: str | None = None
) -> pd.DataFrame:
    """``evaluation_id``, ``criterion``, ``value`` and ``outcome`` of the evaluations that bought
    a closed trade (one criterion, or all): the rows ``values_by_outcome`` aggregates.
    """
    rows = details
    if criterion is not None:
        rows = details[(details["criterion"] == criterion).to_numpy(dtype=bool, na_value=False)]
    values = pd.DataFrame(
        {
            "evaluation_id": rows["evaluation_id"].to_numpy(dtype=np.int64, na_value=-1),
            "criterion": rows["criterion"].to_numpy(),
            "value": rows["value"].to_numpy(dtype=np.float64, na_value=np.nan),
        }
    )
    return values.merge(trade_outcomes(trades), on="evaluation_id", how="inner")


def values_by_outcome(details: pd.DataFrame, trades: pd.DataFrame) -> pd.DataFrame:
    """Distribution of each criterion's value over evaluations that led to winning, losing and
    breakeven trades.

    Args:
        details: a criterion frame (``load_eval_details``) of the evaluations that bought.
        trades: the trades frame they bought; only closed trades have an outcome.

    Returns:
        A frame indexed by (``criterion``, ``outcome``): ``count``, ``mean``, ``std``, ``min``,
        ``q25``, ``median``, ``q75``, ``max`` of ``value`` (missing values are not counted).
    """
    joined = criterion_values(details, trades)
    grouped = joined.groupby(["criterion", "outcome"], observed=True, sort=True)["value"]
    stats = grouped.agg(["count", "mean", "std", "min", "max"])
    quantiles = grouped.quantile(list(_QUANTILES)).unstack().rename(columns=_QUANTILES)
    out = stats.join(quantiles)
    return out[["count", "mean", "std", "min", "q25", "median", "q75", "max"]]


def stage_counts(signals: pd.DataFrame) -> pd.DataFrame:
    """Signals per chain and stage, shaped like the service's ``signal_stats``.

    Returns:
        Index ``chain`` (``all`` first, then each chain that occurs), columns ``total`` and one
        per stage that occurs, in the stage's category order.
    """
    counts = (
        signals.groupby(["chain", "stage"], observed=True, sort=True)
        .size()
        .unstack("stage", fill_value=0)
    )
    counts.index = pd.Index(counts.index.astype(str), name="chain")
    counts.columns = pd.Index(counts.columns.astype(str), name="stage")
    counts = pd.concat([counts.sum().to_frame("all").T, counts])
    counts.index.name = "chain"
    counts.insert(0, "total", counts.sum(axis=1))
    return counts.astype(np.int64)
