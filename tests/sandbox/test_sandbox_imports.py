"""The sandbox's import graph: no circle, the world build reached only from datadir, and each
router taking its bodies from the models module of its own group.

Every import counts: top-level, lazy ones inside functions, and ``importlib.import_module`` calls
with a literal name. An import names the deepest sandbox module it reaches (``from
quantscope.sandbox.sim import build`` names ``quantscope.sandbox.sim.build``); a module naming
its own ancestor package is no edge (a package re-exporting its modules is no knot).
"""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import pytest

import quantscope.sandbox

PACKAGE = "quantscope.sandbox"
ROOT = Path(quantscope.sandbox.__file__).parent


def _modules() -> dict[str, Path]:
    modules = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join([PACKAGE, *parts])] = path
    return modules


def _named(node: ast.AST, module: str, is_package: bool) -> list[str]:
    """The dotted names one AST node imports (relative imports resolved against ``module``)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            here = module.split(".") if is_package else module.split(".")[:-1]
            base = ".".join(here[: len(here) - node.level + 1] + ([base] if base else []))
        return [base] + [f"{base}.{a.name}" for a in node.names]
    if (
        isinstance(node, ast.Call)
        and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module"
        and node.args
        and isinstance(node.args[0], ast.Constant)
    ):
        return [str(node.args[0].value)]
    return []


def _graph() -> dict[str, set[str]]:
    """Sandbox module -> the sandbox modules it imports."""
    modules = _modules()

    def deepest(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {m: set() for m in modules}
    for module, path in modules.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text())):
            for name in _named(node, module, is_package):
                target = deepest(name)
                if target and target != module and not module.startswith(target + "."):
                    graph[module].add(target)
    return graph


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return _graph()


def test_the_graph_sees_plain_and_package_imports(graph: dict[str, set[str]]) -> None:
    # a guard against a walker that finds nothing and so finds no circle
    assert f"{PACKAGE}.optimizer" in graph[f"{PACKAGE}.sim.build"]
    assert f"{PACKAGE}.sim.build" in graph[f"{PACKAGE}.datadir"]
    assert f"{PACKAGE}.routers.trades" in graph[f"{PACKAGE}.routers"]


def test_no_import_circle_inside_the_sandbox(graph: dict[str, set[str]]) -> None:
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as exc:
        pytest.fail(f"import circle: {' -> '.join(exc.args[1])}")


def test_only_datadir_imports_the_world_build(graph: dict[str, set[str]]) -> None:
    importers = {m for m, targets in graph.items() if f"{PACKAGE}.sim.build" in targets}
    assert importers == {f"{PACKAGE}.datadir"}


def test_routers_take_bodies_from_their_own_group(graph: dict[str, set[str]]) -> None:
    routers = [m for m in graph if m.startswith(f"{PACKAGE}.routers.")]
    assert len(routers) == 6
    for router in routers:
        group = router.rpartition(".")[2]
        models = {m for m in graph[router] if m.startswith(f"{PACKAGE}.models")}
        assert models <= {f"{PACKAGE}.models.{group}", f"{PACKAGE}.models._common"}, router
        assert f"{PACKAGE}.models.{group}" in models, router
