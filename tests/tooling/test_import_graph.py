"""The import graph of ``src/quantscope``: no circles, and the sandbox never imports the toolkit.

Every import counts: module level or lazy (inside a function), absolute or relative, and
``importlib.import_module("...")`` / ``__import__("...")`` with a literal name. An import of a
name resolves to the deepest module of the package it names (``from quantscope.plots import
_frontend`` is an edge to ``quantscope.plots._frontend``; ``from quantscope._kinds import X`` to
``quantscope._kinds``). A module naming one of its own ancestor packages (``from quantscope
import __version__`` inside ``quantscope.cli``) is no knot and no edge.
"""

from __future__ import annotations

import ast
from pathlib import Path

import quantscope

SRC = Path(quantscope.__file__).parents[1]
PACKAGE = "quantscope"
SANDBOX = "quantscope.sandbox"

Graph = dict[str, set[str]]


def modules_of(src: Path, package: str) -> dict[str, Path]:
    """Every module of ``package`` under ``src`` by dotted name (a package by its own name)."""
    found = {}
    for path in sorted((src / package).rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imported_names(module: str, path: Path) -> list[str]:
    """The dotted names one module imports, anywhere in it, relative ones made absolute."""
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                here = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
                here = here[: len(here) - node.level + 1]
                base = ".".join([*here, base] if base else here)
            names += [base, *(f"{base}.{a.name}" for a in node.names)]
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", ""))
            in ("import_module", "__import__")
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            names.append(str(node.args[0].value))  # an import by string is still an import
    return names


def import_graph(src: Path, package: str) -> Graph:
    """Each module of ``package`` -> the modules of ``package`` it imports."""
    modules = modules_of(src, package)

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: Graph = {}
    for module, path in modules.items():
        targets = {resolve(name) for name in imported_names(module, path)}
        graph[module] = {
            t for t in targets if t is not None and t != module and not module.startswith(t + ".")
        }
    return graph


def circles(graph: Graph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def test_no_import_circle_in_quantscope() -> None:
    found = circles(import_graph(SRC, PACKAGE))
    assert not found, "\n".join(" -> ".join(c) for c in found)


def test_the_sandbox_never_imports_the_toolkit() -> None:
    graph = import_graph(SRC, PACKAGE)
    crossing = {
        module: sorted(t for t in targets if t != SANDBOX and not t.startswith(SANDBOX + "."))
        for module, targets in graph.items()
        if module == SANDBOX or module.startswith(SANDBOX + ".")
    }
    assert not {m: t for m, t in crossing.items() if t}, crossing


def _package(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / "pkg" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_the_graph_sees_lazy_relative_and_by_name_imports(tmp_path: Path) -> None:
    src = _package(
        tmp_path,
        {
            "__init__.py": "from pkg.a import A\n__version__ = '1'\n",
            "a.py": "from . import b\nA = 1\n",
            "b.py": "def later():\n    from .sub import c\n",
            "sub/__init__.py": "",
            "sub/c.py": "import importlib\nimportlib.import_module('pkg.d')\n",
            "d.py": "def f():\n    return __import__('pkg.a')\n",
            "e.py": "from pkg import __version__\nimport os\nfrom pkg.sub.c import thing\n",
        },
    )
    graph = import_graph(src, "pkg")
    assert graph == {
        "pkg": {"pkg.a"},
        "pkg.a": {"pkg.b"},
        "pkg.b": {"pkg.sub", "pkg.sub.c"},  # importing pkg.sub.c runs pkg/sub/__init__.py
        "pkg.sub": set(),
        "pkg.sub.c": {"pkg.d"},
        "pkg.d": {"pkg.a"},
        "pkg.e": {"pkg.sub.c"},  # its own package and the standard library are no edges
    }
    assert circles(graph) == [["pkg.a", "pkg.b", "pkg.d", "pkg.sub.c"]]


def test_a_module_naming_its_own_package_is_no_circle(tmp_path: Path) -> None:
    src = _package(
        tmp_path,
        {"__init__.py": "from pkg.a import A\n", "a.py": "from pkg import __name__ as N\nA = 1\n"},
    )
    graph = import_graph(src, "pkg")
    assert graph == {"pkg": {"pkg.a"}, "pkg.a": set()}
    assert circles(graph) == []


#: The toolkit's floors, from the ground up (docs/architecture.md draws the same table). A
#: module belongs to the floor of the longest name listed that it is or lies under (the root
#: package, ``quantscope``, holds only its ``__init__.py``); it may
#: import its own floor and the floors below, never one above. A new module or package is
#: placed here, or this test fails.
FLOORS: tuple[tuple[str, frozenset[str]], ...] = (
    (
        "ground",
        frozenset(
            {
                "quantscope._advice",
                "quantscope._changes",
                "quantscope._config",
                "quantscope._endpoints",
                "quantscope._errors",
                "quantscope._ids",
                "quantscope._plans",
                "quantscope._progress",
                "quantscope._reprs",
                "quantscope._routes",
                "quantscope._secret",
                "quantscope._versions",
                "quantscope._wire",
            }
        ),
    ),
    ("frames", frozenset({"quantscope._typed", "quantscope._kinds", "quantscope.analytics"})),
    ("http", frozenset({"quantscope._http"})),
    ("loading", frozenset({"quantscope.loaders", "quantscope.audit"})),
    ("catalog", frozenset({"quantscope.catalog"})),  # its sync runs the loaders
    ("research", frozenset({"quantscope.backtest", "quantscope.catalog.distributed"})),
    (
        "faces",
        frozenset(
            {
                "quantscope.accessor",
                "quantscope.plots",
                "quantscope.reporting",
                "quantscope.testing",
                "quantscope.tour",
                "quantscope.widgets",
            }
        ),
    ),
    ("command line", frozenset({"quantscope.cli"})),
    ("package", frozenset({"quantscope", "quantscope.__main__"})),
)


def floor_of(module: str, floors: tuple[tuple[str, frozenset[str]], ...] = FLOORS) -> int | None:
    """The index of the floor ``module`` stands on (the longest listed name it lies under)."""
    best: tuple[int, int] | None = None  # (length of the name matched, floor)
    for number, (_, names) in enumerate(floors):
        for name in names:
            under = module.startswith(name + ".") and "." in name  # the root holds only itself
            if (module == name or under) and (best is None or len(name) > best[0]):
                best = (len(name), number)
    return None if best is None else best[1]


def upward_imports(
    graph: Graph, floors: tuple[tuple[str, frozenset[str]], ...] = FLOORS
) -> list[str]:
    """Each import of a module from a floor above its own, as ``a (floor) -> b (floor)``."""
    found = []
    for module, targets in sorted(graph.items()):
        here = floor_of(module, floors)
        for target in sorted(targets):
            there = floor_of(target, floors)
            if here is not None and there is not None and there > here:
                found.append(f"{module} ({floors[here][0]}) -> {target} ({floors[there][0]})")
    return found


def _toolkit(graph: Graph) -> Graph:
    """The toolkit's part of the graph: the sandbox, a half of its own, stands on no floor."""

    def inside(m: str) -> bool:
        return m != SANDBOX and not m.startswith(SANDBOX + ".")

    return {m: {t for t in targets if inside(t)} for m, targets in graph.items() if inside(m)}


def test_every_toolkit_module_stands_on_a_floor() -> None:
    unplaced = [m for m in _toolkit(import_graph(SRC, PACKAGE)) if floor_of(m) is None]
    assert unplaced == []


def test_no_toolkit_module_imports_a_floor_above_its_own() -> None:
    assert upward_imports(_toolkit(import_graph(SRC, PACKAGE))) == []


def test_an_import_from_a_higher_floor_is_found(tmp_path: Path) -> None:
    src = _package(
        tmp_path,
        {
            "__init__.py": "",
            "low/__init__.py": "",
            "low/a.py": "def f():\n    from pkg.high import b\n",  # lazy: still an arrow
            "high/__init__.py": "",
            "high/b.py": "from pkg.low import a\n",
            "high/c.py": "from pkg.low.a import f\n",
        },
    )
    floors = (("low", frozenset({"pkg.low"})), ("high", frozenset({"pkg.high", "pkg"})))
    assert upward_imports(import_graph(src, "pkg"), floors) == [
        "pkg.low.a (low) -> pkg.high (high)",  # importing pkg.high.b runs its __init__.py
        "pkg.low.a (low) -> pkg.high.b (high)",
    ]
