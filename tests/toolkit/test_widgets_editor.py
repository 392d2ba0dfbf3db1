"""PlaybookEditor, headless against the sandbox: invalid edits send nothing; valid ones go in
one PUT (plus the read-back), verified and logged, and undo restores them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd
from _helpers import QUANT, service_playbook

from quantscope._http.client import Client
from quantscope.sandbox.serve import SandboxServer
from quantscope.widgets import AuditLog, PlaybookEditor


def entry(playbook: pd.DataFrame, criterion: str, cls: str, kind: str = "BUYING") -> pd.Series:
    return playbook[
        (playbook["criterion"] == criterion)
        & (playbook["market_cap_class"] == cls)
        & (playbook["config_type"] == kind)
    ].iloc[0]


def test_table_shows_the_selected_class_and_type(
    sandbox: SandboxServer, client_for: Callable[..., Client]
) -> None:
    editor = PlaybookEditor(QUANT, client=client_for(sandbox), market_cap_class="LOW_CAP")
    assert editor.playbook is not None
    view = editor.playbook[
        (editor.playbook["market_cap_class"] == "LOW_CAP")
        & (editor.playbook["config_type"] == "BUYING")
    ]
    assert len(editor.cells) == 4 * len(view)
    row = view.iloc[0]
    assert editor.cells[(row["config_id"], "threshold")].value == row["threshold"]
    editor.type_picker.value = "SCANNING"
    assert all(editor._row(cid)["config_type"] == "SCANNING" for cid, _ in editor.cells)
    assert editor.apply_button.disabled  # nothing staged


def test_invalid_edits_are_shown_and_nothing_is_sent(
    fresh_sandbox: Callable[..., SandboxServer], client_for: Callable[..., Client]
) -> None:
    server = fresh_sandbox()
    client = client_for(server)
    original = service_playbook(server)
    editor = PlaybookEditor(QUANT, client=client, market_cap_class="DEGEN_CAP")
    spent = client.quota.remaining

    editor.edit("smart_money_buys", "threshold", 999)
    assert "range [0, 50]" in editor.message.value
    assert "999" in editor.message.value
    key = (str(entry(original, "smart_money_buys", "DEGEN_CAP")["config_id"]), "threshold")
    assert editor.cells[key].layout.border  # the cell is marked
    editor.edit("lp_locked", "threshold", 7)  # an options criterion: 7 is no option id
    assert "option ids [0, 1, 2, 3]" in editor.message.value
    editor.edit("rsi_14", "weight", -1)
    assert "&gt;= 0" in editor.message.value  # escaped HTML
    editor.edit("rsi_14", "required", "yes")  # not a flag: staged as an error, cell untouched
    assert "True or False" in editor.message.value
    editor.edit("liquidity_usd", "threshold", "lots")
    assert "must be a number" in editor.message.value
    editor.class_picker.value = "LOW_CAP"  # staged edits survive switching views
    editor.class_picker.value = "DEGEN_CAP"
    assert len(editor.errors) == 5
    assert len(editor.changes) == 5

    assert editor.apply() is None
    editor.apply_button.click()
    assert not editor.confirmation.visible
    assert "nothing was sent" in editor.message.value
    assert client.quota.remaining == spent
    pd.testing.assert_frame_equal(service_playbook(server), original, check_like=True)

    # fixing a value clears its error; setting it back to the original unstages it
    editor.edit("smart_money_buys", "threshold", 3)
    assert "range [0, 50]" not in editor.message.value
    editor.discard()
    assert editor.edits == {}
    assert editor.errors == {}
    assert editor.message.value == ""


def test_two_valid_edits_one_put_verified_logged_and_undone(
    fresh_sandbox: Callable[..., SandboxServer],
    client_for: Callable[..., Client],
    tmp_path: Path,
) -> None:
    server = fresh_sandbox()
    client = client_for(server)
    original = service_playbook(server)
    smart = entry(original, "smart_money_buys", "DEGEN_CAP")
    rsi = entry(original, "rsi_14", "MID_CAP")
    new_weight = float(rsi["weight"]) + 0.5
    editor = PlaybookEditor(QUANT, client=client)

    editor.edit("smart_money_buys", "threshold", 3, market_cap_class="DEGEN_CAP")
    editor.edit("rsi_14", "weight", new_weight, market_cap_class="MID_CAP")
    assert editor.class_picker.value == "MID_CAP"
    assert [(c.criterion, c.field) for c in editor.changes] == [
        ("smart_money_buys", "threshold"),
        ("rsi_14", "weight"),
    ]
    diff = editor.diff.value
    assert "2 staged change(s)" in diff
    for text in (smart["config_id"], rsi["config_id"], f"<td>{new_weight:g}</td>", "<td>3</td>"):
        assert str(text) in diff

    assert editor.apply() is not None
    assert editor.confirmation.visible
    assert str(smart["config_id"]) in editor.confirmation.text.value
    editor.cancel()
    assert editor.edits  # the edits stay staged
    assert not editor.confirmation.visible

    editor.apply_button.click()
    before = client.quota.remaining
    assert before is not None
    editor.confirmation.confirm_button.click()
    # the compare read (never from the cache), the PUT and the read-back, nothing else
    assert client.quota.remaining == before - 3
    assert "verified" in editor.message.value
    assert editor.edits == {}

    now = service_playbook(server)
    assert entry(now, "smart_money_buys", "DEGEN_CAP")["threshold"] == 3
    assert entry(now, "rsi_14", "MID_CAP")["weight"] == new_weight
    changed = now.set_index("config_id")[["threshold", "weight"]].compare(
        original.set_index("config_id")[["threshold", "weight"]]
    )
    assert set(changed.index) == {smart["config_id"], rsi["config_id"]}
    logged = AuditLog(tmp_path / "audit.jsonl").entries()
    assert [e.field for e in logged] == ["threshold", "weight"]
    assert all(e.verified for e in logged)
    assert len({e.batch for e in logged}) == 1
    # the table shows the playbook as read back
    assert editor.cells[(str(rsi["config_id"]), "weight")].value == new_weight

    editor.undo_button.click()
    restored = service_playbook(server)
    pd.testing.assert_frame_equal(restored, original, check_like=True)
    undone = AuditLog(tmp_path / "audit.jsonl").entries()[2:]
    assert [e.undoes for e in undone] == [e.id for e in logged]


def test_growth_key_reads_but_cannot_edit(
    sandbox: SandboxServer, client_for: Callable[..., Client]
) -> None:
    editor = PlaybookEditor(QUANT, client=client_for(sandbox, "growth"))
    assert "Enterprise can change it" in editor.message.value
    assert all(cell.disabled for cell in editor.cells.values())
    assert editor.apply_button.disabled
    assert editor.apply() is None


def test_basic_key_gets_a_message(
    sandbox: SandboxServer, client_for: Callable[..., Client]
) -> None:
    editor = PlaybookEditor(QUANT, client=client_for(sandbox, "basic"))
    assert "Growth or higher can read the playbook" in editor.message.value
    assert editor.playbook is None
    assert editor.cells == {}
