"""Writes from a page never undo someone else's change (issue 11, item 2), in Chromium.

A panel whose view went stale (the entry was changed over HTTP after the page loaded) is
refused with a message naming both values, and the playbook keeps the other change; Undo after
someone else changed the entry (another client over HTTP, or the PlaybookEditor on the same
page) is refused and the other change survives.
"""

from __future__ import annotations

import pytest
from _helpers.browser import EDITOR, THRESHOLD, PanelsPage, Playbook, numbers_in

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CLASS, CRITERION = "DEGEN_CAP", "smart_money_buys"
KEY = (CLASS, "BUYING", CRITERION)
ELSEWHERE = 7.0  # what "someone else" writes: a whole number no step of the panel lands on


def _show(panels: PanelsPage) -> None:
    panels.choose(THRESHOLD, ".qs-class-picker", label=CLASS)
    panels.choose(THRESHOLD, ".qs-criterion-picker", label=f"({CRITERION})")


def _apply_and_confirm(panels: PanelsPage, which: str) -> None:
    """Apply, then Confirm when the panel asks (a refusal may come at either step); wait for
    the write's outcome on the panel's message line, not only for a quiet kernel."""
    panels.click(which, ".qs-apply")
    if panels.confirmation_visible(which):
        before = panels.status(which)
        panels.click(which, ".qs-confirm")
        panels.wait_for_status_change(which, before)


def _undo(panels: PanelsPage, which: str) -> None:
    """Undo, and wait for its outcome (done or refused) on the panel's message line."""
    before = panels.status(which)
    panels.click(which, ".qs-undo")
    panels.wait_for_status_change(which, before)


def test_a_stale_panels_write_is_refused_naming_both_values(
    panels: PanelsPage, playbook: Playbook
) -> None:
    entry = playbook.entry(CLASS, CRITERION)
    _show(panels)
    seen = entry.threshold
    playbook.put({entry.config_id: ELSEWHERE})  # another client changes it after the load
    panels.press_slider("ArrowRight")
    wanted = panels.exact_threshold()
    _apply_and_confirm(panels, THRESHOLD)
    panels.screenshot("refused")
    assert playbook.threshold(CLASS, CRITERION) == ELSEWHERE, (
        f"the stale panel wrote {playbook.threshold(CLASS, CRITERION)!r} over the other "
        f"client's {ELSEWHERE!r} (it still showed {seen!r}, wanted {wanted!r})"
    )
    said = numbers_in(panels.status(THRESHOLD))
    assert seen in said, panels.status(THRESHOLD)
    assert ELSEWHERE in said, panels.status(THRESHOLD)


def test_undo_after_another_clients_change_is_refused(
    panels: PanelsPage, playbook: Playbook
) -> None:
    entry = playbook.entry(CLASS, CRITERION)
    _show(panels)
    panels.press_slider("ArrowRight")
    mine = panels.exact_threshold()
    _apply_and_confirm(panels, THRESHOLD)
    assert playbook.threshold(CLASS, CRITERION) == mine
    playbook.put({entry.config_id: ELSEWHERE})  # someone else changes the same entry
    _undo(panels, THRESHOLD)
    panels.screenshot("undo-refused")
    assert playbook.threshold(CLASS, CRITERION) == ELSEWHERE, "Undo discarded the other change"
    said = numbers_in(panels.status(THRESHOLD))
    assert ELSEWHERE in said, panels.status(THRESHOLD)
    assert mine in said, panels.status(THRESHOLD)


def test_undo_restores_only_its_own_change_across_panels(
    panels: PanelsPage, playbook: Playbook
) -> None:
    """The issue's case: ThresholdPanel applies (2 → mine), then the PlaybookEditor on the same
    page changes the same entry (→ 7); the editor's Undo must put back what its own write
    replaced (mine, ThresholdPanel's verified change), never the value it had loaded (2)."""
    loaded = playbook.threshold(CLASS, CRITERION)
    _show(panels)
    panels.choose(EDITOR, ".qs-class-picker", label=CLASS)
    panels.pick(EDITOR, ".qs-config-type-picker", "BUYING")
    panels.press_slider("ArrowRight")
    mine = panels.exact_threshold()
    _apply_and_confirm(panels, THRESHOLD)
    assert playbook.threshold(CLASS, CRITERION) == mine
    panels.screenshot("threshold-applied")

    panels.edit_cell(CRITERION, ELSEWHERE)
    _apply_and_confirm(panels, EDITOR)
    panels.screenshot("editor-applied")
    if playbook.threshold(CLASS, CRITERION) != ELSEWHERE:  # refused as stale: reload, redo
        panels.click(EDITOR, ".qs-reload")
        panels.edit_cell(CRITERION, ELSEWHERE)
        _apply_and_confirm(panels, EDITOR)
    assert playbook.threshold(CLASS, CRITERION) == ELSEWHERE

    _undo(panels, EDITOR)
    panels.screenshot("editor-undone")
    now = playbook.threshold(CLASS, CRITERION)
    assert now == mine, (
        f"the editor's Undo wrote {now!r}: ThresholdPanel's verified {mine!r} is lost"
        + (f" (the editor restored the {loaded!r} it had loaded)" if now == loaded else "")
    )


def test_the_editor_sees_the_other_panels_write(panels: PanelsPage, playbook: Playbook) -> None:
    """Panels share one view of the playbook: after ThresholdPanel writes, the editor shows
    the new value and its confirm box says "new value → edit", never the value it loaded."""
    _show(panels)
    panels.choose(EDITOR, ".qs-class-picker", label=CLASS)
    panels.pick(EDITOR, ".qs-config-type-picker", "BUYING")
    panels.press_slider("ArrowRight")
    mine = panels.exact_threshold()
    _apply_and_confirm(panels, THRESHOLD)
    assert playbook.threshold(CLASS, CRITERION) == mine
    assert panels.cell_value(CRITERION) == mine, "the editor still shows the old value"
    panels.edit_cell(CRITERION, ELSEWHERE)
    panels.click(EDITOR, ".qs-apply")
    panels.screenshot("editor-confirm-box")
    text = panels.confirmation_text(EDITOR)
    assert numbers_in(text).count(mine) >= 1, text
    assert ELSEWHERE in numbers_in(text), text
    panels.click(EDITOR, ".qs-cancel")
    assert playbook.threshold(CLASS, CRITERION) == mine
