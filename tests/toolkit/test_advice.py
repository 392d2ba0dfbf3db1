"""Advice in the reader's own terms (issue 24 item 2): every error that says what to do gives
a Python caller the keyword, the command line its option and a panel its button, from one
table (``_advice``); never ``confirm=True`` or ``qsc.`` on the command line or in a panel.

The refusals are the real ones, triggered cheaply against the session sandbox (a growth key's
details over the share, over a ``max_requests``, over a reserve; a wrong key; an empty
offline cache) or built by the functions that build them (a stale write, an undo, the report's
total, a panel's details, settings without a key)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace

import pytest

import quantscope as qs
import quantscope.loaders as L
from quantscope._advice import ADVICE, render
from quantscope._changes import stale_write_error
from quantscope._cli_exit import error_line
from quantscope._client import Client
from quantscope._config import resolve_settings
from quantscope._errors import QuantscopeError, UndoRefusedError
from quantscope._estimate import Estimate
from quantscope.sandbox.serve import SandboxServer
from quantscope.widgets._common import _within_share

Trigger = Callable[[SandboxServer, Path], QuantscopeError]


def _refused(load: Callable[[], object]) -> QuantscopeError:
    try:
        load()
    except QuantscopeError as exc:
        return exc
    raise AssertionError("not refused")


def _ids(client: Client, n: int) -> list[int]:
    with warnings.catch_warnings():  # the growth plan's two chains: not what is tested here
        warnings.simplefilter("ignore", qs.IncompleteDataWarning)
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
    assert isinstance(stale, qs.StaleWriteError)

    def refuse() -> None:
        try:
            raise stale
        except qs.StaleWriteError:
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
    assert exc.advice and set(exc.advice) <= set(ADVICE)
    assert keyword in str(exc)  # the Python message is as it was
    line = error_line(exc)
    assert "=True" not in line and "qsc." not in line and "api_key=" not in line
    if option is not None:
        assert option in line
    panel = render(exc, "panel")
    assert "=True" not in panel and "qsc." not in panel and "details=" not in panel
    assert "max_requests" not in panel and "api_key=" not in panel and "qsc.connect" not in panel
    if button is not None:
        assert button.lower() in panel.lower()


def test_the_advice_table_gives_every_piece_three_renderings() -> None:
    for piece in ADVICE.values():
        assert piece.python, piece.key
        assert "=True" not in piece.cli and "qsc." not in piece.cli, piece.key
        assert "=True" not in piece.panel and "qsc." not in piece.panel, piece.key


def test_a_message_without_advice_is_the_same_everywhere() -> None:
    exc = UndoRefusedError("undo refused: undone before")
    assert exc.advice == ()
    assert render(exc, "cli") == render(exc, "panel") == str(exc)
