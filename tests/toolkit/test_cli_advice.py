"""Advice in the words of where the user is (issue 24, items 2 and 3).

The library words its errors for Python ("pass confirm=True"); the command line shows its
options (``--confirm``) and a panel its buttons (Open, Open what fits), from one table
(``quantscope._advice``). Every message literal of the toolkit is rendered for the command
line and for a panel here, and none keeps Python's advice; a real refusal says the keyword in
Python, the option at the command line and the button in a panel. A panel's offer to spend
names the host it spends on.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from _helpers import QUANT, WidgetData, share_refusal

import quantscope as qsc
from quantscope._advice import ADVICE, advice_of, render
from quantscope._cli_exit import error_line
from quantscope._client import Client
from quantscope._errors import (
    QuantscopeError,
    QuotaWouldBeExceededError,
)
from quantscope.sandbox.serve import SandboxServer
from quantscope.widgets import ThresholdPanel
from quantscope.widgets._common import opening_offer, service_host

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


def test_the_toolkit_has_messages_with_python_advice() -> None:
    assert len(MESSAGES) >= 10  # the walk finds them (else the next test proves nothing)


@pytest.mark.parametrize(("where", "text"), MESSAGES, ids=[m[0] for m in MESSAGES])
def test_no_message_keeps_python_advice_at_the_cli_or_in_a_panel(where: str, text: str) -> None:
    assert not PYTHON.search(render(text, "cli")), render(text, "cli")
    assert not PANEL_NEVER.search(render(text, "panel")), render(text, "panel")


def test_each_advice_has_its_three_renderings() -> None:
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
    assert advice_of(both) == ("partial", "confirm")
    assert advice_of(said) == ("confirm",)
    stale = (
        "stale write refused, nothing was written: x. Reload before writing, or pass "
        "force=True to overwrite."
    )
    assert advice_of(stale) == ("force",)
    assert (
        render(stale, "panel")
        == "stale write refused, nothing was written: x. Reload before writing."
    )
    error = QuantscopeError("offline: qsc.connect(offline=True) answers from the cache")
    assert error.advice == ("offline",)
    assert "add --offline" in render(str(error), "cli")
    assert {a.key for a in ADVICE} >= {"confirm", "partial", "max_requests", "force", "offline"}


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
    assert refused.value.advice == ("partial", "confirm")
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
