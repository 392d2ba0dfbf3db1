"""Progress bars for loads that send more than one request.

``tqdm.auto`` picks the notebook widget bar in Jupyter (its stored text is frozen at display
time, so nbval outputs stay stable) and a text bar elsewhere. The switch is the client's
``progress`` setting (``QUANTSCOPE_PROGRESS=0``) passed as ``disable=True``: ``TQDM_DISABLE``
does not disable the notebook bar. Loads of fewer than two requests never show a bar.

A notebook bar is displayed under a display id and, when the load ends, its output is
replaced by nothing before its widget is closed. tqdm alone (``leave=False``) closes the
widget but leaves the cell output that names it: a page rendered from the outputs afterwards
(Voila, a notebook opened again) shows "Error displaying widget: model not found" there.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tqdm.auto import tqdm

#: The module of tqdm's notebook bar, which tqdm.auto's class derives from in a Jupyter kernel
#: (compared by name: no ipywidgets import outside one)
_NOTEBOOK_BAR = "tqdm.notebook"

__all__ = ["progress"]


@contextmanager
def progress(
    total: int, desc: str, *, enabled: bool, done: int = 0, unit: str = "req"
) -> Iterator[Any]:
    """A bar counting ``total`` requests (``.update(1)`` per request), closed on exit.

    ``done`` requests of the load were already sent before the bar (the first page, which
    gave the total): they count in ``total`` and the bar starts at them, so a load of 49
    pages shows 49, not 48. ``unit`` names what is counted (the report counts stages).
    """
    disable = not enabled or total < 2
    widget = not disable and any(c.__module__ == _NOTEBOOK_BAR for c in tqdm.__mro__)
    options: dict[str, Any] = {"display": False} if widget else {}
    bar = tqdm(
        total=total,
        initial=done,
        desc=desc,
        unit=unit,
        leave=False,
        dynamic_ncols=True,
        disable=disable,
        **options,
    )
    shown = _display(bar.container) if widget else None
    try:
        yield bar
    finally:
        bar.close()
        if shown is not None:
            shown.update({"text/plain": ""}, raw=True)  # the output names no widget now
            bar.container.close()


def _display(container: Any) -> Any:
    """Show a notebook bar's widget under a display id (``IPython.display.DisplayHandle``)."""
    from IPython.display import display

    return display(container, display_id=True)
