"""Pricing is ``plan.cost``: no module of the toolkit defines or raises ``Priced``, none keeps a
pricing mode in a context variable (issue 23: no exception as control flow, no ContextVar)."""

from __future__ import annotations

import ast
from pathlib import Path

import quantscope

SRC = Path(quantscope.__file__).parent
GONE = {"Priced", "Pricing", "pricing"}


#: The modules a load's pricing goes through: no mode may hide in them.
PRICING_PATH = (
    "_http/estimate.py",
    "_http/plan.py",
    "_http/client.py",
    "_http/prices.py",
    "loaders/_base.py",
    "loaders/_planned.py",
)


def _uses(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ClassDef | ast.FunctionDef) and node.name in GONE:
            found.append(f"defines {node.name}")
        elif isinstance(node, ast.Name) and node.id in GONE:
            found.append(f"uses {node.id}")
        elif isinstance(node, ast.alias) and node.name.rpartition(".")[2] in GONE:
            found.append(f"imports {node.name}")
    return found


def test_no_module_defines_or_raises_priced() -> None:
    toolkit = [p for p in sorted(SRC.rglob("*.py")) if "sandbox" not in p.relative_to(SRC).parts]
    found = {p.relative_to(SRC).as_posix(): u for p in toolkit if (u := _uses(p))}
    assert found == {}


def test_pricing_keeps_no_mode_in_a_context_variable() -> None:
    for name in PRICING_PATH:
        text = (SRC / name).read_text(encoding="utf-8")
        assert "ContextVar" not in text, name
        assert "contextvars" not in text, name
