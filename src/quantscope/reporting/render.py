"""A report from its data: every section built, rendered into one page, written to a file.

``write(data, path)`` builds each section of ``sections.SECTIONS`` (in order) under the
report style and writes the page (``html.page``) as UTF-8. The page is dated by the data
(``ReportData.as_of``) unless ``generated_at`` is given: never by the wall clock.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from quantscope._versions import QUANTSCOPE_VERSION
from quantscope.reporting import cells as C
from quantscope.reporting.build import ReportData
from quantscope.reporting.html import page
from quantscope.reporting.sections import SECTIONS
from quantscope.reporting.stages import SILENT, Stages

#: The stages of rendering and writing a page: one per section, and the writing.
STAGES = len(SECTIONS) + 1


def render(
    data: ReportData, *, generated_at: datetime | None = None, stages: Stages = SILENT
) -> str:
    """The report's HTML page; ``stages`` counts each section as it is built (``STAGES``
    of them: the sections and the writing).
    """
    built = []
    for s in SECTIONS:
        stages.step(s.key)
        built.append((s.key, s.title, s.blocks(data)))
    quant = f" (quant {data.quant_id})" if data.quant_id is not None else ""
    dated = f"; written {C.when(generated_at)}" if generated_at is not None else ""
    subtitle = (
        f"Data as of {C.when(data.as_of)}{dated}. Executed trades unless a section says "
        "otherwise; research answers name their question (effect: the whole pass rule "
        "replayed; signal: kept versus dropped trades)."
    )
    footer = (
        f"Written by quantscope {QUANTSCOPE_VERSION}. Self-contained: figures are embedded, "
        "nothing is fetched. The same data gives the same file."
    )
    return page(f"quantscope report: {data.title}{quant}", subtitle, built, footer)


def check_path(path: str | Path) -> Path:
    """The report's path, checked before anything is loaded: it must end in .html/.htm."""
    target = Path(path)
    if target.suffix.lower() not in (".html", ".htm"):
        raise ValueError(f"a report is an HTML file: give a path ending in .html, got {path!s}")
    return target


def write(
    data: ReportData,
    path: str | Path,
    *,
    generated_at: datetime | None = None,
    stages: Stages = SILENT,
) -> Path:
    """Render the report and write it to ``path`` (parents created); returns the path."""
    target = check_path(path)
    page_text = render(data, generated_at=generated_at, stages=stages)
    stages.step("writing the page")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(page_text, encoding="utf-8")
    return target
