"""Frame kinds and the column checks shared by the ``df.quant`` accessor and its plots.

A kind (``FrameKind``) is a set of identifying columns and the loader that makes such a
frame. ``FRAME_KINDS`` is the registry the accessor detects a frame's kind from;
``require_columns`` raises ``MissingColumnsError`` (the error tree, ``_errors``) naming the
absent columns and the loader to use. It lives below both ``accessor`` and ``plots``, so
neither has to import the other to check a frame.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from quantscope._errors import MissingColumnsError
from quantscope.analytics.trades import TRADE_COLUMNS

__all__ = ["FRAME_KINDS", "FrameKind", "frame_kind", "require_columns"]


@dataclass(frozen=True)
class FrameKind:
    """A kind of frame: the columns that identify it and the loader that makes it."""

    name: str
    description: str
    columns: tuple[str, ...]
    loader: str


# Most specific first: a criterion frame also has every column of an evaluations frame.
FRAME_KINDS: dict[str, FrameKind] = {
    "trades": FrameKind("trades", "a trades frame", TRADE_COLUMNS, "qsc.load_trades()"),
    "criteria": FrameKind(
        "criteria",
        "a criterion frame",
        ("evaluation_id", "criterion", "value", "passed"),
        "qsc.load_eval_details()",
    ),
    "evaluations": FrameKind(
        "evaluations",
        "an evaluations frame",
        ("evaluation_id", "evaluation_type", "passed", "created_at"),
        "qsc.load_evaluations()",
    ),
    "signals": FrameKind("signals", "a signals frame", ("stage", "chain"), "qsc.load_signals()"),
}


def frame_kind(frame: pd.DataFrame) -> str | None:
    """The name of the first kind in ``FRAME_KINDS`` whose columns ``frame`` has, else None."""
    present = set(frame.columns)
    for kind in FRAME_KINDS.values():
        if present.issuperset(kind.columns):
            return kind.name
    return None


def require_columns(
    frame: pd.DataFrame,
    method: str,
    kinds: Sequence[str | FrameKind],
    columns: Sequence[str],
    what: str = "",
) -> None:
    """Raise MissingColumnsError unless ``frame`` has ``columns``; the message names the kinds
    (names of ``FRAME_KINDS``, or FrameKind objects for frames the accessor does not detect).
    """
    present = set(frame.columns)
    missing = [c for c in dict.fromkeys(columns) if c not in present]
    if not missing:
        return
    wanted = [FRAME_KINDS[k] if isinstance(k, str) else k for k in kinds]
    needs = " or ".join(k.description for k in wanted)
    loaders = " or ".join(k.loader for k in wanted)
    raise MissingColumnsError(
        f"{method}() needs {needs}{what}: missing columns {', '.join(missing)}; "
        f"load one with {loaders}",
        method=method,
        missing=missing,
    )
