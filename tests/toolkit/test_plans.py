"""The spec's plan table (``_plans``): as the spec writes it, and as the sandbox enforces it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import quantscope.loaders as L
from quantscope._errors import PlanNotAllowedError
from quantscope._http.client import Client
from quantscope._plans import (
    CAPABILITIES,
    PLANS,
    first_plan_for,
    plan_allows,
    plan_for_limit,
    plan_named,
)
from quantscope.sandbox.serve import SandboxServer


def test_the_table_is_the_spec_s() -> None:
    assert [(p.title, p.daily_limit, p.chains) for p in PLANS] == [
        ("Basic", 100, 1),
        ("Growth", 500, 2),
        ("Enterprise", 5000, None),
    ]
    assert plan_named("growth") is PLANS[1]
    with pytest.raises(KeyError):
        plan_named("platinum")


def test_plan_names_from_daily_limits() -> None:
    assert [plan_for_limit(n) for n in (100, 500, 5000, 77, None)] == [
        "basic",
        "growth",
        "enterprise",
        None,
        None,
    ]


def test_what_a_plan_allows() -> None:
    assert [plan_allows(p, "read_playbook") for p in ("basic", "growth", "enterprise")] == [
        False,
        True,
        True,
    ]
    assert [plan_allows(p, "optimizer") for p in ("basic", "growth", "enterprise")] == [
        False,
        False,
        True,
    ]
    assert plan_allows(None, "optimizer") is None
    assert plan_allows("custom", "eval_details") is None


def test_the_first_plan_of_an_endpoint_depends_on_the_method() -> None:
    assert first_plan_for("GET", "/api/eval-details") == "growth"
    assert first_plan_for("GET", "/api/refine-eval/dashboard") == "enterprise"
    assert first_plan_for("GET", "/api/degen/config") == "growth"
    assert first_plan_for("PUT", "/api/degen/config") == "enterprise"
    assert first_plan_for("GET", "/api/trades") is None


# One request per capability, as the toolkit makes it.
REQUESTS: dict[str, Callable[[Client], Any]] = {
    "eval_details": lambda c: L.load_eval_details([1], client=c),
    "alpha_signals": lambda c: L.load_signals(client=c),
    "read_playbook": lambda c: L.load_playbook(1, client=c),
    "write_playbook": lambda c: L.update_playbook(1, [{"config_id": "x", "value": 1}], client=c),
    "optimizer": lambda c: L.load_dashboard(1, client=c),
}


def _below(plan: str) -> str:
    return PLANS[[p.name for p in PLANS].index(plan) - 1].name


@pytest.mark.parametrize("capability", sorted(CAPABILITIES))
def test_the_sandbox_refuses_each_capability_to_the_plan_below(
    capability: str, sandbox: SandboxServer, tmp_path: Path
) -> None:
    needed = CAPABILITIES[capability].plan
    small = Client(
        sandbox.url, sandbox.keys[_below(needed)], cache_dir=str(tmp_path), progress=False
    )
    try:
        with pytest.raises(PlanNotAllowedError) as refused:
            REQUESTS[capability](small)
        assert plan_allows(small.quota.plan, capability) is False
        assert f"{needed.title()} or higher does" in str(refused.value)
    finally:
        small.close()


# Growth covers 2 of the 3 chains: the signals say so (IncompleteDataWarning, test_loaders).
@pytest.mark.filterwarnings("ignore::quantscope.IncompleteDataWarning")
@pytest.mark.parametrize("capability", ["eval_details", "alpha_signals", "read_playbook"])
def test_the_sandbox_serves_each_read_capability_to_its_plan(
    capability: str, sandbox: SandboxServer, tmp_path: Path
) -> None:
    needed = CAPABILITIES[capability].plan
    client = Client(sandbox.url, sandbox.keys[needed], cache_dir=str(tmp_path), progress=False)
    try:
        frame = REQUESTS[capability](client)
        assert len(frame) > 0
        assert plan_allows(client.quota.plan, capability) is True
    finally:
        client.close()
