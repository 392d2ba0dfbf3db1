"""Loaders say what a frame lacks and refuse what they cannot read, against the real sandbox:
capped recommendation lists, a plan's chain allowance, id arguments, the /api base URL,
messages said once, progress totals that count every page."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from _helpers import quota_left

import quantscope as qs
import quantscope.loaders as L
from quantscope._http.client import Client
from quantscope.sandbox.serve import SandboxServer

EVALUATION = 48799  # an evaluation of the seed-7 world with 18 criterion results


def make(server: SandboxServer, plan: str, cache: Path, **kwargs: Any) -> Client:
    kwargs.setdefault("progress", False)
    return Client(server.url, server.keys[plan], cache_dir=str(cache), **kwargs)


# --- capped lists ---------------------------------------------------------------------------


def test_a_capped_recommendation_list_says_how_many_the_analysis_generated(
    fresh_sandbox: Callable[..., SandboxServer], tmp_path: Path
) -> None:
    client = make(fresh_sandbox(), "enterprise", tmp_path)
    run = L.run_analysis(2, client=client)
    assert run["recommendations_generated"] == 22
    with pytest.warns(qs.IncompleteDataWarning, match="generated 22, so at least 2 are not"):
        recs = L.load_recommendations(2, applied=False, client=client)
    assert len(recs) == 20
    (capped,) = recs.attrs["quantscope"]["capped"]
    assert {k: capped[k] for k in ("list", "shown", "cap", "generated")} == {
        "list": "recentRecommendations",
        "shown": 20,
        "cap": 20,
        "generated": 22,
    }
    with pytest.warns(qs.IncompleteDataWarning, match="generated 22"):
        dashboard = L.load_dashboard(2, client=client)
    assert dashboard.recent.attrs["quantscope"]["capped"][0]["generated"] == 22
    assert "capped" not in dashboard.applied.attrs["quantscope"]  # none applied


def test_a_list_at_the_cap_says_there_may_be_more_and_a_short_one_says_nothing(
    sandbox: SandboxServer, client: Client
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # not known to be cut short: attrs only
        recs = L.load_recommendations(2, applied=False, client=client)
        applied = L.load_recommendations(2, applied=True, client=client)
    (capped,) = recs.attrs["quantscope"]["capped"]
    assert len(recs) == 20
    assert capped["generated"] is None
    assert "there may be more" in capped["message"]
    assert len(applied) < 20
    assert "capped" not in applied.attrs["quantscope"]


# --- a plan's chains ------------------------------------------------------------------------


def test_a_plan_that_narrows_a_frame_to_its_chains_says_so(
    sandbox: SandboxServer, tmp_path: Path
) -> None:
    basic = make(sandbox, "basic", tmp_path / "basic")
    with pytest.warns(qs.IncompleteDataWarning, match="basic plan covers 1 chain"):
        trades = L.load_trades(client=basic)
    assert set(trades["chain"].astype(str)) == {"SOLANA"}
    expected = {"plan": "basic", "chains_allowed": 1, "chains_in_frame": ["SOLANA"]}
    assert trades.attrs["quantscope"]["plan_chains"] == expected
    with pytest.warns(qs.IncompleteDataWarning, match="basic plan covers 1 chain"):
        again = L.load_trades(client=basic)  # from the frame cache: still said
    assert again.attrs["quantscope"]["from_cache"] is True
    assert again.attrs["quantscope"]["plan_chains"] == expected
    with pytest.warns(qs.IncompleteDataWarning, match="basic plan covers 1 chain"):
        count = L.load_eval_count(start="2026-07-01", end="2026-10-01", client=basic)
    assert count.attrs["quantscope"]["plan_chains"]["plan"] == "basic"

    enterprise = make(sandbox, "enterprise", tmp_path / "enterprise")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        named = L.load_trades(chain="SOLANA", client=basic)  # the request named the chain
        everything = L.load_trades(client=enterprise)
    assert "plan_chains" not in named.attrs["quantscope"]
    assert "plan_chains" not in everything.attrs["quantscope"]
    assert len(everything) > len(trades)


# --- id arguments ---------------------------------------------------------------------------


def test_an_id_may_be_an_int_a_numpy_integer_or_a_string_of_digits(
    sandbox: SandboxServer, client: Client
) -> None:
    by_int = L.load_eval_details(EVALUATION, client=client)
    assert len(by_int) == 18
    assert set(by_int["evaluation_id"]) == {EVALUATION}
    for same in (str(EVALUATION), np.int64(EVALUATION), [str(EVALUATION)], (EVALUATION,)):
        pd.testing.assert_frame_equal(L.load_eval_details(same, client=client), by_int)
    many = L.load_eval_details(pd.Series([EVALUATION, EVALUATION - 1]), client=client)
    assert list(many["evaluation_id"].unique()) == [EVALUATION, EVALUATION - 1]
    trade_id = int(L.load_trades(1, max_pages=1, page_size=5, client=client)["trade_id"].iloc[0])
    listed = L.load_trade(trade_id, client=client).trade
    for same in (np.int32(trade_id), str(trade_id)):
        pd.testing.assert_frame_equal(L.load_trade(same, client=client).trade, listed)


@pytest.mark.parametrize(
    ("call", "named"),
    [
        (lambda c: L.load_eval_details(4.5, client=c), "evaluation_ids"),
        (lambda c: L.load_eval_details([EVALUATION, True], client=c), r"evaluation_ids\[1\]"),
        (lambda c: L.load_eval_details("48799,48798", client=c), "evaluation_ids"),
        (lambda c: L.load_trade("abc", client=c), "trade_id"),
        (lambda c: L.load_trade(None, client=c), "trade_id"),
        (lambda c: L.load_trades(quant_id=1.5, client=c), "quant_id"),
        (lambda c: L.load_ohlcv(np.bool_(True), client=c), "token_id"),
        (lambda c: L.load_playbook("one", client=c), "quant_id"),
    ],
)
def test_anything_else_is_a_type_error_naming_the_argument_before_any_request(
    call: Callable[[Client], Any], named: str, fresh_sandbox: Callable[..., SandboxServer]
) -> None:
    server = fresh_sandbox()
    client = make(server, "enterprise", server.info.db_path.parent / "cache")
    with pytest.raises(TypeError, match=f"^{named} must be an id"):
        call(client)
    assert quota_left(server, "enterprise") == 5000  # nothing was sent


# --- messages -------------------------------------------------------------------------------


def test_a_base_url_ending_in_api_is_refused_with_the_fix(
    sandbox: SandboxServer, tmp_path: Path
) -> None:
    for suffix in ("/api", "/api/"):
        with pytest.raises(qs.ConfigurationError) as info:
            Client(sandbox.url + suffix, sandbox.keys["basic"], cache_dir=str(tmp_path))
        assert str(info.value) == (
            "the service URL from argument ends in /api, but endpoints already start with "
            f"/api/: use {sandbox.url!r} instead"
        )


def test_error_messages_say_each_thing_once(sandbox: SandboxServer, tmp_path: Path) -> None:
    basic = make(sandbox, "basic", tmp_path)
    with pytest.raises(qs.NotFoundError) as missing:
        basic.get("/api/trades/{id}", {"id": 99999999})
    assert str(missing.value).count("99999999") == 1
    assert missing.value.service_message == "no trade with id 99999999"
    with pytest.raises(qs.PlanNotAllowedError) as plan:
        basic.get("/api/eval-details", {"evaluationId": 1})
    assert str(plan.value).lower().count("growth") == 1
    with pytest.raises(qs.ChainNotAllowedError) as chain:
        basic.get("/api/trades", {"chain": "BSC"})
    assert str(chain.value).count("BSC") == 1
    for error in (missing.value, plan.value, chain.value):
        assert "\n" not in str(error)


def test_progress_totals_count_the_first_page(
    sandbox: SandboxServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    client = make(sandbox, "enterprise", tmp_path, progress=True)
    frame = L.load_trades(1, page_size=100, max_pages=5, client=client)
    assert frame.attrs["quantscope"]["pages"] == 5
    err = capsys.readouterr().err
    assert "/5 " in err
    assert "/4 " not in err
