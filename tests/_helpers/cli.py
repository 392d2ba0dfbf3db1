"""The installed ``quantscope`` console script, run as a user runs it, and its one error line;
``use``: the same service for in-process commands."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import quantscope as qsc
from quantscope.sandbox.serve import SandboxServer

COMMAND = Path(sys.executable).with_name("quantscope")  # the installed console script
PYTHON_ADVICE = ("=True", "qsc.", "api_key=", "Traceback", "warnings.warn")


def run_cli(
    *argv: str, server: SandboxServer | None, plan: str = "enterprise", cache: Path, **env: str
) -> subprocess.CompletedProcess[str]:
    """``quantscope ARGV`` with this tree on the path, the service and ``plan``'s key in the
    environment (``server`` None: the embedded sandbox), the HTTP cache ``cache`` and no
    progress bars (``env`` adds variables)."""
    src = str(Path(qsc.__file__).resolve().parents[1])
    full = {**os.environ, "PYTHONPATH": src, "QUANTSCOPE_CACHE_DIR": str(cache)}
    if server is not None:
        full |= {"QUANTSCOPE_URL": server.url, "QUANTSCOPE_API_KEY": server.keys[plan]}
    full |= {"QUANTSCOPE_PROGRESS": "0", **env}
    return subprocess.run(
        [str(COMMAND), *argv], capture_output=True, text=True, env=full, timeout=300, check=False
    )


def one_error(done: subprocess.CompletedProcess[str]) -> str:
    """The error line, after checking it is the only one and has no Python in it."""
    (line,) = [x for x in done.stderr.splitlines() if x.startswith("quantscope: error:")]
    assert not any(text in done.stderr for text in PYTHON_ADVICE), done.stderr
    return line


def use(monkeypatch: pytest.MonkeyPatch, server: SandboxServer, plan: str, cache: Path) -> Path:
    """In-process commands (``cli.main``) talk to ``server`` with ``plan``'s key and the
    cache ``cache``."""
    monkeypatch.setenv("QUANTSCOPE_URL", server.url)
    monkeypatch.setenv("QUANTSCOPE_API_KEY", server.keys[plan])
    monkeypatch.setenv("QUANTSCOPE_CACHE_DIR", str(cache))
    return cache
