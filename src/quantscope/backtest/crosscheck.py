"""Cross-check the service's optimizer, and say what applying each recommendation would do.

The contract ("Strategy optimisation") defines a recommendation's figures on the quant's
executed, closed trades of one market-cap class, joined to the values of the buy evaluation
of each: ``sampleSize`` is their count, ``beforeWinRate`` the share of them with pnl > 0,
``afterWinRate`` the same share among those kept by the new threshold, ``tradeDifference``
kept minus all. Those figures count the criterion as a hard filter: they answer the
criterion's **signal** (``backtest.questions``), not what applying the change does, and they
bound nothing: the playbook still passes a trade that fails a criterion that is not required
when the rest of its score reaches the pass mark, and the trades it keeps can do better or
worse than the filter's.

``crosscheck`` shows three answers side by side, per recommendation, each with its 95 %
interval (``uncertainty``, tokens resampled) and what it rests on: the service's claim, the
client's recomputation of it (``what_if(rule="filter")``, the signal; ``agrees`` when it
matches the service's figures: the optimizer counts what it says it counts), and the
replayed **effect** (``what_if(rule="replay")``: the whole pass rule with the recommended
threshold, from the old one), which is what applying the recommendation will produce. Pass
features of executed trades (``load_trades``' default): the optimizer never sees declined
buys, and never-executed trades warn (``ShadowOutcomesWarning``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from quantscope.backtest import _shadow
from quantscope.backtest._inputs import _operators
from quantscope.backtest._rules import DIRECTION, PlaybookArg
from quantscope.backtest.features import backtest_attrs, bare
from quantscope.backtest.questions import QUESTION_LABELS, QUESTION_NOTES
from quantscope.backtest.sweep import resolve_playbook, what_if

#: Rates agree within this absolute tolerance; counts must be equal.
RATE_TOLERANCE = 1e-9
_FIGURES = ("sample_size", "before_win_rate", "after_win_rate", "trade_difference")
#: The replayed changes reported, as ``<change>_replay`` columns (from ``what_if``'s ``d_``).
_REPLAYED = ("d_trades", "d_win_rate", "d_total_pnl_usd", "d_roi")
#: Interval columns of the replayed changes: ``<change>_replay_lo`` / ``_hi``.
_REPLAYED_INTERVALS = ("d_win_rate", "d_total_pnl_usd", "d_roi")
_NOTE = (
    "Applying a recommendation produces the replayed effect (*_replay: the whole pass rule "
    "with the new threshold, against the old one). The service's claim and the client's "
    "filter figures (*_client, win_rate_change_filter) are the criterion's signal (a hard "
    "filter): whether it predicts outcomes, not what applying does, and no bound on it. "
    "Intervals: 95 %, tokens resampled (uncertainty); the claim's is its recomputation's, "
    "where they agree."
)
_KEYS = (
    "recommendation_id",
    "quant_id",
    "market_cap_class",
    "criterion",
    "old_threshold",
    "new_threshold",
)


def _sample(features: pd.DataFrame, rec: pd.Series) -> pd.DataFrame:
    """The recommendation's trades: its quant's closed trades of its class (with the
    features' attrs: ``what_if`` reads their operators and decided thresholds).
    """
    columns = bare(features)  # the mask's column reads copy no attrs
    return features[
        (columns["quant_id"] == rec["quant_id"]).fillna(False).to_numpy(dtype=bool)
        & (columns["market_cap_class"].astype("string") == str(rec["market_cap_class"]))
        .fillna(False)
        .to_numpy(dtype=bool)
        & (columns["status"].astype("string") == "Closed").fillna(False).to_numpy(dtype=bool)
    ]


_SIGNAL = ("win_rate_change_filter_lo", "win_rate_change_filter_hi", "tokens_filter")


def _client_figures(
    sample: pd.DataFrame, rec: pd.Series, playbook: PlaybookArg
) -> dict[str, float]:
    criterion = str(rec["criterion"])
    if criterion not in sample.columns or sample.empty:
        return dict.fromkeys(_FIGURES + _SIGNAL, np.nan)
    # Against every trade with a value, as the claim's beforeWinRate: a current threshold
    # that every value passes.
    (op,) = _operators(backtest_attrs(sample).get("operators") or {}, [criterion], [None], playbook)
    everything = -np.inf if DIRECTION[op] > 0 else np.inf
    table = what_if(
        sample,
        criterion,
        [float(rec["new_threshold"])],
        current=everything,
        playbook=playbook,
        rule="filter",
    )
    row = table.iloc[0]
    n = int(table.attrs["what_if"]["real_trades"])
    rows = bare(sample)
    wins = int(rows.loc[rows[criterion].notna(), "profitable"].fillna(False).sum())
    return {
        "sample_size": n,
        "before_win_rate": wins / n if n else np.nan,
        "after_win_rate": float(row["win_rate"]),
        "trade_difference": int(row["trades"]) - n,
        "win_rate_change_filter_lo": float(row["d_win_rate_lo"]),
        "win_rate_change_filter_hi": float(row["d_win_rate_hi"]),
        "tokens_filter": _int_or_nan(row["tokens"]),
    }


def _int_or_nan(value: object) -> float:
    return np.nan if pd.isna(value) else float(value)  # type: ignore[arg-type]  # a number once pd.isna is False


def _replayed(sample: pd.DataFrame, rec: pd.Series, playbook: PlaybookArg) -> dict[str, float]:
    """The changes the recommendation makes under the whole pass rule, from its old threshold."""
    criterion = str(rec["criterion"])
    names = [f"{name[2:]}_change_replay" for name in _REPLAYED]
    names += [f"{n[2:]}_change_replay{side}" for n in _REPLAYED_INTERVALS for side in _SIDES]
    names += ["trades_replay", "tokens_replay", "moved_tokens_replay", "interval_replay"]
    if criterion not in sample.columns or sample.empty:
        return dict.fromkeys(names, np.nan)
    table = what_if(
        sample,
        criterion,
        [float(rec["new_threshold"])],
        current=float(rec["old_threshold"]),
        playbook=playbook,
        rule="replay",
    )
    row = table.iloc[0]
    out: dict[str, float] = {f"{name[2:]}_change_replay": float(row[name]) for name in _REPLAYED}
    for name in _REPLAYED_INTERVALS:
        for side in _SIDES:
            out[f"{name[2:]}_change_replay{side}"] = float(row[name + side])
    out["trades_replay"] = float(row["trades"])
    out["tokens_replay"] = _int_or_nan(row["tokens"])
    out["moved_tokens_replay"] = _int_or_nan(row["moved_tokens"])
    out["interval_replay"] = row["interval"]
    return out


_SIDES = ("_lo", "_hi")


@_shadow.checked()
def crosscheck(
    recommendations: pd.DataFrame,
    features: pd.DataFrame,
    *,
    playbook: PlaybookArg | None = None,
) -> pd.DataFrame:
    """For each recommendation: the service's claim, the filter figure and the replayed effect.

    Args:
        recommendations: ``load_recommendations`` (needs ``market_cap_class``).
        features: ``trade_features`` of the quants' executed trades.
        playbook: the quants' playbooks (a frame or {quant_id: frame}); default: the ones the
            features keep (``trade_features``). Needed for the replayed effect.

    Returns:
        One row per recommendation: ``recommendation_id``, ``quant_id``,
        ``market_cap_class``, ``criterion``, ``old_threshold``, ``new_threshold``; for each
        of ``sample_size``, ``before_win_rate``, ``after_win_rate`` and ``trade_difference`` a
        ``<figure>_service`` and a ``<figure>_client`` column (the hard filter recomputed),
        and ``agrees``: counts equal and rates within ``RATE_TOLERANCE``. Then the three
        answers to "how much does the win rate change?": ``win_rate_change_service`` (the
        claim), ``win_rate_change_filter`` (the client's filter: the signal) and
        ``win_rate_change_replay``, with ``trades_change_replay``,
        ``total_pnl_usd_change_replay`` and ``roi_change_replay``: what applying will
        produce. Each answer has its 95 % interval: ``win_rate_change_service_lo``/``_hi``
        (its recomputation's, where ``agrees``; NaN otherwise),
        ``win_rate_change_filter_lo``/``_hi`` and ``tokens_filter`` (the signal),
        ``<change>_replay_lo``/``_hi`` for the win-rate, PnL and ROI changes with
        ``trades_replay``, ``tokens_replay``, ``moved_tokens_replay`` and ``interval_replay``
        (the effect); ``confidence_service`` is the claim's own confidence when given.
        ``attrs["crosscheck"]`` says which question each answers (``question``: service and
        filter the signal, replay the effect), ``applying`` ("replay") and ``note``.
    """
    playbook = resolve_playbook(features, playbook, "replay")
    assert playbook is not None
    rows = []
    for _, rec in recommendations.iterrows():
        sample = _sample(features, rec)
        mine = _client_figures(sample, rec, playbook)
        row = {key: rec[key] for key in _KEYS}
        for figure in _FIGURES:
            row[f"{figure}_service"] = rec[figure]
            row[f"{figure}_client"] = mine[figure]
        row["win_rate_change_service"] = float(rec["after_win_rate"] - rec["before_win_rate"])
        row["win_rate_change_service_lo"] = np.nan  # filled below where the figures agree
        row["win_rate_change_service_hi"] = np.nan
        row["win_rate_change_filter"] = mine["after_win_rate"] - mine["before_win_rate"]
        row.update({name: mine[name] for name in _SIGNAL})
        if "confidence" in rec.index:
            row["confidence_service"] = rec["confidence"]
        row.update(_replayed(sample, rec, playbook))
        rows.append(row)
    out = pd.DataFrame(rows)
    out.attrs["crosscheck"] = {
        "applying": "replay",
        "question": {"service": "signal", "filter": "signal", "replay": "effect"},
        "labels": {q: QUESTION_LABELS[q] for q in ("signal", "effect")},
        "notes": {q: QUESTION_NOTES[q] for q in ("signal", "effect")},
        "note": _NOTE,
    }
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
    out.insert(len(_KEYS) + 2 * len(_FIGURES), "agrees", agrees)
    for side in _SIDES:  # the claim is its recomputation where they agree: the same interval
        out[f"win_rate_change_service{side}"] = np.where(
            agrees, out[f"win_rate_change_filter{side}"], np.nan
        )
    for figure in ("sample_size", "trade_difference"):
        for side in ("service", "client"):
            out[f"{figure}_{side}"] = out[f"{figure}_{side}"].astype("Int64")
    for name in ("trades_change_replay", "trades_replay", "tokens_replay", "moved_tokens_replay"):
        out[name] = out[name].astype("Int64")
    out["tokens_filter"] = out["tokens_filter"].astype("Int64")
    out["interval_replay"] = out["interval_replay"].astype("string")
    return out
