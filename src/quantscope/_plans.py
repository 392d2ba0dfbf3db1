"""The spec's plan table, once: names in order, daily limits, chains, and what each plan adds.

The spec ("Plans", "Limits") lists Basic (100 requests a day, 1 chain), Growth (500, 2 chains;
detailed evaluation reports, realtime alpha signals, the basic playbook) and Enterprise (5000,
every chain; the advanced playbook, the AI optimizer). Which endpoint needs which plan is not
in the spec: ``CAPABILITIES`` records what the sandbox enforces (docs/service-contract.md).

The toolkit only reads this table to word messages and to disable buttons a plan cannot use:
the service decides, the toolkit never refuses a request on its own. Users of the table:
``_http.quota`` (the plan of a daily limit), ``_errors`` (the plan an endpoint needs, for a 403's
message) and ``widgets`` (whether a panel's plan may write, and the sentence saying who can).
"""

from __future__ import annotations

from dataclasses import dataclass

from quantscope._routes import ROUTES

__all__ = [
    "CAPABILITIES",
    "PLANS",
    "Capability",
    "Plan",
    "first_plan_for",
    "plan_allows",
    "plan_for_limit",
    "plan_named",
]


@dataclass(frozen=True)
class Plan:
    """One row of the spec's plan table. ``chains`` is None for "unlimited"."""

    name: str
    daily_limit: int
    chains: int | None

    @property
    def title(self) -> str:
        """The plan's name as the spec writes it: ``Growth``."""
        return self.name.title()


@dataclass(frozen=True)
class Capability:
    """Something a plan may do: the smallest plan that includes it, and its endpoints.

    An endpoint is a path prefix, optionally after a method (``PUT /api/degen/config``) when
    only that method needs the plan.
    """

    plan: str
    endpoints: tuple[str, ...]


#: The spec's plans, smallest first.
PLANS: tuple[Plan, ...] = (
    Plan("basic", 100, 1),
    Plan("growth", 500, 2),
    Plan("enterprise", 5000, None),
)

#: The smallest plan of each capability (Basic: trades and evaluation summaries).
_FIRST_PLAN = {
    "eval_details": "growth",
    "alpha_signals": "growth",
    "read_playbook": "growth",
    "write_playbook": "enterprise",
    "optimizer": "enterprise",
}


def _endpoints_of(capability: str) -> tuple[str, ...]:
    """``METHOD prefix`` of every registry route that declares ``capability``."""
    found = (f"{e.method} {e.prefix}" for e in ROUTES if e.capability == capability)
    return tuple(dict.fromkeys(found))


#: What each plan adds to the one before it; the routes come from the endpoint registry.
CAPABILITIES: dict[str, Capability] = {
    name: Capability(plan, _endpoints_of(name)) for name, plan in _FIRST_PLAN.items()
}

_BY_NAME = {plan.name: plan for plan in PLANS}
_BY_LIMIT = {plan.daily_limit: plan.name for plan in PLANS}
_RANK = {plan.name: rank for rank, plan in enumerate(PLANS)}


def plan_named(name: str) -> Plan:
    """The plan called ``name`` (``basic``, ``growth``, ``enterprise``); KeyError otherwise."""
    return _BY_NAME[name]


def plan_for_limit(limit: int | None) -> str | None:
    """The plan whose daily limit is ``limit``, or None when it is not one of the table's."""
    return _BY_LIMIT.get(limit) if limit is not None else None


def plan_allows(plan: str | None, capability: str) -> bool | None:
    """Whether ``plan`` includes ``capability`` (a key of ``CAPABILITIES``); None when the
    plan is not known (then try, and handle the service's 403).
    """
    if plan not in _RANK:
        return None
    return _RANK[plan] >= _RANK[CAPABILITIES[capability].plan]


def first_plan_for(method: str, endpoint: str) -> str | None:
    """The smallest plan that includes ``method endpoint``, or None when any plan does (or
    the table does not say).
    """
    for capability in CAPABILITIES.values():
        for prefix in capability.endpoints:
            verb, _, path = prefix.rpartition(" ")
            if (not verb or verb == method) and endpoint.startswith(path):
                return capability.plan
    return None
