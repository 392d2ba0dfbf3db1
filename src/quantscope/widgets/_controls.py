"""A threshold control that holds a value exactly: a slider over a list of values + a text box.

A browser's float slider snaps its value onto ``min + k*step`` and syncs the snapped value
back, and it sees ``min``, ``max``, ``step`` and ``value`` arrive one by one (NOTES.md, turn
2): a threshold off that grid, or set while the bounds move, comes back changed. So the slider
here never holds a threshold. It is an ``IntSlider`` over *indices* into an explicit, sorted
list of thresholds (``stops``) that contains the exact current one: its synced state is whole
numbers with ``min=0`` and ``step=1``, which every index is on, so there is nothing to snap.
The threshold is ``values[index]``, shown exactly (shortest round-trip text) in a text box
that also takes a typed value, used exactly: it joins the list. Bounds and index are sent in
one message (``hold_sync``), in an order that never clamps.

The value list (``stops``): an options criterion's option ids; a whole-number criterion
(``is_whole``) every whole number of its range (or of its values' span) when there are at
most ``MAX_WHOLE`` of them, so a key press moves by exactly 1; otherwise the values'
quantiles rounded to 3 significant digits (each step keeps or drops a similar share of
trades, and reads like a threshold someone would write), within the criterion's range; and
always the current threshold, exactly.

No playbook I/O and no panel logic: ``ThresholdPanel`` decides what a value means.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

import ipywidgets as W
import numpy as np
import numpy.typing as npt
import pandas as pd

from quantscope._changes import option_ids

#: Stops a continuous criterion's slider offers (the values' quantiles, rounded).
STOPS = 201
#: The most whole numbers a whole-number criterion's slider lists one by one.
MAX_WHOLE = 1000


def exact_text(value: float) -> str:
    """``value`` as the shortest text that reads back as the same float (``2``, ``0.9``)."""
    value = float(value)
    if value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return repr(value)


def parse_value(text: str) -> float:
    """A typed threshold, exactly as typed; ValueError (one line) if it is not a number."""
    try:
        value = float(text.strip())
    except ValueError:
        raise ValueError(f"{text.strip()!r} is not a number") from None
    if not math.isfinite(value):
        raise ValueError(f"{text.strip()!r} is not a finite number")
    return value


def _finite(values: pd.Series | np.ndarray | Sequence[float]) -> np.ndarray:
    array: npt.NDArray[np.float64] = np.asarray(
        pd.Series(values, dtype="float64").to_numpy(na_value=np.nan)
    )
    return array[np.isfinite(array)]


def _range(row: pd.Series) -> tuple[float, float] | None:
    low, high = row.get("range_min"), row.get("range_max")
    if low is None or high is None or pd.isna(low) or pd.isna(high):
        return None
    return float(low), float(high)


def is_whole(values: pd.Series | np.ndarray | Sequence[float], row: pd.Series) -> bool:
    """Whether a criterion takes whole numbers: an options criterion, or one whose observed
    values (``values``: all of the quant's, not one class's) are all whole, with whole range
    bounds. The service states no type (the spec's criterion results carry the value as text),
    so the values decide: a count such as ``smart_money_buys`` is never fractional.
    """
    if option_ids(row):
        return True
    seen = _finite(values)
    bounds = _range(row)
    whole_bounds = bounds is None or all(float(b).is_integer() for b in bounds)
    return bool(seen.size) and whole_bounds and bool(np.all(seen == np.round(seen)))


def _round(value: float, digits: int = 3) -> float:
    return float(f"{value:.{digits}g}")


def stops(
    values: pd.Series | np.ndarray | Sequence[float], row: pd.Series, *, whole: bool
) -> tuple[float, ...]:
    """The sorted thresholds a slider offers for a playbook row, the current one exactly.

    Args:
        values: the criterion's observed values (the selected class's trades).
        row: the playbook row (``threshold``, ``range_min``/``range_max``, ``extra_info``).
        whole: whether the criterion takes whole numbers (``is_whole``).
    """
    current = float(row["threshold"])
    ids = option_ids(row)
    if ids:
        return tuple(sorted({float(i) for i in ids} | {current}))
    seen = _finite(values)
    bounds = _range(row)
    if seen.size:
        quantiles = np.quantile(seen, np.linspace(0.0, 1.0, STOPS), method="inverted_cdf")
        found = [_round(float(q)) for q in quantiles]
    elif bounds is not None:
        found = [_round(float(q)) for q in np.linspace(bounds[0], bounds[1], STOPS)]
    else:
        found = []
    low, high = min([*found, current]), max([*found, current])
    if whole:
        wide = bounds if bounds is not None and bounds[1] - bounds[0] <= MAX_WHOLE else None
        low, high = (min(low, wide[0]), max(high, wide[1])) if wide else (low, high)
        if high - low <= MAX_WHOLE:
            found = list(np.arange(math.floor(low), math.floor(high) + 1, dtype=np.float64))
        else:
            found = [float(round(v)) for v in found]
    if bounds is not None:
        found = [v for v in found if bounds[0] <= v <= bounds[1]]
    return tuple(sorted({float(v) for v in found} | {current}))


class Quiet:
    """Whether widget changes are being made by code, not by the user: observers return at
    once while ``bool(quiet)``; ``with quiet():`` marks a block (blocks nest).
    """

    def __init__(self) -> None:
        self.depth = 0

    def __bool__(self) -> bool:
        return self.depth > 0

    @contextmanager
    def __call__(self) -> Iterator[None]:
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1


class ThresholdControl:
    """An ``IntSlider`` over indices into ``values`` and a text box with the exact value.

    ``on_change(value)`` is called when the user (or code setting ``slider.value`` or
    ``text.value``) moves to a value; ``check(value)`` says why a typed value is refused
    (None when it is fine) and ``on_error(message)`` shows it. ``reset`` and ``set`` move the
    control from code without calling ``on_change``.
    """

    def __init__(
        self,
        on_change: Callable[[float], None],
        check: Callable[[float], str | None],
        on_error: Callable[[str], None],
    ) -> None:
        self.on_change, self.check, self.on_error = on_change, check, on_error
        self.slider = self._new_slider(1, 0, disabled=False)
        self.text = W.Text(
            description="exact",
            continuous_update=False,  # synced on Enter or when the box loses focus
            layout=W.Layout(width="16em"),
            style={"description_width": "3.5em"},
        )
        self.text.add_class("qs-threshold-text")
        self.box = W.HBox([self.slider, self.text])
        self.base: tuple[float, ...] = (0.0,)
        self.values: tuple[float, ...] = (0.0,)
        self._quiet = Quiet()
        self._shown: tuple[float, ...] | None = None  # the list the slider was created for
        self.text.observe(self._typed, "value")

    def _new_slider(self, count: int, index: int, *, disabled: bool) -> W.IntSlider:
        """A slider over ``count`` positions at ``index``, created with its whole state."""
        slider = W.IntSlider(
            value=index,
            min=0,
            max=count - 1,
            step=1,
            description="threshold",
            readout=False,  # the index means nothing to a reader: the text box is the readout
            continuous_update=True,
            disabled=disabled,
            layout=W.Layout(width="50%", min_width="280px"),
        )
        slider.add_class("qs-threshold-slider")
        slider.observe(self._moved, "value")
        return slider

    @property
    def value(self) -> float:
        """The threshold the control holds, exactly."""
        value: float = self.values[self.slider.value]
        return value

    def index(self, value: float) -> int:
        """The slider position of ``value`` (ValueError when it is not one of ``values``)."""
        return self.values.index(float(value))

    @property
    def disabled(self) -> bool:
        return bool(self.slider.disabled)

    @disabled.setter
    def disabled(self, disabled: bool) -> None:
        self.slider.disabled = self.text.disabled = disabled

    def reset(self, values: Sequence[float], value: float) -> None:
        """Offer ``values`` (sorted, holding ``value``) and hold ``value``, in one message."""
        self.base = tuple(float(v) for v in values)
        self._show(self.base, float(value))

    def set(self, value: float) -> None:
        """Hold ``value`` exactly: one of the offered values, or added to them."""
        value = float(value)
        values = self.base
        if value not in values:
            values = tuple(sorted((*values, value)))
        self._show(values, value)

    def _show(self, values: tuple[float, ...], value: float) -> None:
        index = bisect.bisect_left(values, value)
        if index == len(values) or values[index] != value:
            raise ValueError(f"{exact_text(value)} is not among the slider's values")
        # A new list gets a new slider, created in the browser with its bounds and position
        # at once. Moving the old one's bounds and value (even in one message) let Chromium
        # clamp and echo a position, or deliver a late move of the old list, which then
        # named another threshold of the new one: a change nobody made (tests/browser).
        old = self.slider
        with self._quiet():
            self.values = values
            if values == self._shown:  # same list: a move of the position alone cannot clamp
                old.value = index
                self.text.value = exact_text(value)
                return
            self.slider = self._new_slider(len(values), index, disabled=bool(old.disabled))
            self.box.children = (self.slider, self.text)
            old.unobserve(self._moved, "value")
            old.close()
            self._shown = values
            self.text.value = exact_text(value)

    def _moved(self, _: object) -> None:
        if self._quiet:
            return
        with self._quiet():
            self.text.value = exact_text(self.value)
        self.on_change(self.value)

    def _typed(self, _: object) -> None:
        if self._quiet:
            return
        held = self.value
        try:
            value = parse_value(self.text.value)
            error = self.check(value)
        except ValueError as exc:
            error = str(exc)
        if error:
            with self._quiet():
                self.text.value = exact_text(held)
            self.on_error(error)
            return
        self.set(value)
        self.on_change(value)
