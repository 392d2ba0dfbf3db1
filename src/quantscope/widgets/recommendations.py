"""``RecommendationsPanel``: the optimizer's recommendations, checked client-side, applied one
at a time.

::

    panel = RecommendationsPanel(quant_id=1)
    panel.recommendations                   # load_recommendations, newest first
    panel.checks                            # backtest.crosscheck: service vs client figures
    panel.analyze()                         # a new analysis, never auto-applied
    panel.select(12); panel.apply(); panel.confirm()    # or panel.cancel()
    panel.undo()                            # put the old threshold back (verified, logged)

Beside each recommendation's claim (the service's win rate before and after, its confidence):
its **effect** (the whole pass rule replayed with the new threshold against the old one: what
applying produces), the trades and each change with its interval from ``backtest.uncertainty``
(``_claims.replayed_effects``); the out-of-sample **signal** of its criterion from
``backtest.screen`` (every criterion and class of the quant screened, p-values adjusted over
the search: ``_claims.signal_screen``), so a recommendation on a noise criterion is not shown
as a finding; and the client's recomputation of the service's figures
(``backtest.crosscheck``: ``agrees`` when they match). The selected recommendation shows its
reasoning, its effect and the screen's verdict in sentences, and the replayed before/after
table, above the Apply button.

Loading cost: the recommendations and the playbook (one request each), then, for the what-if
columns, as ``ThresholdPanel`` (the trades, one eval-details request per closed trade not yet
cached). Computing: one ``what_if_intervals`` per (class, criterion, old threshold) and one
signal-only screen of the quant's trades (benchmarks/README.md, screen), once per
load. A panel never spends more than the client's quota share on opening: when the what-if
would, the recommendations are shown with the cost and an Open button offering only what can
succeed (``Panel._open_lazily``, ``_offer.opening_offer``). Pass ``trades=``/``details=`` to
reuse frames already loaded.

The panel paints first and researches after: in a Jupyter kernel (Lab, Voila) the table of
recommendations and its buttons appear as soon as the recommendations and the playbook are
read, with a "computing the effects…" line, and the screen, the cross-check and the replayed
effects are computed in a thread that fills the table when done (Apply stays disabled until
then, and says why). ``panel.ready`` tells whether they are done, ``panel.wait()`` waits for
them, and reading ``panel.checks``, ``panel.effects``, ``panel.screen`` or
``panel.screen_notes`` waits too: what a cell reads is what a synchronous panel would hold.
Elsewhere (plain Python, tests) they are computed in the constructor, as
``background=False`` asks: Python 3.11's ``warnings.catch_warnings`` (which the research and
pytest use) is not thread-safe, and nothing paints there anyway.

The playbook is the quant's shared ``PlaybookView`` (a write through any panel redraws this
one). Applying is compare-and-swap: refused (``StaleWriteError``, nothing sent) when the
entry no longer holds the recommendation's old threshold, the one shown.
"""

from __future__ import annotations

import html
import threading
from typing import Any

import ipywidgets as W
import pandas as pd

from quantscope import audit
from quantscope import backtest as bt
from quantscope import loaders as L
from quantscope._changes import number, same_value
from quantscope._errors import PermissionDeniedError, QuantscopeError, QuotaShareExceededError
from quantscope._http.client import Client
from quantscope.backtest.questions import QUESTION_LABELS
from quantscope.widgets._claims import (
    effect_text,
    replayed_effects,
    signal_screen,
    verdict,
)
from quantscope.widgets._confirm import Confirmation
from quantscope.widgets._format import (
    OPTIMIZER_PLANS,
    before_after,
    before_after_html,
    fmt,
    note,
    plan_allows,
    plan_name,
    service_host,
    table_html,
    undone_threshold,
)
from quantscope.widgets._offer import Research, load_research, opening_offer, requests_of
from quantscope.widgets._panel import Panel

APPLYING = (
    "Applying a recommendation produces the replayed effect (the playbook's whole pass rule "
    "with the new threshold, against the old one), shown with its 95 % interval over tokens. "
    "The service's claim counts the criterion as a hard filter on the trades its threshold was "
    "chosen on: it is neither what applying does nor a test of the criterion; the screen "
    "column is that test, out of sample and adjusted for the search."
)
COMPUTING = (
    "Computing the effects, the cross-check and the screen… Apply waits for them (the "
    "buttons act on computed numbers only)."
)


def _in_kernel() -> bool:
    """Whether this runs in a Jupyter kernel (Lab, Voila, nbclient): where a page paints."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - ipywidgets depends on IPython
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def _what_if(features: pd.DataFrame, rec: pd.Series, playbook: pd.DataFrame) -> pd.DataFrame | None:
    """The replayed ``what_if`` of the recommendation's new threshold against its old one, on
    the closed trades of its class (None when the features lack the criterion or the class).
    """
    criterion = str(rec["criterion"])
    rows = features[(features["market_cap_class"] == rec["market_cap_class"]).to_numpy(bool)]
    if criterion not in rows.columns or rows.empty:
        return None
    return bt.what_if(
        rows,
        criterion,
        [float(rec["new_threshold"])],
        current=float(rec["old_threshold"]),
        playbook=playbook,
    )


def recommendation_states(recs: pd.DataFrame, playbook: pd.DataFrame | None) -> pd.Series:
    """Each recommendation's state, as the panel shows it: ``pending`` (not applied),
    ``applied`` (the playbook holds its new threshold), ``undone`` (applied, and the playbook
    holds its old threshold again: an undo, or a change back), ``changed since`` (applied, and
    the entry holds another value now), or ``applied`` when the playbook is not known.

    The service keeps ``applied`` true after an undo (an undo is a plain playbook write), so
    the playbook decides; re-applying an undone one is a new compare-and-swap write of its
    threshold (``RecommendationsPanel.confirm``).
    """
    now: dict[str, float] = {}
    if playbook is not None:
        pairs = zip(playbook["config_id"], playbook["threshold"], strict=True)
        now = {str(c): float(t) for c, t in pairs}
    states = []
    for _, rec in recs.iterrows():
        held = now.get(str(rec.get("config_id")))
        if not bool(pd.notna(rec["applied"]) and rec["applied"]):
            states.append("pending")
        elif held is None or same_value(held, rec["new_threshold"]):
            states.append("applied")
        elif same_value(held, rec["old_threshold"]):
            states.append("undone")
        else:
            states.append("changed since")
    return pd.Series(states, index=recs.index, dtype="string", name="state")


def _label(rec: pd.Series, state: str) -> str:
    """A recommendation in the picker: ``#12 MID_CAP rsi_14: 30 → 35`` (``(undone)``)."""
    undone = " (undone)" if state == "undone" else ""
    return (
        f"#{rec['recommendation_id']} {rec['market_cap_class']} {rec['criterion']}: "
        f"{number(rec['old_threshold'])} → {number(rec['new_threshold'])}{undone}"
    )


class RecommendationsPanel(Panel):
    """The optimizer's recommendations with the client-side cross-check and what-if.

    Args:
        quant_id: the quant whose recommendations to review.
        client: the client (default: ``connect()``'s); the optimizer needs Enterprise.
        trades, details: frames already loaded (``load_trades``, ``load_eval_details``).
        audit_log: an ``AuditLog`` or path (default: ``<cache dir>/audit.jsonl``).
        background: compute the screen, cross-check and effects in a thread after the panel
            is drawn (default: in a Jupyter kernel only; see the module's docstring).
    """

    def __init__(
        self,
        quant_id: int,
        *,
        client: Client | None = None,
        trades: pd.DataFrame | None = None,
        details: pd.DataFrame | None = None,
        audit_log: audit.AuditLog | str | None = None,
        background: bool | None = None,
    ) -> None:
        super().__init__(quant_id, client, audit_log)
        self.background = _in_kernel() if background is None else bool(background)
        self.recommendations: pd.DataFrame | None = None
        self.states = pd.Series(dtype="string")  # recommendation_states, as shown
        self.playbook: pd.DataFrame | None = None
        self._checks: pd.DataFrame | None = None
        self._effects: pd.DataFrame | None = None  # _claims.replayed_effects
        self._screen: pd.DataFrame | None = None  # _claims.signal_screen, once per research
        self._screen_notes: list[str] = []
        self._lock = threading.RLock()  # one drawing at a time: the thread's and the kernel's
        self._done = threading.Event()  # set when nothing is being computed (wait())
        self._done.set()
        self._busy = False  # computing: drawn without the numbers, Apply disabled
        self._failure: BaseException | None = None  # the thread's unexpected error, for wait()
        self._computed_for: tuple[pd.DataFrame, ...] = ()  # what checks/effects are of
        self.research: Research | None = None
        self.pending: pd.Series | None = None
        self.last_written: list[audit.AuditEntry] = []
        self.table = W.HTML(layout=W.Layout(overflow="auto", max_width="100%"))
        self.picker = W.Dropdown(
            description="recommendation",
            style={"description_width": "initial"},
            layout=W.Layout(width="auto", min_width="60%"),
        )
        self.detail = W.HTML()
        self.computing = W.HTML(note(COMPUTING), layout=W.Layout(display="none"))
        self.analyze_button = W.Button(
            description="Analyze",
            icon="refresh",
            tooltip="Run the optimizer again (never auto-applied); it replaces the unapplied "
            "recommendations",
        )
        self.apply_button = W.Button(description="Apply…", icon="upload", disabled=True)
        self.undo_button = W.Button(description="Undo", icon="undo", disabled=True)
        self.confirmation = Confirmation(self.confirm, self.cancel)
        self.analyze_button.on_click(lambda _: self.analyze())
        self.apply_button.on_click(lambda _: self.apply())
        self.undo_button.on_click(lambda _: self.undo())
        self.picker.observe(lambda _: self._show_selected(), "value")
        for widget, name in (
            (self.widget, "qs-recommendations-panel"),
            (self.table, "qs-recommendations-table"),
            (self.computing, "qs-computing"),
            (self.picker, "qs-recommendation-picker"),
            (self.analyze_button, "qs-analyze"),
            (self.apply_button, "qs-apply"),
            (self.undo_button, "qs-undo"),
        ):
            widget.add_class(name)
        self.widget.children = [
            self._title(f"Optimizer recommendations: quant {self.quant_id}"),
            self.message,
            self.computing,
            self.table,
            W.HBox([self.picker, self.analyze_button]),
            self.detail,
            W.HBox([self.apply_button, self.undo_button]),
            self.confirmation.box,
        ]
        if plan_allows(self.client, "optimizer") is False:  # known plan: no request at all
            self._refuse(None)
            return
        if self._reload() and self.recommendations is not None:
            try:
                self.playbook = self.view.get()
                spent = requests_of(self.recommendations) + requests_of(self.playbook)
                self._research(trades, details, spent=spent)
            except QuotaShareExceededError as exc:
                self._open_lazily(
                    opening_offer(
                        exc, "the trades behind the what-if columns", service_host(self.client)
                    ),
                    lambda **spend: self._research(trades, details, **spend),
                )
            except QuantscopeError as exc:
                self.failed(exc)
            self._show()

    # ----- loading and showing -----

    def _research(
        self,
        trades: pd.DataFrame | None,
        details: pd.DataFrame | None,
        *,
        spent: int = 0,
        **spend: Any,
    ) -> None:
        """Load the trades and details the what-if needs (``spend``: ``load_research``'s quota
        keywords, beyond the share from the Open button; ``spent``: what opening already
        cost), and show them: the screen, cross-check and effects follow (``_compute``).
        """
        research = load_research(
            self.quant_id, self.client, trades=trades, details=details, spent=spent, **spend
        )
        self.wait()  # a research still computing belongs to the frames being replaced
        self.research = research
        self._compute()

    # ----- the research: computed after the panel is drawn -----

    @property
    def ready(self) -> bool:
        """Whether the screen, cross-check and effects shown are computed (no thread runs)."""
        return self._done.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the screen, cross-check and effects are computed (``ready``); False if
        ``timeout`` seconds passed first. An unexpected error of the computation is raised
        here (once; the panel showed its message).
        """
        done = self._done.wait(timeout)
        failure, self._failure = self._failure, None
        if failure is not None:
            raise failure
        return done

    @property
    def checks(self) -> pd.DataFrame | None:
        """``backtest.crosscheck``: the service's figures beside the client's (waits)."""
        self.wait()
        return self._checks

    @property
    def effects(self) -> pd.DataFrame | None:
        """``_claims.replayed_effects``: each recommendation's replayed effect (waits)."""
        self.wait()
        return self._effects

    @property
    def screen(self) -> pd.DataFrame | None:
        """``_claims.signal_screen``, once per research (waits)."""
        self.wait()
        return self._screen

    @property
    def screen_notes(self) -> list[str]:
        """What the screen's warnings said (groups too small to screen; waits)."""
        self.wait()
        return self._screen_notes

    def _compute(self) -> None:
        """The screen of the research's features, then (``_show``) the cross-check and the
        replayed effects; in a thread when ``background`` (the panel is drawn meanwhile, with
        the ``computing`` line and Apply disabled).
        """
        research = self.research
        if research is None:
            return
        if not self.background:
            self._screen, self._screen_notes = self._screened(research.features)
            self._show()
            return
        with self._lock:
            self._done.clear()
            self._busy = True
            self.computing.layout.display = ""
        threading.Thread(
            target=self._compute_in_thread,
            args=(research,),
            name=f"quantscope-recommendations-{self.quant_id}",
            daemon=True,
        ).start()

    @staticmethod
    def _screened(features: pd.DataFrame) -> tuple[pd.DataFrame | None, list[str]]:
        return signal_screen(features) if not features.empty else (None, [])

    def _compute_in_thread(self, research: Research) -> None:
        try:
            screened = self._screened(research.features)
            recs, playbook = self.recommendations, self.playbook
            computed = None
            if recs is not None and playbook is not None:
                computed = self._crosschecked(recs, research.features, playbook)
            with self._lock:
                self._screen, self._screen_notes = screened
                if computed is not None:
                    self._checks, self._effects = computed
                    self._computed_for = (recs, research.features, playbook)
                self._busy = False  # _show below recomputes what changed meanwhile
                self._show()
                # hidden only once the table holds the numbers: a page that sees the line
                # go reads a table with its effects (the browser gets the changes in order)
                self.computing.layout.display = "none"
        except QuantscopeError as exc:
            self.failed(exc)
        except BaseException as exc:  # a thread's error would be lost: wait() raises it
            self._failure = exc
            self.notify(f"Computing the effects failed: {exc}", "error")
        finally:
            self._busy = False
            self.computing.layout.display = "none"
            self._done.set()

    @staticmethod
    def _crosschecked(
        recs: pd.DataFrame, features: pd.DataFrame, playbook: pd.DataFrame
    ) -> tuple[pd.DataFrame, pd.DataFrame]:
        """``backtest.crosscheck`` and ``_claims.replayed_effects`` of the recommendations."""
        return (
            bt.crosscheck(recs, features, playbook=playbook),
            replayed_effects(recs, features, playbook),
        )

    def _refuse(self, exc: PermissionDeniedError | None) -> None:
        for button in (self.analyze_button, self.apply_button, self.undo_button):
            button.disabled = True
        self.picker.disabled = True
        if exc is None:
            self.notify(
                f"Your plan ({plan_name(self.client)}) does not include the optimizer. "
                f"{OPTIMIZER_PLANS}",
                "error",
            )
        else:
            self.denied(exc, OPTIMIZER_PLANS)

    def _reload(self) -> bool:
        recs = self._call(
            lambda: L.load_recommendations(self.quant_id, client=self.client), self._refuse
        )
        if recs is None:
            return False
        self.recommendations = recs
        return True

    def _show(self) -> None:
        with self._lock:
            self._draw()

    def _draw(self) -> None:
        recs = self.recommendations
        if recs is None:
            return
        features = self.research.features if self.research is not None else None
        if features is None or self.playbook is None:
            features = None
            self._checks = self._effects = None
        elif self._busy:  # the thread computes them, then draws again
            pass
        elif not self._computed_for or any(
            a is not b
            for a, b in zip(self._computed_for, (recs, features, self.playbook), strict=True)
        ):
            # once per (recommendations, trades, playbook): a redraw recomputes nothing
            self._checks, self._effects = self._crosschecked(recs, features, self.playbook)
            self._computed_for = (recs, features, self.playbook)
        self.states = recommendation_states(recs, self.playbook)
        self.table.value = self._table_html(recs, features)
        chosen = self.picker.value
        self.picker.options = [  # what Apply can do: a pending one, or one undone since
            (_label(rec, state), int(rec["recommendation_id"]))
            for (_, rec), state in zip(recs.iterrows(), self.states, strict=True)
            if state in ("pending", "undone")
        ]
        known = [v for _, v in self.picker.options]
        if known:  # keep the choice when it is still there, else the first (newest)
            self.picker.value = chosen if chosen in known else known[0]
        self.apply_button.disabled = not known or self._busy
        self.apply_button.tooltip = COMPUTING if self._busy else ""
        self._show_selected()

    def _table_html(self, recs: pd.DataFrame, features: pd.DataFrame | None) -> str:
        if recs.empty:
            return note("No recommendations: press Analyze to run the optimizer.")
        shown = pd.DataFrame(
            {
                "id": recs["recommendation_id"].astype("string"),
                "class": recs["market_cap_class"].astype("string"),
                "criterion": recs["criterion"].astype("string"),
                "change": [
                    f"{number(a)} → {number(b)}"
                    for a, b in zip(recs["old_threshold"], recs["new_threshold"], strict=True)
                ],
                "service claims: win rate": [
                    f"{fmt('share', a)} → {fmt('share', b)}"
                    for a, b in zip(recs["before_win_rate"], recs["after_win_rate"], strict=True)
                ],
                "service's confidence": [fmt("share", v) for v in recs["confidence"]],
                "state": self.states.to_numpy(),
            }
        )
        text = ""
        if self._effects is not None and len(self._effects) == len(recs):
            cells = [effect_text(row) for _, row in self._effects.iterrows()]
            for name, header in (
                ("trades", "effect: trades now → after"),
                ("d_win_rate", "effect: win rate change [95 %]"),
                ("d_total_pnl_usd", "effect: PnL change [95 %]"),
                ("d_roi", "effect: ROI change [95 %]"),
            ):
                shown[header] = [c[name] for c in cells]
            text += note(f"{APPLYING} Effect columns: {QUESTION_LABELS['effect']}.")
        if self._screen is not None:
            shown["signal out of sample (screen) [95 %]"] = [
                verdict(self._screen, k, c)["short"]
                for k, c in zip(recs["market_cap_class"], recs["criterion"], strict=True)
            ]
            text += note(
                f"Screen column: {QUESTION_LABELS['signal']}, on test trades whose threshold "
                "was chosen on other trades; 'no evidence' means the criterion's signal does "
                "not survive the adjustment for every criterion and class searched."
            )
        if self._checks is not None and not self._checks.empty:
            self._crosscheck_columns(shown, self._checks)
        return text + table_html(shown, index=False)

    @staticmethod
    def _crosscheck_columns(shown: pd.DataFrame, c: pd.DataFrame) -> None:
        """The service's figures beside the client's recomputation (the columns present)."""
        for figure, kind in (
            ("sample_size", "count"),
            ("after_win_rate", "share"),
            ("trade_difference", "count"),
        ):
            if f"{figure}_service" in c.columns and f"{figure}_client" in c.columns:
                shown[f"{figure} (service / client)"] = [
                    f"{fmt(kind, s)} / {fmt(kind, m)}"
                    for s, m in zip(c[f"{figure}_service"], c[f"{figure}_client"], strict=True)
                ]
        if "agrees" in c.columns:
            shown["agrees"] = c["agrees"].astype(bool).map({True: "yes", False: "NO"}).to_numpy()

    @property
    def selected(self) -> pd.Series | None:
        """The recommendation chosen in the picker (a ``load_recommendations`` row)."""
        recs = self.recommendations
        if recs is None or self.picker.value is None:
            return None
        rows = recs[(recs["recommendation_id"] == self.picker.value).fillna(False).to_numpy(bool)]
        return rows.iloc[0] if len(rows) else None

    def _show_selected(self) -> None:
        self._cancel_pending()
        rec = self.selected
        if rec is None:
            self.detail.value = ""
            return
        text = f"<p>{html.escape(str(rec['reasoning']))}</p>"
        now = self._current_threshold(rec)
        if now is not None and not same_value(now, rec["old_threshold"]):
            text += note(
                f"The playbook now holds {number(now)} for this entry, not the "
                f"{number(rec['old_threshold'])} this recommendation was made for: applying "
                "it would be refused. Analyze again for recommendations of the current "
                "playbook.",
                "warn",
            )
        if self._state(int(rec["recommendation_id"])) == "undone":
            text += note(
                "Applied, then undone: the playbook holds its old threshold again. Apply "
                "writes its threshold once more (the service keeps it marked applied).",
                "info",
            )
        text += self._claim_html(rec)
        table = None
        if self.research is not None and self.playbook is not None and not self._busy:
            table = _what_if(self.research.features, rec, self.playbook)
        if table is not None:
            text += note(f"{APPLYING} The table below is the replayed effect.")
            text += before_after_html(
                before_after(table),
                str(table.attrs["what_if"]["operators"][0]),
                float(rec["old_threshold"]),
                float(rec["new_threshold"]),
            )
        self.detail.value = text

    def _claim_html(self, rec: pd.Series) -> str:
        """The claim, its replayed effect with intervals and the screen's verdict, in words."""
        text = (
            f"The service claims: win rate {fmt('share', rec['before_win_rate'])} → "
            f"{fmt('share', rec['after_win_rate'])} (confidence {fmt('share', rec['confidence'])}"
            f"), the criterion counted as a hard filter."
        )
        found = None
        if self._effects is not None:
            rows = self._effects[
                (self._effects["recommendation_id"] == rec["recommendation_id"]).to_numpy(bool)
            ]
            found = rows.iloc[0] if len(rows) and pd.notna(rows.iloc[0]["trades"]) else None
        out = note(text)
        if found is not None:
            cells = effect_text(found)
            rested = (
                "nothing moved: rule-of-three interval"
                if found["interval"] != "bootstrap"
                else f"{int(found['moved_tokens']):,} of {int(found['tokens']):,} tokens move"
            )
            out += note(
                f"Replayed, applying it does: trades {cells['trades']}, win rate "
                f"{cells['d_win_rate']}, PnL {cells['d_total_pnl_usd']}, ROI {cells['d_roi']} "
                f"(95 % intervals; {rested})."
            )
        said = verdict(self._screen, rec["market_cap_class"], rec["criterion"])
        if said["text"]:
            out += note(said["text"], "ok" if said["significant"] else "warn")
        return out

    def _current_threshold(self, rec: pd.Series) -> float | None:
        """The threshold of the recommendation's entry in the playbook shown (None: unknown)."""
        pb = self.playbook
        if pb is None or pd.isna(rec.get("config_id")):
            return None
        rows = pb[(pb["config_id"] == rec["config_id"]).fillna(False).to_numpy(bool)]
        return float(rows["threshold"].iloc[0]) if len(rows) else None

    # ----- the public controls -----

    def select(self, recommendation_id: int) -> None:
        """Choose a pending (or undone) recommendation by id."""
        if recommendation_id not in {v for _, v in self.picker.options}:
            state = self._state(recommendation_id)
            raise ValueError(
                f"recommendation {recommendation_id} cannot be applied from here: "
                + (f"it is {state}" if state else "it is not shown")
                + " (pending and undone ones can)"
            )
        self.picker.value = int(recommendation_id)

    def analyze(self) -> pd.Series | None:
        """Run the optimizer for this quant without applying anything; show the new list."""
        result = self._call(
            lambda: L.run_analysis(self.quant_id, apply=False, client=self.client), self._refuse
        )
        if result is None:
            return None
        if self._reload():
            self._show()
            self.notify(
                f"Analysed {result['trades_analyzed']} trades: "
                f"{result['recommendations_generated']} recommendation(s), none applied.",
                "ok",
            )
        return result

    def apply(self, recommendation_id: int | None = None) -> pd.Series | None:
        """Show the change the recommendation makes and ask for confirmation (once the
        numbers shown are computed: ``wait``).
        """
        self.wait()
        if recommendation_id is not None:
            self.select(recommendation_id)
        rec = self.selected
        if rec is None:
            self.notify("Choose a recommendation first.")
            return None
        if pd.isna(rec.get("config_id")):
            self.notify("The service did not say which config entry this changes.", "error")
            return None
        now = self._current_threshold(rec)
        if now is not None and not same_value(now, rec["old_threshold"]):
            self.notify(
                f"{rec['criterion']} ({rec['market_cap_class']} BUYING) threshold is now "
                f"{number(now)}, not the {number(rec['old_threshold'])} recommendation "
                f"#{int(rec['recommendation_id'])} was made for: nothing was sent. Analyze "
                "again (or Reload, if the playbook shown is old).",
                "error",
            )
            return None
        change = audit.Change.of_recommendation(rec)
        rec_id = int(rec["recommendation_id"])
        if self._state(rec_id) == "undone":
            self._ask(
                rec,
                f"Apply recommendation #{rec_id} again (it was undone) to quant "
                f"{self.quant_id}'s playbook",
                [change],
                "One PUT of its threshold, refused if the entry no longer holds "
                f"{number(rec['old_threshold'])} (the service keeps the recommendation marked "
                "applied)",
            )
        else:
            self._ask(
                rec,
                f"Apply recommendation #{rec_id} to quant {self.quant_id}'s playbook",
                [change],
                "The service sets the threshold",
            )
        return rec

    def cancel(self) -> None:
        """Drop the recommendation awaiting confirmation; nothing is sent."""
        if self._cancel_pending():
            self.notify("Cancelled: nothing was sent.")

    def confirm(self) -> audit.Written | None:
        """Apply the confirmed recommendation, verify the playbook, log it."""
        rec: pd.Series | None = self._take_pending()
        if rec is None:
            return None
        rec_id = int(rec["recommendation_id"])
        done = (
            f"Applied #{rec_id}: {rec['criterion']} threshold "
            f"{number(rec['old_threshold'])} → {number(rec['new_threshold'])}"
        )
        if self._state(rec_id) == "undone":  # the service refuses an applied one: 409
            change = audit.Change.of_recommendation(rec)
            return self._write(
                lambda: audit.write_changes(
                    self.quant_id, [change], client=self.client, log=self.audit_log
                ),
                f"{done} again",
                on_denied=self._refuse,
            )
        return self._write(
            lambda: audit.apply_recommendation_verified(
                self.quant_id, rec, client=self.client, log=self.audit_log
            ),
            done,
            on_denied=self._refuse,
        )

    def _state(self, recommendation_id: int) -> str | None:
        """The shown state of a recommendation (``recommendation_states``); None: not shown."""
        recs = self.recommendations
        if recs is None or len(self.states) != len(recs):
            return None
        hit = (recs["recommendation_id"] == recommendation_id).fillna(False).to_numpy(bool)
        return str(self.states[hit].iloc[0]) if hit.any() else None

    def undo(self) -> audit.Written | None:
        """Put back the threshold the last applied recommendation replaced (one PUT)."""
        return self._undo_last("Nothing to undo from this panel.", undone_threshold)

    def _show_written(self, written: audit.Written) -> None:
        """The list changed too (the recommendation is applied now): read it again; the
        view's ``_playbook_changed`` then shows both (here, when there was no read-back).
        """
        if self._reload() and written.playbook is None:
            self._show()

    def _playbook_changed(self, playbook: pd.DataFrame) -> None:
        """The shared playbook changed: the cross-check and what-if replay against it."""
        self.playbook = playbook
        if self.recommendations is not None:
            self._show()
