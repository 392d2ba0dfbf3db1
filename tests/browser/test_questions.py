"""The two questions side by side, read in Chromium (issue 21).

The ThresholdPanel's summary (``qs-questions``) shows the effect and the signal of the selected
threshold, each change with its interval; at the current threshold it shows the rule-of-three
interval, not "±0"; its trades agree with the before/after table beside it. The
recommendations table shows every claim's replayed effect with its interval and the screen's
verdict. Nothing on the page says "upper bound".
"""

from __future__ import annotations

import re

import pytest
from _helpers.browser import RECOMMENDATIONS, THRESHOLD, PanelsPage, Playbook, table_rows

from quantscope.backtest.questions import QUESTION_LABELS

pytestmark = [pytest.mark.browser, pytest.mark.slow]

COUNT = "smart_money_buys"
CLASS = "DEGEN_CAP"
INTERVAL = re.compile(r"^[+-]?\$?[\d,.]+( pts)? \[[+-]?\$?[\d,.]+, [+-]?\$?[\d,.]+\]$")


def _questions(panels: PanelsPage) -> dict[str, list[str]]:
    """The summary's rows by label: [effect cell, signal cell]."""
    html = panels.part(THRESHOLD, ".qs-questions").inner_html()
    rows = table_rows(html)
    assert rows, "the side-by-side summary shows no table"
    return {row[0]: row[1:] for row in rows[1:]}


def test_the_side_by_side_questions_read_in_the_browser(
    panels: PanelsPage, playbook: Playbook
) -> None:
    panels.pick(THRESHOLD, ".qs-class-picker", CLASS)
    panels.pick(THRESHOLD, ".qs-criterion-picker", f"({COUNT})")
    current = playbook.threshold(CLASS, COUNT)
    text = panels.part(THRESHOLD, ".qs-questions").inner_text()
    for label in QUESTION_LABELS.values():
        assert label in " ".join(text.split())
    # at the current threshold nothing moves: the rule of three, an interval of some width
    rows = _questions(panels)
    assert rows["interval"] == ["rule of three: nothing moved"] * 2
    for label in ("win rate change", "total PnL change", "ROI change"):
        for cell in rows[label]:
            assert INTERVAL.match(cell), (label, cell)
            assert "[0.0, 0.0]" not in cell
            assert "[$0.00, $0.00]" not in cell
    assert "not ±0" in text

    panels.type_threshold(current + 1)
    assert panels.exact_threshold() == current + 1
    rows = _questions(panels)
    assert rows["interval"] == ["token bootstrap"] * 2
    for label in ("win rate change", "total PnL change", "ROI change"):
        assert all(INTERVAL.match(cell) for cell in rows[label]), rows[label]
    assert "kept /" in rows["kept − dropped win rate"][1]
    # the effect's trades are the before/after table's (the table details the effect)
    whatif = table_rows(panels.part(THRESHOLD, ".qs-whatif").inner_html())
    kept = next(row for row in whatif if row[0] == "trades kept")
    now, then = (int(v.replace(",", "")) for v in kept[1:3])
    assert rows["trades kept: now → proposed"][0].startswith(f"{now:,} → {then:,}")
    panels.screenshot("questions")

    table = panels.part(RECOMMENDATIONS, ".qs-recommendations-table").inner_text()
    assert "effect: win rate change [95 %]" in table
    assert "signal out of sample (screen) [95 %]" in table
    assert "upper bound" not in panels.page.locator("body").inner_text().lower()
