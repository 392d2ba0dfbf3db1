"""Bad input never gets a 500: schemathesis fuzzes every operation of /openapi.json.

It generates valid and invalid values for every parameter and body of the 17 operations
(coverage, fuzzing and stateful phases) against a running sandbox with the enterprise key and
fails on any 5xx. The seed is fixed so that a failure reproduces. The fuzzer writes (playbook
changes, applied recommendations), so it runs on a server of its own: the session's server
stays the world that other modules replay.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from quantscope.sandbox.serve import SandboxServer

pytestmark = pytest.mark.slow  # a schemathesis subprocess over every operation: ~11 s

SCHEMATHESIS = Path(sys.executable).with_name("schemathesis")


def test_no_operation_answers_a_server_error(own_sandbox: SandboxServer, tmp_path: Path) -> None:
    result = subprocess.run(
        [
            str(SCHEMATHESIS),
            "run",
            f"{own_sandbox.url}/openapi.json",
            "--header",
            f"X-API-Key: {own_sandbox.keys['enterprise']}",
            "--checks",
            "not_a_server_error",
            "--max-examples",
            "10",
            "--seed",
            "7",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    summary = result.stdout[-3000:]
    assert result.returncode == 0, summary
    assert "17/17" in summary, summary
    assert " passed" in summary, summary
