"""ThresholdPanel shows no phantom change on any of its 54 (class, criterion) selections, as a
browser sees the slider (``_helpers.slider.Browser``): the whole sweep (about 25 s of figures
on 2 cores). ``make test`` selects each criterion once
(tests/toolkit/test_widgets_threshold_browser.py); the real browser's sample is
tests/browser/test_threshold_values.py.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from _helpers import QUANT, WidgetData
from _helpers.slider import Browser, phantom_sweep, selections

from quantscope._http.client import Client
from quantscope.sandbox.serve import SandboxServer
from quantscope.widgets import ThresholdPanel

pytestmark = pytest.mark.reliability


def test_no_phantom_change_on_any_class_and_criterion(
    sandbox: SandboxServer,
    widget_data: WidgetData,
    client_for: Callable[..., Client],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    panel = ThresholdPanel(
        QUANT, client=client_for(sandbox), trades=widget_data.trades, details=widget_data.details
    )
    browser = Browser(lambda: panel.slider, monkeypatch)
    browser.settle()
    pairs = selections(panel)
    assert len(pairs) == 54  # 3 classes x 18 criteria
    browser.settle()
    assert phantom_sweep(panel, browser, pairs) == []
    assert browser.synced_back == []  # the browser never had to move the handle itself
