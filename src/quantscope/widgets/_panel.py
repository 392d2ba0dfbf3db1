"""The base class of every panel.

Panels are thin: data comes from ``loaders``/``backtest`` (``widgets._offer``), figures from
``plots`` (``widgets._figure``), writes from ``quantscope.audit`` (confirmed in a
``widgets._confirm.Confirmation``), the plan table from ``quantscope._plans`` and the rules a
change must keep from ``quantscope._changes`` (``check_change``); what they say is formatted by
``widgets._format``.

``Panel`` gives every panel the shared plumbing: its quant's ``PlaybookView`` (``self.view``,
one per client and quant, ``widgets._view``) with a Reload button and the hook
``_playbook_changed``; the write path (confirm, send, show, undo); and lazy opening
(``_open_lazily``: state a load's cost and offer on a click only what can fit, for loads
over the client's quota share). The CSS classes of the DOM contract (``qs-panel``,
``qs-status``, ``qs-reload``, ``qs-open``, ``qs-confirmation``, ``qs-confirm``,
``qs-cancel``) are set here; the panels set their own (``qs-apply``, ``qs-undo``, pickers, cells).
"""

from __future__ import annotations

import html
import warnings
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import ipywidgets as W
import pandas as pd

from quantscope._advice import render
from quantscope._changes import Change
from quantscope._errors import (
    IncompleteDataWarning,
    PermissionDeniedError,
    QuantscopeError,
    WriteRefusedError,
)
from quantscope._http.client import Client, get_default_client
from quantscope.audit import AuditEntry, AuditLog, Written, undo
from quantscope.widgets._confirm import Confirmation
from quantscope.widgets._format import diff_html, note, plan_name, service_host
from quantscope.widgets._offer import Offer
from quantscope.widgets._view import PlaybookView

T = TypeVar("T")


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
