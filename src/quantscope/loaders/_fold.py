"""Paged loads folded as they arrive: pages' items turned into typed columns a batch at a time.

``Recipe.folder`` gives ``Client.get_pages(fold=)`` a ``PageFolder``: each page's body is kept
without its items list (its other keys stay: the total, a summary), and the items of pages
that arrived one after another are converted together (``Columns.of``) once they reach
``FOLD_ROWS`` rows. Converting page by page cost each column's fixed overhead 49 times for a
49-page load (more than the conversion of the values; benchmarks/README.md, loadpath);
converting all pages at the end held every page's decoded items at once (1.5 kB an
evaluation: 3x a frame).

Each page of a batch holds ``PageRows``: the batch's columns and the page's row range in them.
Pages may arrive out of their order (the cached ones first), so ``joined`` puts the ranges
back in page order, using a batch whole when its pages are consecutive (the usual case) and
slices of it otherwise. The pages of the last, unfilled batch keep their items list (the
load's end is not known to the folder): ``joined`` converts them with the rest. A batch's
count of unparseable values is kept by its first rows (exact when all its pages are used).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from quantscope._typed.frames import Columns, FrameSpec, Item

__all__ = ["FOLD_ROWS", "PageFolder", "PageRows", "joined"]

FOLD_ROWS = 16_384  # ~25 MB of decoded evaluations (1.5 kB each) waiting at most


class PageRows:
    """One folded page's items: rows ``start:stop`` of the batch ``columns``."""

    __slots__ = ("columns", "start", "stop")

    def __init__(self, columns: Columns, start: int, stop: int) -> None:
        self.columns, self.start, self.stop = columns, start, stop

    def __len__(self) -> int:
        return self.stop - self.start


class PageFolder:
    """The fold of one paged load (``Client.get_pages(fold=)``): stateful, one per load."""

    def __init__(self, key: str, spec: FrameSpec, rows: int | None = None) -> None:
        self.key, self.spec = key, spec
        self.rows = FOLD_ROWS if rows is None else rows
        self._waiting: list[dict[str, Any]] = []  # kept bodies whose items are not converted
        self._count = 0

    def __call__(self, body: Any) -> Any:
        items = body.get(self.key)
        if not all(issubclass(kind, (Item, Mapping)) for kind in set(map(type, items))):
            self.flush()  # a page kept as it came (for the checks): the batch ends before it
            return body
        kept = {k: v for k, v in body.items() if k != self.key}
        kept[self.key] = items
        self._waiting.append(kept)
        self._count += len(items)
        if self._count >= self.rows:
            self.flush()
        return kept

    def flush(self) -> None:
        """The waiting pages' items converted as one batch, each page given its rows."""
        if not self._waiting:
            return
        waiting, key = self._waiting, self.key
        self._waiting, self._count = [], 0
        rows: list[Any] = []
        for kept in waiting:
            rows.extend(kept[key])
        columns = Columns.of(rows, self.spec)
        del rows
        start = 0
        for kept in waiting:
            stop = start + len(kept[key])
            kept[key] = PageRows(columns, start, stop)
            start = stop


def joined(
    bodies: Sequence[Any],
    key: str,
    spec: FrameSpec,
    convert: Callable[[list[Any]], Columns],
    items_of: Callable[[Any], list[Any]],
) -> Columns:
    """The columns of ``bodies`` (a paged load's, in page order): folded pages' rows, and the
    items of pages that hold a list (``convert`` checks and converts a run of them).
    """
    parts: list[Columns] = []
    run: list[Any] = []  # items of consecutive pages holding a list
    span: list[Any] | None = None  # [columns, start, stop] of consecutive folded rows

    def close_span() -> None:
        nonlocal span
        if span is not None:
            parts.append(_rows(*span))
            span = None

    for body in bodies:
        held = body.get(key) if isinstance(body, Mapping) else None
        if not isinstance(held, PageRows):
            close_span()
            run.extend(items_of(body))
            continue
        if run:
            parts.append(convert(run))
            run = []
        if span is not None and span[0] is held.columns and span[2] == held.start:
            span[2] = held.stop
            continue
        close_span()
        span = [held.columns, held.start, held.stop]
    close_span()
    if run:
        parts.append(convert(run))
    return Columns.join(parts, spec)


def _rows(columns: Columns, start: int, stop: int) -> Columns:
    if start == 0 and stop == columns.length:
        return columns
    return columns.rows(start, stop)
