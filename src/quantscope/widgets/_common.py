"""What every panel shares: the base class, plan checks, formatting, figures.

Panels are thin: data comes from ``loaders``/``backtest``, figures from ``plots``, writes from
``quantscope.audit``, the plan table from ``quantscope._plans`` and the rules a change must keep
from ``quantscope._changes`` (``check_change``). This module only lays things out: a message
line, a confirmation box, HTML tables that headless tests can read (``.value``), and a figure
rendered into an ``Output`` by setting its outputs (no ``with out:``: NOTES.md) whose threshold
line moves by blitting.

``Panel`` gives every panel the shared plumbing: its quant's ``PlaybookView`` (``self.view``,
one per client and quant, ``widgets._view``) with a Reload button and the hook
``_playbook_changed``; the write path (confirm, send, show, undo); and lazy opening
(``_open_lazily``: state a load's cost and offer on a click only what can fit, for loads
over the client's quota share). The CSS classes of the DOM contract (``qs-panel``,
``qs-status``, ``qs-reload``, ``qs-open``, ``qs-confirmation``, ``qs-confirm``,
``qs-cancel``) are set here; the panels set their own (``qs-apply``, ``qs-undo``, pickers, cells).
"""

from __future__ import annotations

import base64
import html
import io
import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, TypeVar
from urllib.parse import urlsplit

import ipywidgets as W
import numpy as np
import pandas as pd
import PIL.Image
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from quantscope import backtest as bt
from quantscope import loaders as L
from quantscope import plots
from quantscope._advice import Said, render
from quantscope._changes import Change, extra_info, number, option_ids
from quantscope._errors import (
    IncompleteDataWarning,
    PermissionDeniedError,
    QuantscopeError,
    QuotaShareExceededError,
    WriteRefusedError,
    format_reset,
)
from quantscope._http.client import Client, get_default_client
from quantscope._http.estimate import Estimate, estimate
from quantscope._http.quota import share_limit
from quantscope._plans import CAPABILITIES, plan_named
from quantscope._plans import plan_allows as _plans_allow
from quantscope.audit import AuditEntry, AuditLog, Written, undo
from quantscope.widgets._view import PlaybookView

T = TypeVar("T")

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


# --- data ------------------------------------------------------------------------------------


class Research(NamedTuple):
    """A quant's executed trades, the details of the buys that opened the closed ones, and the
    two joined (``backtest.trade_features``).
    """

    trades: pd.DataFrame
    details: pd.DataFrame
    features: pd.DataFrame


def load_research(
    quant_id: int,
    client: Client,
    *,
    trades: pd.DataFrame | None = None,
    details: pd.DataFrame | None = None,
    confirm: bool = False,
    spent: int = 0,
    max_requests: int | None = None,
    partial: bool = False,
) -> Research:
    """Load (or take) the trades and buy-evaluation details, and join them.

    Cost: the trades (one request per 1,000) and one eval-details request per closed trade not
    yet in the cache (details never change, so they are cached forever); quota-aware with a
    progress bar, as the loaders are. Without ``confirm``, the whole of it (trades and
    details together, and the ``spent`` requests the caller already sent for the same
    purpose, such as a panel's other loads on opening) may spend at most the client's share of
    the quota left when it began (``Settings.quota_share``): more is refused with its cost
    before the details are sent (a ``QuotaShareExceededError``; a panel offers what can fit,
    ``opening_offer``). ``max_requests`` and ``partial`` go to ``load_eval_details``: with
    both, the details of as many closed trades as ``max_requests`` allows are fetched, and
    ``features`` holds those trades only (a trade without details has no criterion values).
    """
    if trades is None:
        trades = L.load_trades(quant_id, client=client, confirm=confirm)
        spent += requests_of(trades)
    if details is None:
        closed = trades[(trades["status"] == "Closed").fillna(False).to_numpy(bool)]
        ids = closed["evaluation_id"].dropna().unique()
        if not confirm and max_requests is None and len(ids):
            _within_share(estimate(L.load_eval_details, ids, client=client), spent)
        details = L.load_eval_details(
            ids, client=client, confirm=confirm, max_requests=max_requests, partial=partial
        )
    features = bt.trade_features(trades, details=details)
    mine = (features["quant_id"] == quant_id).fillna(False).to_numpy(bool)
    return Research(trades, details, features[mine].reset_index(drop=True))


def requests_of(frame: pd.DataFrame | pd.Series) -> int:
    """The requests a loaded frame cost (its provenance; 0 when served from the cache)."""
    return int(frame.attrs.get("quantscope", {}).get("requests") or 0)


def _within_share(cost: Estimate, spent: int) -> None:
    """Refuse the details when they and the ``spent`` requests before them exceed the share of
    the quota left when the load began (unknown quota: the loader's own rule applies).
    """
    if cost.remaining is None or not cost.requests:
        return
    start = cost.remaining + spent
    if spent + cost.requests <= share_limit(cost.share, start):
        return
    of = f" of {cost.limit}" if cost.limit is not None else ""
    raise QuotaShareExceededError(
        Said(
            "{endpoint} needed {requests} requests for evaluation details not in the cache "
            "({cached} cached); with the {spent} this load already sent, more than {pct} of "
            "the {start}{of} left: sent nothing more. To load it, {advice}.",
            ("confirm_details", "details"),
            {
                "endpoint": cost.endpoint,
                "requests": cost.requests,
                "cached": cost.cached,
                "spent": spent,
                "pct": f"{cost.share:.0%}",
                "start": start,
                "of": of,
            },
        ),
        share=cost.share,
        endpoint=cost.endpoint,
        needed=cost.requests,
        fetched=spent,
        remaining=cost.remaining,
        limit=cost.limit,
        reset=cost.reset,
        reserve=cost.reserve,
    )


class Offer(NamedTuple):
    """What a panel offers instead of a load over its quota share: the text saying the cost,
    the quota left and its reset; the Open button's label (None: nothing can be loaded before
    the reset, so there is no button); the keywords of ``load_research`` for the click.
    """

    text: str
    label: str | None
    spend: dict[str, Any]


def opening_offer(exc: QuotaShareExceededError, what: str, host: str | None = None) -> Offer:
    """Only what can succeed, for a load refused on opening (``exc``): all of it when it fits
    in the quota left (minus the client's reserve), else what fits (the panel then studies the
    trades whose details it has), else nothing before the reset. Cached answers cost nothing
    again, so the rest of a partial load is cheaper after the reset. ``host``
    (``service_host``): the service the requests go to, named in the text.
    """
    of = f" of {exc.limit}" if exc.limit is not None else ""
    left = exc.remaining if exc.remaining is not None else 0
    room = left - (exc.reserve or 0)
    reset = format_reset(exc.reset)
    on = f" on {host}" if host else ""
    needs = (
        f"Loading {what} needs {exc.needed:,} more requests{on} ({exc.endpoint}, not in the cache)"
    )
    if exc.remaining is None or exc.needed <= room:
        return Offer(
            f"{needs}: more than the {exc.share:.0%} share of the {exc.remaining}{of} left that "
            "a panel spends without asking. Press Open to spend them.",
            f"Open: spend {exc.needed:,} requests",
            {"confirm": True},
        )
    kept = f", {exc.reserve:,} of them kept in reserve" if exc.reserve else ""
    if room <= 0:
        return Offer(
            f"{needs}, and {left}{of} are left today{kept}: nothing can be loaded before the "
            f"quota resets at {reset}. Open this panel again after the reset.",
            None,
            {},
        )
    return Offer(
        f"{needs}, but {left}{of} are left today{kept}: not all of it fits before the quota "
        f"resets at {reset}. Press Open to spend {room:,} on what fits (the panel then "
        "studies the trades whose details it has), or open the panel again after the reset: "
        f"what is loaded stays cached, so the rest then costs {exc.needed - room:,}.",
        f"Open what fits: spend {room:,} requests",
        {"confirm": True, "max_requests": room, "partial": True},
    )


# --- figures ---------------------------------------------------------------------------------


def new_figure(size: tuple[float, float] = (7.0, 3.0)) -> Figure:
    """A figure outside pyplot: nothing global, nothing shown behind the panel's back."""
    return Figure(figsize=size, dpi=80, layout="constrained")


def _publish(out: W.Output, rgba: np.ndarray, text: str) -> None:
    """Show an RGBA image in ``out`` as PNG, replacing what it showed."""
    buffer = io.BytesIO()
    PIL.Image.fromarray(rgba).save(buffer, format="png", compress_level=1)
    out.outputs = (
        {
            "output_type": "display_data",
            "data": {
                "image/png": base64.b64encode(buffer.getvalue()).decode("ascii"),
                "text/plain": text,
            },
            "metadata": {},
        },
    )


class ThresholdFigure:
    """A figure shown in an ``Output`` whose threshold line moves cheaply.

    The figure is drawn once without the line (kept as the background); each ``move`` puts
    the line where ``plots.set_threshold`` says, restores the background and draws the line
    alone (blitting): the histograms are not redrawn per slider step. A move that changes
    the x limits (a threshold outside them) draws everything again.
    """

    def __init__(self, ax: Axes, out: W.Output) -> None:
        self.ax, self.out = ax, out
        figure = ax.get_figure(root=True)
        assert isinstance(figure, Figure)
        self.figure: Figure = figure
        self.canvas = FigureCanvasAgg(self.figure)
        self._background: Any = None
        self._line: Line2D | None = None
        self._xlim: tuple[float, float] | None = None

    def move(self, threshold: float) -> None:
        """Draw the threshold line at ``threshold`` and show the figure."""
        line = plots.set_threshold(self.ax, threshold)
        assert line is not None
        if line is not self._line or self.ax.get_xlim() != self._xlim:
            line.set_animated(True)  # left out of the full draw: the background has no line
            self.canvas.draw()
            self._background = self.canvas.copy_from_bbox(self.figure.bbox)
            self._line, self._xlim = line, self.ax.get_xlim()
        else:
            self.canvas.restore_region(self._background)
        self.ax.draw_artist(line)
        _publish(self.out, np.asarray(self.canvas.buffer_rgba()), f"<{self.ax.get_title()}>")


# --- the panel base --------------------------------------------------------------------------


class Confirmation:
    """A hidden box that shows what is about to be sent, with Confirm and Cancel."""

    def __init__(self, on_confirm: Callable[[], Any], on_cancel: Callable[[], Any]) -> None:
        self.text = W.HTML()
        self.confirm_button = W.Button(description="Confirm", button_style="danger", icon="check")
        self.cancel_button = W.Button(description="Cancel", icon="times")
        self.confirm_button.on_click(lambda _: on_confirm())
        self.cancel_button.on_click(lambda _: on_cancel())
        self.box = W.VBox(
            [self.text, W.HBox([self.confirm_button, self.cancel_button])],
            layout=W.Layout(display="none", border="1px solid #b71c1c", padding="4px"),
        )
        self.box.add_class("qs-confirmation")
        self.confirm_button.add_class("qs-confirm")
        self.cancel_button.add_class("qs-cancel")

    def show(self, text_html: str) -> None:
        self.text.value = text_html
        self.box.layout.display = "flex"

    def hide(self) -> None:
        self.text.value = ""
        self.box.layout.display = "none"

    @property
    def visible(self) -> bool:
        shown: bool = self.box.layout.display != "none"
        return shown


class Panel:
    """Base of the panels: quant, client, audit log, the shared playbook view, a message line
    (``qs-status``), a Reload button, lazy opening and the widget (``qs-panel``).

    ``panel.widget`` is the VBox to place in a layout; a panel left as a cell's last value
    displays itself (``_ipython_display_``). ``panel.view`` is the ``PlaybookView`` of its
    (client, quant), shared with every other panel of that pair: a write through one panel
    (or through ``quantscope.audit`` with the same client) and a Reload redraw them all
    (``_playbook_changed``). ``close()`` closes the widgets and leaves the view.
    """

    def __init__(
        self, quant_id: int, client: Client | None, audit_log: AuditLog | str | None
    ) -> None:
        self.quant_id = int(quant_id)
        self.client = client if client is not None else get_default_client()
        self.audit_log = (
            AuditLog.for_client(self.client)
            if audit_log is None
            else audit_log
            if isinstance(audit_log, AuditLog)
            else AuditLog(audit_log)
        )
        self.message = W.HTML()
        self.message.add_class("qs-status")
        self.widget = W.VBox()
        self.widget.add_class("qs-panel")
        self.reload_button = W.Button(
            description="Reload",
            icon="refresh",
            tooltip="Read the playbook from the service again (every panel of this quant redraws)",
        )
        self.reload_button.add_class("qs-reload")
        self.reload_button.on_click(lambda _: self.reload())
        self.open_button = W.Button(  # its label varies: as wide as it needs, never cut
            description="Open",
            icon="play",
            button_style="warning",
            layout=W.Layout(display="none", width="auto"),
        )
        self.open_button.add_class("qs-open")
        self.open_button.on_click(lambda _: self.open())
        self._opening: Callable[[], Any] | None = None
        self._writing = False
        self._deferred: pd.DataFrame | None = None
        self.view = PlaybookView.of(self.client, self.quant_id)
        self.view.subscribe(self)

    def _title(self, text: str) -> W.HBox:
        """The panel's first line: its title, the Reload button, the Open button (hidden until
        ``_open_lazily``).
        """
        return W.HBox(
            [W.HTML(f"<h4>{html.escape(text)}</h4>"), self.reload_button, self.open_button],
            layout=W.Layout(align_items="center", grid_gap="8px"),
        )

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)

    def notify(self, text: str, kind: str = "info") -> None:
        """Show one message (replacing the previous one)."""
        self.message.value = note(text, kind)

    def denied(self, exc: PermissionDeniedError, plans: str) -> None:
        """The plan lacks an endpoint: say which plan is needed."""
        self.message.value = note(
            f"Your plan ({plan_name(self.client)}) cannot do this. {plans}", "error"
        ) + note(render(exc, "panel"), "info")

    def refused(self, plans: str) -> None:
        """The plan, known before any request (the client's last quota headers), cannot do
        what the panel needs: say so; nothing is sent.
        """
        self.notify(
            f"Your plan ({plan_name(self.client)}) cannot do this: nothing was sent. {plans}",
            "error",
        )

    def failed(self, exc: QuantscopeError) -> None:
        """A request failed: show the error's message (it says what to do); a write refused
        because the playbook moved also says how to see it as it is now.
        """
        self.notify(render(exc, "panel"), "error")  # its buttons, not Python's keywords
        if isinstance(exc, WriteRefusedError) and exc.stale:
            self.message.value += note(
                "Press Reload to see the playbook as the service holds it now (every panel of "
                "this quant redraws), then decide again.",
                "info",
            )

    def close(self) -> None:
        """Close every widget of the panel and leave the playbook view (nothing keeps the
        panel alive afterwards).
        """
        self.view.unsubscribe(self)
        seen: set[int] = set()
        todo: list[W.Widget] = [self.widget, self.open_button, self.reload_button]
        while todo:
            widget = todo.pop()
            if id(widget) in seen:
                continue
            seen.add(id(widget))
            todo += list(getattr(widget, "children", ()))
            for part in ("layout", "style"):
                if isinstance(getattr(widget, part, None), W.Widget):
                    todo.append(getattr(widget, part))
            widget.close()

    # ----- the shared playbook view -----

    def reload(self) -> pd.DataFrame | None:
        """Read the playbook from the service again; every panel of this quant and client
        redraws (``_playbook_changed``). None (with the message) when the read failed.
        """
        playbook = self._call(self.view.reload)
        if playbook is not None:
            self.notify("Reloaded: the playbook as the service holds it now.", "ok")
        return playbook

    def _view_changed(self, playbook: pd.DataFrame) -> None:
        """The view's call: ``_playbook_changed`` now, or after this panel's write finished."""
        if self._writing:
            self._deferred = playbook
        else:
            self._playbook_changed(playbook)

    def _playbook_changed(self, playbook: pd.DataFrame) -> None:
        """The playbook changed (a write through any panel or ``audit`` with this client, or a
        Reload): show ``playbook``. Base: nothing.
        """

    # ----- lazy opening -----

    def _open_lazily(self, offer: Offer, load: Callable[..., Any]) -> None:
        """Do not load now: say ``offer.text`` (what loading costs, the quota left) and, when
        something can be loaded, show the Open button (``qs-open``) labelled ``offer.label``,
        whose click runs ``load(**offer.spend)`` (which loads with those keywords of
        ``load_research`` and shows the result).

        For a load over the client's quota share, typically caught as::

            try:
                self._show(load_research(..., confirm=False))
            except QuotaShareExceededError as exc:
                self._open_lazily(opening_offer(exc, "the trades"), lambda **spend: self._show(
                    load_research(..., **spend)))
        """
        self._opening = (lambda: load(**offer.spend)) if offer.label else None
        self.open_button.description = offer.label or "Open"
        self.open_button.layout.display = "" if offer.label else "none"
        self.notify(offer.text, "warn")

    def open(self) -> bool:
        """Run the load ``_open_lazily`` deferred (the Open button); whether it ran through.
        A failure shows its message and keeps the button for another try.
        """
        load = self._opening
        if load is None:
            self.notify("Nothing waits to be opened.")
            return False
        self.notify("Loading…")

        def run() -> bool:
            load()
            return True

        if self._call(run) is None:
            return False
        self._opening = None
        self.open_button.layout.display = "none"
        # what the load said stays (a partial load, a plan's chains); "Loading…" goes
        self.message.value = self.message.value.replace(note("Loading…"), "", 1)
        return True

    # ----- writes: confirm, send, read back, log; undo -----
    # A writing panel sets these in its __init__; it shows the read-back in
    # ``_playbook_changed`` (and refreshes anything else in ``_show_written``).

    pending: Any
    confirmation: Confirmation
    undo_button: W.Button
    last_written: list[AuditEntry]

    def _show_written(self, written: Written) -> None:
        """After this panel's write, before ``_playbook_changed`` shows the read-back (when
        there is one): what else the panel refreshes. Base: nothing.
        """

    def _cancel_pending(self) -> bool:
        """Hide the confirmation and drop what awaited it; whether anything did."""
        had = self.pending is not None
        self.pending = None
        self.confirmation.hide()
        return had

    def _take_pending(self) -> Any:
        """What awaits confirmation, taken (the box closes); None, with a message, if nothing."""
        pending = self.pending
        if not self._cancel_pending():
            self.notify("Nothing awaits confirmation: press Apply first.")
            return None
        return pending

    def _call(
        self,
        request: Callable[[], T],
        on_denied: Callable[[PermissionDeniedError], None] | None = None,
    ) -> T | None:
        """``request()``, or None when it failed: a plan's 403 goes to ``on_denied`` (default:
        shown as any failure), any other failure's message is shown. What a loaded frame
        lacks (``IncompleteDataWarning``: a capped list, a plan's chains) is shown as the
        panel's message, not printed.
        """
        try:
            with warnings.catch_warnings(record=True) as seen:
                warnings.simplefilter("always", IncompleteDataWarning)
                result = request()
            for warning in seen:
                if issubclass(warning.category, IncompleteDataWarning):
                    self.notify(str(warning.message), "warn")
                else:
                    warnings.warn_explicit(
                        warning.message, warning.category, warning.filename, warning.lineno
                    )
            return result
        except PermissionDeniedError as exc:
            if on_denied is None:
                self.failed(exc)
            else:
                on_denied(exc)
            return None
        except QuantscopeError as exc:
            self.failed(exc)
            return None

    def _ask(
        self,
        pending: Any,
        question: str,
        changes: Sequence[Change],
        how: str,
        logged: str = "the change",
    ) -> None:
        """Await confirmation of ``pending``: the question (asked of the service), the diff,
        how it is sent and that it is read back and logged.
        """
        self.pending = pending
        self.confirmation.show(
            f"<b>{question} on {html.escape(service_host(self.client))}?</b>"
            + diff_html(changes)
            + note(
                f"{how}; the playbook is then read back to verify, and {logged} is logged to "
                f"{self.audit_log.path}."
            )
        )

    def _write(
        self,
        send: Callable[[], Written],
        done: str | Callable[[Written], str],
        *,
        on_denied: Callable[[PermissionDeniedError], None] | None = None,
        undoable: bool = True,
    ) -> Written | None:
        """Send one write (``audit.write_changes``, ``audit.apply_recommendation_verified``,
        ``audit.undo``: each reads the playbook back and logs) and show the outcome.

        A refused or failed request shows its message (``on_denied`` handles a plan's 403;
        a ``StaleWriteError`` says what changed and to reload) and gives None. Otherwise its
        entries become what Undo restores (nothing after an undo, ``undoable=False``), the
        panel shows the read-back (``_show_written``, then ``_playbook_changed``: the view
        tells every other panel of the quant at once, this one when the write is done), and
        the message line says ``done`` and whether the read-back verified.
        """
        self._writing, self._deferred = True, None
        try:
            written = self._call(send, on_denied)
        finally:
            self._writing = False
        changed, self._deferred = self._deferred, None
        if written is None:
            if changed is not None:  # the view heard of the write, then it failed
                self._playbook_changed(changed)
            return None
        self.last_written = written.entries if undoable else []
        self.undo_button.disabled = not undoable
        self._show_written(written)
        if changed is not None:
            self._playbook_changed(changed)
        text = done if isinstance(done, str) else done(written)
        if written.verified:
            self.notify(f"{text}; verified, logged to {self.audit_log.path}.", "ok")
        else:
            reasons = "; ".join(e.note or "" for e in written.entries if not e.verified)
            self.notify(f"{text}, but the read-back did not verify: {reasons}", "error")
        return written

    def _undo_last(self, nothing: str, done: Callable[[Written], str]) -> Written | None:
        """Restore what the panel's last write replaced (``undo``), or say ``nothing``."""
        if not self.last_written:
            self.notify(nothing)
            return None
        entries = self.last_written
        return self._write(
            lambda: undo(entries, client=self.client, log=self.audit_log), done, undoable=False
        )


def undone_threshold(written: Written) -> str:
    """The message after undoing one threshold change."""
    entry = written.entries[0]
    return f"Undone: {entry.criterion} threshold back to {number(entry.new_value)}"
