"""``PlaybookEditor``: the playbook as an editable table, checked, diffed, applied in one PUT.

::

    editor = PlaybookEditor(quant_id=1)             # BUYING thresholds of the first class
    editor.edit("smart_money_buys", "threshold", 3)
    editor.edit("rsi_14", "weight", 1.0, market_cap_class="MID_CAP")
    editor.changes                                  # the staged changes (audit.Change)
    editor.apply(); editor.confirm()                # one PUT, read back, logged; or cancel()
    editor.undo()                                   # one PUT restoring the old values

Each edit is checked at once against the criterion's range and options (the contract's PUT
rules, ``quantscope._changes.check_change``); an invalid one is marked and blocks Apply, so
nothing is sent until every staged edit is valid. Edits survive switching class or config type
and are sent together; the service applies all of them or none.

The table shows the quant's shared ``PlaybookView``: a write through another panel (or a
Reload) redraws it, staged edits kept, each diffed against the value now shown, so the confirm
box and the audit log name the value the service holds. A write is compare-and-swap
(``audit.write_changes``): when an entry changed elsewhere since it was shown, it is refused
(nothing sent, the edits stay staged) and the message says to reload.
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as W
import numpy as np
import pandas as pd
from traitlets import TraitError

from quantscope import audit
from quantscope._changes import check_change, same_value
from quantscope._errors import PermissionDeniedError, QuantscopeError
from quantscope._http.client import Client
from quantscope.widgets._confirm import Confirmation
from quantscope.widgets._format import (
    PLAYBOOK_PLANS,
    diff_html,
    flag,
    note,
    plan_allows,
    plan_name,
    rule_text,
)
from quantscope.widgets._panel import Panel

FIELDS = ("threshold", "weight", "required", "disabled")
CONFIG_TYPES = ("SCANNING", "BUYING")
_HEADER = ("criterion", "rule", "threshold", "weight", "required", "disabled")
_COLUMNS = "minmax(14em, 2fr) minmax(12em, 2fr) 8em 6em 5em 5em"
_INVALID = "2px solid #b71c1c"

Key = tuple[str, str]  # (config id, field)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return bool(a) == bool(b)
    try:
        return float(a) == float(b)
    except (TypeError, ValueError):
        return bool(same_value(a, b))


class PlaybookEditor(Panel):
    """Edit thresholds, weights and flags of a quant's playbook, then apply them in one PUT.

    Args:
        quant_id: the quant whose playbook to edit.
        client: the client (default: ``connect()``'s).
        market_cap_class: the class shown first (default: the playbook's first).
        config_type: ``"BUYING"`` (default) or ``"SCANNING"``.
        audit_log: an ``AuditLog`` or path (default: ``<cache dir>/audit.jsonl``).
    """

    def __init__(
        self,
        quant_id: int,
        *,
        client: Client | None = None,
        market_cap_class: str | None = None,
        config_type: str = "BUYING",
        audit_log: audit.AuditLog | str | None = None,
    ) -> None:
        super().__init__(quant_id, client, audit_log)
        self.playbook: pd.DataFrame | None = None
        self.edits: dict[Key, Any] = {}
        self.errors: dict[Key, str] = {}
        self.pending: list[audit.Change] = []
        self.last_written: list[audit.AuditEntry] = []
        self.writable: bool | None = None
        self.cells: dict[Key, W.ValueWidget] = {}
        self._showing_errors = False
        self.class_picker = W.Dropdown(
            description="market cap",
            style={"description_width": "initial"},
            layout=W.Layout(width="auto", min_width="16em"),
        )
        self.type_picker = W.ToggleButtons(options=CONFIG_TYPES, value=config_type)
        self.grid = W.GridBox(layout=W.Layout(grid_template_columns=_COLUMNS))
        self.diff = W.HTML()
        self.apply_button = W.Button(description="Apply…", icon="upload", disabled=True)
        self.discard_button = W.Button(description="Discard edits", icon="eraser")
        self.undo_button = W.Button(description="Undo", icon="undo", disabled=True)
        self.confirmation = Confirmation(self.confirm, self.cancel)
        self.apply_button.on_click(lambda _: self.apply())
        self.discard_button.on_click(lambda _: self.discard())
        self.undo_button.on_click(lambda _: self.undo())
        for widget, name in (
            (self.widget, "qs-playbook-editor"),
            (self.class_picker, "qs-class-picker"),
            (self.type_picker, "qs-config-type-picker"),
            (self.apply_button, "qs-apply"),
            (self.discard_button, "qs-discard"),
            (self.undo_button, "qs-undo"),
            (self.diff, "qs-diff"),
        ):
            widget.add_class(name)
        self.widget.children = [
            self._title(f"Playbook editor: quant {self.quant_id}"),
            self.message,
            W.HBox([self.class_picker, self.type_picker]),
            self.grid,
            self.diff,
            W.HBox([self.apply_button, self.discard_button, self.undo_button]),
            self.confirmation.box,
        ]
        if plan_allows(self.client, "read_playbook") is False:  # known plan: no request
            self._refuse(None)
            return
        try:
            self.playbook = self.view.get()
        except PermissionDeniedError as exc:
            self._refuse(exc)
            return
        except QuantscopeError as exc:
            self.failed(exc)
            return
        classes = [str(c) for c in self.playbook["market_cap_class"].dropna().unique()]
        self.class_picker.options = classes
        self.class_picker.value = market_cap_class or classes[0]
        self.writable = plan_allows(self.client, "write_playbook")
        if self.writable is False:
            self.notify(
                f"Your plan ({plan_name(self.client)}) can read the playbook but not change "
                f"it. {PLAYBOOK_PLANS}",
                "warn",
            )
        self.class_picker.observe(lambda _: self._build(), "value")
        self.type_picker.observe(lambda _: self._build(), "value")
        self._build()

    def _refuse(self, exc: PermissionDeniedError | None) -> None:
        """The plan cannot read the playbook: say so (``exc`` None: known before any request,
        nothing was sent) and disable the controls.
        """
        if exc is None:
            self.refused(PLAYBOOK_PLANS)
        else:
            self.denied(exc, PLAYBOOK_PLANS)
        self.class_picker.disabled = self.type_picker.disabled = True
        self.discard_button.disabled = True

    # ----- the table -----

    def _view(self) -> pd.DataFrame:
        assert self.playbook is not None
        pb = self.playbook
        return pb[
            (pb["market_cap_class"] == self.class_picker.value)
            & (pb["config_type"] == self.type_picker.value)
        ]

    def _row(self, config_id: str) -> pd.Series:
        assert self.playbook is not None
        rows = self.playbook[(self.playbook["config_id"] == config_id).to_numpy(bool)]
        if rows.empty:
            raise KeyError(f"no config id {config_id!r} in quant {self.quant_id}'s playbook")
        return rows.iloc[0]

    def _cell(self, row: pd.Series, field: str) -> W.ValueWidget:
        key = (str(row["config_id"]), field)
        staged = self.edits.get(key, row[field])
        widget: W.ValueWidget
        if field in ("required", "disabled"):
            shown = bool(staged) if isinstance(staged, bool | np.bool_) else flag(row, field)
            widget = W.Checkbox(value=shown, indent=False)
        else:
            try:
                value = float(staged)
            except (TypeError, ValueError):  # a staged non-number: the error says so
                value = float(row[field])
            widget = W.FloatText(value=value, layout=W.Layout(width="95%"))
        widget.disabled = self.writable is False
        widget.layout.border = _INVALID if key in self.errors else ""
        for name in ("qs-cell", f"qs-field-{field}", f"qs-criterion-{row['criterion']}"):
            widget.add_class(name)
        widget.observe(lambda change, k=key: self._edited(k, change["new"]), "value")
        self.cells[key] = widget
        return widget

    def _build(self) -> None:
        """Lay out the selected class and config type, staged edits shown in place."""
        for old in self.grid.children:  # release the previous view's widgets
            old.close()
        self.cells = {}
        children: list[W.Widget] = [W.HTML(f"<b>{h}</b>") for h in _HEADER]
        for _, row in self._view().iterrows():
            children += [
                W.HTML(
                    f"{html.escape(str(row['criterion_name']))} "
                    f"<small>({html.escape(str(row['criterion']))})</small>"
                ),
                W.HTML(f"<small>{rule_text(row)}</small>"),
            ]
            children += [self._cell(row, f) for f in FIELDS]
        self.grid.children = children
        self._render()

    def _edited(self, key: Key, value: Any) -> None:
        row = self._row(key[0])
        self._cancel_pending()
        if _same(value, row[key[1]]):
            self.edits.pop(key, None)
            self.errors.pop(key, None)
        else:
            self.edits[key] = value
            error = check_change(row, key[1], value)
            if error:
                self.errors[key] = error
            else:
                self.errors.pop(key, None)
        if key in self.cells:
            self.cells[key].layout.border = _INVALID if key in self.errors else ""
        self._render()

    def _render(self) -> None:
        changes = self.changes
        self.diff.value = (
            f"<b>{len(changes)} staged change(s)</b>" + diff_html(changes) if changes else ""
        )
        self.apply_button.disabled = not changes or self.writable is False
        if self.errors:
            self.message.value = "".join(note(e, "error") for e in self.errors.values())
        elif self._showing_errors:
            self.message.value = ""
        self._showing_errors = bool(self.errors)

    # ----- the public controls -----

    @property
    def changes(self) -> list[audit.Change]:
        """The staged edits as changes, in the order they were made."""
        return [audit.Change.of(self._row(cid), f, v) for (cid, f), v in self.edits.items()]

    def edit(
        self,
        criterion: str,
        field: str,
        value: Any,
        *,
        market_cap_class: str | None = None,
        config_type: str | None = None,
    ) -> None:
        """Stage ``field = value`` for ``criterion`` of the class and config type (default:
        the ones shown; given ones are shown). An invalid value is marked, not sent.
        """
        if field not in FIELDS:
            raise ValueError(f"field must be one of {FIELDS}, got {field!r}")
        if market_cap_class is not None:
            self.class_picker.value = market_cap_class
        if config_type is not None:
            self.type_picker.value = config_type
        view = self._view()
        rows = view[(view["criterion"] == criterion).to_numpy(bool)]
        if rows.empty:
            raise KeyError(
                f"no criterion {criterion!r} in {self.class_picker.value} {self.type_picker.value}"
            )
        key = (str(rows.iloc[0]["config_id"]), field)
        cell = self.cells[key]
        if _same(cell.value, value):
            self._edited(key, value)
            return
        try:
            cell.value = value  # the observer stages it
        except TraitError:  # not a number, not a flag: staged as an error, not shown
            self._edited(key, value)

    def apply(self) -> list[audit.Change] | None:
        """Show the staged changes as a diff and ask for confirmation; refused (nothing sent)
        while any edit is invalid.
        """
        if self.writable is False:
            self.notify(f"Your plan ({plan_name(self.client)}) cannot change it. {PLAYBOOK_PLANS}")
            return None
        if self.errors:
            self._render()
            self.message.value += note("Fix the marked values first: nothing was sent.", "error")
            return None
        changes = self.changes
        if not changes:
            self.notify("No staged changes.")
            return None
        self._ask(
            changes,
            f"Apply {len(changes)} change(s) to quant {self.quant_id}'s playbook",
            changes,
            "One PUT (all or nothing)",
            "each change",
        )
        return changes

    def cancel(self) -> None:
        """Close the confirmation; nothing is sent and the edits stay staged."""
        if self._cancel_pending():
            self.notify("Cancelled: nothing was sent; the edits are still staged.")

    def _cancel_pending(self) -> bool:
        had = bool(self.pending)
        self.pending = []
        self.confirmation.hide()
        return had

    def confirm(self) -> audit.Written | None:
        """Send every confirmed change in one PUT, verify, log. Returns what was written."""
        changes: list[audit.Change] | None = self._take_pending()
        if changes is None:
            return None

        def send() -> audit.Written:
            written = audit.write_changes(
                self.quant_id, changes, client=self.client, log=self.audit_log
            )
            self.edits, self.errors = {}, {}
            return written

        return self._write(send, f"Applied {len(changes)} change(s)", on_denied=self._write_denied)

    def _write_denied(self, exc: PermissionDeniedError) -> None:
        self.writable = False
        self.denied(exc, PLAYBOOK_PLANS)
        self._build()

    def discard(self) -> None:
        """Drop every staged edit (nothing was sent)."""
        self._cancel_pending()
        self.edits, self.errors = {}, {}
        self.message.value = ""
        if self.playbook is not None:
            self._build()

    def undo(self) -> audit.Written | None:
        """Restore the values the last confirmed apply replaced, in one PUT (verified, logged)."""
        return self._undo_last(
            "Nothing to undo from this editor.",
            lambda written: f"Undone {len(written.entries)} change(s)",
        )

    def _show_written(self, written: audit.Written) -> None:
        if written.playbook is None:  # the read-back failed: show what is known
            self._build()

    def _playbook_changed(self, playbook: pd.DataFrame) -> None:
        """Show ``playbook`` (the shared view's): staged edits stay, but an edit that now
        equals the entry's value is no change any more; a pending confirmation named old
        values, so it is closed.
        """
        had = self._cancel_pending()
        self.playbook = playbook
        by_id = playbook.drop_duplicates("config_id").set_index("config_id")
        for key, value in list(self.edits.items()):
            cid, field = key
            if cid not in by_id.index or _same(value, by_id.at[cid, field]):
                self.edits.pop(key, None)
                self.errors.pop(key, None)
        if self.class_picker.options:
            self._build()
        if had:
            self.notify(
                "The playbook changed (another panel wrote, or it was reloaded): check the "
                "staged changes against the values now shown and apply again.",
                "warn",
            )
