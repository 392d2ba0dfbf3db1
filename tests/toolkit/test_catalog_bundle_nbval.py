"""A bundled notebook re-runs offline, with no service and no key, to byte-identical outputs.

The study as a researcher makes it: a catalog synced from the sandbox, a notebook executed
against the service (its stored outputs are the service's answers), both exported as one
bundle. The colleague's side: the bundle opened in another directory, then nbval run on the
notebook in a fresh process whose environment names no URL and no key, only
``QUANTSCOPE_CATALOG``: every stored output (text, HTML tables, streams) must compare equal.
The same re-execution through nbclient gives outputs equal byte for byte.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

import quantscope as qsc
from quantscope._http.client import Client
from quantscope.sandbox.serve import SandboxServer

pytestmark = pytest.mark.slow

QUANT = 1
START, END = "2026-07-01", "2026-07-31T23:59:59"
SRC = str(Path(qsc.__file__).parents[1])

CELLS = [
    "import quantscope as qsc\n\n"
    "client = qsc.connect()  # the service, or the catalog QUANTSCOPE_CATALOG names",
    f'trades = qsc.load_trades({QUANT}, start="{START}", end="{END}")\n'
    'print(len(trades), trades["pnl_usd"].sum())',
    "trades.quant.summary()",
    'trades[["trade_id", "opened_at", "token_symbol", "pnl_usd", "status"]].head(5)',
    f'evals = qsc.load_evaluations({QUANT}, start="{START}", end="{END}")\n'
    'evals["passed"].value_counts(dropna=False)',
    f"qsc.load_playbook({QUANT}).head(3)",
]


def _kernel_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("QUANTSCOPE_")}
    env.update(QUANTSCOPE_PROGRESS="0", MPLBACKEND="Agg", PYTHONPATH=SRC, **extra)
    return env


def _execute(nb: nbformat.NotebookNode, cwd: Path, env: dict[str, str]) -> nbformat.NotebookNode:
    NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(cwd)}}
    ).execute(env=env)
    return nb


def _outputs(nb: nbformat.NotebookNode) -> str:
    kept = [
        [{k: v for k, v in o.items() if k != "execution_count"} for o in c.get("outputs", [])]
        for c in nb.cells
    ]
    return json.dumps(kept, sort_keys=True)


def test_a_bundled_notebook_reruns_offline_under_nbval(
    own_sandbox: SandboxServer, tmp_path: Path
) -> None:
    # Alice: a catalog from the service, and a notebook whose outputs came from the service.
    alice = tmp_path / "alice"
    alice.mkdir()
    with Client(
        own_sandbox.url,
        own_sandbox.keys["enterprise"],
        cache_dir=str(alice / "cache"),
        progress=False,
    ) as c:
        qsc.sync(alice / "study", quant_id=QUANT, start=START, end=END, client=c)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in CELLS])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    service = _kernel_env(
        QUANTSCOPE_URL=own_sandbox.url,
        QUANTSCOPE_API_KEY=own_sandbox.keys["enterprise"],
        QUANTSCOPE_CACHE_DIR=str(alice / "kernel-cache"),
    )
    _execute(nb, alice, service)
    assert all(c.outputs for c in nb.cells[1:])
    assert "catalog" not in _outputs(nb)  # they are the service's answers
    notebook = alice / "study.ipynb"
    nbformat.write(nb, notebook)
    bundle = qsc.export_bundle(
        alice / "study.qsbundle",
        alice / "study",
        quant_id=QUANT,
        start=START,
        end=END,
        notebook=notebook,
    )
    assert bundle.notebook == "notebook/study.ipynb"

    # Bob: another directory, no URL, no key; the catalog named by QUANTSCOPE_CATALOG.
    bob = tmp_path / "bob"
    opened = qsc.open_bundle(bundle.path, bob / "study")
    assert opened.notebook == bob / "study" / "notebook" / "study.ipynb"
    assert "QUANTSCOPE_CATALOG=" in opened.how_to_run()
    offline = _kernel_env(
        QUANTSCOPE_CATALOG=str(opened.catalog), QUANTSCOPE_CACHE_DIR=str(bob / "cache")
    )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "--nbval",
            "--nbval-current-env",
            "-p",
            "no:cacheprovider",
            "--rootdir",
            str(bob),
            str(opened.notebook),
        ],
        capture_output=True,
        text=True,
        env=offline,
        cwd=bob,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert f"{len(CELLS)} passed" in done.stdout

    again = _execute(nbformat.read(opened.notebook, as_version=4), bob, offline)
    assert _outputs(again) == _outputs(nb)
