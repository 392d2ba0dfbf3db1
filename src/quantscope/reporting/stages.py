"""The report's progress while it builds: one bar of stages on stderr (``_progress``, the bar
the loaders use), off with ``progress=False``.

A cold report spends most of its time in a few loads (the buy evaluations' details: one
request each) and in drawing; the bar names the stage it is in (``report: details``,
``report: thresholds``), so a build of many requests is never silent. ``progress=None`` follows the
client's setting (``QUANTSCOPE_PROGRESS=0`` turns it off, as the notebooks' runs and the
tests do), so no bar reaches a stored notebook output; in Jupyter ``tqdm.auto`` shows the
widget bar, closed (``leave=False``) when the report is written.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from quantscope._config import ENV_PROGRESS, _parse_flag
from quantscope._errors import ConfigurationError
from quantscope._http.client import Client, get_default_client
from quantscope._progress import progress

__all__ = ["SILENT", "Stages", "show_progress", "stages"]


class Stages:
    """Counts the report's stages on a bar: ``step(name)`` as each one starts, ``more(n)``
    when a stage finds ``n`` more (the loads a plan holds, the sections to draw).
    """

    def __init__(self, bar: Any = None) -> None:
        self._bar = bar
        self._started = False

    def step(self, name: str) -> None:
        """Stage ``name`` starts (the previous one is done)."""
        if self._bar is None:
            return
        if self._started:
            self._bar.update(1)
        self._started = True
        self._bar.set_description_str(f"report: {name}", refresh=True)

    def more(self, n: int) -> None:
        """``n`` stages more than counted so far."""
        if self._bar is not None and n > 0:
            self._bar.total += n
            self._bar.refresh()


#: Stages that show nothing (``progress=False``, or a caller that counts nothing).
SILENT = Stages()


def show_progress(progress: bool | None, client: Client | None) -> bool:
    """``progress`` when given, else the client's setting, else ``QUANTSCOPE_PROGRESS``
    (default on), read without connecting.
    """
    if progress is not None:
        return bool(progress)
    if client is None:
        try:
            client = get_default_client()
        except ConfigurationError:  # not connected: a report from a frame needs no client
            client = None
    if client is not None:
        return bool(client.settings.progress)
    raw = os.environ.get(ENV_PROGRESS, "").strip()
    return _parse_flag(raw, ENV_PROGRESS) if raw else True


@contextmanager
def stages(total: int, *, enabled: bool) -> Iterator[Stages]:
    """A bar of ``total`` stages (more may be added), closed on exit; ``SILENT`` when off."""
    if not enabled:
        yield SILENT
        return
    with progress(total, "report", enabled=True, unit="stage") as bar:
        yield Stages(bar)
        bar.update(bar.total - bar.n)  # the last stage is done
