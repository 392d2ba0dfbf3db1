"""``ThresholdPanel``: move one criterion's threshold, see what it would have done, apply it.

::

    panel = ThresholdPanel(quant_id=1)        # displays itself as a cell's last value
    panel.select("smart_money_buys")
    panel.set_threshold(3)                    # the slider, from code
    panel.table                               # before/after, raw numbers
    panel.apply(); panel.confirm()            # PUT, read back, audit log; or panel.cancel()
    panel.undo()                              # restore the old value (verified, logged)

The threshold is held exactly by ``_controls.ThresholdControl`` (a slider over a list of
values that holds the playbook's threshold, and a text box that shows and takes the exact
value): opening a criterion proposes nothing, whole-number criteria move in whole steps.

Above the table, both questions of the selected threshold side by side (``_questions``):
the change's **effect** (the whole pass rule replayed with the playbook as the panel holds it:
what applying does, and what Apply writes) and the criterion's **signal** (the criterion as a
hard filter: the trades it keeps against those it drops), each decision number (trades, win
rate, PnL and ROI changes) with its interval from ``backtest.uncertainty`` and the trades and
tokens it rests on; a threshold that moves nothing shows the rule-of-three interval. The
question picker says which of the two the before/after table details (``backtest.what_if``
with that rule, on the quant's closed trades of one market-cap class, default the class with
most trades, against the playbook's current BUYING threshold). The figure is
``plots.criterion_distributions`` with the threshold line moved by ``plots.set_threshold``
(the histograms are drawn once per criterion, not per slider step). The intervals of every
threshold the slider offers are computed once per (criterion, class, rule) and cached: a
slider step is a lookup.

Loading cost: the trades (one request per 1,000) and one eval-details request per closed
trade not yet in the cache (details are cached forever), with the loaders' progress bar and
quota check. Pass ``trades=``/``details=`` to reuse frames already loaded. A load over the
client's share of the quota left (``Settings.quota_share``) is not spent on opening: the panel
shows its cost, the quota left and its reset, and an Open button only for what can succeed
(all of it when it fits, else what fits; ``_offer.opening_offer``). A plan known not to read
the playbook (the client's last quota headers name it) is told so without a request.
"""

from __future__ import annotations

import html
import warnings
from collections.abc import Callable
from typing import Any

import ipywidgets as W
import pandas as pd

from quantscope import audit, plots
from quantscope._changes import check_change, number
from quantscope._errors import (
    IncompleteDataWarning,
    PermissionDeniedError,
    QuantscopeError,
    QuotaShareExceededError,
)
from quantscope._http.client import Client
from quantscope.backtest.questions import (
    QUESTION_LABELS,
    QUESTION_NOTES,
    Question,
    question_of,
)
from quantscope.widgets._confirm import Confirmation
from quantscope.widgets._controls import Quiet, ThresholdControl, exact_text, is_whole, stops
from quantscope.widgets._figure import ThresholdFigure, new_figure
from quantscope.widgets._format import (
    PLAYBOOK_PLANS,
    before_after,
    before_after_html,
    flag,
    note,
    plan_allows,
    plan_name,
    rule_text,
    service_host,
    undone_threshold,
)
from quantscope.widgets._offer import Research, load_research, opening_offer, requests_of
from quantscope.widgets._panel import Panel
from quantscope.widgets._questions import (
    Answer,
    Answers,
    nothing_moved_text,
    side_by_side_html,
)

CONFIG_TYPE = "BUYING"  # trades come from TOKEN_BUY evaluations, decided by BUYING thresholds
#: The question picker: which question the before/after table details (short labels).
RULES = tuple(
    (QUESTION_LABELS[question_of(rule)].split(" (")[0], rule) for rule in ("replay", "filter")
)


def question_of_frame(what_if: pd.DataFrame) -> Question:
    """The question a ``what_if`` frame answers: its ``question`` entry, else its rule's."""
    info = what_if.attrs["what_if"]
    found = info.get("question")
    return found if found in QUESTION_LABELS else question_of(str(info["rule"]))


def _rule_caption(what_if: pd.DataFrame) -> str:
    """The line above the table that says which question its figures answer."""
    return note(QUESTION_NOTES[question_of_frame(what_if)])


class ThresholdPanel(Panel):
    """One criterion's threshold: what-if table, winning/losing distributions, apply and undo.

    Args:
        quant_id: the quant whose playbook and trades to study.
        client: the client (default: ``connect()``'s).
        market_cap_class: the playbook class (default: the one with most closed trades).
        criterion: the criterion to start with (default: the class's first).
        rule: the question the before/after table details: ``"replay"`` (default: the
            effect, what applying does) or ``"filter"`` (the signal, the criterion as a hard
            filter), as ``backtest.what_if``'s ``rule``. The side-by-side summary always
            shows both.
        trades, details: frames already loaded (``load_trades``, ``load_eval_details``).
        audit_log: an ``AuditLog`` or path (default: ``<cache dir>/audit.jsonl``).
    """

    def __init__(
        self,
        quant_id: int,
        *,
        client: Client | None = None,
        market_cap_class: str | None = None,
        criterion: str | None = None,
        rule: str = "replay",
        trades: pd.DataFrame | None = None,
        details: pd.DataFrame | None = None,
        audit_log: audit.AuditLog | str | None = None,
    ) -> None:
        super().__init__(quant_id, client, audit_log)
        self.playbook: pd.DataFrame | None = None
        self.research: Research | None = None
        self.what_if: pd.DataFrame | None = None
        self.table: pd.DataFrame | None = None
        self.answers = Answers()  # both questions' intervals, cached per criterion and class
        self.effect: Answer | None = None  # the selected threshold's effect (replayed)
        self.signal: Answer | None = None  # ... and signal (the criterion as a hard filter)
        self.kept_dropped: dict[str, float] | None = None  # kept against dropped win rate
        self._class_rows: dict[str, pd.DataFrame] = {}  # ``features`` of each class
        self.pending: audit.Change | None = None
        self.last_written: list[audit.AuditEntry] = []
        self.writable: bool | None = None
        self.plot: ThresholdFigure | None = None
        self.whole = False
        self._quiet = Quiet()  # programmatic changes of the pickers: observers ignore them
        self._given = (trades, details)
        self._wanted = (market_cap_class, criterion)
        wide = {"description_width": "initial"}
        self.class_picker = W.Dropdown(
            description="market cap", style=wide, layout=W.Layout(width="auto", min_width="18em")
        )
        self.criterion_picker = W.Dropdown(
            description="criterion", style=wide, layout=W.Layout(width="auto", min_width="34em")
        )
        self.rule_picker = W.ToggleButtons(
            options=RULES,
            value=rule,
            description="table",
            tooltip="which question the before/after table details (the summary shows both)",
            style={"button_width": "auto"},
        )
        self.control = ThresholdControl(
            lambda _: self._quietly(self._update),
            self._refusal,
            lambda message: self.notify(message, "error"),
        )
        self.text = self.control.text
        self.entry_html = W.HTML()
        self.questions_html = W.HTML(layout=W.Layout(max_width="100%"))
        # wide enough for the table on one line a row, narrow enough to leave the figure beside
        self.table_html = W.HTML(layout=W.Layout(min_width="30em", max_width="36em"))
        self.figure = W.Output(layout=W.Layout(max_width="600px"))  # the figure is 560 px wide
        self.apply_button = W.Button(description="Apply…", icon="upload", disabled=True)
        self.undo_button = W.Button(description="Undo", icon="undo", disabled=True)
        self.confirmation = Confirmation(self.confirm, self.cancel)
        self.apply_button.on_click(lambda _: self.apply())
        self.undo_button.on_click(lambda _: self.undo())
        self.widget.children = [
            self._title(f"Threshold what-if: quant {self.quant_id}"),
            self.message,
            W.HBox([self.class_picker, self.criterion_picker], layout=W.Layout(flex_flow="wrap")),
            self.entry_html,
            self.control.box,
            self.questions_html,
            self.rule_picker,
            W.HBox([self.table_html, self.figure], layout=W.Layout(flex_flow="wrap")),
            W.HBox([self.apply_button, self.undo_button]),
            self.confirmation.box,
        ]
        self._mark()
        self._controls = (self.class_picker, self.criterion_picker, self.rule_picker)
        self._enable(False)
        if self._load(trades, details):
            self._start(market_cap_class, criterion)

    def _mark(self) -> None:
        """The CSS classes browser tests find the widgets by (docs: the panels' DOM contract)."""
        for widget, name in (
            (self.widget, "qs-panel"),
            (self.widget, "qs-threshold-panel"),
            (self.message, "qs-status"),
            (self.class_picker, "qs-class-picker"),
            (self.criterion_picker, "qs-criterion-picker"),
            (self.table_html, "qs-whatif"),
            (self.questions_html, "qs-questions"),
            (self.rule_picker, "qs-question-picker"),
            (self.apply_button, "qs-apply"),
            (self.undo_button, "qs-undo"),
            (self.confirmation.box, "qs-confirmation"),
            (self.confirmation.confirm_button, "qs-confirm"),
            (self.confirmation.cancel_button, "qs-cancel"),
        ):
            widget.add_class(name)

    def _enable(self, enabled: bool) -> None:
        for picker in self._controls:
            picker.disabled = not enabled
        self.control.disabled = not enabled

    # ----- loading -----

    def _load(
        self,
        trades: pd.DataFrame | None,
        details: pd.DataFrame | None,
        **spend: Any,
    ) -> bool:
        """Load the playbook and the research (``spend``: ``load_research``'s quota keywords,
        from the Open button); whether the panel can show them. A plan known not to read the
        playbook is told so without a request.
        """
        if plan_allows(self.client, "read_playbook") is False:
            self.refused(PLAYBOOK_PLANS)
            return False
        try:
            with warnings.catch_warnings(record=True) as seen:
                warnings.simplefilter("always", IncompleteDataWarning)
                self.playbook = self.view.get()
                self._class_rows.clear()
                self.research = load_research(
                    self.quant_id,
                    self.client,
                    trades=trades,
                    details=details,
                    spent=requests_of(self.playbook),
                    **spend,
                )
        except PermissionDeniedError as exc:
            self.denied(exc, PLAYBOOK_PLANS)
            return False
        except QuotaShareExceededError as exc:
            self._open_lazily(
                opening_offer(
                    exc, "the trades and their evaluation details", service_host(self.client)
                ),
                self._open_now,
            )
            return False
        except QuantscopeError as exc:
            self.failed(exc)
            return False
        for warning in seen:  # what the frames lack (a plan's chains) is said in the panel
            if issubclass(warning.category, IncompleteDataWarning):
                self.message.value += note(str(warning.message), "warn")
            else:
                warnings.warn_explicit(
                    warning.message, warning.category, warning.filename, warning.lineno
                )
        if self.research.features.empty:
            self.notify(f"Quant {self.quant_id} has no closed trades to study.", "warn")
            return False
        if spend.get("partial"):
            self.message.value += note(self._partial_text(), "warn")
        return True

    def _partial_text(self) -> str:
        """What a partial load studies: the closed trades whose details it has."""
        assert self.research is not None
        trades = self.research.trades
        closed = int((trades["status"] == "Closed").fillna(False).sum())
        return (
            f"Studying {len(self.research.features):,} of quant {self.quant_id}'s {closed:,} "
            "closed trades (those whose evaluation details fitted in today's quota); open the "
            "panel again after the quota resets to study all of them."
        )

    def _open_now(self, **spend: Any) -> None:
        """What the Open button runs: load beyond the quota share (``spend``: all of it, or
        what fits), then show the panel.
        """
        if self.research is None and self._load(*self._given, **spend):
            self._start(*self._wanted)

    def _start(self, market_cap_class: str | None, criterion: str | None) -> None:
        assert self.research is not None
        counts = self.research.features["market_cap_class"].value_counts()
        counts = counts[counts > 0]
        self.class_picker.options = [(f"{c} ({n:,} trades)", str(c)) for c, n in counts.items()]
        self.class_picker.value = market_cap_class or str(counts.index[0])
        self._enable(True)
        self.writable = plan_allows(self.client, "write_playbook")
        self.apply_button.disabled = self.writable is False
        if self.writable is False:  # added to what the load said (a plan's chains)
            self.message.value += note(
                f"Your plan ({plan_name(self.client)}) can read and analyse the playbook but "
                f"not change it. {PLAYBOOK_PLANS}",
                "warn",
            )
        self.class_picker.observe(lambda _: self._quietly(self._show_class), "value")
        self.criterion_picker.observe(lambda _: self._quietly(self._show_criterion), "value")
        self.rule_picker.observe(lambda _: self._quietly(self._update), "value")
        self._show_class(criterion)

    def _quietly(self, action: Callable[[], None]) -> None:
        if not self._quiet:
            action()

    # ----- what is shown -----

    @property
    def slider(self) -> W.IntSlider:
        """The control's slider (a new widget for each list of values: ``_controls``)."""
        return self.control.slider

    @property
    def entry(self) -> pd.Series | None:
        """The playbook row of the selected class and criterion (BUYING)."""
        if self.playbook is None or self.criterion_picker.value is None:
            return None
        pb = self.playbook
        rows = pb[
            (pb["market_cap_class"] == self.class_picker.value)
            & (pb["config_type"] == CONFIG_TYPE)
            & (pb["criterion"] == self.criterion_picker.value)
        ]
        return rows.iloc[0] if len(rows) else None

    @property
    def features(self) -> pd.DataFrame:
        """The closed trades of the selected class, with their criterion values (selected
        once per class: a copy carries the frame's attrs, the playbooks among them).
        """
        assert self.research is not None
        klass = self.class_picker.value
        if klass not in self._class_rows:
            frame = self.research.features
            self._class_rows[klass] = frame[(frame["market_cap_class"] == klass).to_numpy(bool)]
        return self._class_rows[klass]

    @property
    def threshold(self) -> float:
        """The threshold the panel would write: the control's value, exactly (the playbook's
        own until the slider moves or a value is typed).
        """
        return self.control.value

    def _show_class(self, criterion: str | None = None) -> None:
        assert self.playbook is not None
        assert self.research is not None
        pb = self.playbook
        rows = pb[
            (pb["market_cap_class"] == self.class_picker.value) & (pb["config_type"] == CONFIG_TYPE)
        ]
        rows = rows[rows["criterion"].isin(self.research.features.columns)]
        options = []
        for _, row in rows.iterrows():
            flags = [f for f in ("required", "disabled") if flag(row, f)]
            extra = f" · {', '.join(flags)}" if flags else ""
            options.append(
                (f"{row['criterion_name']} ({row['criterion']}){extra}", str(row["criterion"]))
            )
        with self._quiet():
            self.criterion_picker.options = options
            known = [v for _, v in options]
            wanted = criterion or self.criterion_picker.value
            if known:
                self.criterion_picker.value = wanted if wanted in known else known[0]
        self._show_criterion()

    def _show_criterion(self) -> None:
        row = self.entry
        if row is None or self.research is None:
            return
        self._cancel_pending()
        criterion = str(row["criterion"])
        # whole numbers or not: decided on all of the quant's values of the criterion
        self.whole = is_whole(self.research.features[criterion], row)
        values = stops(self.features[criterion], row, whole=self.whole)
        self.control.reset(values, float(row["threshold"]))
        self.entry_html.value = self._describe(row)
        ax = plots.criterion_distributions(
            self.research.details,
            self.features,
            criterion,
            ax=new_figure().subplots(),
        )
        ax.axvline(
            float(row["threshold"]), color="dimgrey", ls=":", lw=1.5, zorder=3, label="current"
        )
        self.plot = ThresholdFigure(ax, self.figure)
        self._update()

    def _describe(self, row: pd.Series) -> str:
        flags = [f for f in ("required", "disabled") if flag(row, f)]
        whole = "; whole numbers" if self.whole else ""
        return (
            f"<b>{html.escape(str(row['criterion_name']))}</b> "
            f"({html.escape(str(row['criterion']))}), "
            f"{html.escape(str(row['market_cap_class']))} {CONFIG_TYPE}: "
            f"passes when {rule_text(row)}{whole}; now <b>{number(row['threshold'])}</b>; "
            f"weight {number(row['weight'])}{''.join(', ' + f for f in flags)}. "
            f"<small>config id {html.escape(str(row['config_id']))}</small>"
        )

    def _update(self) -> None:
        """Recompute the what-if at the control's threshold; move the figure's line."""
        row = self.entry
        if row is None:
            return
        self._cancel_pending()
        operator = None if pd.isna(row["operator"]) else str(row["operator"])
        rule = self.rule_picker.value
        current, proposed = float(row["threshold"]), self.threshold
        self.what_if = self.answers.what_if(
            self.features,
            (str(row["market_cap_class"]), str(row["criterion"])),
            rule,
            proposed,
            current=current,
            operator=operator,
            playbook=self.playbook,
            thresholds=self.control.values,
        )
        self.table = before_after(self.what_if)
        question = question_of_frame(self.what_if)
        self.table.attrs["question"] = question
        self.table.attrs["rule"] = QUESTION_LABELS[question]
        self._show_questions(row, current, proposed)
        text = _rule_caption(self.what_if)
        if proposed == current:
            text += note(f"Proposed = now = {number(current)}: no change.")
        table = before_after_html(self.table, str(operator), current, proposed)
        text += table  # table_html keeps metric names on one line
        if self.what_if["admits_unseen"].fillna(False).iloc[0]:
            text += note(
                "Looser than the current threshold: evaluations that failed at the time would "
                "pass too, and they have no trades, so this table cannot count them.",
                "warn",
            )
        self.table_html.value = text
        if self.plot is not None:
            self.plot.move(proposed)

    def _show_questions(self, row: pd.Series, current: float, proposed: float) -> None:
        """Both questions at ``proposed``, side by side with their intervals (cached)."""
        assert self.what_if is not None
        key = (str(row["market_cap_class"]), str(row["criterion"]))
        operator = str(self.what_if.attrs["what_if"]["operators"][0])
        features = self.features
        effect, signal = (
            self.answers.answer(
                features,
                key,
                rule,
                proposed,
                current=current,
                operator=operator,
                playbook=self.playbook,
                thresholds=self.control.values,
            )
            for rule in ("replay", "filter")
        )
        kept = self.answers.signal(features, key, operator, proposed)
        self.effect, self.signal, self.kept_dropped = effect, signal, kept
        text = note(
            f"Both questions at {number(proposed)} against now ({number(current)}), "
            "95 % intervals from a bootstrap over tokens:"
        ) + side_by_side_html(effect, signal, kept)
        moved = nothing_moved_text([effect, signal])
        if moved:
            text += note(moved)
        self.questions_html.value = text

    def _refusal(self, value: float) -> str | None:
        """Why the selected entry cannot take ``value`` (the service's rules, whole numbers
        for a whole-number criterion), or None.
        """
        row = self.entry
        if row is None:
            return "no criterion is selected"
        error = check_change(row, "threshold", value)
        if error is None and self.whole and not float(value).is_integer():
            error = f"{row['criterion']} takes whole numbers (it counts), got {exact_text(value)}"
        return error

    # ----- the shared playbook -----

    def _playbook_changed(self, playbook: pd.DataFrame) -> None:
        """Another panel (or a Reload) changed the playbook: show the selected entry's
        threshold from ``playbook``, exactly. A change awaiting confirmation was asked from
        the old value, so it is dropped.
        """
        self.playbook = playbook
        self.answers.clear()  # the replayed effect depends on the playbook
        if self.research is None:
            return
        pending = self.pending is not None
        self._show_criterion()
        if pending:
            self.notify(
                "The playbook changed while a change awaited confirmation: it was dropped. "
                "Press Apply again.",
                "warn",
            )

    # ----- the public controls -----

    def select(self, criterion: str, market_cap_class: str | None = None) -> None:
        """Show ``criterion`` (of ``market_cap_class``, default the selected class)."""
        if market_cap_class is not None and market_cap_class != self.class_picker.value:
            with self._quiet():
                self.class_picker.value = market_cap_class
            self._show_class(criterion)
        elif criterion != self.criterion_picker.value:
            self.criterion_picker.value = criterion
        if self.criterion_picker.value != criterion:
            raise ValueError(f"no criterion {criterion!r} for {self.class_picker.value}")

    def set_threshold(self, value: float) -> None:
        """Hold ``value`` exactly (the slider gains it if it lacks it); ValueError if the
        service would refuse it (outside the range, not an option) or a whole-number
        criterion would get a fraction.
        """
        error = self._refusal(value)
        if error:
            self.notify(error, "error")
            raise ValueError(error)
        self.control.set(float(value))
        self._update()

    def apply(self) -> audit.Change | None:
        """Show the exact change (config id, old and new value) and ask for confirmation."""
        row = self.entry
        if row is None:
            return None
        if self.writable is False:
            self.notify(f"Your plan ({plan_name(self.client)}) cannot change it. {PLAYBOOK_PLANS}")
            return None
        if self.threshold == float(row["threshold"]):
            self.notify(f"The threshold is already {number(self.threshold)}: nothing to change.")
            return None
        error = self._refusal(self.threshold)
        if error:
            self.notify(error, "error")
            return None
        change = audit.Change.of(row, "threshold", self.threshold)
        question = (
            f"Change quant {self.quant_id}'s playbook: {html.escape(str(change.criterion))} "
            f"threshold {number(change.old_value)} → {number(change.new_value)}"
        )
        self._ask(change, question, [change], "One PUT")
        return change

    def cancel(self) -> None:
        """Drop the change awaiting confirmation; nothing is sent."""
        if self._cancel_pending():
            self.notify("Cancelled: nothing was sent.")

    def confirm(self) -> audit.Written | None:
        """Send the confirmed change, verify it, log it. Returns what was written."""
        change: audit.Change | None = self._take_pending()
        if change is None:
            return None
        return self._write(
            lambda: audit.write_changes(
                self.quant_id, [change], client=self.client, log=self.audit_log
            ),
            f"Applied: {change.criterion} threshold "
            f"{number(change.old_value)} → {number(change.new_value)}",
            on_denied=self._write_denied,
        )

    def _write_denied(self, exc: PermissionDeniedError) -> None:
        self.writable, self.apply_button.disabled = False, True
        self.denied(exc, PLAYBOOK_PLANS)

    def undo(self) -> audit.Written | None:
        """Restore the value the last confirmed change replaced (verified, logged)."""
        return self._undo_last("Nothing to undo from this panel.", undone_threshold)
