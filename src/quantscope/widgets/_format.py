"""What panels say and show as text: who may use a feature (the plan table's words), message
lines, HTML tables that headless tests can read (``.value``), the before/after table of a
change, a rule's text and a playbook diff.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import pandas as pd

from quantscope._changes import Change, extra_info, number, option_ids
from quantscope._http.client import Client
from quantscope._plans import CAPABILITIES, plan_named
from quantscope._plans import plan_allows as _plans_allow
from quantscope.audit import Written

# --- plans -----------------------------------------------------------------------------------


def _needs(capability: str) -> str:
    """The smallest plan with ``capability`` as the spec writes it: ``Growth``."""
    return plan_named(CAPABILITIES[capability].plan).title


#: Who can use the playbook and the optimizer, for the panels' messages (from ``_plans``).
PLAYBOOK_PLANS = (
    f"{_needs('read_playbook')} or higher can read the playbook; "
    f"{_needs('write_playbook')} can change it."
)
OPTIMIZER_PLANS = f"{_needs('optimizer')} can read, run and apply the optimizer's recommendations."


def plan_allows(client: Client, capability: str) -> bool | None:
    """Whether the client's plan (known once a request reported its quota) can do it;
    None when the plan is not known (then try, and handle the 403).
    """
    return _plans_allow(client.quota.plan, capability)


def plan_name(client: Client) -> str:
    return client.quota.plan or "unknown"


def service_host(client: Client) -> str:
    """Where a write goes, as a confirmation names it: the host (and port) of the client's
    service, ``127.0.0.1:8765 (embedded sandbox)`` for the sandbox.
    """
    host = urlsplit(client.base_url).netloc.rpartition("@")[2] or client.base_url
    sandbox = client.settings.service == "embedded sandbox"
    return f"{host} (embedded sandbox)" if sandbox else host


# --- messages and formatting -----------------------------------------------------------------

_COLOURS = {"info": "#1f4e79", "ok": "#1b5e20", "warn": "#8a5300", "error": "#b71c1c"}
OPERATOR_SYMBOLS = {"V_GTE_T": "≥", "V_GT_T": ">", "V_LTE_T": "≤", "V_LT_T": "<"}


def note(text: str, kind: str = "info") -> str:
    """A one-paragraph HTML message (``text`` is escaped)."""
    return f'<p style="color:{_COLOURS[kind]}">{html.escape(text)}</p>'


def fmt(kind: str, value: Any, *, signed: bool = False) -> str:
    """A metric as text: ``count``, ``share`` (percent), ``usd``, ``ratio``; changes of a
    share are in percentage points.
    """
    v = float(value) if value is not None and value is not pd.NA else math.nan
    if math.isnan(v):
        return "–"
    if math.isinf(v):
        return ("+" if signed and v > 0 else "-" if v < 0 else "") + "∞"
    sign = "+" if signed and v > 0 else ""
    if kind == "count":
        return f"{sign}{round(v):,}"
    if kind == "share":
        return f"{sign}{v * 100:.1f} pts" if signed else f"{v:.1%}"
    if kind == "usd":
        return f"{'-' if v < 0 else sign}${abs(v):,.2f}"
    return f"{sign}{v:.2f}"


def table_html(frame: pd.DataFrame, *, index: bool = True) -> str:
    """A compact HTML table of already formatted cells (escaped by pandas); cells never wrap
    (a metric name on one line), and a table wider than its box scrolls sideways.
    """
    table = frame.to_html(index=index, border=0, classes="quantscope", na_rep="–")
    return f'<div style="overflow-x:auto;white-space:nowrap;max-width:100%">{table}</div>'


# --- the before/after table ----------------------------------------------------------------

#: The before/after rows: what_if metric, label, format kind, and whether a change is reported.
ROWS: tuple[tuple[str, str, str, bool], ...] = (
    ("trades", "trades kept", "count", True),
    ("kept_share", "share of trades kept", "share", False),
    ("wins", "winning trades", "count", False),
    ("win_rate", "win rate", "share", True),
    ("total_pnl_usd", "total PnL", "usd", True),
    ("roi", "ROI", "share", True),
    ("profit_factor", "profit factor", "ratio", True),
)


def before_after(what_if: pd.DataFrame) -> pd.DataFrame:
    """One ``what_if`` row as a table: ``now`` (the baseline), ``proposed`` and ``change``."""
    row, base = what_if.iloc[0], what_if.attrs["what_if"]["baseline"]
    return pd.DataFrame(
        {
            "now": [float(base[m]) for m, *_ in ROWS],
            "proposed": [float(row[m]) for m, *_ in ROWS],
            "change": [float(row[f"d_{m}"]) if d else np.nan for m, _, _, d in ROWS],
        },
        index=pd.Index([m for m, *_ in ROWS], name="metric"),
    )


def before_after_html(table: pd.DataFrame, operator: str, current: float, proposed: float) -> str:
    """The before/after table, formatted, with the thresholds in the column names."""
    sym = OPERATOR_SYMBOLS.get(operator, operator)
    kinds = {m: kind for m, _, kind, _ in ROWS}
    shown = pd.DataFrame(
        {
            f"now ({sym} {number(current)})": [fmt(kinds[m], table.at[m, "now"]) for m in kinds],
            f"with {sym} {number(proposed)}": [
                fmt(kinds[m], table.at[m, "proposed"]) for m in kinds
            ],
            "change": [fmt(kinds[m], table.at[m, "change"], signed=True) for m in kinds],
        },
        index=pd.Index([label for _, label, *_ in ROWS]),
    )
    return table_html(shown)


# --- playbook rows -------------------------------------------------------------------------------


def flag(row: pd.Series, name: str) -> bool:
    """A boolean field of a playbook row (missing counts as False)."""
    value = row.get(name)
    return bool(value) if value is not None and pd.notna(value) else False


def rule_text(row: pd.Series) -> str:
    """How a playbook row decides, as escaped HTML: ``value ≥ t; t in [0, 50]`` or the
    option ids and labels.
    """
    operator = str(row["operator"])
    text = f"value {OPERATOR_SYMBOLS.get(operator, operator)} t"
    if option_ids(row) is not None:
        options = extra_info(row)["options"]
        text += "; " + ", ".join(f"{o.get('id')}={o.get('label')}" for o in options)
    elif pd.notna(row.get("range_min")) and pd.notna(row.get("range_max")):
        text += f"; t in [{number(row['range_min'])}, {number(row['range_max'])}]"
    return html.escape(text)


def diff_html(changes: Sequence[Change]) -> str:
    """The changes as a table: where, which field, old, new, ``old → new``, config id."""
    frame = pd.DataFrame(
        [
            {
                "class": c.market_cap_class,
                "type": c.config_type,
                "criterion": c.criterion,
                "field": c.field,
                "old": number(c.old_value),
                "new": number(c.new_value),
                "change": f"{number(c.old_value)} → {number(c.new_value)}",
                "config id": c.config_id,
            }
            for c in changes
        ]
    )
    return table_html(frame, index=False)


def undone_threshold(written: Written) -> str:
    """The message after undoing one threshold change."""
    entry = written.entries[0]
    return f"Undone: {entry.criterion} threshold back to {number(entry.new_value)}"
