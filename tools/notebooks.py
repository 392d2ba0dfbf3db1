"""The research notebooks: sources, executed copies, HTML and figures.

The sources are jupytext percent scripts, ``notebooks/src/NN_name.py`` (reviewable diffs); the
notebooks ``notebooks/NN_name.ipynb`` are generated from them and stored *executed*, because
nbval (``make test``) re-runs them and compares every cell's output with the stored one.

    python tools/notebooks.py sync [NAME ...]    regenerate notebooks/NN_name.ipynb, executed
    python tools/notebooks.py check              fail if a notebook is out of date with its source
    python tools/notebooks.py demo --out build   execute all into build/: .ipynb, .html, figures/
    python tools/notebooks.py lab [ARG ...]      JupyterLab on notebooks/ (--allow-root as root)
    python tools/notebooks.py panels [--quant N] [ARG ...]   the three panels as a Voila page

``sync`` and ``demo`` execute the notebooks the way the test session does (tests/conftest.py):
in file order, in one fresh sandbox world and one fresh HTTP cache (temporary directories made
for the run), with ``QUANTSCOPE_PROGRESS=0`` and no ``QUANTSCOPE_URL``/``QUANTSCOPE_API_KEY``,
so a stored output is what nbval will see. Volatile metadata (execution timings, the Python
version, jupytext's version, random cell ids) is stripped, so an unchanged notebook is rewritten
byte for byte and diffs show only real changes.

NAME is a notebook's number or name (``02``, ``02_trades_and_performance``, or a path). By
default ``sync NAME`` also runs the notebooks before NAME (without writing them), so NAME sees
the world and cache that nbval's run gives it; ``--alone`` skips them.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import hashlib
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
SOURCES = NOTEBOOKS / "src"
SOURCE_GLOB = "[0-9][0-9]_*.py"

KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
CELL_TIMEOUT_S = 600
# Never in a kernel of ours: these would point the notebooks at a real service.
SERVICE_ENV = ("QUANTSCOPE_URL", "QUANTSCOPE_API_KEY")
INLINE_BACKEND = "module://matplotlib_inline.backend_inline"
FIGURE_TAG = "figure-"
# Kept from a cell's metadata; everything else (execution timings, collapsed, scrolled...) goes.
CELL_METADATA_KEPT = ("tags", "jupyter")
# Kept from language_info (the kernel fills it in): its ``version`` changes with every Python.
LANGUAGE_INFO_KEPT = ("name", "mimetype", "file_extension", "pygments_lexer")
# Text that differs between runs (nbval would compare it): memory addresses in reprs.
VOLATILE_TEXT = re.compile(r"\bat 0x[0-9a-fA-F]{6,}\b")
ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")
# `make panels` and the demo's panel pictures: quant 1, as the research notebooks
PANELS_QUANT = 1
PANELS_NOTEBOOK = "panels.ipynb"


# --- sources and notebooks -----------------------------------------------------------------


def all_sources() -> list[Path]:
    """Every notebook source, in file (= execution) order."""
    return sorted(SOURCES.glob(SOURCE_GLOB))


def notebook_path(source: Path, directory: Path = NOTEBOOKS) -> Path:
    """Where the executed notebook of ``source`` goes."""
    return directory / f"{source.stem}.ipynb"


def select(names: Sequence[str], sources: Sequence[Path] | None = None) -> list[Path]:
    """The sources named by number (``02``), stem, file name or path; all when ``names`` is empty.

    Raises SystemExit naming the known notebooks when a name matches none or several.
    """
    known = list(all_sources() if sources is None else sources)
    if not names:
        return known
    chosen: list[Path] = []
    for name in names:
        stem = Path(name).name.removesuffix(".py").removesuffix(".ipynb")
        hits = [s for s in known if s.stem == stem or s.stem.split("_", 1)[0] == stem]
        if len(hits) != 1:
            listing = ", ".join(s.stem for s in known) or "none"
            what = "no notebook" if not hits else "several notebooks"
            raise SystemExit(f"{what} named {name!r}; the notebooks are: {listing}")
        if hits[0] not in chosen:
            chosen.append(hits[0])
    return sorted(chosen)


def convert(source: Path) -> Any:
    """The notebook of a jupytext percent ``source``, not executed, normalised."""
    import jupytext

    return normalize(jupytext.read(source, fmt="py:percent"))


def _cell_id(cell: Any, seen: dict[str, int]) -> str:
    """A cell id from the cell's content: stable across syncs, unchanged by inserting a cell."""
    digest = hashlib.sha1(f"{cell.cell_type}\n{cell.source}".encode()).hexdigest()[:12]
    seen[digest] = seen.get(digest, 0) + 1
    return digest if seen[digest] == 1 else f"{digest}-{seen[digest]}"


def normalize(nb: Any) -> Any:
    """``nb`` without volatile metadata: nbformat 4.5, content-derived cell ids, the python3
    kernelspec, language_info without versions, cell metadata reduced to tags; in place."""
    nb.nbformat, nb.nbformat_minor = 4, 5
    language = {k: v for k, v in nb.metadata.get("language_info", {}).items()}
    metadata: dict[str, Any] = {"kernelspec": dict(KERNELSPEC)}
    kept = {k: language[k] for k in LANGUAGE_INFO_KEPT if k in language}
    if kept:
        metadata["language_info"] = kept
    nb.metadata = metadata
    seen: dict[str, int] = {}
    for cell in nb.cells:
        cell.metadata = {k: cell.metadata[k] for k in CELL_METADATA_KEPT if k in cell.metadata}
        cell.id = _cell_id(cell, seen)
        if cell.cell_type == "code":
            outputs = [_clean_output(out) for out in cell.get("outputs", [])]
            for n, out in enumerate(outputs):
                _stable_widget_id(out, f"{cell.id}-{n}")
            cell.outputs = outputs
        else:
            cell.pop("outputs", None)
            cell.pop("execution_count", None)
            if not cell.get("attachments"):
                cell.pop("attachments", None)
    return nb


def _clean_output(output: Any) -> Any:
    """An output without transient fields (display ids change on every run)."""
    output.pop("transient", None)
    if "metadata" in output and output.output_type in ("display_data", "execute_result"):
        output.metadata = {k: v for k, v in output.metadata.items() if k in output.get("data", {})}
    return output


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def _stable_widget_id(output: Any, where: str) -> None:
    """Widget views carry a random model id per run; the widget state is not stored, so the id
    points at nothing after the run: make it a stable name so syncs do not rewrite the file."""
    view = output.get("data", {}).get(WIDGET_VIEW)
    if isinstance(view, dict) and "model_id" in view:
        view["model_id"] = f"widget-{where}"


def dumps(nb: Any) -> str:
    import nbformat

    return nbformat.writes(nb, version=4) + "\n"


def write_if_changed(nb: Any, path: Path) -> bool:
    """Write ``nb`` to ``path`` unless the file already holds exactly it; True if written."""
    text = dumps(nb)
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return True


def cells_signature(nb: Any) -> list[tuple[str, str, Any]]:
    """What a notebook's source decides: each cell's type, source and kept metadata."""
    return [(c.cell_type, c.source, dict(c.metadata)) for c in nb.cells]


def stale(source: Path, directory: Path = NOTEBOOKS) -> str | None:
    """Why the stored notebook of ``source`` is out of date with it, or None when it is not."""
    import nbformat

    path = notebook_path(source, directory)
    if not path.exists():
        return f"{_shown(path)} is missing"
    stored = nbformat.read(path, as_version=4)
    if cells_signature(normalize(stored)) != cells_signature(convert(source)):
        return f"{_shown(path)} does not match {_shown(source)}"
    if any(c.cell_type == "code" and c.execution_count is None for c in stored.cells):
        return f"{_shown(path)} has cells that were never executed"
    if dumps(normalize(stored)) != path.read_text(encoding="utf-8"):
        return f"{_shown(path)} is not in normalised form"
    return None


# --- execution -----------------------------------------------------------------------------


def kernel_env(workdir: Path, *, fresh: bool = True) -> dict[str, str]:
    """The kernels' environment: the test session's (tests/conftest.py), figures inline.

    ``fresh``: a new sandbox world and HTTP cache under ``workdir`` (the run's temporary
    directory), and no QUANTSCOPE_URL/QUANTSCOPE_API_KEY (stored outputs come from the
    sandbox). Not fresh (``lab``, ``panels``): the user's world, cache and service variables,
    as notebooks/README.md promises. The working tree's ``src`` goes first on PYTHONPATH, so
    the notebooks show this tree's quantscope even when the venv's install is elsewhere.
    """
    env = dict(os.environ)
    if fresh:
        for name in SERVICE_ENV:
            env.pop(name, None)
        env["QUANTSCOPE_SANDBOX_DIR"] = str(workdir / "sandbox")
        env["QUANTSCOPE_CACHE_DIR"] = str(workdir / "cache")
        env["QUANTSCOPE_PROGRESS"] = "0"
        env["MPLBACKEND"] = INLINE_BACKEND
    path = [str(ROOT / "src"), *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(path))
    return env


@dataclass
class Executed:
    """One executed notebook of a run."""

    source: Path
    nb: Any
    seconds: float
    problems: list[str] = field(default_factory=list)

    @property
    def code_cells(self) -> int:
        return sum(c.cell_type == "code" for c in self.nb.cells)

    @property
    def figures(self) -> int:
        return sum(1 for _ in images(self.nb))


def execute(nb: Any, env: dict[str, str], cwd: Path = NOTEBOOKS, log: Path | None = None) -> Any:
    """Run every cell of ``nb`` in a new python3 kernel with ``env``, in ``cwd`` (as nbval).

    ``log``: where the kernel process's own stderr goes (its log lines, not cell outputs).
    """
    from nbclient import NotebookClient

    client = NotebookClient(
        nb,
        timeout=CELL_TIMEOUT_S,
        kernel_name=KERNELSPEC["name"],
        resources={"metadata": {"path": str(cwd)}},
        record_timing=False,
        allow_errors=False,
    )
    if log is None:
        client.execute(env=env)
        return nb
    with log.open("ab") as stderr:
        client.execute(env=env, stderr=stderr)
    return nb


def run(sources: Sequence[Path], *, label: str = "") -> Iterator[Executed]:
    """Execute ``sources`` in order in one fresh world and cache; yield each as it finishes."""
    _warm_matplotlib()
    with tempfile.TemporaryDirectory(prefix="quantscope-notebooks-") as tmp:
        env = kernel_env(Path(tmp))
        for source in sources:
            print(f"{label}{source.stem} ...", end="", flush=True)
            started = time.perf_counter()
            log = Path(tmp) / f"{source.stem}.kernel.log"
            try:
                nb = normalize(execute(convert(source), env, log=log))
            except Exception as exc:
                print(" failed")
                kernel = _kernel_log(log)
                if kernel:
                    print(f"kernel log:\n{kernel[-4000:]}")
                raise SystemExit(f"{_shown(source)}: {_short(exc)}") from exc
            done = Executed(source, nb, time.perf_counter() - started, problems(nb))
            print(
                f" {done.seconds:.1f} s, {done.code_cells} code cells, {done.figures} figures",
                flush=True,
            )
            yield done


def _kernel_log(log: Path) -> str:
    """The kernel's own stderr, without the transport warning every kernel logs."""
    if not log.exists():
        return ""
    lines = log.read_text(errors="replace").splitlines()
    return "\n".join(line for line in lines if "without encryption" not in line).strip()


def _short(exc: BaseException) -> str:
    text = ANSI_ESCAPE.sub("", str(exc)).strip()
    return text if len(text) < 4000 else text[:4000] + "\n..."


def _warm_matplotlib() -> None:
    """Build matplotlib's font cache here, so no kernel logs "building the font cache" to
    stderr (nbval compares stderr)."""
    with contextlib.suppress(ImportError):  # matplotlib is a dependency; be lenient anyway
        import matplotlib.font_manager  # noqa: F401


def problems(nb: Any) -> list[str]:
    """What would make a stored output unstable or fail nbval: stderr, memory addresses, SVG."""
    found: list[str] = []
    for number, cell in enumerate(nb.cells, start=1):
        if cell.cell_type != "code":
            continue
        tags = cell.metadata.get("tags", [])
        ignored = "NBVAL_IGNORE_OUTPUT" in cell.source or "nbval-ignore-output" in tags
        for out in cell.outputs:
            where = f"cell {number} ({cell.source.splitlines()[0] if cell.source else ''!r})"
            if out.output_type == "stream" and out.name == "stderr":
                found.append(f"{where} writes to stderr: {out.text.strip()[:300]}")
            if out.output_type == "error":
                found.append(f"{where} raised {out.ename}")
            data = out.get("data", {})
            if "image/svg+xml" in data:
                found.append(f"{where} has an SVG figure (it embeds a date): use PNG")
            texts = [out.get("text", ""), data.get("text/plain", ""), data.get("text/html", "")]
            if not ignored and any(VOLATILE_TEXT.search(_text(t)) for t in texts):
                found.append(f"{where} shows a memory address (an object repr)")
    return found


def _text(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def images(nb: Any) -> Iterator[tuple[Any, bytes]]:
    """Every PNG output of ``nb`` as (cell, bytes), in order."""
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for out in cell.outputs:
            png = out.get("data", {}).get("image/png")
            if png:
                yield cell, base64.b64decode(_text(png))


def figure_files(nb: Any, stem: str) -> dict[str, bytes]:
    """The key figures of notebook ``NN_name``: each cell tagged ``figure-<tag>`` gives
    ``NN_<tag>.png`` (its first image); a notebook without tags gives its first image as
    ``NN_name.png``. The number keeps two notebooks' tags apart."""
    tagged: dict[str, bytes] = {}
    first: bytes | None = None
    for cell, png in images(nb):
        first = first if first is not None else png
        for tag in cell.metadata.get("tags", []):
            if tag.startswith(FIGURE_TAG):
                tagged.setdefault(tag.removeprefix(FIGURE_TAG), png)
    if tagged:
        number = stem.split("_", 1)[0]
        return {f"{number}_{name}.png": png for name, png in tagged.items()}
    return {f"{stem}.png": first} if first is not None else {}


# --- the panels in the demo HTML -----------------------------------------------------------
# A stored widget output is a view of a kernel's model: without the kernel the HTML could only
# show its text repr (``VBox(children=...)``). Embedding the widget state would need the widget
# manager from a CDN (unpkg), which fails offline; so the demo embeds a PNG of each panel as
# Chromium draws it (served by Voila on a fresh sandbox), or says plainly where to see it.

PANEL_CLASSES = {
    "ThresholdPanel": "qs-threshold-panel",
    "PlaybookEditor": "qs-playbook-editor",
    "RecommendationsPanel": "qs-recommendations-panel",
}
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
NO_PICTURE = (
    "[interactive panel: open this notebook in JupyterLab (make lab) or the panels as a page "
    "(make panels) to use it{why}]"
)


def panel_shots(quant_id: int = PANELS_QUANT, timeout_s: float = 180.0) -> dict[str, bytes]:
    """A PNG of each panel (by class name) as Chromium shows it, quant ``quant_id`` on a fresh
    sandbox; empty (and one line saying why) when Chromium, Voila or Playwright is missing or
    the page fails."""
    if not CHROMIUM.exists():
        print(f"  panels in the HTML: no pictures ({CHROMIUM} is missing: make chromium)")
        return {}
    try:
        return _shoot_panels(quant_id, timeout_s)
    except Exception as exc:  # a picture is a nicety: the demo goes on without it
        print(f"  panels in the HTML: no pictures ({type(exc).__name__}: {_short(exc)[:300]})")
        return {}


def _shoot_panels(quant_id: int, timeout_s: float) -> dict[str, bytes]:
    import socket
    import subprocess

    from playwright.sync_api import sync_playwright

    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="quantscope-panels-") as tmp:
        work = Path(tmp)
        notebook = work / PANELS_NOTEBOOK
        write_if_changed(panels_notebook(quant_id), notebook)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        env = kernel_env(work)
        env["MPLBACKEND"] = "Agg"
        argv = voila_argv(notebook, port=port, extra=["--no-browser"])
        with (work / "voila.log").open("wb") as log:
            voila = subprocess.Popen(argv, env=env, cwd=work, stdout=log, stderr=log)
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=str(CHROMIUM), args=list(CHROMIUM_ARGS)
                )
                page = browser.new_page(viewport={"width": 1200, "height": 900})
                page.route(
                    re.compile(r"^(?!https?://127\.0\.0\.1[:/])[a-z]+://"),
                    lambda route: route.abort(),
                )
                deadline = time.monotonic() + 60
                while True:  # Voila listens after a few seconds
                    try:
                        page.goto(f"http://127.0.0.1:{port}/", timeout=timeout_s * 1000)
                        break
                    except Exception:
                        if time.monotonic() > deadline or voila.poll() is not None:
                            raise
                        time.sleep(0.5)
                ms = timeout_s * 1000
                for css in PANEL_CLASSES.values():
                    page.locator(f".{css}").first.wait_for(state="visible", timeout=ms)
                opens = page.locator(".qs-open")
                for n in range(opens.count()):
                    if opens.nth(n).is_visible():
                        opens.nth(n).click()
                page.wait_for_timeout(4000)  # the figures and tables arrive
                shots = {
                    name: page.locator(f".{css}").first.screenshot()
                    for name, css in PANEL_CLASSES.items()
                }
                browser.close()
        finally:
            voila.terminate()
            voila.wait(timeout=30)
    print(f"  panels in the HTML: pictured with Chromium in {time.perf_counter() - started:.0f} s")
    return shots


def with_panel_pictures(nb: Any, shots: dict[str, bytes]) -> Any:
    """A copy of ``nb`` whose panel outputs show the panel's PNG (or a plain line saying where
    to use it) instead of the widget's text repr; for the demo HTML only (stored notebooks
    keep their outputs: nbval compares them)."""
    import copy

    shown = copy.deepcopy(nb)
    for cell in shown.cells:
        if cell.cell_type != "code":
            continue
        names = [n for n in PANEL_CLASSES if f"{n}(" in cell.source]
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if WIDGET_VIEW not in data:
                continue
            png = shots.get(names[0]) if names else None
            data.pop(WIDGET_VIEW)
            if png is None:
                why = "" if shots else "; no picture: Chromium was not available"
                data["text/plain"] = NO_PICTURE.format(why=why)
            else:
                data["image/png"] = base64.b64encode(png).decode("ascii")
                data["text/plain"] = f"[{names[0]}, as Chromium shows it (quant {PANELS_QUANT})]"
    return shown


# --- commands ------------------------------------------------------------------------------


def cmd_sync(names: Sequence[str], *, alone: bool) -> int:
    chosen = select(names)
    if not chosen:
        print(f"no notebook sources in {_shown(SOURCES)}")
        return 0
    everything = all_sources()
    last = everything.index(chosen[-1])
    to_run = chosen if alone else everything[: last + 1]
    failures = 0
    total = 0.0
    for done in run(to_run, label="  "):
        total += done.seconds
        if done.source not in chosen:
            continue
        if done.problems:
            failures += 1
            print(f"{done.source.stem}: not written, its outputs would not be stable:")
            for problem in done.problems:
                print(f"    {problem}")
            continue
        path = notebook_path(done.source)
        state = "written" if write_if_changed(done.nb, path) else "unchanged"
        print(f"    {_shown(path)} {state}")
    print(f"executed {len(to_run)} notebook(s) in {total:.1f} s")
    return 1 if failures else 0


def cmd_check(names: Sequence[str]) -> int:
    reasons = [r for r in (stale(s) for s in select(names)) if r]
    for reason in reasons:
        print(reason)
    if reasons:
        print("run `make notebooks` (python tools/notebooks.py sync) to regenerate them")
        return 1
    print(f"{len(select(names))} notebook(s) up to date with their sources")
    return 0


# Said before the demo's notebooks run: why a sandbox used earlier today cannot stop them.
DEMO_WORLD_LINE = (
    "notebooks: run on a sandbox world and cache of their own (fresh, temporary), each starting "
    "a fresh quota day: what your sandbox spent today does not count"
)


def cmd_demo(out: Path) -> int:
    from nbconvert import HTMLExporter

    out = out if out.is_absolute() else Path.cwd() / out
    figures = out / "figures"
    figures.mkdir(parents=True, exist_ok=True)
    exporter = HTMLExporter()
    written: list[Path] = []
    figure_paths: list[Path] = []
    shots = panel_shots()
    print(DEMO_WORLD_LINE, flush=True)
    for done in run(all_sources(), label="  "):
        for problem in done.problems:
            print(f"    warning: {problem}")
        stem = done.source.stem
        ipynb = out / f"{stem}.ipynb"
        ipynb.write_text(dumps(done.nb), encoding="utf-8")
        html, _ = exporter.from_notebook_node(
            with_panel_pictures(done.nb, shots), resources={"metadata": {"name": stem}}
        )
        page = out / f"{stem}.html"
        page.write_text(html, encoding="utf-8")
        written.append(page)
        for name, png in figure_files(done.nb, stem).items():
            path = figures / name
            path.write_bytes(png)
            figure_paths.append(path)
    if not written:
        print(f"no notebook sources in {_shown(SOURCES)}")
        return 0
    print()
    print(f"Open {_shown(written[0])} in a browser; every notebook is there:")
    for path in written:
        print(f"  {_shown(path)}")
    if figure_paths:
        print("Key figures:")
        for path in figure_paths:
            print(f"  {_shown(path)}")
    return 0


def _shown(path: Path) -> str:
    """``path`` relative to the working directory (else to the repository) when inside it."""
    for base in (Path.cwd(), ROOT):
        with contextlib.suppress(ValueError):
            return str(path.relative_to(base))
    return str(path)


def _venv_tool(name: str) -> Path:
    """The console script ``name`` of this interpreter's environment, else the one on PATH."""
    tool = Path(sys.executable).parent / name
    if tool.exists():
        return tool
    found = shutil.which(name)
    if found is None:
        raise SystemExit(
            f"{name} is not installed: `make install` installs it from the constraints "
            "(pip install -c constraints.txt -e '.[dev]')"
        )
    return Path(found)


def is_root() -> bool:
    """Whether this process runs as root (containers, dev containers)."""
    return hasattr(os, "geteuid") and os.geteuid() == 0


def lab_argv(extra: Sequence[str], *, root: bool | None = None) -> list[str]:
    """``jupyter lab`` on notebooks/ with ``extra`` arguments; ``--allow-root`` when run as
    root (JupyterLab refuses to start as root without it) and not already given."""
    argv = [str(_venv_tool("jupyter-lab")), str(NOTEBOOKS), *extra]
    if (is_root() if root is None else root) and "--allow-root" not in extra:
        argv.append("--allow-root")
    return argv


def cmd_lab(extra: Sequence[str]) -> int:
    """Replace this process with JupyterLab on notebooks/: the user's own sandbox world and
    cache, and the service variables (QUANTSCOPE_URL, QUANTSCOPE_API_KEY) passed through, so
    a notebook opened there talks to the service ``qs.connect()`` would pick in a shell."""
    argv = lab_argv(extra)
    os.execve(argv[0], argv, kernel_env(NOTEBOOKS, fresh=False))
    return 0  # pragma: no cover - execve does not return


# --- the panels as a page (Voila) ----------------------------------------------------------


def panels_notebook(quant_id: int = PANELS_QUANT, *, prelude: str = "") -> Any:
    """A notebook that shows the three panels of ``quant_id`` on one client (``qs.connect()``:
    the embedded sandbox, or the service of QUANTSCOPE_URL/QUANTSCOPE_API_KEY).

    ``prelude``: code run first (the browser tests give each kernel its own HTTP cache).
    """
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    cells = [
        new_markdown_cell(
            f"# quantscope panels: quant {quant_id}\n\n"
            "`ThresholdPanel`, `PlaybookEditor` and `RecommendationsPanel` on one client. Every "
            "write is shown first and confirmed, read back and logged; Undo restores only the "
            "panel's own change."
        )
    ]
    if prelude:
        cells.append(new_code_cell(prelude))
    cells.append(
        new_code_cell(
            "from IPython.display import display\n\n"
            "import quantscope as qs\n"
            "from quantscope.widgets import PlaybookEditor, RecommendationsPanel, ThresholdPanel\n"
            "\n"
            f"QUANT = {int(quant_id)}\n"
            "client = qs.connect()\n"
            "threshold_panel = ThresholdPanel(QUANT, client=client)\n"
            "editor = PlaybookEditor(QUANT, client=client)\n"
            "recommendations = RecommendationsPanel(QUANT, client=client)\n"
            "for panel in (threshold_panel, editor, recommendations):\n"
            "    display(panel)"
        )
    )
    return normalize(new_notebook(cells=cells))


#: quantscope's Voila template (``tools/voila/voila/templates/quantscope``): the lab template
#: without its CDN stylesheets. Voila finds templates on the Jupyter data path only.
VOILA_DATA = ROOT / "tools" / "voila"
#: The only labextensions the panels need: the widgets and Voila's manager of them. Others in
#: the venv (jupytext, from the dev tools) are built for a newer JupyterLab than Voila's and
#: log a module-federation error on every page.
VOILA_EXTENSIONS = ("@jupyter-widgets/jupyterlab-manager", "@voila-dashboards/widgets-manager8")
#: Seconds before Voila starts the kernel that refills the pre-heated pool, once a page took
#: one (``VoilaKernelManager.fill_delay``, default 1): on 2 cores a refill started at once
#: competes with the first page's kernel (measured 21.4 s -> 19.6 s with 30, under load).
#: 10: the first page's budget, then the next page is prepared.
VOILA_FILL_DELAY_S = 10


def voila_argv(
    notebook: Path,
    *,
    port: int | None = None,
    extra: Sequence[str] = (),
    preheat: bool = False,
) -> list[str]:
    """Voila serving ``notebook`` on loopback, without a token (loopback only), tracebacks
    shown in the page; ``port`` None: Voila's default (8866). A clean page: quantscope's
    template (no CDN request) and only the widgets' labextension (no console error); run
    through ``env`` to put the template's directory first on JUPYTER_PATH, whatever
    environment the caller passes.

    ``preheat``: keep one kernel that has already run the notebook (Voila's pre-heated kernel
    pool), so a page is served in about 4 s instead of 15-18 s here (a kernel's start, imports,
    the embedded sandbox and the panels' first loads); the pool refills
    ``VOILA_FILL_DELAY_S`` after each page (not at once: the page's kernel keeps the CPU). Off
    for the browser tests: they change the playbook between pages, and each page must show
    it as the service holds it when the page is asked for."""
    data_path = os.pathsep.join(
        [str(VOILA_DATA), *filter(None, os.environ.get("JUPYTER_PATH", "").split(os.pathsep))]
    )
    argv = [
        shutil.which("env") or "/usr/bin/env",
        f"JUPYTER_PATH={data_path}",
        str(_venv_tool("voila")),
        str(notebook),
        "--Voila.ip=127.0.0.1",
        "--ServerApp.token=",
        "--show_tracebacks=True",
        "--template=quantscope",
        f"--VoilaConfiguration.extension_allowlist={list(VOILA_EXTENSIONS)!r}",
    ]
    if preheat:
        argv += ["--preheat_kernel=True", f"--VoilaKernelManager.fill_delay={VOILA_FILL_DELAY_S}"]
    if port is not None:
        argv.append(f"--port={port}")
    return [*argv, *extra]


def cmd_panels(quant_id: int, out: Path, extra: Sequence[str]) -> int:
    """Replace this process with Voila serving the panels of ``quant_id`` (written to
    ``out/panels.ipynb``) on the embedded sandbox, or on the service of QUANTSCOPE_URL and
    QUANTSCOPE_API_KEY when they are set; with a pre-heated kernel (``voila_argv``)."""
    out = out if out.is_absolute() else Path.cwd() / out
    out.mkdir(parents=True, exist_ok=True)
    notebook = out / PANELS_NOTEBOOK
    write_if_changed(panels_notebook(quant_id), notebook)
    argv = voila_argv(notebook, extra=extra, preheat=True)
    print(
        f"Quant {quant_id}'s panels with Voila: open the address it prints (Ctrl-C stops). "
        "A page is prepared ahead (a pre-heated kernel): press Reload in a panel for the "
        "playbook as the service holds it now."
    )
    os.execve(argv[0], argv, kernel_env(NOTEBOOKS, fresh=False))
    return 0  # pragma: no cover - execve does not return


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="tools/notebooks.py",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True)
    sync = commands.add_parser("sync", help="regenerate notebooks/NN_name.ipynb, executed")
    sync.add_argument("names", nargs="*", metavar="NAME", help="notebooks to write (default all)")
    sync.add_argument(
        "--alone",
        action="store_true",
        help="do not run the notebooks before NAME first (faster; the cache starts empty)",
    )
    check = commands.add_parser("check", help="fail if a notebook is out of date with its source")
    check.add_argument("names", nargs="*", metavar="NAME")
    demo = commands.add_parser("demo", help="execute every notebook into OUT as .ipynb and .html")
    demo.add_argument("--out", type=Path, default=Path("build"), help="default: build")
    lab = commands.add_parser("lab", help="start JupyterLab on notebooks/")
    lab.add_argument("extra", nargs=argparse.REMAINDER, help="passed on to jupyter lab")
    panels = commands.add_parser("panels", help="serve the three panels as a page with Voila")
    panels.add_argument("--quant", type=int, default=PANELS_QUANT, help="default: 1")
    panels.add_argument("--out", type=Path, default=Path("build"), help="default: build")
    panels.add_argument("extra", nargs=argparse.REMAINDER, help="passed on to voila")
    # lab and panels pass what they do not know on (`make lab ARGS="--port=8899"`)
    args, unknown = parser.parse_known_args(list(argv) if argv is not None else None)
    if unknown and args.command not in ("lab", "panels"):
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    if args.command in ("lab", "panels"):
        args.extra = [*unknown, *args.extra]
    if args.command == "sync":
        return cmd_sync(args.names, alone=args.alone)
    if args.command == "check":
        return cmd_check(args.names)
    if args.command == "demo":
        return cmd_demo(args.out)
    if args.command == "panels":
        return cmd_panels(args.quant, args.out, args.extra)
    return cmd_lab(args.extra)


if __name__ == "__main__":
    raise SystemExit(main())
