"""Id arguments: the one place that decides what counts as an id, for every loader.

An id is a whole number given as a Python ``int``, a NumPy integer, an integral float (a pandas
column of ids that went through a NaN) or a string of digits (``"48799"``). Anything else (a
float with a fraction, NaN, a bool, any other string, ``None`` where an id is required) raises
a ``TypeError`` that names the argument, before any request is sent. ``many_ids`` takes one id
or one iterable of ids; a string is always ONE id, never iterated character by character.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from typing import Any

import numpy as np

__all__ = ["IdArg", "many_ids", "one_id", "optional_id"]

IdArg = int | str | np.integer[Any]


def _refuse(name: str, value: Any) -> TypeError:
    return TypeError(
        f"{name} must be an id (an int, a numpy integer or a string of digits), "
        f"got {type(value).__name__} {value!r:.60}"
    )


def one_id(value: Any, name: str) -> int:
    """``value`` as an int id, or a TypeError naming ``name``."""
    if isinstance(value, bool | np.bool_):
        raise _refuse(name, value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        number = float(value)
        if math.isfinite(number) and number.is_integer():
            return int(number)
        raise _refuse(name, value)
    if isinstance(value, str | np.str_):
        text = str(value).strip()
        if text.lstrip("+-").isdigit() and text.isascii():
            return int(text)
    raise _refuse(name, value)


def optional_id(value: Any, name: str) -> int | None:
    """``one_id``, with None meaning "not given" (all quants, no filter)."""
    return None if value is None else one_id(value, name)


def many_ids(value: Any, name: str) -> list[int]:
    """One id (a list of one) or every id of one iterable, in order; a string is one id."""
    if isinstance(value, str | bytes | np.str_) or not isinstance(value, Iterable):
        return [one_id(value, name)]
    return [one_id(v, f"{name}[{i}]") for i, v in enumerate(value)]
