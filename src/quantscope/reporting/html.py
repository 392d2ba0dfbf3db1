"""Rendering a report's sections into one self-contained HTML page.

Everything the page shows is inside it: the style sheet inline, figures as PNG data URIs, no
script, no font, no link to anything outside. Every table sits in a ``div.scroll`` box that
scrolls sideways when the table is wider than the page's column, so nothing is clipped. Every
text is escaped. Identifiers are the sections' and tables' keys, never random; the only date is
the data's own. So the same sections give the same bytes.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence

from quantscope.reporting.blocks import Block, Definitions, Figure, Heading, Note, Table, Text

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 75em; color: #222;
       line-height: 1.4; padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { border-bottom: 2px solid #1f4e79; padding-bottom: 0.2em; margin-top: 2em; }
h3 { margin-bottom: 0.3em; }
nav ol { columns: 2; }
div.scroll { overflow-x: auto; max-width: 100%; margin: 0.5em 0 1em; }
table { border-collapse: collapse; font-size: 0.9em; }
caption { text-align: left; font-weight: bold; padding: 0.3em 0; }
th, td { border-bottom: 1px solid #ddd; padding: 0.25em 0.6em; text-align: right;
         vertical-align: top; }
th { background: #f3f5f8; }
td.text, th[scope=row] { text-align: left; }
p.footnote { font-size: 0.85em; color: #555; margin-top: -0.6em; }
p.note { padding: 0.5em 0.8em; border-left: 4px solid #1f4e79; background: #f3f5f8; }
p.note.warn { border-color: #8a5300; background: #fff6e5; }
p.note.question { border-color: #b71c1c; background: #fdecea; }
p.note.hypothetical { border-color: #6a1b9a; background: #f5ecf8; }
figure { margin: 1em 0; }
figure img { max-width: 100%; height: auto; }
figcaption { font-size: 0.9em; color: #444; }
dl dt { font-family: monospace; font-weight: bold; }
dl dd { margin: 0 0 0.4em 1.5em; }
footer { margin-top: 3em; font-size: 0.85em; color: #555; }
"""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _table(section: str, table: Table) -> str:
    frame = table.frame
    head = "".join(f'<th scope="col">{_e(c)}</th>' for c in frame.columns)
    if table.index:
        head = f'<th scope="col">{_e(frame.index.name or "")}</th>' + head
    rows = []
    for label, values in zip(frame.index, frame.itertuples(index=False), strict=True):
        cells = "".join(
            f'<td class="{"text" if _is_text(v) else "num"}">{_e(v)}</td>' for v in values
        )
        if table.index:
            cells = f'<th scope="row">{_e(label)}</th>' + cells
        rows.append(f"<tr>{cells}</tr>")
    # A table wider than the column scrolls inside its own box; the table stays a table.
    out = (
        f'<div class="scroll"><table data-table="{_e(section)}.{_e(table.key)}">'
        f"<caption>{_e(table.caption)}</caption>"
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )
    if table.footnote:
        out += f'<p class="footnote">{_e(table.footnote)}</p>'
    return out


def _is_text(value: object) -> bool:
    """Left-align cells that are words, right-align numbers."""
    text = str(value).lstrip("+-$[")
    return not (text[:1].isdigit() or text in ("", "n/a", "yes"))


def _figure(section: str, figure: Figure) -> str:
    data = base64.b64encode(figure.png).decode("ascii")
    caption = f"<figcaption>{_e(figure.caption)}</figcaption>" if figure.caption else ""
    return (
        f'<figure data-figure="{_e(section)}.{_e(figure.key)}">'
        f'<img alt="{_e(figure.alt)}" src="data:image/png;base64,{data}">{caption}</figure>'
    )


def block_html(section: str, block: Block) -> str:
    """One block as HTML (``section``: the key its tables and figures are named under)."""
    if isinstance(block, Text):
        return f"<p>{_e(block.text)}</p>"
    if isinstance(block, Note):
        return f'<p class="note {block.kind}">{_e(block.text)}</p>'
    if isinstance(block, Heading):
        return f"<h3>{_e(block.text)}</h3>"
    if isinstance(block, Table):
        return _table(section, block)
    if isinstance(block, Figure):
        return _figure(section, block)
    if isinstance(block, Definitions):
        items = "".join(f"<dt>{_e(t)}</dt><dd>{_e(d)}</dd>" for t, d in block.items)
        return f"<dl>{items}</dl>"
    raise TypeError(f"not a report block: {block!r}")


def page(
    title: str,
    subtitle: str,
    sections: Sequence[tuple[str, str, Sequence[Block]]],
    footer: str,
) -> str:
    """The whole page: ``sections`` are (key, title, blocks), rendered in order."""
    nav = "".join(f'<li><a href="#{_e(k)}">{_e(t)}</a></li>' for k, t, _ in sections)
    body = "".join(
        f'<section id="{_e(k)}"><h2>{_e(t)}</h2>'
        + "\n".join(block_html(k, b) for b in blocks)
        + "</section>\n"
        for k, t, blocks in sections
    )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        # Nothing outside this file may be fetched: no network, no script.
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "img-src data:; style-src 'unsafe-inline'\">"
        f"<title>{_e(title)}</title><style>{_STYLE}</style></head>\n<body>"
        f"<header><h1>{_e(title)}</h1><p>{_e(subtitle)}</p></header>"
        f"<nav><ol>{nav}</ol></nav>\n{body}<footer>{_e(footer)}</footer></body></html>\n"
    )
