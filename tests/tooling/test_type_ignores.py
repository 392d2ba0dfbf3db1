"""Every ``# type: ignore`` of ``src/`` names its error code and says why, on the same line.

mypy runs in strict mode (``warn_unused_ignores``), so an ignore that is no longer needed fails
mypy; this test keeps the ones that are needed readable: ``# type: ignore[code]  # reason``.
"""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

import quantscope

SRC = Path(quantscope.__file__).parent

IGNORE = re.compile(r"type:\s*ignore")
EXPLAINED = re.compile(r"#\s*type:\s*ignore\[[\w\-, ]+\]\s+#\s*\S")


def unexplained(text: str) -> list[tuple[int, str]]:
    """Comments of ``text`` with a ``type: ignore`` but no code or no reason: (line, text)."""
    return [
        (tok.start[0], tok.string)
        for tok in tokenize.generate_tokens(io.StringIO(text).readline)
        if tok.type == tokenize.COMMENT
        and IGNORE.search(tok.string)
        and not EXPLAINED.match(tok.string)
    ]


def test_the_check_tells_an_explained_ignore_from_a_bare_one() -> None:
    text = (
        "a = f()  # type: ignore[arg-type]  # the stub is wrong\n"
        "b = f()  # type: ignore[arg-type]\n"
        "c = f()  # type: ignore\n"
        "d = f()  # type: ignore  # a reason but no code\n"
        "e = f()  # type: ignore[misc, override]  # both: a mixin\n"
        "s = '# type: ignore in a string is no comment'\n"
    )
    assert [line for line, _ in unexplained(text)] == [2, 3, 4]


def test_every_type_ignore_in_src_has_a_reason() -> None:
    found = [
        f"{path.relative_to(SRC)}:{line}: {comment}"
        for path in sorted(SRC.rglob("*.py"))
        for line, comment in unexplained(path.read_text(encoding="utf-8"))
    ]
    assert found == [], "give each a reason: '# type: ignore[code]  # why'\n" + "\n".join(found)
