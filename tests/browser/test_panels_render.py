"""The three panels render in Chromium, served by Voila, without console errors of the project."""

from __future__ import annotations

import pytest
from _helpers.browser import EDITOR, RECOMMENDATIONS, THRESHOLD, PanelsPage, Playbook

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_three_panels_render_without_console_errors(panels: PanelsPage, playbook: Playbook) -> None:
    for which in (THRESHOLD, EDITOR, RECOMMENDATIONS):
        assert panels.panel(which).is_visible()
        assert panels.part(which, ".qs-status").count() == 1
    assert panels.part(THRESHOLD, ".qs-threshold-slider").is_visible()
    assert panels.part(THRESHOLD, ".qs-whatif").inner_text().strip()
    assert panels.part(RECOMMENDATIONS, ".qs-recommendations-table").is_visible()
    # the editor shows the playbook's thresholds of the class it shows
    label = panels.selected_label(EDITOR, ".qs-class-picker")
    shown = playbook.entries()
    cells = [k for k in shown if k[0] == label and k[1] == "BUYING"]
    assert len(cells) == 18
    for _, _, criterion in cells:
        assert panels.cell_value(criterion) == shown[(label, "BUYING", criterion)].threshold
    # the console is checked by the fixture at teardown
