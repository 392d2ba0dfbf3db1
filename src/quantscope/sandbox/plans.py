"""The subscription plans: daily request limit, chains allowed and capabilities, as data.

A capability names a group of endpoints (docs/service-contract.md, Authentication and plans);
routers ask for one with ``deps.require("trades")``. Plans are ordered from the smallest up, so
an error can name the smallest plan that would have allowed a request.
"""

from __future__ import annotations

from dataclasses import dataclass

from quantscope.sandbox.catalog import CHAINS

CAPABILITIES: tuple[str, ...] = (
    "trades",  # /api/trades, /api/trades/stats, /api/trades/{id}
    "evaluations",  # /api/eval-results, /api/eval-timeseries, /api/eval-count
    "market",  # /api/eval-ohlcv
    "evaluation_details",  # /api/eval-details, /api/eval-history
    "signals",  # /api/alpha-signals, /api/alpha-signals/{tokenId}
    "playbook_read",  # GET /api/degen/config
    "playbook_write",  # PUT /api/degen/config
    "optimization",  # /api/refine-eval/*
)


@dataclass(frozen=True)
class Plan:
    """One subscription plan; ``rank`` orders plans from the smallest (0) up."""

    name: str
    rank: int
    daily_limit: int
    chains: tuple[str, ...]
    capabilities: frozenset[str]

    def allows(self, capability: str) -> bool:
        return capability in self.capabilities

    def allows_chain(self, chain: str) -> bool:
        return chain in self.chains


_BASIC = frozenset({"trades", "evaluations", "market"})
_GROWTH = _BASIC | {"evaluation_details", "signals", "playbook_read"}
_ENTERPRISE = _GROWTH | {"playbook_write", "optimization"}

PLANS: dict[str, Plan] = {
    plan.name: plan
    for plan in (
        Plan("basic", 0, 100, CHAINS[:1], _BASIC),
        Plan("growth", 1, 500, CHAINS[:2], _GROWTH),
        Plan("enterprise", 2, 5000, CHAINS, _ENTERPRISE),
    )
}


def get_plan(name: str) -> Plan:
    """The plan called ``name``; ValueError naming the known plans otherwise."""
    try:
        return PLANS[name]
    except KeyError:
        raise ValueError(f"unknown plan {name!r}; plans are {', '.join(PLANS)}") from None


def check_capability(capability: str) -> str:
    """``capability`` itself when it is known; ValueError otherwise (catches typos at import)."""
    if capability not in CAPABILITIES:
        raise ValueError(
            f"unknown capability {capability!r}; capabilities are {', '.join(CAPABILITIES)}"
        )
    return capability


def smallest_plan_with(capability: str) -> Plan:
    """The cheapest plan that includes ``capability``."""
    check_capability(capability)
    return min((p for p in PLANS.values() if p.allows(capability)), key=lambda p: p.rank)


def smallest_plan_with_chain(chain: str) -> Plan:
    """The cheapest plan whose chain allowance includes ``chain`` (a known chain)."""
    return min((p for p in PLANS.values() if p.allows_chain(chain)), key=lambda p: p.rank)
