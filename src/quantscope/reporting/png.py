"""Figures drawn for a report, made into reproducible PNG bytes.

The figures are matplotlib ``Figure`` objects made outside pyplot (nothing global, nothing
shown), drawn under fixed rc settings so the user's style cannot change a report, and saved
without the "Software" metadata matplotlib writes by default: the same data gives the same
bytes (PNG has no date unless one is written; SVG would embed one, so reports use PNG).
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import matplotlib
import matplotlib.style
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

#: The resolution of every report figure (dots per inch).
DPI = 90

# Fixed settings: matplotlib's defaults, with the few a report needs said explicitly.
_RC: dict[str, Any] = {
    "figure.dpi": DPI,
    "savefig.dpi": DPI,
    "font.family": "DejaVu Sans",
    "svg.hashsalt": "quantscope-report",
    "path.simplify": True,
}


@contextmanager
def report_style() -> Iterator[None]:
    """matplotlib's default style with the report's fixed settings, for the block's duration."""
    with matplotlib.rc_context():
        matplotlib.style.use(["default", _RC])
        yield


def new_figure(size: tuple[float, float] = (9.0, 4.0)) -> Figure:
    """A figure outside pyplot, laid out by matplotlib's constrained layout."""
    figure = Figure(figsize=size, dpi=DPI, layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def png_bytes(figure: Figure) -> bytes:
    """The figure as PNG, without metadata that would change between runs."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=DPI, metadata={"Software": None})
    return buffer.getvalue()


def draw(size: tuple[float, float], paint: Callable[[Figure], Any]) -> tuple[bytes, str]:
    """Draw ``paint(figure)`` on a new figure under the report style: (PNG bytes, title).

    The title is the first Axes' title, used as the image's alternative text.
    """
    with report_style():
        figure = new_figure(size)
        paint(figure)
        titles = [ax.get_title() for ax in figure.axes if ax.get_title()]
        return png_bytes(figure), (titles[0] if titles else "")
