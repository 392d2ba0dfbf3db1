"""The loaders build no request from hand-written wire names: each request's parameters and
body come from the registry (``_endpoints.query``/``_endpoints.body``), so a wire name is
written once, in its route's declaration.

A dict whose keys are a route's camelCase wire names (``{"quantId": ...}``) or an assignment
to one (``body["quantId"] = ...``) in ``loaders/`` is a second copy of the registry.
"""

from __future__ import annotations

import ast
from pathlib import Path

from quantscope import _endpoints

LOADERS = Path(_endpoints.__file__).parent / "loaders"
WIRE = {p.wire for e in _endpoints.ROUTES for p in e.params if p.wire != p.name}


def _written(tree: ast.AST) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        keys: list[ast.expr | None] = []
        if isinstance(node, ast.Dict):
            keys = list(node.keys)
        elif isinstance(node, ast.Assign):
            keys = [t.slice for t in node.targets if isinstance(t, ast.Subscript)]
        for key in keys:
            if isinstance(key, ast.Constant) and key.value in WIRE:
                found.append((node.lineno, key.value))
    return found


def test_loaders_take_wire_names_from_the_registry() -> None:
    found = [
        f"loaders/{path.name}:{line}: {name}"
        for path in sorted(LOADERS.glob("*.py"))
        for line, name in _written(ast.parse(path.read_text()))
    ]
    assert found == []


PAGING_CLASSES = {"PageNumberPaging", "OffsetPaging"}


def _paging_built(tree: ast.AST) -> list[tuple[int, str]]:
    """Calls of a paging class itself (``OffsetPaging(...)``), not of its ``of`` (which reads
    the route's declared paging)."""
    return [
        (node.lineno, node.func.id)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in PAGING_CLASSES
    ]


def test_loaders_take_paging_from_the_registry() -> None:
    found = [
        f"loaders/{path.name}:{line}: {name}(...)"
        for path in sorted(LOADERS.glob("*.py"))
        for line, name in _paging_built(ast.parse(path.read_text()))
    ]
    assert found == []
