"""Timings live in benchmarks/, not in the source: no comment or docstring of ``src/`` states one.

A figure such as "~11 us a parameter", "0.3 s of CPU" or "3x faster" is true of one machine on
one day and goes stale silently; the source says what holds anywhere (the complexity, what is
avoided) and points at the measurement (benchmarks/README.md, its section). Durations that are
settings or examples of a format, not measurements, are listed in ``ALLOWED`` with why.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import quantscope

SRC = Path(quantscope.__file__).parent

TIMING = re.compile(
    r"(?<![\w.])(?:~|about |around )?\d[\d,.]*(?:e\d+)?(?:-\d[\d,.]*)? ?"
    r"(?:ns|us|µs|ms|s|sec|secs|seconds?|min|minutes?)(?![\w])"
    r"|\d[\d.]*\s?(?:x|×|times) (?:faster|slower|quicker|as fast|as slow|as much)",
    re.IGNORECASE,
)

#: text that looks like a timing but is none: (module, the matched text) -> why
ALLOWED: dict[tuple[str, str], str] = {
    ("_errors.py", "3 min"): "an example of the reset-time format ('in 5 h 3 min')",
    ("_reprs.py", "5 min"): "an example of the text reprs' format ('in 3 h 5 min')",
    ("_http/quota.py", "1e300 s"): "an out-of-range reset value the parser refuses",
    ("sandbox/evaldetail.py", "2 s"): "the simulated world's delay, a setting of the sandbox",
    ("sandbox/evaldetail.py", "3-12 s"): "the simulated AI step's latency, a setting",
}


def prose(path: Path) -> list[tuple[int, str]]:
    """Each comment and docstring of a module, with its first line."""
    text = path.read_text(encoding="utf-8")
    found = [
        (tok.start[0], tok.string)
        for tok in tokenize.generate_tokens(io.StringIO(text).readline)
        if tok.type == tokenize.COMMENT
    ]
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            doc = ast.get_docstring(node, clean=False)
            if doc is not None and node.body:
                found.append((node.body[0].lineno, doc))
        elif (  # an attribute's docstring: a bare string right after an assignment
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            found.append((node.lineno, node.value.value))
    return found


def timings(src: Path) -> list[str]:
    """Every timing figure in the comments and docstrings under ``src``, as ``file:line: text``."""
    hits = []
    for path in sorted(src.rglob("*.py")):
        name = str(path.relative_to(src))
        for line, text in prose(path):
            for match in TIMING.finditer(text):
                figure = match.group(0).strip()
                if (name, figure.lstrip("~")) in ALLOWED:
                    continue
                hits.append(f"{name}:{line}: {figure}")
    return sorted(set(hits))


def test_no_timing_figures_in_comments_or_docstrings() -> None:
    assert timings(SRC) == []


def test_the_detector_finds_each_kind_of_figure(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(
        '"""Fast: ~11 us a parameter, 0.3 s of CPU."""\n'
        "X = 1  # 3x faster than pandas, about 40 ms a page\n"
        "def f() -> None:\n"
        '    """Takes 15-30 s; 1.4× slower."""\n'
        "Y = 2\n"
        '"""Costs 2 seconds."""\n'
        "Z = 'not prose: 5 ms'\n"
    )
    assert {hit.split(": ", 1)[1] for hit in timings(tmp_path)} == {
        "0.3 s",
        "1.4× slower",
        "15-30 s",
        "2 seconds",
        "3x faster",
        "about 40 ms",
        "~11 us",
    }
