"""``qsc.estimate`` prices a loader's plan (``loader.plan``): no request code runs, nothing is
sent or changed, and the price is what the load then spends (issue 23, "a load is a plan")."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from _helpers.http import ApiSession
from _helpers.quota import quota_left
from _helpers.widgets import smart_money

import quantscope as qs
import quantscope.loaders as L
from quantscope._changes import Change
from quantscope._http.client import Client
from quantscope._http.sender import Sender
from quantscope.loaders._planned import LoadPlan
from quantscope.sandbox.serve import SandboxServer

QUANT = 1
WINDOW = {"start": "2026-07-01", "end": "2026-07-31T23:59:59"}

pytestmark = pytest.mark.filterwarnings("ignore::quantscope.IncompleteDataWarning")


@dataclass(frozen=True)
class Ids:
    trade: int
    token: int
    evaluations: tuple[int, ...]


@pytest.fixture(scope="module")
def ids(sandbox: SandboxServer) -> Ids:
    with ApiSession(sandbox.url, sandbox.keys["enterprise"]) as s:
        trades = s.ok("/api/trades", quantId=QUANT, limit=3)["trades"]
        token = s.ok("/api/alpha-signals", quantId=QUANT, limit=1)["signals"][0]["tokenId"]
    return Ids(
        int(trades[0]["id"]), int(token), tuple(int(t["latest_evaluation"]["id"]) for t in trades)
    )


Call = tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]

#: Each GET loader, called cheaply on the test's ids.
CALLS: dict[str, Callable[[Ids], Call]] = {
    "trades": lambda i: (L.load_trades, (QUANT,), {**WINDOW, "page_size": 50}),
    "trade": lambda i: (L.load_trade, (i.trade,), {}),
    "trade_stats": lambda i: (L.load_trade_stats, (QUANT,), {}),
    "evaluations": lambda i: (L.load_evaluations, (QUANT,), {**WINDOW, "max_pages": 2}),
    "eval_timeseries": lambda i: (L.load_eval_timeseries, (QUANT,), WINDOW),
    "eval_count": lambda i: (L.load_eval_count, (QUANT,), WINDOW),
    "eval_details": lambda i: (L.load_eval_details, (list(i.evaluations),), {}),
    "eval_history": lambda i: (L.load_eval_history, (i.evaluations[0],), {}),
    "ohlcv": lambda i: (L.load_ohlcv, (i.token,), {"limit": 100}),
    "signals": lambda i: (L.load_signals, (QUANT,), {"limit": 50}),
    "signal_stats": lambda i: (L.load_signal_stats, (QUANT,), {"limit": 50}),
    "signal": lambda i: (L.load_signal, (i.token, QUANT), {}),
    "playbook": lambda i: (L.load_playbook, (QUANT,), {}),
    "dashboard": lambda i: (L.load_dashboard, (QUANT,), {}),
    "recommendations": lambda i: (L.load_recommendations, (QUANT,), {}),
}


def test_every_get_loader_is_planned() -> None:
    loaders = {n for n in L.__all__ if n.startswith("load_")}
    assert len(loaders) == len(CALLS) == 15
    for name in loaders:
        loader = getattr(L, name)
        assert callable(loader.plan)
        assert loader.__wrapped__ is loader.plan
        assert inspect.signature(loader).parameters == inspect.signature(loader.plan).parameters
        assert "LoadPlan" not in str(inspect.signature(loader).return_annotation)


def _refuse(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("qsc.estimate ran request code")


@pytest.mark.parametrize("name", CALLS)
def test_estimate_of_each_loader_runs_no_request_code_and_sends_nothing(
    name: str, ids: Ids, client: Client, sandbox: SandboxServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    for method in ("get", "get_many", "get_pages", "_fetch_batch", "_fetch_one"):
        monkeypatch.setattr(Client, method, _refuse)
    monkeypatch.setattr(Sender, "send", _refuse)
    monkeypatch.setattr(LoadPlan, "run", _refuse)
    loader, args, kwargs = CALLS[name](ids)
    left = quota_left(sandbox, "enterprise")
    cost = qs.estimate(loader, *args, **kwargs, client=client)
    assert quota_left(sandbox, "enterprise") == left
    many = len(ids.evaluations) if name == "eval_details" else 1
    assert (cost.requests, cost.cached) == (many, 0)  # a cold cache: a paged one's first page
    assert cost.exact is (name not in ("trades", "evaluations", "eval_history"))


@pytest.mark.parametrize("name", ["trades", "trade", "eval_details", "dashboard"])
def test_the_estimate_is_what_the_load_then_spends_on_a_cold_cache(
    name: str, ids: Ids, client: Client, sandbox: SandboxServer
) -> None:
    loader, args, kwargs = CALLS[name](ids)
    left = quota_left(sandbox, "enterprise")
    cost = qs.estimate(loader, *args, **kwargs, probe=True, client=client)
    assert cost.exact
    loader(*args, **kwargs, client=client)
    assert left - quota_left(sandbox, "enterprise") == cost.requests + cost.probed
    if name == "trades":  # 107 trades in July, 50 a page: the first page probed, two to go
        assert (cost.probed, cost.requests, cost.cached) == (1, 2, 1)
    again = qs.estimate(loader, *args, **kwargs, client=client)
    assert (again.requests, again.exact) == (0, True)


def test_pricing_a_fresh_read_changes_nothing_in_the_cache(
    client: Client, sandbox: SandboxServer
) -> None:
    L.load_playbook(QUANT, client=client)
    cost = qs.estimate(L.load_playbook, QUANT, fresh=True, client=client)
    assert (cost.requests, cost.cached) == (1, 0)  # a fresh read asks the service
    left = quota_left(sandbox, "enterprise")
    L.load_playbook(QUANT, client=client)  # the cached copy is still there
    assert quota_left(sandbox, "enterprise") == left


def test_estimate_takes_a_loader_or_a_partial_of_one_not_a_function_around_it(
    client: Client,
) -> None:
    cost = qs.estimate(functools.partial(L.load_trade_stats, QUANT), client=client)
    assert (cost.endpoint, cost.requests) == ("/api/trades/stats", 1)
    with pytest.raises(TypeError, match="takes a quantscope loader"):
        qs.estimate(lambda: L.load_trade_stats(QUANT, client=client))


def test_a_writes_estimate_is_what_it_sends_its_compare_and_swap_read_included(
    fresh_sandbox: Callable[..., SandboxServer], client_for: Callable[..., Client]
) -> None:
    server = fresh_sandbox()
    client = client_for(server)
    recs = L.load_recommendations(QUANT, applied=False, client=client)
    one = recs.drop_duplicates("config_id")  # each recommendation on its own entry
    row, by_id, forced = (one.iloc[i] for i in range(3))
    L.load_playbook(QUANT, client=client)  # cached: the check reads the service all the same
    writes: list[tuple[Callable[..., Any], Callable[[], tuple[Any, ...]], dict[str, Any], int]] = [
        (L.apply_recommendation, lambda: (row,), {}, 2),
        (L.apply_recommendation, lambda: (int(by_id["recommendation_id"]),), {}, 1),
        (L.apply_recommendation, lambda: (forced,), {"force": True}, 1),
        (L.run_analysis, lambda: (QUANT,), {}, 1),
        (L.update_playbook, lambda: (QUANT, [_seen(client, 1)]), {}, 2),
        (L.update_playbook, lambda: (QUANT, [_seen(client, 2)]), {"force": True}, 1),
        (L.update_playbook, lambda: (QUANT, [_seen(client, 3).request()]), {}, 1),
    ]
    for write, args, kwargs, sent in writes:
        given = args()
        cost = qs.estimate(write, *given, **kwargs, client=client)
        left = quota_left(server, "enterprise")
        write(*given, **kwargs, client=client)
        assert (cost.requests, left - quota_left(server, "enterprise")) == (sent, sent), write
        assert cost.write
        assert str(cost).startswith(f"{cost.endpoint}: a write, never cached: {sent} request")


def _seen(client: Client, step: float) -> Change:
    """A change of the playbook's smart-money threshold by ``step``, from what it holds now."""
    row = smart_money(L.load_playbook(QUANT, client=client))
    return Change.of(row, "threshold", float(row["threshold"]) + step)
