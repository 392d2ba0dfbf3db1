"""Advice in the reader's own terms (issue 24, items 2 and 3): every error that says what to do
gives a Python caller the keyword, the command line its option and a panel its button, from one
table (``quantscope._advice``); never ``confirm=True`` or ``qsc.`` on the command line or in a
panel. The advice is set where the error is raised (``exc.said``, ``exc.advice``).

The refusals are the real ones, triggered cheaply against the session sandbox (a growth key's
details over the share, over a ``max_requests``, over a reserve; a wrong key; an empty offline
cache) or built by the functions that build them (a stale write, an undo, the report's total, a
panel's details, settings without a key, the command line's pre-flight). Text no error builds
(warnings, the sync's messages) is still reworded by regular expression (``_advice.IN_TEXT``):
every message literal of the toolkit that keeps Python advice is listed here, rendered for the
command line and for a panel, and none keeps Python's advice. A panel's offer to spend names
the host it spends on.
"""

from __future__ import annotations

import ast
import re
import warnings
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace

import pytest
from _helpers import QUANT, WidgetData, share_refusal

import quantscope as qsc
import quantscope.loaders as L
from quantscope._advice import ADVICE, Said, render
from quantscope._changes import stale_write_error
from quantscope._config import resolve_settings
from quantscope._errors import (
    QuantscopeError,
    QuotaShareExceededError,
    QuotaWouldBeExceededError,
    UndoRefusedError,
)
from quantscope._http.client import Client
from quantscope._http.estimate import Estimate
from quantscope.cli.exit import error_line
from quantscope.sandbox.serve import SandboxServer
from quantscope.widgets import ThresholdPanel
from quantscope.widgets._format import service_host
from quantscope.widgets._offer import _within_share, opening_offer

SRC = Path(qsc.__file__).resolve().parent
#: Python advice the command line has options for: spending, the service, the key, the cache.
PYTHON = re.compile(
    r"\b(confirm|partial|force|offline)=True\b|\bmax_requests=|\bpass (url|api_key|cache_dir)="
    r"|\b(url|api_key)= or|qsc\.connect\((offline|api_key)"
)
#: What a panel never says: the keywords its buttons stand for.
PANEL_NEVER = re.compile(r"\b(confirm|partial|force|max_requests)=")


def _messages() -> list[tuple[str, str]]:
    """Every string literal of the toolkit that gives Python advice (docstrings and the
    sandbox's aside), an f-string's fields as ``7``: (where, text)."""
    found = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel.startswith("sandbox/") or rel == "_advice.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and node.body
            and isinstance(node.body[0], ast.Expr)
        }
        parts = {  # an f-string's pieces: read whole, with their f-string
            id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values
        }
        for node in ast.walk(tree):
            if id(node) in docs or id(node) in parts:
                continue
            if isinstance(node, ast.JoinedStr):
                text = "".join(v.value if isinstance(v, ast.Constant) else "7" for v in node.values)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                text = node.value
            else:
                continue
            if PYTHON.search(text) and " " in text.strip():  # a sentence, not a code string
                found.append((f"{rel}:{node.lineno}", text))
    return found


MESSAGES = _messages()


#: Where text with Python advice is still written, not built as a ``Said``: an estimate's
#: notes (shown in Python only), a bundle's warning, the sync's refusals and notes, a setting's
#: description. The command line and the panels reword it with ``_advice.IN_TEXT``.
STILL_IN_TEXT = {
    "_config.py",
    "_http/estimate.py",
    "_reprs.py",
    "catalog/bundle_export.py",
    "catalog/sync.py",
}


def test_only_text_no_error_builds_still_gives_python_advice() -> None:
    """Every error that gives advice builds a ``Said``: the literals that still say Python's
    advice are only in the modules named above (a new one fails here: build a ``Said``)."""
    assert {where.split(":")[0] for where, _ in MESSAGES} == STILL_IN_TEXT


@pytest.mark.parametrize(("where", "text"), MESSAGES, ids=[m[0] for m in MESSAGES])
def test_no_message_keeps_python_advice_at_the_cli_or_in_a_panel(where: str, text: str) -> None:
    assert not PYTHON.search(render(text, "cli")), render(text, "cli")
    assert not PANEL_NEVER.search(render(text, "panel")), render(text, "panel")


def test_each_advice_has_its_three_renderings() -> None:
    said = Said("636 more requests: {confirm} to spend them, or {narrow}.", values={"cost": 836})
    assert said.keys == ("confirm", "narrow")
    assert said.render("python") == (
        "636 more requests: pass confirm=True (or max_requests=836) to spend them, or narrow "
        "the load; qsc.estimate(...) tells the cost first."
    )
    assert said.render("cli") == (
        "636 more requests: add --confirm (or --max-requests 836) to spend them, or narrow the "
        "scope (fewer ids, --quant, --start/--end)."
    )
    assert said.render("panel") == (
        "636 more requests: press Open to spend them, or narrow the selection."
    )
    both = Said("{Advice}: it fetches the 40 that fit now", ("wait_for_reset", "partial_confirm"),
                {"reset": "00:00 UTC"})  # fmt: skip
    assert both.render("python") == (
        "Run the same load after the reset at 00:00 UTC, or pass partial=True, confirm=True: "
        "it fetches the 40 that fit now"
    )
    assert both.render("cli") == (
        "Run the same command after the reset at 00:00 UTC, or add --partial --confirm: it "
        "fetches the 40 that fit now"
    )
    error = QuantscopeError(Said("offline: {offline} answers from the cache"))
    assert error.advice == ("offline",)
    assert error.said is not None
    assert str(error) == "offline: qsc.connect(offline=True) answers from the cache"
    assert render(error, "cli") == "offline: --offline answers from the cache"
    assert {"confirm", "partial", "max_requests", "force", "offline"} <= set(ADVICE)


def test_text_no_error_builds_is_reworded_by_expression() -> None:
    """A warning's or the sync's text (no ``Said``): ``render`` rewords its Python advice."""
    said = "636 more requests: pass confirm=True (or max_requests=836) to spend them."
    assert render(said, "python") == said
    assert (
        render(said, "cli")
        == "636 more requests: use --confirm (or --max-requests 836) to spend them."
    )
    assert render(said, "panel") == "636 more requests: press Open to spend them."
    both = "or pass partial=True, confirm=True: it fetches the 40 that fit now"
    assert render(both, "cli") == "or use --partial --confirm: it fetches the 40 that fit now"
    assert render(both, "panel") == "or press Open what fits: it fetches the 40 that fit now"
    assert QuantscopeError(said).advice == ()  # the keys come with a ``Said`` only


Trigger = Callable[[SandboxServer, Path], QuantscopeError]


def _refused(load: Callable[[], object]) -> QuantscopeError:
    try:
        load()
    except QuantscopeError as exc:
        return exc
    raise AssertionError("not refused")


def _ids(client: Client, n: int) -> list[int]:
    with warnings.catch_warnings():  # the growth plan's two chains: not what is tested here
        warnings.simplefilter("ignore", qsc.IncompleteDataWarning)
        frame = L.load_evaluations(page_size=200, max_pages=1, client=client)
    return [int(i) for i in frame["evaluation_id"].iloc[:n]]


def _growth(server: SandboxServer, tmp: Path, **kw: object) -> Client:
    return Client(server.url, server.keys["growth"], cache_dir=str(tmp), progress=False, **kw)  # type: ignore[arg-type]


def share(server: SandboxServer, tmp: Path) -> QuantscopeError:
    client = _growth(server, tmp)
    return _refused(lambda: L.load_eval_details(_ids(client, 130), client=client))


def ceiling(server: SandboxServer, tmp: Path) -> QuantscopeError:
    client = _growth(server, tmp)
    return _refused(lambda: L.load_eval_details(_ids(client, 130), max_requests=100, client=client))


def does_not_fit(server: SandboxServer, tmp: Path) -> QuantscopeError:
    client = _growth(server, tmp, quota_reserve=450)
    return _refused(lambda: L.load_eval_details(_ids(client, 130), client=client))


def wrong_key(server: SandboxServer, tmp: Path) -> QuantscopeError:
    client = Client(server.url, "qs_not_a_key", cache_dir=str(tmp), progress=False)
    return _refused(lambda: L.load_evaluations(page_size=10, max_pages=1, client=client))


def offline_miss(server: SandboxServer, tmp: Path) -> QuantscopeError:
    client = _growth(server, tmp, offline=True)
    return _refused(lambda: L.load_evaluations(page_size=10, max_pages=1, client=client))


def no_key(server: SandboxServer, tmp: Path) -> QuantscopeError:
    return _refused(lambda: resolve_settings(url=server.url, env={}))


def stale_write(server: SandboxServer, tmp: Path) -> QuantscopeError:
    change = SimpleNamespace(where="quant 1 entry x", old_value=0.5)
    return stale_write_error([(change, 0.7)])  # type: ignore[list-item]


def undo(server: SandboxServer, tmp: Path) -> QuantscopeError:
    from quantscope import audit

    stale = stale_write(server, tmp)
    assert isinstance(stale, qsc.StaleWriteError)

    def refuse() -> None:
        try:
            raise stale
        except qsc.StaleWriteError:
            raise audit._undo_refused(stale) from None

    return _refused(refuse)


def panel_details(server: SandboxServer, tmp: Path) -> QuantscopeError:
    cost = Estimate(
        endpoint="/api/evaluations/{id}",
        requests=300,
        cached=0,
        exact=True,
        remaining=400,
        limit=500,
        reset=datetime(2026, 1, 2, tzinfo=UTC),
        share=0.25,
    )
    return _refused(lambda: _within_share(cost, 5))


def report_total(server: SandboxServer, tmp: Path) -> QuantscopeError:
    from quantscope.reporting.build import _check_share

    client = _growth(server, tmp)
    _ids(client, 1)  # the quota is now known
    priced = [
        Estimate("/api/evaluations/{id}", 400, 0, True, 499, 500, None, 0.25),
    ]
    return _refused(lambda: _check_share("quant 1", priced, client, False))


def preflight_ceiling(server: SandboxServer, tmp: Path) -> QuantscopeError:
    """The command line's own refusal before any request: over ``--max-requests``."""
    from quantscope.cli.preflight import refuse_early

    cost = Estimate("/api/evaluations/{id}", 300, 0, True, None, None, None, 0.25)
    client = _growth(server, tmp)
    refused = _refused(lambda: refuse_early(cost, {"max_requests": 100}, client))
    assert isinstance(refused, QuotaShareExceededError)
    assert refused.ceiling == 100
    assert str(refused) == (  # the Python text as it was
        "/api/evaluations/{id} needs 300 requests, more than max_requests=100: sent nothing. "
        "Raise max_requests, or pass partial=True to fetch what it allows."
    )
    return refused


# (trigger, the keyword the Python message names, the option the command line's names or None
# when the command line has no such option, the panel's button or None)
CASES = [
    (share, "confirm=True", "--confirm", "press Open"),
    (ceiling, "max_requests=100", "--max-requests", None),
    (does_not_fit, "partial=True", "--partial", "press Open what fits"),
    (wrong_key, "qsc.connect()", None, None),
    (offline_miss, "offline=True", "--offline", None),
    (no_key, "api_key=", None, None),
    (stale_write, "force=True", None, "press Reload"),
    (undo, "force=True", None, "press Reload"),
    (panel_details, "confirm=True", "--confirm", "press Open"),
    (report_total, "confirm=True", "--confirm", "press Open"),
    (preflight_ceiling, "max_requests=100", "Raise --max-requests to 300", None),
]


@pytest.mark.parametrize(
    ("trigger", "keyword", "option", "button"), CASES, ids=[c[0].__name__ for c in CASES]
)
def test_each_reader_gets_the_advice_in_its_own_terms(
    trigger: Trigger,
    keyword: str,
    option: str | None,
    button: str | None,
    sandbox: SandboxServer,
    tmp_path: Path,
) -> None:
    exc = trigger(sandbox, tmp_path)
    assert exc.advice
    assert set(exc.advice) <= set(ADVICE)
    assert keyword in str(exc)  # the Python message is as it was
    line = error_line(exc)
    assert "=True" not in line
    assert "qsc." not in line
    assert "api_key=" not in line
    if option is not None:
        assert option in line
    panel = render(exc, "panel")
    assert "=True" not in panel
    assert "qsc." not in panel
    assert "details=" not in panel
    assert "max_requests" not in panel
    assert "api_key=" not in panel
    assert "qsc.connect" not in panel
    if button is not None:
        assert button.lower() in panel.lower()


def test_the_advice_table_gives_every_piece_three_renderings() -> None:
    for piece in ADVICE.values():
        assert piece.python, piece.key
        assert "=True" not in piece.cli, piece.key
        assert "qsc." not in piece.cli, piece.key
        assert "=True" not in piece.panel, piece.key
        assert "qsc." not in piece.panel, piece.key


def test_a_message_without_advice_is_the_same_everywhere() -> None:
    exc = UndoRefusedError("undo refused: undone before")
    assert exc.advice == ()
    assert render(exc, "cli") == render(exc, "panel") == str(exc)


def test_a_refusal_names_the_keyword_in_python_the_option_at_the_cli_the_button_in_a_panel(
    sandbox: SandboxServer,
    client_for: Callable[..., Client],
    widget_data: WidgetData,
) -> None:
    client = client_for(sandbox, "growth")
    with pytest.raises(QuotaWouldBeExceededError) as refused:  # 600 ids, Growth's 500 a day
        qsc.load_eval_details(list(range(1, 601)), client=client)
    python = str(refused.value)  # the "pass partial=True, confirm=True"
    assert "pass partial=True, confirm=True" in python
    assert refused.value.advice == ("wait_for_reset", "partial_confirm", "again")
    cli = error_line(refused.value)
    assert "--partial" in cli, cli
    assert not PYTHON.search(cli), cli
    panel = ThresholdPanel(
        QUANT, client=client, trades=widget_data.trades, details=widget_data.details
    )
    panel.failed(refused.value)
    shown = panel.message.value
    assert "press Open what fits" in shown, shown
    assert not PANEL_NEVER.search(shown), shown


def test_an_offer_to_spend_names_the_host(
    sandbox: SandboxServer, client_for: Callable[..., Client]
) -> None:
    client = client_for(sandbox, "growth")
    host = service_host(client)
    assert host.startswith("127.0.0.1:")
    assert "configured URL" not in host
    for offer in (
        opening_offer(share_refusal(300, 498), "the trades", host),
        opening_offer(share_refusal(600, 498), "the trades", host),
    ):
        assert f"on {host}" in offer.text, offer.text


def test_a_panel_offering_to_spend_names_the_host(
    sandbox: SandboxServer, client_for: Callable[..., Client], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The panel's own opening path (its load refused over the share, stood in for here: the
    real one costs a whole load) offers the spend on the host it goes to."""
    import quantscope.widgets.threshold as threshold

    def refused(*_: object, **__: object) -> None:
        raise share_refusal(300, 498)

    monkeypatch.setattr(threshold, "load_research", refused)
    client = client_for(sandbox, "growth")
    panel = ThresholdPanel(QUANT, client=client)
    assert panel.open_button.description == "Open: spend 300 requests"
    assert f"300 more requests on {service_host(client)} (" in panel.message.value
