"""Progress bars for loads that send more than one request.

``tqdm.auto`` picks the notebook widget bar in Jupyter (its stored text is frozen at display
time, so nbval outputs stay stable) and a text bar elsewhere. The switch is the client's
``progress`` setting (``QUANTSCOPE_PROGRESS=0``) passed as ``disable=True``: ``TQDM_DISABLE``
does not disable the notebook bar. Loads of fewer than two requests never show a bar.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tqdm.auto import tqdm

__all__ = ["progress"]


@contextmanager
def progress(
    total: int, desc: str, *, enabled: bool, done: int = 0, unit: str = "req"
) -> Iterator[Any]:
    """A bar counting ``total`` requests (``.update(1)`` per request), closed on exit.

    ``done`` requests of the load were already sent before the bar (the first page, which
    gave the total): they count in ``total`` and the bar starts at them, so a load of 49
    pages shows 49, not 48. ``unit`` names what is counted (the report counts stages)."""
    bar = tqdm(
        total=total,
        initial=done,
        desc=desc,
        unit=unit,
        leave=False,
        dynamic_ncols=True,
        disable=not enabled or total < 2,
    )
    try:
        yield bar
    finally:
        bar.close()
