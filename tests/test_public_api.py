"""The public face: a complete, sorted __all__; the toolkit/sandbox boundary; docs in step."""

from __future__ import annotations

import ast
from pathlib import Path

import quantscope
from quantscope import _schemas

SRC = Path(quantscope.__file__).parent
ROOT = SRC.parents[1]

# The toolkit may reach the sandbox only through its launcher, and only from one door.
LAUNCHER_MODULES = {"quantscope.sandbox.datadir", "quantscope.sandbox.serve"}
LAUNCHER_USERS = {"_embedded.py"}


def test_all_is_sorted_and_complete() -> None:
    names = quantscope.__all__
    assert names == sorted(names)
    assert len(names) == len(set(names))
    for name in names:
        assert hasattr(quantscope, name), name
    public = {n for n in vars(quantscope) if not n.startswith("_") and n[0].isupper()}
    assert public <= set(names), public - set(names)


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
            assert path.name in LAUNCHER_USERS, f"{path.name} imports {sorted(modules)}"
            assert modules <= LAUNCHER_MODULES, f"{path.name} imports {sorted(modules)}"


def test_docs_frames_is_generated_from_the_schemas() -> None:
    assert (ROOT / "docs" / "frames.md").read_text() == _schemas.frames_markdown()
