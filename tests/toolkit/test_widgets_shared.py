"""Panels on one page, headless against the sandbox: one playbook view per (client, quant), a
write through one panel redraws the others, a stale panel's write and a foreign undo are
refused, Reload, closed panels leave their view, lazy opening over the quota share, and the
DOM classes the browser tests locate widgets by."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable
from pathlib import Path

from _helpers import (
    QUANT,
    WidgetData,
    other_client,
    quota_left,
    service_playbook,
    smart_money,
    value_of,
)

import quantscope.loaders as L
from quantscope import audit
from quantscope._http.client import Client
from quantscope.sandbox.serve import SandboxServer
from quantscope.widgets import AuditLog, PlaybookEditor, PlaybookView, RecommendationsPanel


def test_a_write_through_one_panel_redraws_the_other_and_undo_stays_its_own(
    fresh_sandbox: Callable[..., SandboxServer],
    client_for: Callable[..., Client],
    tmp_path: Path,
) -> None:
    """The issue's scenario: one panel applies 2 -> 3; the other, on the same page, must show
    3, confirm "3 -> 4", log old value 3, and its Undo must put back 3, not 2."""
    server = fresh_sandbox()
    client = client_for(server)
    first = PlaybookEditor(QUANT, client=client, market_cap_class="DEGEN_CAP")
    second = PlaybookEditor(QUANT, client=client, market_cap_class="DEGEN_CAP")
    assert first.view is second.view
    assert first.view is PlaybookView.of(client, QUANT)
    row = smart_money(service_playbook(server))
    config_id, old = str(row["config_id"]), float(row["threshold"])
    key = (config_id, "threshold")

    first.edit("smart_money_buys", "threshold", old + 1)
    first.apply()
    assert first.confirm() is not None
    assert second.cells[key].value == old + 1  # redrawn from the shared view

    second.edit("smart_money_buys", "threshold", old + 2)
    second.apply()
    assert f"{old + 1:g} → {old + 2:g}" in second.confirmation.text.value
    assert second.confirm() is not None
    logged = AuditLog(tmp_path / "audit.jsonl").entries()
    assert [(e.old_value, e.new_value) for e in logged] == [(old, old + 1), (old + 1, old + 2)]
    assert first.cells[key].value == old + 2

    # the first editor's undo would restore over the second's change: refused
    assert first.undo() is None
    assert "undo refused" in first.message.value
    assert f"now {old + 2:g}" in first.message.value
    assert float(value_of(service_playbook(server), config_id)) == old + 2
    # the second's undo restores what it replaced: the first's value, not the original
    assert second.undo() is not None
    assert float(value_of(service_playbook(server), config_id)) == old + 1
    assert first.cells[key].value == old + 1
    assert second.cells[key].value == old + 1

    # a write through quantscope.audit with the same client redraws the panels too
    fresh = L.load_playbook(QUANT, fresh=True, client=client)
    audit.write_changes(
        QUANT,
        [audit.Change.of(smart_money(fresh), "threshold", old + 5)],
        client=client,
        log=AuditLog(tmp_path / "elsewhere.jsonl"),
    )
    assert first.cells[key].value == old + 5
    assert second.cells[key].value == old + 5


def test_a_stale_panel_is_refused_until_reloaded(
    fresh_sandbox: Callable[..., SandboxServer],
    client_for: Callable[..., Client],
    tmp_path: Path,
) -> None:
    server = fresh_sandbox()
    client = client_for(server)
    editor = PlaybookEditor(QUANT, client=client, market_cap_class="DEGEN_CAP")
    row = smart_money(service_playbook(server))
    config_id, old = str(row["config_id"]), float(row["threshold"])
    with other_client(server, tmp_path) as other:  # elsewhere: no view hears of it
        L.update_playbook(QUANT, [{"config_id": config_id, "value": old + 1}], client=other)

    editor.edit("smart_money_buys", "threshold", old + 2)
    editor.apply()
    assert f"{old:g} → {old + 2:g}" in editor.confirmation.text.value
    assert editor.confirm() is None
    text = editor.message.value
    assert "stale write refused" in text
    assert f"is now {old + 1:g}, you saw {old:g}" in text
    assert "Press Reload" in text
    assert float(value_of(service_playbook(server), config_id)) == old + 1
    assert not (tmp_path / "audit.jsonl").exists()  # nothing written, nothing logged
    assert editor.edits  # the edit stays staged

    editor.reload_button.click()
    assert "Reloaded" in editor.message.value
    assert editor.playbook is not None
    assert value_of(editor.playbook, config_id) == old + 1
    editor.apply()
    assert f"{old + 1:g} → {old + 2:g}" in editor.confirmation.text.value
    written = editor.confirm()
    assert written is not None
    assert written.verified
    assert float(value_of(service_playbook(server), config_id)) == old + 2
    (entry,) = AuditLog(tmp_path / "audit.jsonl").entries()
    assert (entry.old_value, entry.new_value) == (old + 1, old + 2)


def test_a_closed_panel_leaves_its_view(
    sandbox: SandboxServer, client_for: Callable[..., Client]
) -> None:
    client = client_for(sandbox)
    editor = PlaybookEditor(QUANT, client=client)
    view = editor.view
    assert view.panels == [editor]
    alive = weakref.ref(editor)
    editor.close()
    del editor
    gc.collect()
    assert alive() is None
    assert view.panels == []
    assert PlaybookView.of(client, QUANT) is view  # the view stays with its client


def test_the_recommendations_open_lazily_over_the_quota_share(
    fresh_sandbox: Callable[..., SandboxServer], widget_data: WidgetData, tmp_path: Path
) -> None:
    server = fresh_sandbox()
    closed = int((widget_data.trades["status"] == "Closed").sum())
    share = 0.01  # of 5,000: 50 requests, fewer than the closed trades' details
    assert closed > 50
    with Client(
        server.url,
        server.keys["enterprise"],
        cache_dir=str(tmp_path),
        progress=False,
        quota_share=share,
    ) as client:
        left = quota_left(server, "enterprise")
        panel = RecommendationsPanel(QUANT, client=client, trades=widget_data.trades)
        assert left - quota_left(server, "enterprise") <= 50  # never more than the share
        assert panel.research is None
        assert panel.recommendations is not None
        assert panel.open_button.layout.display != "none"
        assert "qs-open" in panel.open_button._dom_classes
        text = panel.message.value
        assert f"needs {closed} more requests" in text
        assert "Press Open" in text
        shown = panel.table.value  # the list meanwhile, without the what-if columns
        assert "confidence" in shown
        assert "what-if" not in shown

        panel.open_button.click()
        assert panel.research is not None
        assert len(panel.research.details) == len(widget_data.details)
        assert panel.checks is not None
        assert panel.checks["agrees"].all()
        assert panel.open_button.layout.display == "none"
        assert "effect: PnL change [95 %]" in panel.table.value


def test_the_dom_classes_of_the_browser_contract(
    sandbox: SandboxServer, widget_data: WidgetData, client_for: Callable[..., Client]
) -> None:
    client = client_for(sandbox)
    editor = PlaybookEditor(QUANT, client=client, market_cap_class="DEGEN_CAP")
    panel = RecommendationsPanel(
        QUANT, client=client, trades=widget_data.trades, details=widget_data.details
    )

    def classes(widget: object) -> set[str]:
        return set(getattr(widget, "_dom_classes", ()))

    common = {
        "qs-status": "message",
        "qs-reload": "reload_button",
        "qs-open": "open_button",
        "qs-apply": "apply_button",
        "qs-undo": "undo_button",
    }
    for p, root in ((editor, "qs-playbook-editor"), (panel, "qs-recommendations-panel")):
        assert {"qs-panel", root} <= classes(p.widget)
        for name, attribute in common.items():
            assert name in classes(getattr(p, attribute)), (root, name)
        assert "qs-confirmation" in classes(p.confirmation.box)
        assert "qs-confirm" in classes(p.confirmation.confirm_button)
        assert "qs-cancel" in classes(p.confirmation.cancel_button)
    assert "qs-class-picker" in classes(editor.class_picker)
    assert "qs-config-type-picker" in classes(editor.type_picker)
    row = smart_money(service_playbook(sandbox))
    cell = editor.cells[(str(row["config_id"]), "threshold")]
    assert {"qs-cell", "qs-field-threshold", "qs-criterion-smart_money_buys"} <= classes(cell)
    assert "qs-recommendation-picker" in classes(panel.picker)
    assert "qs-recommendations-table" in classes(panel.table)


def test_the_recommendations_panel_sees_an_editor_move_its_entry(
    fresh_sandbox: Callable[..., SandboxServer],
    widget_data: WidgetData,
    client_for: Callable[..., Client],
) -> None:
    server = fresh_sandbox()
    client = client_for(server)
    panel = RecommendationsPanel(
        QUANT, client=client, trades=widget_data.trades, details=widget_data.details
    )
    rec = panel.selected
    assert rec is not None
    assert "would be refused" not in panel.detail.value
    old = float(rec["old_threshold"])
    editor = PlaybookEditor(QUANT, client=client, market_cap_class=str(rec["market_cap_class"]))
    editor.edit(str(rec["criterion"]), "threshold", old + 0.5)
    editor.apply()
    assert editor.confirm() is not None

    # redrawn from the shared view: the entry no longer holds what the recommendation was for
    assert f"now holds {old + 0.5:g} for this entry" in panel.detail.value
    spent = quota_left(server, "enterprise")
    assert panel.apply() is None
    assert not panel.confirmation.visible
    assert "nothing was sent" in panel.message.value
    assert quota_left(server, "enterprise") == spent
    assert float(value_of(service_playbook(server), str(rec["config_id"]))) == old + 0.5
