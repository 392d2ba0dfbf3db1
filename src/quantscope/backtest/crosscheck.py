"""Cross-check the service's optimizer: recompute each recommendation's figures client-side.

The contract ("Strategy optimisation") defines a recommendation's figures on the quant's
executed, closed trades of one market-cap class, joined to the values of the buy evaluation
of each: ``sampleSize`` is their count, ``beforeWinRate`` the share of them with pnl > 0,
``afterWinRate`` the same share among those kept by the new threshold, ``tradeDifference``
kept minus all. ``crosscheck`` recomputes them from ``trade_features`` with the same sweep as
``what_if`` and reports, per recommendation, the service's and the client's figures and
whether they agree. Pass features of executed trades (``load_trades``' default): the
optimizer never sees declined buys.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from quantscope.backtest.sweep import what_if

#: Rates agree within this absolute tolerance; counts must be equal.
RATE_TOLERANCE = 1e-9
_FIGURES = ("sample_size", "before_win_rate", "after_win_rate", "trade_difference")


def _client_figures(features: pd.DataFrame, rec: pd.Series) -> dict[str, float]:
    criterion = str(rec["criterion"])
    sample = features[
        (features["quant_id"] == rec["quant_id"]).fillna(False).to_numpy(dtype=bool)
        & (features["market_cap_class"].astype("string") == str(rec["market_cap_class"]))
        .fillna(False)
        .to_numpy(dtype=bool)
        & (features["status"].astype("string") == "Closed").fillna(False).to_numpy(dtype=bool)
    ]
    if criterion not in sample.columns or sample.empty:
        return dict.fromkeys(_FIGURES, np.nan)
    table = what_if(sample, criterion, [float(rec["new_threshold"])], current=None)
    row = table.iloc[0]
    n = int(table.attrs["what_if"]["real_trades"])
    wins = int(sample.loc[sample[criterion].notna(), "profitable"].fillna(False).sum())
    return {
        "sample_size": n,
        "before_win_rate": wins / n if n else np.nan,
        "after_win_rate": float(row["win_rate"]),
        "trade_difference": int(row["trades"]) - n,
    }


def crosscheck(recommendations: pd.DataFrame, features: pd.DataFrame) -> pd.DataFrame:
    """For each recommendation, the service's figures next to the client's and ``agrees``.

    Args:
        recommendations: ``load_recommendations`` (needs ``market_cap_class``).
        features: ``trade_features`` of the quants' executed trades.

    Returns:
        One row per recommendation: ``recommendation_id``, ``quant_id``,
        ``market_cap_class``, ``criterion``, ``old_threshold``, ``new_threshold``, then for
        each of ``sample_size``, ``before_win_rate``, ``after_win_rate`` and
        ``trade_difference`` a ``<figure>_service`` and a ``<figure>_client`` column, and
        ``agrees``: counts equal and rates within ``RATE_TOLERANCE``.
    """
    rows = []
    for _, rec in recommendations.iterrows():
        mine = _client_figures(features, rec)
        row = {
            key: rec[key]
            for key in (
                "recommendation_id",
                "quant_id",
                "market_cap_class",
                "criterion",
                "old_threshold",
                "new_threshold",
            )
        }
        for figure in _FIGURES:
            row[f"{figure}_service"] = rec[figure]
            row[f"{figure}_client"] = mine[figure]
        rows.append(row)
    out = pd.DataFrame(rows)
    if out.empty:
        return out
    agrees = np.ones(len(out), dtype=bool)
    for figure in _FIGURES:
        service = out[f"{figure}_service"].to_numpy(dtype=np.float64, na_value=np.nan)
        client = out[f"{figure}_client"].to_numpy(dtype=np.float64, na_value=np.nan)
        if figure.endswith("win_rate"):
            agrees &= np.abs(service - client) <= RATE_TOLERANCE
        else:
            agrees &= service == client
    out["agrees"] = agrees
    for figure in ("sample_size", "trade_difference"):
        for side in ("service", "client"):
            out[f"{figure}_{side}"] = out[f"{figure}_{side}"].astype("Int64")
    return out
