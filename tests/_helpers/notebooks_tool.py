"""tools/notebooks.py as a module, loaded once by path (tools/ is no package)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
NAME = "notebooks_tool"


def load_notebooks_tool() -> ModuleType:
    """The tool's module; the same one for every caller of a test process."""
    if NAME in sys.modules:
        return sys.modules[NAME]
    spec = importlib.util.spec_from_file_location(NAME, ROOT / "tools" / "notebooks.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[NAME] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module
