"""What the endpoint registry's encoding module exports, the toolkit uses.

``_endpoints`` adds functions of its own to the declarations it re-exports (``query``,
``body``, ...); each is imported or called by a toolkit module outside it, so none lives on
for a test alone (``from_wire`` did: the catalog answers with the plan's Python values).
"""

from __future__ import annotations

import ast
from pathlib import Path

import quantscope
from quantscope import _endpoints, _routes

PACKAGE = Path(quantscope.__file__).parent
MODULE = "quantscope._endpoints"


def _used(tree: ast.Module) -> set[str]:
    """The names of ``_endpoints`` a module imports, or reads off an alias of it."""
    names: set[str] = set()
    aliases: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == MODULE:
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module == "quantscope":
            aliases |= {a.asname or a.name for a in node.names if a.name == "_endpoints"}
    read = (node for node in ast.walk(tree) if isinstance(node, ast.Attribute))
    names |= {n.attr for n in read if isinstance(n.value, ast.Name) and n.value.id in aliases}
    return names


def test_every_function_of_the_encoding_is_used_by_the_toolkit() -> None:
    used: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        if "sandbox" not in path.relative_to(PACKAGE).parts and path.name != "_endpoints.py":
            used |= _used(ast.parse(path.read_text()))
    own = set(_endpoints.__all__) - set(_routes.__all__)
    assert own
    assert sorted(own - used) == []
