"""The public face: a complete, sorted __all__; the toolkit/sandbox boundary; docs in step."""

from __future__ import annotations

import ast
import typing
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import quantscope
import quantscope._config
from quantscope import backtest, plots
from quantscope._typed import schemas as _schemas

SRC = Path(quantscope.__file__).parent
ROOT = SRC.parents[1]

# The toolkit may reach the sandbox only through its launcher, and only from one door.
LAUNCHER_MODULES = {"quantscope.sandbox.datadir", "quantscope.sandbox.serve"}
LAUNCHER_USERS = {"_http/embedded.py"}


def test_all_is_sorted_and_complete() -> None:
    names = quantscope.__all__
    assert names == sorted(names)
    assert len(names) == len(set(names))
    for name in names:
        assert hasattr(quantscope, name), name
    # Every public name bound in the package, whatever its case, except submodules (which
    # importing any of them binds on the package); a future import or a helper would show.
    public = {
        n
        for n, value in vars(quantscope).items()
        if not n.startswith("_") and not isinstance(value, ModuleType)
    }
    assert public <= set(names), public - set(names)


def _quantscope_classes(hint: Any) -> set[type]:
    """The quantscope classes a type hint names, however deeply nested (``X | None``...)."""
    found = {hint} if isinstance(hint, type) and hint.__module__.startswith("quantscope") else set()
    for arg in typing.get_args(hint):
        found |= _quantscope_classes(arg)
    return found


def _signatures(obj: Any) -> list[Any]:
    """``obj`` if callable, plus the public methods and properties of a class."""
    if not isinstance(obj, type):
        return [obj] if callable(obj) else []
    members = [obj.__init__]
    for name, member in vars(obj).items():
        if isinstance(member, property) and member.fget is not None:
            members.append(member.fget)
        elif not name.startswith("_") and callable(member):
            members.append(member)
    return members


def _named_classes(module: ModuleType, lazy: dict[str, type]) -> set[type]:
    """The quantscope classes named in the signatures of ``module.__all__``'s callables."""
    named: set[type] = set()
    for name in module.__all__:
        for function in _signatures(getattr(module, name)):
            for hint in typing.get_type_hints(function, localns=lazy).values():
                named |= _quantscope_classes(hint)
    return named


@pytest.mark.parametrize("module", [quantscope, backtest], ids=lambda m: m.__name__)
def test_every_class_in_a_public_signature_is_exported(module: ModuleType) -> None:
    # df.quant.plot's class lives in quantscope.plots, imported on first use so that
    # ``import quantscope`` does not import matplotlib: exported there.
    lazy = {"QuantPlots": plots.QuantPlots}
    named = _named_classes(module, lazy)
    exported = [getattr(m, n) for m in {quantscope, module} for n in m.__all__]
    exported += lazy.values()
    missing = {c.__name__ for c in named if c not in exported}
    assert not missing, missing


def test_the_value_objects_of_the_client_are_exported() -> None:
    named = _named_classes(quantscope, {"QuantPlots": plots.QuantPlots})
    for cls in (quantscope.RetryPolicy, quantscope.Quota, quantscope.CacheInfo):
        assert cls in named, cls
    for cls in (quantscope.Provenance, quantscope.Fetched, quantscope.FetchedPages):
        assert cls in named, cls
    assert quantscope.Settings is type(quantscope._config.resolve_settings(env={}))
    assert quantscope.ExitRule is backtest.ExitRule


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", "") == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            found.add(str(node.args[0].value))
    return found


def test_sandbox_never_imports_the_toolkit() -> None:
    for path in (SRC / "sandbox").rglob("*.py"):
        toolkit = {
            m
            for m in _imports(path)
            if m.startswith("quantscope")
            and not m.startswith("quantscope.sandbox")
            and m != "quantscope"
        }
        assert not toolkit, f"{path.relative_to(SRC)} imports {sorted(toolkit)}"
        assert "quantscope" not in {m for m in _imports(path) if m == "quantscope"}, path


def test_toolkit_reaches_the_sandbox_only_through_the_launcher() -> None:
    for path in SRC.rglob("*.py"):
        if "sandbox" in path.relative_to(SRC).parts:
            continue
        used = {m for m in _imports(path) if m.startswith("quantscope.sandbox")}
        # "from quantscope.sandbox.serve import X" also records "quantscope.sandbox.serve.X"
        modules = {m for m in used if m.count(".") == 2}
        if modules:
            where = path.relative_to(SRC).as_posix()
            assert where in LAUNCHER_USERS, f"{where} imports {sorted(modules)}"
            assert modules <= LAUNCHER_MODULES, f"{where} imports {sorted(modules)}"


def test_docs_frames_is_generated_from_the_schemas() -> None:
    assert (ROOT / "docs" / "frames.md").read_text() == _schemas.frames_markdown()
