"""ThresholdPanel in Chromium holds the playbook's exact values (issue 11, items 1 and 4).

Checked against the sandbox over HTTP: after the page loads and after every switch of class and
criterion, the panel's exact threshold is the playbook's, its what-if shows no change and Apply
proposes nothing; keyboard moves on the slider land on valid values (whole steps for a count);
Apply then Confirm writes exactly the value shown; Cancel writes nothing.
"""

from __future__ import annotations

import itertools
import math

import pytest
from _helpers.browser import THRESHOLD, PanelsPage, Playbook, matching, numbers_in

pytestmark = [pytest.mark.browser, pytest.mark.slow]

COUNT = "smart_money_buys"  # a count: wallets that bought (the world draws it with floor())
RATIO = "buy_sell_ratio"  # a continuous criterion
CLASS = "DEGEN_CAP"


def _selection(panels: PanelsPage, playbook: dict) -> tuple[str, str]:
    classes = {k[0] for k in playbook}
    criteria = {k[2] for k in playbook}
    cls = matching(panels.selected_label(THRESHOLD, ".qs-class-picker"), classes)
    return cls, matching(panels.selected_label(THRESHOLD, ".qs-criterion-picker"), criteria)


def _phantoms(panels: PanelsPage, book: dict, *, apply: bool) -> list[str]:
    """What the shown selection gets wrong: the exact value, the what-if, Apply."""
    cls, criterion = _selection(panels, book)
    truth = book[(cls, "BUYING", criterion)].threshold
    found = []
    shown = panels.exact_threshold()
    if shown != truth:
        found.append(f"{cls} {criterion}: shows {shown!r}, the playbook holds {truth!r}")
    problem = panels.whatif_problem()
    if problem is not None:
        found.append(f"{cls} {criterion}: the what-if reports a change ({problem})")
    if apply:
        panels.click(THRESHOLD, ".qs-apply")
        if panels.confirmation_visible(THRESHOLD):
            found.append(
                f"{cls} {criterion}: Apply proposes "
                f"{' '.join(panels.confirmation_text(THRESHOLD).split())[:160]}"
            )
            panels.click(THRESHOLD, ".qs-cancel")
    return found


def test_no_phantom_change_on_any_class_and_criterion(
    panels: PanelsPage, playbook: Playbook
) -> None:
    """Every class and every criterion, each shown after a switch of class and of criterion.

    The class ``c`` is shown with the criteria ``k`` where ``k % classes == c``: each of the
    18 criteria once, each class with a third of them, every step a switch (a third of the 54
    selections, so a third of the time). All 54 pairs are walked through the same comm
    messages a browser applies in tests/toolkit/test_widgets_threshold_browser.py.
    """
    before = playbook.entries()
    found = _phantoms(panels, before, apply=True)  # right after the page loaded
    seen = set()
    classes = panels.option_count(THRESHOLD, ".qs-class-picker")
    for c in range(classes):
        panels.choose(THRESHOLD, ".qs-class-picker", index=c)
        for k in range(c, panels.option_count(THRESHOLD, ".qs-criterion-picker"), classes):
            panels.choose(THRESHOLD, ".qs-criterion-picker", index=k)
            seen.add(_selection(panels, before))
            found += _phantoms(panels, before, apply=True)
    panels.screenshot("all-selections")
    # back to the first selection after all that switching: still the playbook's value
    panels.choose(THRESHOLD, ".qs-class-picker", index=0)
    panels.choose(THRESHOLD, ".qs-criterion-picker", index=0)
    found += _phantoms(panels, before, apply=False)
    buying = {(k[0], k[2]) for k in before if k[1] == "BUYING"}
    assert seen <= buying
    assert {s[0] for s in seen} == {b[0] for b in buying}, "a class was never shown"
    assert {s[1] for s in seen} == {b[1] for b in buying}, "a criterion was never shown"
    assert not found, f"{len(found)} phantom change(s) on {len(seen)} selections:\n" + "\n".join(
        found
    )
    assert playbook.entries() == before


def _valid(entry, value: float, integer: bool) -> str | None:
    if not math.isfinite(value):
        return f"{value!r} is not finite"
    if entry.range_min is not None and value < entry.range_min:
        return f"{value!r} is below the range [{entry.range_min}, {entry.range_max}]"
    if entry.range_max is not None and value > entry.range_max:
        return f"{value!r} is above the range [{entry.range_min}, {entry.range_max}]"
    if integer and value != round(value):
        return f"{value!r} is not a whole number ({entry.criterion} is a count)"
    return None


@pytest.mark.parametrize(("criterion", "integer"), [(COUNT, True), (RATIO, False)])
def test_keyboard_moves_land_on_valid_values(
    panels: PanelsPage, playbook: Playbook, criterion: str, integer: bool
) -> None:
    entry = playbook.entry(CLASS, criterion)
    panels.choose(THRESHOLD, ".qs-class-picker", label=CLASS)
    panels.choose(THRESHOLD, ".qs-criterion-picker", label=f"({criterion})")
    values = [panels.exact_threshold()]  # the start (the phantom test checks it)
    for key, times in (("ArrowRight", 3), ("ArrowLeft", 1), ("PageUp", 1), ("Home", 1)):
        for _ in range(times):
            panels.press_slider(key)
            values.append(panels.exact_threshold())
    panels.screenshot("moved")
    problems = [p for p in (_valid(entry, v, integer) for v in values) if p]
    assert not problems, f"keyboard moves on {criterion}: {values}\n" + "\n".join(problems)
    steps = [b - a for a, b in itertools.pairwise(values)]
    assert steps[0] > 0, f"ArrowRight did not move {criterion} up: {values}"
    if integer:  # whole steps, never a fraction of one
        assert all(s == round(s) for s in steps), f"{criterion} moved by {steps}"
    assert playbook.entries()[(CLASS, "BUYING", criterion)] == entry  # nothing written


def test_apply_confirm_writes_exactly_the_shown_value_and_cancel_writes_nothing(
    panels: PanelsPage, playbook: Playbook
) -> None:
    before = playbook.entries()
    panels.choose(THRESHOLD, ".qs-class-picker", label=CLASS)
    panels.choose(THRESHOLD, ".qs-criterion-picker", label=f"({COUNT})")
    panels.press_slider("ArrowRight", 2)
    shown = panels.exact_threshold()
    old = before[(CLASS, "BUYING", COUNT)].threshold
    assert shown != old
    panels.click(THRESHOLD, ".qs-apply")
    assert panels.confirmation_visible(THRESHOLD)
    text = panels.confirmation_text(THRESHOLD)
    panels.screenshot("confirm-box")
    assert old in numbers_in(text), text  # "old → new"
    assert shown in numbers_in(text), text

    panels.click(THRESHOLD, ".qs-cancel")
    assert not panels.confirmation_visible(THRESHOLD)
    assert playbook.entries() == before, "Cancel wrote to the playbook"
    panels.screenshot("cancelled")

    panels.click(THRESHOLD, ".qs-apply")
    panels.click(THRESHOLD, ".qs-confirm")
    panels.screenshot("confirmed")
    after = playbook.entries()
    assert after[(CLASS, "BUYING", COUNT)].threshold == shown  # exactly, not rounded
    changed = {k for k in before if before[k] != after[k]}
    assert changed == {(CLASS, "BUYING", COUNT)}
    assert panels.exact_threshold() == shown
    assert panels.whatif_problem() is None  # the written value is now the playbook's
