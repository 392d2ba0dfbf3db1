"""What every figure shares: axes to draw in, UTC date axes, unit formatters and colours.

Times are drawn as naive UTC ``datetime64[ms]`` (matplotlib's date unit) and labelled "(UTC)";
ratios are fractions drawn on a percent axis; money is USD. Nothing here computes a metric.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import matplotlib.dates as mdates
import matplotlib.pyplot as plt
import numpy as np
import numpy.typing as npt
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.ticker import Formatter, FuncFormatter, PercentFormatter

from quantscope.analytics import FREQS

# Colour-blind-safe pair (ColorBrewer Dark2) for good/bad, plus a line and a neutral colour.
WIN = "#1b9e77"
LOSS = "#d95f02"
LINE = "#1f4e79"
NEUTRAL = "#7f7f7f"

# Outcome-like labels (the trades frame's ``result``, analytics' ``OUTCOMES``, verdicts).
OUTCOME_COLORS = {
    "Profit": WIN,
    "Loss": LOSS,
    "Breakeven": NEUTRAL,
    "win": WIN,
    "loss": LOSS,
    "breakeven": NEUTRAL,
}

# freq aliases of analytics' by()/pass_rates() in words, for titles.
PERIOD_WORDS = {name: period.word for name, period in FREQS.items()}


def new_axes(ax: Axes | None, figsize: tuple[float, float] = (9.0, 4.0)) -> Axes:
    """``ax``, or the Axes of a new figure (pyplot's, so that Jupyter shows it inline)."""
    if ax is not None:
        return ax
    _, made = plt.subplots(figsize=figsize, layout="constrained")
    return made


def utc_naive(values: Any) -> np.ndarray:
    """Datetimes (tz-aware or naive-as-UTC) as naive UTC ``datetime64[ms]``, matplotlib's unit."""
    stamps = pd.DatetimeIndex(pd.to_datetime(values, utc=True))
    naive: npt.NDArray[np.datetime64] = stamps.tz_localize(None).to_numpy(dtype="datetime64[ms]")
    return naive


def date_axis(ax: Axes, label: str) -> None:
    """Concise UTC date ticks on the x axis, labelled ``label``."""
    locator = mdates.AutoDateLocator(tz="UTC")
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator, tz="UTC"))
    ax.set_xlabel(label)


def _usd(value: float, _pos: Any = None) -> str:
    return f"${value:,.0f}" if value >= 0 else f"-${-value:,.0f}"


def _price(value: float, _pos: Any = None) -> str:
    digits = np.format_float_positional(abs(value), precision=3, fractional=False, trim="-")
    return f"${digits}" if value >= 0 else f"-${digits}"


def _plain(value: float, _pos: Any = None) -> str:
    return f"{value:,.4g}"


def _percent_text(value: float) -> str:
    return f"{value:.1%}"


class Unit(NamedTuple):
    """How a quantity is shown: ``axis()`` makes a tick formatter, ``text(v)`` labels a value."""

    axis: Callable[[], Formatter]
    text: Callable[[float], str]


PERCENT = Unit(lambda: PercentFormatter(xmax=1.0), _percent_text)  # fractions: 0.125 -> 12.5%
USD = Unit(lambda: FuncFormatter(_usd), _usd)  # whole dollars: -$1,234
PRICE = Unit(lambda: FuncFormatter(_price), _price)  # token prices: $0.000114
PLAIN = Unit(lambda: FuncFormatter(_plain), _plain)  # counts, ratios, hours


def outcome_color(name: object, fallback: str) -> str:
    """The colour of an outcome-like label, else ``fallback``."""
    return OUTCOME_COLORS.get(str(name), fallback)


def group_label(key: object) -> str:
    """A group key of analytics' tables as tick text: tuples joined, timestamps as dates."""
    parts = key if isinstance(key, tuple) else (key,)
    return " / ".join(_part(p) for p in parts)


def _part(value: object) -> str:
    if isinstance(value, pd.Timestamp):
        text: str = value.strftime("%Y-%m-%d" if value == value.normalize() else "%Y-%m-%d %H:%M")
        return text
    if value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value)):
        return "(missing)"
    return str(value)


def histograms(
    ax: Axes,
    groups: Sequence[tuple[str, np.ndarray, str]],
    edges: np.ndarray,
    *,
    stacked: bool,
) -> None:
    """One bar container per ``(label, values, colour)`` group on shared ``edges``: stacked (a
    distribution and its make-up) or side by side (groups compared).
    """
    if not groups:
        return
    labels, values, colors = zip(*groups, strict=True)
    ax.hist(
        list(values),
        bins=edges.tolist(),
        stacked=stacked,
        color=list(colors),
        label=list(labels),
        alpha=0.85,
        edgecolor="white",
        linewidth=0.4,
    )


def legend(ax: Axes, **kwargs: Any) -> None:
    """A legend of the labelled artists, if there is any."""
    handles, _ = ax.get_legend_handles_labels()
    if handles:
        ax.legend(**{"fontsize": "small", "frameon": False, **kwargs})


# The operators of a playbook (``backtest.OPERATORS``) as the symbol an axis label reads.
OPERATOR_SYMBOLS = {"V_GTE_T": "≥", "V_GT_T": ">", "V_LTE_T": "≤", "V_LT_T": "<"}
# Marks every threshold figure shares: the current threshold and small-sample rows.
CURRENT = "black"
CURRENT_CELL = "#e7298a"  # the current cell's outline: visible on any colour map used here
SMALL_SAMPLE = "small sample (< {trades} trades or < {tokens} tokens)"


def column(frame: pd.DataFrame, name: str) -> np.ndarray:
    """A column as float64 (NA as NaN); an empty array when an empty frame lacks it."""
    if name not in frame.columns and frame.empty:
        return np.zeros(0, dtype=np.float64)
    numbers: npt.NDArray[np.float64] = frame[name].to_numpy(dtype=np.float64, na_value=np.nan)
    return numbers


def flags(frame: pd.DataFrame, name: str) -> np.ndarray:
    """A boolean column as numpy bool (NA as False); all False when the frame lacks it."""
    if name not in frame.columns:
        return np.zeros(len(frame), dtype=bool)
    flags: npt.NDArray[np.bool_] = frame[name].to_numpy(dtype=bool, na_value=False)
    return flags


def empty_note(ax: Axes, text: str = "no data") -> None:
    """Say in the middle of an empty Axes why nothing is drawn."""
    ax.text(
        0.5,
        0.5,
        text,
        transform=ax.transAxes,
        ha="center",
        va="center",
        color=NEUTRAL,
        gid="empty",
    )


def heatmap_cells(
    ax: Axes,
    values: np.ndarray,
    texts: np.ndarray,
    *,
    cmap: str,
    norm: Any = None,
) -> Any:
    """``values`` (rows x columns) as an image with one centred text per cell (``texts``,
    "" for none), rows upwards; returns the image (for a colour bar).
    """
    image = ax.imshow(values, cmap=cmap, norm=norm, origin="lower", aspect="auto")
    rgba = np.asarray(image.cmap(image.norm(np.where(np.isfinite(values), values, 0.0))))
    dark = rgba[..., :3] @ np.array([0.299, 0.587, 0.114]) < 0.5  # text readable on the cell
    for (i, j), text in np.ndenumerate(texts):
        if text:
            color = "white" if dark[i, j] else "black"
            ax.text(
                j, i, text, ha="center", va="center", fontsize="x-small", color=color, gid="cell"
            )
    return image
