"""tools/notebooks.py: the stored notebooks agree with their sources, and a sync is stable.

nbval (``pytest notebooks --nbval``) re-runs the stored notebooks and compares outputs; these
tests check the machinery around them: every ``notebooks/src/*.py`` has its executed,
normalised ``.ipynb``; normalising is idempotent and strips what changes between runs; and
executing a notebook twice in the tool's fresh environment gives the same bytes.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import nbformat
import pytest
from _helpers.notebooks_tool import load_notebooks_tool
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

ROOT = Path(__file__).resolve().parents[2]


tool = load_notebooks_tool()
SOURCES = tool.all_sources()


def test_there_are_notebook_sources() -> None:
    assert SOURCES, "no notebooks/src/NN_name.py"
    assert [s.stem[:2] for s in SOURCES] == sorted(s.stem[:2] for s in SOURCES)


@pytest.mark.parametrize("source", SOURCES, ids=[s.stem for s in SOURCES])
def test_stored_notebook_is_the_executed_source(source: Path) -> None:
    """Same cells as the source, every code cell executed, in normalised form."""
    assert tool.stale(source) is None, "run `make notebooks` after editing notebooks/src"


@pytest.mark.parametrize("source", SOURCES, ids=[s.stem for s in SOURCES])
def test_stored_outputs_are_stable(source: Path) -> None:
    """No stderr, no errors, no memory addresses, no SVG: what nbval would trip over."""
    nb = nbformat.read(tool.notebook_path(source), as_version=4)
    assert tool.problems(nb) == []
    assert nb.metadata["kernelspec"]["name"] == "python3"
    assert "version" not in nb.metadata.get("language_info", {})


def _messy_notebook() -> Any:
    """A notebook with what an executed notebook picks up: timings, versions, random ids."""
    nb = new_notebook(
        cells=[
            new_markdown_cell("# Title"),
            new_code_cell(
                "x = 1\nx",
                execution_count=1,
                metadata={"execution": {"iopub.execute_input": "2026-01-01T00:00:00Z"}},
                outputs=[new_output("execute_result", {"text/plain": "1"}, execution_count=1)],
            ),
            new_code_cell("x", execution_count=2, metadata={"tags": ["figure-x"]}),
            new_code_cell("x", execution_count=3),
        ],
        metadata={
            "kernelspec": {"name": "other", "display_name": "Other", "language": "python"},
            "language_info": {"name": "python", "version": "3.11.9", "mimetype": "text/x-python"},
            "jupytext": {"text_representation": {"jupytext_version": "1.19.6"}},
        },
    )
    nb.cells[1].outputs[0]["transient"] = {"display_id": "abc"}
    return nb


def test_normalize_strips_volatile_metadata_and_is_idempotent() -> None:
    nb = tool.normalize(_messy_notebook())
    assert nb.metadata == {
        "kernelspec": tool.KERNELSPEC,
        "language_info": {"name": "python", "mimetype": "text/x-python"},
    }
    assert nb.cells[1].metadata == {}
    assert nb.cells[2].metadata == {"tags": ["figure-x"]}
    assert "transient" not in nb.cells[1].outputs[0]
    ids = [c.id for c in nb.cells]
    assert len(set(ids)) == len(ids)  # two identical cells still get distinct ids
    text = tool.dumps(nb)
    again = tool.normalize(nbformat.reads(text, as_version=4))
    assert tool.dumps(again) == text
    # ids come from content: the same cells give the same ids in another notebook
    assert [c.id for c in tool.normalize(_messy_notebook()).cells] == ids


def test_select_accepts_numbers_names_and_paths(tmp_path: Path) -> None:
    sources = [tmp_path / "01_a.py", tmp_path / "02_b.py"]
    assert tool.select([], sources) == sources
    assert tool.select(["02"], sources) == [sources[1]]
    assert tool.select(["notebooks/01_a.ipynb", "02_b"], sources) == sources
    with pytest.raises(SystemExit, match="01_a, 02_b"):
        tool.select(["03"], sources)


def test_problems_names_what_nbval_would_trip_over() -> None:
    nb = new_notebook(
        cells=[
            new_code_cell(
                "import warnings", outputs=[new_output("stream", name="stderr", text="W")]
            ),
            new_code_cell(
                "obj", outputs=[new_output("execute_result", {"text/plain": "<X at 0x7f3a2b1c>"})]
            ),
            new_code_cell(
                "# NBVAL_IGNORE_OUTPUT: varies\nobj",
                outputs=[new_output("execute_result", {"text/plain": "<X at 0x7f3a2b1c>"})],
            ),
        ]
    )
    found = tool.problems(nb)
    assert len(found) == 2
    assert "stderr" in found[0]
    assert "memory address" in found[1]


def test_figure_files_prefer_tagged_cells() -> None:
    png = "iVBORw0KGgo="  # base64 of the PNG signature's first bytes
    first = new_code_cell("a", outputs=[new_output("display_data", {"image/png": png})])
    tagged = new_code_cell(
        "b",
        metadata={"tags": ["figure-equity"]},
        outputs=[new_output("display_data", {"image/png": png})],
    )
    assert list(tool.figure_files(new_notebook(cells=[first]), "01_x")) == ["01_x.png"]
    assert list(tool.figure_files(new_notebook(cells=[first, tagged]), "01_x")) == ["01_equity.png"]
    assert tool.figure_files(new_notebook(cells=[new_code_cell("c")]), "01_x") == {}


PROBE = """\
# %%
import os

# %%
print(os.environ.get("QUANTSCOPE_PROGRESS"), "QUANTSCOPE_URL" in os.environ)
print(os.environ.get("MPLBACKEND"))

# %%
sandbox = os.environ["QUANTSCOPE_SANDBOX_DIR"]
cache = os.environ["QUANTSCOPE_CACHE_DIR"]
os.path.dirname(sandbox) == os.path.dirname(cache), os.path.basename(sandbox)

# %%
os.environ["PYTHONPATH"].split(os.pathsep)[0]

# %%
print(os.path.dirname(os.environ["QUANTSCOPE_SANDBOX_DIR"]))
"""


def _outputs(nb: Any) -> list[str]:
    """Each code cell's output text, stream or result."""
    texts = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            texts.append(out.get("text") or out.get("data", {}).get("text/plain", ""))
    return texts


@pytest.mark.slow
def test_run_executes_in_a_fresh_test_like_environment_and_is_byte_stable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QUANTSCOPE_URL", "https://service.invalid")  # must not reach the kernel
    monkeypatch.setenv("QUANTSCOPE_API_KEY", "not-a-key")
    source = tmp_path / "01_probe.py"
    source.write_text(PROBE, encoding="utf-8")
    first, second = (next(iter(tool.run([source]))) for _ in range(2))
    progress, pair, pythonpath, workdir = _outputs(first.nb)
    assert progress == f"0 False\n{tool.INLINE_BACKEND}\n"
    assert pair == "(True, 'sandbox')"
    assert pythonpath == repr(str(ROOT / "src"))
    assert first.problems == []
    # each run has its own world and cache, neither this session's nor the other run's
    other = _outputs(second.nb)[-1]
    session = os.path.dirname(os.environ.get("QUANTSCOPE_SANDBOX_DIR", "/nonexistent/x"))
    assert len({workdir.strip(), other.strip(), session}) == 3
    # everything else is byte-identical between the runs
    first.nb.cells.pop()
    second.nb.cells.pop()
    assert tool.dumps(first.nb) == tool.dumps(second.nb)
