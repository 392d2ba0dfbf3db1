"""``make lab`` and ``make panels`` (tools/notebooks.py): arguments, root, the kernels' environment.

No browser here: what the commands would exec is checked, not a running server (the browser
tests run Voila with ``voila_argv`` and ``panels_notebook`` themselves).
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest
from _helpers.notebooks_tool import load_notebooks_tool

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def tool() -> ModuleType:
    return load_notebooks_tool()


def test_lab_adds_allow_root_only_as_root(tool: ModuleType) -> None:
    as_root = tool.lab_argv(["--port=8899"], root=True)
    assert as_root[1:] == [str(ROOT / "notebooks"), "--port=8899", "--allow-root"]
    assert tool.lab_argv(["--port=8899"], root=False)[1:] == [
        str(ROOT / "notebooks"),
        "--port=8899",
    ]
    assert tool.lab_argv(["--allow-root"], root=True).count("--allow-root") == 1


def test_lab_and_panels_pass_the_service_variables_sync_does_not(
    tool: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("QUANTSCOPE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("QUANTSCOPE_API_KEY", "qs_test_key")
    kept = tool.kernel_env(tmp_path, fresh=False)
    assert (kept["QUANTSCOPE_URL"], kept["QUANTSCOPE_API_KEY"]) == (
        "http://127.0.0.1:9",
        "qs_test_key",
    )
    fresh = tool.kernel_env(tmp_path, fresh=True)
    assert "QUANTSCOPE_URL" not in fresh
    assert "QUANTSCOPE_API_KEY" not in fresh


def test_extra_arguments_reach_lab_and_panels(
    tool: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    ran: list[list[str]] = []
    monkeypatch.setattr(tool.os, "execve", lambda path, argv, env: ran.append(list(argv)))
    tool.main(["lab", "--no-browser", "--port=8899"])
    assert ran[-1][2:4] == ["--no-browser", "--port=8899"]
    tool.main(["panels", "--quant", "2", "--out", str(tmp_path), "--no-browser"])
    assert str(tmp_path / "panels.ipynb") in ran[-1]
    assert ran[-1][-1] == "--no-browser"
    # a clean page: quantscope's template (no CDN stylesheet), only the widgets' labextension
    assert f"JUPYTER_PATH={tool.VOILA_DATA}" in ran[-1][1]
    assert "--template=quantscope" in ran[-1]
    allowed = f"--VoilaConfiguration.extension_allowlist={list(tool.VOILA_EXTENSIONS)!r}"
    assert allowed in ran[-1]
    assert "--preheat_kernel=True" in ran[-1]  # make panels: a page prepared ahead
    # ... and the next one prepared once the first page is served, not competing with it
    assert f"--VoilaKernelManager.fill_delay={tool.VOILA_FILL_DELAY_S}" in ran[-1]
    assert "--preheat_kernel=True" not in tool.voila_argv(tmp_path / "panels.ipynb")
    assert "QUANT = 2" in (tmp_path / "panels.ipynb").read_text()
    with pytest.raises(SystemExit):
        tool.main(["check", "--no-browser"])
