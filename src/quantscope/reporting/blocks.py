"""What a report section is made of: text, notes, tables and figures, as plain values.

A section's builder returns a list of blocks; ``html`` renders them. Blocks hold what is
shown, already formatted: a ``Table`` holds text cells, a ``Figure`` PNG bytes. Nothing here
computes a metric or draws.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import pandas as pd

NoteKind = Literal["info", "warn", "question", "hypothetical"]


@dataclass(frozen=True)
class Text:
    """A paragraph of plain text (escaped when rendered)."""

    text: str


@dataclass(frozen=True)
class Note:
    """A highlighted paragraph: ``warn`` (a caveat), ``question`` (which of the two questions
    of threshold research a figure answers), ``hypothetical`` (trades never executed),
    ``info``.
    """

    text: str
    kind: NoteKind = "info"


@dataclass(frozen=True)
class Heading:
    """A sub-heading inside a section."""

    text: str


@dataclass(frozen=True)
class Table:
    """A table of text cells (``frame`` holds strings), its caption and its footnote.

    ``key`` names it in the HTML (``data-table="<section>.<key>"``) so tests and readers can
    find a table by name.
    """

    key: str
    caption: str
    frame: pd.DataFrame
    footnote: str = ""
    index: bool = True


@dataclass(frozen=True)
class Figure:
    """A figure as PNG bytes, with its alternative text (the figure's title) and caption."""

    key: str
    png: bytes
    alt: str
    caption: str = ""


@dataclass(frozen=True)
class Definitions:
    """A definition list: (term, definition) pairs."""

    items: tuple[tuple[str, str], ...] = field(default_factory=tuple)


Block = Text | Note | Heading | Table | Figure | Definitions
