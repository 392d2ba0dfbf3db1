"""quantscope's version comes from ``importlib.metadata``, with a source tree's fallback.

Installed (the editable install of the test run), ``qsc.__version__`` is the distribution's
version; a checkout on ``sys.path`` with no distribution metadata reads its ``pyproject.toml``;
with neither the version is ``UNKNOWN_VERSION``. No module reads the version from the package
above it (the import arrows that existed only for that).
"""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

import quantscope as qsc
from quantscope import _versions

SRC = Path(qsc.__file__).parents[1]
TREE_PYPROJECT = SRC.parent / "pyproject.toml"


def test_the_installed_version_is_the_distributions() -> None:
    assert qsc.__version__ == metadata.version("quantscope")
    assert qsc.__version__ == _versions.QUANTSCOPE_VERSION


def test_the_source_tree_answers_when_nothing_is_installed() -> None:
    # `-S`: no site-packages, so no distribution metadata; the module is loaded by its path
    # (it needs only the standard library), as from a checkout that was never installed
    source = str(SRC / "quantscope" / "_versions.py")
    program = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('v', {source!r})\n"
        "module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module)\n"
        "print(module.QUANTSCOPE_VERSION)\n"
    )
    done = subprocess.run(
        [sys.executable, "-S", "-c", program], capture_output=True, text=True, check=True
    )
    expected = tomllib.loads(TREE_PYPROJECT.read_text())["project"]["version"]
    assert done.stdout.strip() == expected


def _not_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(name: str) -> str:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(_versions.metadata, "version", missing)


def test_no_metadata_and_no_pyproject_is_unknown(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _not_installed(monkeypatch)
    assert (
        _versions.own_version(tmp_path / "pyproject.toml")
        == _versions.UNKNOWN_VERSION
        == "0+unknown"
    )
    other = tmp_path / "other.toml"
    other.write_text('[project]\nname = "something-else"\nversion = "9.9"\n')
    assert _versions.own_version(other) == "0+unknown"
    broken = tmp_path / "broken.toml"
    broken.write_text("[project\n")
    assert _versions.own_version(broken) == "0+unknown"
    ours = tmp_path / "ours.toml"
    ours.write_text('[project]\nname = "quantscope"\nversion = "2.3.4"\n')
    assert _versions.own_version(ours) == "2.3.4"


def test_no_module_reads_the_version_from_the_package_above_it() -> None:
    readers = []
    for path in sorted((SRC / "quantscope").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.ImportFrom)
                and node.module == "quantscope"
                and any(alias.name == "__version__" for alias in node.names)
            ):
                readers.append(str(path.relative_to(SRC)))
    assert readers == []
