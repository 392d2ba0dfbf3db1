"""No private internal of a dependency is used unless it is listed here, with the version range
it was verified on and a test that forces the public way (docs/architecture.md, "Private
internals").

A small AST walk over ``src/quantscope`` finds:

* imports of a third-party module's private module or name (``pandas._libs``, ``_is_json_field``)
  or of a module known to be internal although its name is not (``INTERNAL_MODULES``);
* attributes starting with ``_`` read through a name imported from a third-party module
  (``DatetimeArray._simple_new``);
* attributes starting with ``_`` read, written or named in ``getattr``/``setattr``/``hasattr`` on
  anything but ``self``/``cls`` that the same file never defines (``response._content``,
  ``self.responses._lock``): another object's private attribute;
* in a class with a third-party base, a private method it overrides or calls on ``super()``
  (``SQLiteDict._write``), or an inherited private attribute it reads through ``self``.

Dunder names and the documented underscore API of ``namedtuple`` (``_replace``...) are public.
"""

from __future__ import annotations

import ast
import importlib
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
STDLIB = set(sys.stdlib_module_names) | {"__future__"}
NAMEDTUPLE_API = {"_replace", "_make", "_fields", "_asdict", "_field_defaults"}
#: internal modules whose names do not start with ``_``
INTERNAL_MODULES = ("pandas.core", "uvicorn.protocols", "fastapi.dependencies")


@dataclass(frozen=True)
class Allowed:
    """Why a private use stays, how it is bounded, and the test that forces the public way.

    ``gate``: the version range (in pyproject.toml and/or in code) outside which it is not
    used; ``fallback``: ``tests/...py::test_name``, or None for a use that is not a dependency's
    private internal (``kind`` says what it is then)."""

    why: str
    gate: str
    fallback: str | None
    kind: str = "private"


FASTSOLVE = Allowed(
    "route arguments solved once per route, not per request (sandbox throughput)",
    "fastsolve.VERIFIED_FASTAPI 0.110-0.165; pyproject fastapi<0.166",
    "tests/sandbox/test_fast_paths.py::test_no_plan_on_an_unverified_fastapi",
)
HTTPGUARD = Allowed(
    "read deadlines and a connection cap below ASGI (no public hook at the connection level)",
    "httpguard.VERIFIED_UVICORN 0.29-0.54; pyproject uvicorn<0.55",
    "tests/sandbox/test_sandbox_limits.py::test_the_fallback_still_serves_and_limits_bodies",
)


def _pandas(why: str, test: str) -> Allowed:
    """A pandas internal: gated in code, pandas itself not capped."""
    return Allowed(
        why,
        "_versions.VERIFIED_PANDAS 2.2-3.1 (pandas itself not capped)",
        f"tests/toolkit/test_private_fallbacks.py::{test}",
    )


BLOCKS = _pandas(
    "read-only columns from pyarrow copied block by block (_mgr.blocks, _ndarray), not deep",
    "test_a_read_only_stream_reads_back_the_same_without_the_block_list",
)
MARKER = Allowed("the sandbox's own marker on its endpoint functions", "own", None, kind="own")

#: (file under src/, the use as the scan prints it) -> why it is allowed
ALLOWED: dict[tuple[str, str], Allowed] = {
    ("quantscope/_typed/frames.py", "import pandas._libs.lib.dicts_to_array"): _pandas(
        "pandas' Cython record extraction, ~4x the pure-Python loop",
        "test_records_give_the_same_frame_without_dicts_to_array",
    ),
    ("quantscope/_typed/arrowframe.py", "DatetimeArray._simple_new"): _pandas(
        "zoned datetimes as a view of the frame cache's buffer, no copy",
        "test_zoned_datetimes_read_back_the_same_without_simple_new",
    ),
    ("quantscope/_typed/arrowframe.py", "frame._mgr"): BLOCKS,
    ("quantscope/_typed/arrowframe.py", "values._ndarray"): BLOCKS,
    ("quantscope/_typed/frames.py", "type(head)._concat_same_type"): Allowed(
        "part of pandas' documented ExtensionArray interface (pandas.api.extensions)",
        "public",
        None,
        kind="documented",
    ),
    ("quantscope/sandbox/deps.py", "call._orjson_wrapped"): MARKER,
    ("quantscope/sandbox/deps.py", "endpoint._inline_first"): MARKER,
    ("quantscope/sandbox/deps.py", "endpoint._orjson_wrapped"): MARKER,
    ("quantscope/sandbox/deps.py", "wrapper._orjson_wrapped"): MARKER,
    ("quantscope/cli/cache.py", "cache._session"): Allowed(
        "quantscope's own ResponseCache._session", "own", None, kind="own"
    ),
    (
        "quantscope/sandbox/fastsolve.py",
        "import fastapi.dependencies.utils._get_param_model",
    ): FASTSOLVE,
    (
        "quantscope/sandbox/fastsolve.py",
        "import fastapi.dependencies.utils._is_json_field",
    ): FASTSOLVE,
    ("quantscope/sandbox/fastsolve.py", "import fastapi._compat.field_annotation_is_sequence"): (
        FASTSOLVE
    ),
    (
        "quantscope/sandbox/fastsolve.py",
        "import fastapi.dependencies.utils.get_validation_alias",
    ): FASTSOLVE,
    ("quantscope/sandbox/fastsolve.py", "import fastapi.dependencies.models.Dependant"): FASTSOLVE,
    (
        "quantscope/sandbox/httpguard.py",
        "import uvicorn.protocols.http.h11_impl.H11Protocol",
    ): HTTPGUARD,
}


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _third_party(module: str) -> bool:
    top = module.split(".")[0]
    return top not in STDLIB and top != "quantscope"


def _internal_module(module: str) -> bool:
    return any(_private(part) for part in module.split(".")) or any(
        module == m or module.startswith(m + ".") for m in INTERNAL_MODULES
    )


def _root(node: ast.expr) -> ast.expr:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node


class _Scan(ast.NodeVisitor):
    def __init__(self, tree: ast.Module) -> None:
        self.found: set[str] = set()
        self.imported: dict[str, str] = {}  # local name -> third-party dotted path
        self.defined: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                self.defined.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                self.defined.add(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                    self.defined.add(node.attr)
            elif isinstance(node, ast.arg):
                self.defined.add(node.arg)
            elif isinstance(node, ast.Import | ast.ImportFrom):
                self._imports(node)
        self.visit(tree)

    def _imports(self, node: ast.Import | ast.ImportFrom) -> None:
        for alias in node.names:
            if isinstance(node, ast.Import):
                module, local = alias.name, alias.asname or alias.name.split(".")[0]
                dotted = alias.name if alias.asname else local
            else:
                if node.level or not node.module:
                    continue
                module, local = node.module, alias.asname or alias.name
                dotted = f"{node.module}.{alias.name}"
                self.defined.add(local)
            if not _third_party(module):
                continue
            self.imported[local] = dotted
            if _internal_module(module) or (
                isinstance(node, ast.ImportFrom) and _private(alias.name)
            ):
                self.found.add(
                    f"import {module}.{alias.name}"
                    if isinstance(node, ast.ImportFrom)
                    else f"import {module}"
                )

    def visit_Attribute(self, node: ast.Attribute) -> None:
        self.generic_visit(node)
        if not _private(node.attr) or node.attr in NAMEDTUPLE_API:
            return
        root = _root(node)
        through_import = isinstance(root, ast.Name) and root.id in self.imported
        on_another_object = (
            not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
            and not _super_call(node.value)
            and node.attr not in self.defined
        )
        if through_import or on_another_object:
            self.found.add(ast.unparse(node))

    def visit_Call(self, node: ast.Call) -> None:
        self.generic_visit(node)
        if (
            isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "setattr", "hasattr")
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
            and _private(node.args[1].value)
            and node.args[1].value not in self.defined
        ):
            self.found.add(f"{ast.unparse(node.args[0])}.{node.args[1].value}")

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.generic_visit(node)
        bases = [b for b in (self._resolve(base) for base in node.bases) if b is not None]
        if not bases:
            return
        inherited = {name for base in bases for name in dir(base) if _private(name)}
        own = {
            n.attr
            for n in ast.walk(node)
            if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store)
        }
        for item in ast.walk(node):
            if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and item.name in inherited:
                self.found.add(f"{node.name}.{item.name} overrides a private method")
            elif (
                isinstance(item, ast.Attribute)
                and _private(item.attr)
                and (
                    _super_call(item.value)
                    or (
                        isinstance(item.value, ast.Name)
                        and item.value.id == "self"
                        and item.attr in inherited
                        and item.attr not in own
                    )
                )
            ):
                self.found.add(f"{node.name}: {ast.unparse(item)}")

    def _resolve(self, base: ast.expr) -> type | None:
        root = _root(base)
        if not isinstance(root, ast.Name) or root.id not in self.imported:
            return None
        rest = ast.unparse(base).split(".")[1:]
        dotted = self.imported[root.id].split(".")
        for split in range(len(dotted), 0, -1):  # the longest importable module prefix
            try:
                obj: object = importlib.import_module(".".join(dotted[:split]))
            except ImportError:
                continue
            for name in [*dotted[split:], *rest]:
                obj = getattr(obj, name)
            return obj if isinstance(obj, type) else None
        return None


def _super_call(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"
    )


def scan() -> dict[tuple[str, str], int]:
    """Every private use in src/, as ``(file, use)``."""
    found: dict[tuple[str, str], int] = {}
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        for use in _Scan(ast.parse(path.read_text(encoding="utf-8"))).found:
            found[(rel, use)] = 1
    return found


def test_every_private_use_is_listed_with_its_gate_and_fallback() -> None:
    unlisted = sorted(set(scan()) - set(ALLOWED))
    assert not unlisted, (
        "private internals of a dependency used without an entry in ALLOWED (give it a version "
        f"gate and a fallback test, or use the public way): {unlisted}"
    )


def test_every_listed_use_still_exists() -> None:
    assert sorted(set(ALLOWED) - set(scan())) == []


def test_every_fallback_test_exists() -> None:
    for (file, use), allowed in ALLOWED.items():
        if allowed.kind == "private":
            assert allowed.fallback, (file, use)
        if allowed.fallback is not None:
            test_file, name = allowed.fallback.split("::")
            source = (ROOT / test_file).read_text(encoding="utf-8")
            assert f"def {name}(" in source, allowed.fallback


def test_the_scan_finds_what_it_is_for() -> None:
    source = """
import pandas as pd
from fastapi.dependencies.utils import _is_json_field
from requests_cache.backends.sqlite import SQLiteDict

class Table(SQLiteDict):
    def _write(self, key, value):
        content = getattr(value, "_content", None)
        super()._write(key, value)
        return self.responses._lock, pd._libs, value._next
"""
    found = _Scan(ast.parse(source)).found
    assert found == {
        "import fastapi.dependencies.utils._is_json_field",
        "Table._write overrides a private method",
        "Table: super()._write",
        "value._content",
        "self.responses._lock",
        "pd._libs",
        "value._next",
    }
