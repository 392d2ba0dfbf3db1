"""A notebook progress bar leaves no output that names a closed widget (issue 24, item 7:
Voila's "Error displaying widget: model not found", 1 page in 10).

tqdm's notebook bar with ``leave=False`` closes its widget when the load ends, but the cell
keeps the ``display_data`` naming it; Voila renders the page from those outputs after the
cell ran, so the bar's place showed the error. ``_progress`` shows the bar under a display id
and replaces that output by nothing before closing the widget.
"""

from __future__ import annotations

from typing import Any

import pytest
import tqdm.notebook
from tqdm.notebook import tqdm as notebook_tqdm

from quantscope import _progress

#: The class tqdm.auto defines in a Jupyter kernel: a subclass of the notebook bar, in its own
#: module (``tqdm.auto.tqdm(notebook_tqdm, asyncio_tqdm)``).
AUTO_IN_A_KERNEL = type("tqdm", (notebook_tqdm,), {"__module__": "tqdm.auto"})


class Handle:
    """An ``IPython.display.DisplayHandle`` that records what the output became."""

    def __init__(self, obj: Any, outputs: list[Any]) -> None:
        self.outputs = outputs
        outputs.append(obj)

    def update(self, obj: Any, *, raw: bool = False) -> None:
        self.outputs[-1] = obj


def _outputs(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The cell's outputs, as bars are displayed in a kernel (by tqdm itself or by
    ``_progress``), with the bar tqdm.auto picks in a kernel."""
    outputs: list[Any] = []
    monkeypatch.setattr(_progress, "tqdm", AUTO_IN_A_KERNEL)
    monkeypatch.setattr(tqdm.notebook, "display", outputs.append)
    monkeypatch.setattr(_progress, "_display", lambda w: Handle(w, outputs), raising=False)
    return outputs


@pytest.mark.parametrize("requests", [5, 2])
def test_a_finished_or_stopped_bar_leaves_no_widget_output(
    monkeypatch: pytest.MonkeyPatch, requests: int
) -> None:
    outputs = _outputs(monkeypatch)
    with _progress.progress(5, "evaluation details", enabled=True) as bar:
        container = bar.container
        assert outputs == [container]  # shown while the load runs
        bar.update(requests)  # 5: the load finished; 2: it stopped early (refused)
    assert outputs == [{"text/plain": ""}]  # the cell's output names no widget
    assert container.comm is None  # and the widget is closed


def test_no_bar_no_output(monkeypatch: pytest.MonkeyPatch) -> None:
    outputs = _outputs(monkeypatch)
    for total, enabled in ((1, True), (5, False)):
        with _progress.progress(total, "trades", enabled=enabled) as bar:
            bar.update(total)
    assert outputs == []
