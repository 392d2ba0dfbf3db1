"""Where things live in the repository: a folder's tests are what its name says, caches untracked.

Every test module under ``tests/browser/`` drives Chromium (its ``pytestmark`` carries
``pytest.mark.browser``): a test that starts no browser belongs beside the code it tests, not
in the slow, last-run browser group. Tool caches (``.schemathesis/``) are never committed.
"""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _marks(path: Path) -> set[str]:
    """The ``pytest.mark.X`` names of a module's ``pytestmark``."""
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets
        ):
            return {n.attr for n in ast.walk(node.value) if isinstance(n, ast.Attribute)}
    return set()


def test_every_browser_test_module_drives_a_browser() -> None:
    unmarked = [
        p.name
        for p in sorted((ROOT / "tests" / "browser").glob("test_*.py"))
        if "browser" not in _marks(p)
    ]
    assert unmarked == []


def test_tool_caches_are_not_tracked() -> None:
    tracked = subprocess.run(
        ["git", "ls-files", ".schemathesis"], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert tracked.stdout == ""
