"""A figure rendered into an ``Output`` by setting its outputs (no ``with out:``: NOTES.md),
outside pyplot, whose threshold line moves by blitting (``ThresholdFigure``).
"""

from __future__ import annotations

import base64
import io
from typing import Any

import ipywidgets as W
import numpy as np
import PIL.Image
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from quantscope import plots

# --- figures ---------------------------------------------------------------------------------


def new_figure(size: tuple[float, float] = (7.0, 3.0)) -> Figure:
    """A figure outside pyplot: nothing global, nothing shown behind the panel's back."""
    return Figure(figsize=size, dpi=80, layout="constrained")


def _publish(out: W.Output, rgba: np.ndarray, text: str) -> None:
    """Show an RGBA image in ``out`` as PNG, replacing what it showed."""
    buffer = io.BytesIO()
    PIL.Image.fromarray(rgba).save(buffer, format="png", compress_level=1)
    out.outputs = (
        {
            "output_type": "display_data",
            "data": {
                "image/png": base64.b64encode(buffer.getvalue()).decode("ascii"),
                "text/plain": text,
            },
            "metadata": {},
        },
    )


class ThresholdFigure:
    """A figure shown in an ``Output`` whose threshold line moves cheaply.

    The figure is drawn once without the line (kept as the background); each ``move`` puts
    the line where ``plots.set_threshold`` says, restores the background and draws the line
    alone (blitting): the histograms are not redrawn per slider step. A move that changes
    the x limits (a threshold outside them) draws everything again.
    """

    def __init__(self, ax: Axes, out: W.Output) -> None:
        self.ax, self.out = ax, out
        figure = ax.get_figure(root=True)
        assert isinstance(figure, Figure)
        self.figure: Figure = figure
        self.canvas = FigureCanvasAgg(self.figure)
        self._background: Any = None
        self._line: Line2D | None = None
        self._xlim: tuple[float, float] | None = None

    def move(self, threshold: float) -> None:
        """Draw the threshold line at ``threshold`` and show the figure."""
        line = plots.set_threshold(self.ax, threshold)
        assert line is not None
        if line is not self._line or self.ax.get_xlim() != self._xlim:
            line.set_animated(True)  # left out of the full draw: the background has no line
            self.canvas.draw()
            self._background = self.canvas.copy_from_bbox(self.figure.bbox)
            self._line, self._xlim = line, self.ax.get_xlim()
        else:
            self.canvas.restore_region(self._background)
        self.ax.draw_artist(line)
        _publish(self.out, np.asarray(self.canvas.buffer_rgba()), f"<{self.ax.get_title()}>")
