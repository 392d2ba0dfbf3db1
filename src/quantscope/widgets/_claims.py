"""An optimizer's claims beside what they would do and whether they hold out of sample.

The service's recommendation says "win rate 0.528 -> 0.765, confidence 0.47": the criterion
counted as a hard filter on the trades the threshold was chosen on. Two things a reviewer needs
before applying it are not in it (issue 21):

* its **effect** (``replayed_effects``): the whole pass rule replayed with the new threshold
  against the old one on the recommendation's trades, what applying writes, each change with
  its interval from ``backtest.uncertainty.what_if_intervals`` (tokens resampled);
* whether its criterion carries any **signal** out of sample (``signal_screen``): the verdict
  of ``backtest.screen`` on the quant's trades (every criterion and class, thresholds chosen on
  training data, p-values adjusted over the whole family), so that a recommendation on a noise
  criterion (confidence 0.18-0.20 in the sandbox) is not shown as a finding.

The screen runs for the signal only: the panel computes each recommendation's own effect, and
the screen's replayed effect of its own thresholds would replay the whole rule for every
candidate, several times the signal's cost (benchmarks/README.md, screen).
"""

from __future__ import annotations

import warnings
from typing import Any

import pandas as pd

from quantscope import backtest as bt
from quantscope._errors import IncompleteDataWarning
from quantscope.backtest.features import bare
from quantscope.widgets._questions import with_interval

#: The replayed changes of a recommendation, as ``effect_<name>`` columns with ``_lo``/``_hi``.
EFFECTS = ("d_win_rate", "d_total_pnl_usd", "d_roi")


def _class_rows(features: pd.DataFrame, quant_id: Any, klass: Any) -> pd.DataFrame:
    columns = bare(features)  # the mask's column reads copy no attrs; the rows keep them
    keep = (columns["quant_id"] == quant_id).fillna(False).to_numpy(bool) & (
        columns["market_cap_class"].astype("string") == str(klass)
    ).fillna(False).to_numpy(bool)
    if "status" in columns.columns:
        keep &= (columns["status"].astype("string") == "Closed").fillna(False).to_numpy(bool)
    return features[keep]


def replayed_effects(
    recommendations: pd.DataFrame, features: pd.DataFrame, playbook: Any
) -> pd.DataFrame:
    """Each recommendation's replayed effect with intervals, one row per recommendation.

    Columns: ``recommendation_id``, ``trades_now`` (kept at the old threshold), ``trades``
    (at the new one), ``d_trades``, ``effect_d_win_rate``, ``effect_d_total_pnl_usd`` and
    ``effect_d_roi`` with ``_lo``/``_hi``, ``moved_tokens``, ``tokens`` and ``interval``
    ("bootstrap" or the rule of three where nothing moved). NaN where the features lack the
    criterion or the class. One ``what_if_intervals`` call per (quant, class, criterion, old
    threshold), however many new thresholds were recommended for it.
    """
    rows: dict[Any, dict[str, Any]] = {}
    keys = ["quant_id", "market_cap_class", "criterion", "old_threshold"]
    for (quant, klass, criterion, old), recs in recommendations.groupby(keys, dropna=False):
        sample = _class_rows(features, quant, klass)
        if criterion not in sample.columns or bare(sample)[criterion].notna().sum() == 0:
            continue
        news = [float(t) for t in recs["new_threshold"]]
        table = bt.what_if_intervals(
            sample,
            str(criterion),
            sorted({float(old), *news}),
            current=float(old),
            playbook=playbook,
            rule="replay",
        )
        tokens = int(table.attrs.get("intervals", {}).get("clusters", 0))
        got = bare(table).set_index("threshold")  # its cells read below copy no attrs
        now = int(got.loc[float(old), "trades"])
        for rec_id, new in zip(recs["recommendation_id"], news, strict=True):
            cell = got.loc[new]
            row: dict[str, Any] = {
                "trades_now": now,
                "trades": int(cell["trades"]),
                "d_trades": int(cell["trades"]) - now,
                "moved_tokens": int(cell["moved_tokens"]),
                "tokens": tokens,
                "interval": str(cell["interval"]),
            }
            for name in EFFECTS:
                for suffix in ("", "_lo", "_hi"):
                    row[f"effect_{name}{suffix}"] = float(cell[f"{name}{suffix}"])
            rows[rec_id] = row
    out = pd.DataFrame.from_dict(rows, orient="index")
    out = out.reindex(pd.Index(recommendations["recommendation_id"], name="recommendation_id"))
    return out.reset_index()


def effect_text(row: pd.Series) -> dict[str, str]:
    """A ``replayed_effects`` row as cells: trades, and each change with its interval."""
    if pd.isna(row.get("trades")):
        return {"trades": "–", **{name: "–" for name in EFFECTS}}
    kinds = {"d_win_rate": "share", "d_total_pnl_usd": "usd", "d_roi": "share"}
    cells = {
        "trades": f"{int(row['trades_now']):,} → {int(row['trades']):,} ({int(row['d_trades']):+,})"
    }
    for name, kind in kinds.items():
        col = f"effect_{name}"
        cells[name] = with_interval(kind, row[col], row[f"{col}_lo"], row[f"{col}_hi"])
    return cells


def signal_screen(features: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """``backtest.screen`` of every criterion and class of ``features``, the signal only
    (``effect=False``: no threshold is replayed); and what its warnings said (groups too small
    to screen).
    """
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always", IncompleteDataWarning)
        found = bt.screen(features, effect=False)
    said = []
    for warning in seen:
        if issubclass(warning.category, IncompleteDataWarning):
            said.append(str(warning.message))
        else:
            warnings.warn_explicit(
                warning.message, warning.category, warning.filename, warning.lineno
            )
    return found, said


def verdict(screen: pd.DataFrame | None, klass: Any, criterion: Any) -> dict[str, Any]:
    """The screen's verdict on one (class, criterion): ``found`` (screened), ``significant``,
    ``short`` (a table cell) and ``text`` (a sentence).
    """
    if screen is None:
        return {"found": False, "significant": False, "short": "–", "text": ""}
    info = screen.attrs.get("screen", {})
    for entry in info.get("untested", []):
        if entry.get("market_cap_class") == klass and entry.get("criterion") == criterion:
            text = (
                f"The out-of-sample screen could not test {criterion} in {klass}: no training "
                "set could split its values (nearly every trade shares one)."
            )
            return {"found": False, "significant": False, "short": "untested", "text": text}
    if screen.empty:
        rows = screen
    else:
        rows = screen[
            (screen["market_cap_class"].astype("string") == str(klass)).to_numpy(bool)
            & (screen["criterion"].astype("string") == str(criterion)).to_numpy(bool)
        ]
    if rows.empty:
        text = (
            f"The out-of-sample screen did not use {klass}: too few trades or tokens "
            "to test a criterion there."
        )
        return {"found": False, "significant": False, "short": "not screened", "text": text}
    row = rows.iloc[0]
    significant = bool(row.get("significant", False))
    hypotheses = int(row.get("hypotheses", info.get("hypotheses", len(screen))))
    combos = row.get("combos_searched", info.get("combos_searched"))
    signal = with_interval("share", row["signal"], row["signal_lo"], row["signal_hi"])
    p = float(row["p_value"])
    short = f"{signal}, p = {p:.3f}: {'significant' if significant else 'no evidence'}"
    searched = f"{hypotheses} criteria × classes screened"
    if combos is not None and not pd.isna(combos):
        searched += f", {int(combos):,} thresholds tried on training data"
    if significant:
        text = (
            f"Out of sample, {criterion} separates winners in {klass}: kept minus dropped win "
            f"rate {signal} on {int(row['test_trades']):,} test trades of "
            f"{int(row['tokens']):,} tokens, adjusted p = {p:.3f} ({searched})."
        )
    else:
        text = (
            f"Not a finding: out of sample, {criterion} shows no signal in {klass} that "
            f"survives the search (kept minus dropped win rate {signal}, adjusted p = {p:.3f}; "
            f"{searched}). The optimizer's confidence is not a test; its claim is what "
            "the threshold it searched for did on the trades it searched."
        )
    return {"found": True, "significant": significant, "short": short, "text": text}
