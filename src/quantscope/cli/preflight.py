"""Validate, then price, then spend: what the command line refuses having sent nothing.

A process of the command line starts knowing nothing of the quota, and the client learns it
from its first answer: a load it would refuse (over the quota share, over ``--max-requests``,
on a plan without the endpoint) cost that first request. Three checks come before it:

* **Values the spec enumerates** (the ``choices`` of the registry's parameters: a trade's
  ``tradingStatus``, ``tradingMode``, ``sortOrder``, an evaluation type, a chain, ...) are
  checked before the client is built (``check_values``: ``UsageError`` naming the option, exit
  2), where the service would answer a 422 that costs a request; the loaders refuse the same
  values the same way (``_endpoints.query``: ``InvalidChoiceError``). Values the spec leaves
  open (``filterStatus``, ``timeframe``) go to the service, which decides.
* **The quota as last seen.** Every command that spoke to the service leaves the quota its
  last answer reported in ``quota-seen.json`` beside the HTTP cache (``remember``), under the
  cache's key scope (a one-way digest of the service and a digest of the key, as the cache's
  own keys: never the key). ``last_seen`` reads it back: ``remaining`` is an upper bound of
  what is left now (others spend, nobody adds; after the reset, the daily limit), so a load
  that does not fit it, or needs more than the share of it, is refused for sure, and the
  limit names the plan (``_plans``), which may lack the endpoint.
* **The free estimate** (``qsc.estimate`` without a probe: the cache is looked up, nothing
  sent) gives the requests a load needs, exactly or, for a paged load whose first page is not
  cached, a lower bound. ``refuse_early`` raises the refusal the loader would raise after its
  first request (``QuotaShareExceededError``, ``QuotaWouldBeExceededError``, both with
  ``fetched=0``) or ``PlanTooSmallError`` (exit 77), each saying the quota it went by.

``price_report`` is the same pre-flight for ``quantscope report``: the loads it knows before
its trades are read (the trades, the evaluations, the playbook, the recommendations, those
the plan last seen has), priced from the cache and summed as a lower bound (the buy
evaluations' details, one request each, are counted once the trades are read), refused as
above with ``endpoint`` "the report of quant N".

What cannot be proved stays the loader's: with no quota seen (a new key, a new cache), the
first answer tells it, as before.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from quantscope._advice import Said
from quantscope._endpoints import ROUTES, Param, checked_choice
from quantscope._errors import (
    InvalidChoiceError,
    QuotaShareExceededError,
    QuotaWouldBeExceededError,
    format_reset,
)
from quantscope._http.quota import Quota, share_limit
from quantscope._plans import PLANS, first_plan_for, plan_for_limit
from quantscope.cli.exit import PlanTooSmallError, UsageError

if TYPE_CHECKING:
    from quantscope._http.client import Client
    from quantscope._http.estimate import Estimate

__all__ = [
    "ENUMERATED",
    "SEEN_FILE",
    "check_values",
    "last_seen",
    "opened",
    "price_report",
    "refuse_early",
    "remember",
    "remember_opened",
]

SEEN_FILE = "quota-seen.json"

#: keyword -> the registry's parameter that enumerates its values (one per keyword: a keyword
#: shared by several routes, ``chain``, is declared once).
ENUMERATED: dict[str, Param] = {p.name: p for e in ROUTES for p in e.params if p.choices}


def check_values(kwargs: dict[str, Any], flags: dict[str, str]) -> None:
    """``UsageError`` for a value outside the spec's set (``flags``: keyword -> option)."""
    for name, value in kwargs.items():
        if name in ENUMERATED:
            try:
                checked_choice(ENUMERATED[name], value, flags.get(name, name))
            except InvalidChoiceError as refused:
                raise UsageError(str(refused)) from None


# ----- the quota as last seen ----------------------------------------------------------------

_OPENED: list[Client] = []


def opened(client: Client) -> Client:
    """Note a client the command built, so that ``remember_opened`` keeps its quota."""
    _OPENED.append(client)
    return client


def remember_opened() -> None:
    """Keep the quota every client of this command saw (``main`` calls it on the way out)."""
    while _OPENED:
        remember(_OPENED.pop())


def _seen_path(client: Client) -> Path:
    return Path(client.settings.cache_path).parent / SEEN_FILE


def _scope(client: Client) -> str:
    from quantscope._http.cache import key_scope

    return key_scope(client.settings.service_id, client.settings.api_key)


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def remember(client: Client, quota: Quota | None = None) -> None:
    """Write the quota ``client`` last saw (or ``quota``, read by other means), if an answer
    reported one; never fails.
    """
    quota = quota or client.quota
    if quota.updated_at is None or client.settings.offline:
        return
    path = _seen_path(client)
    seen = _read(path)
    seen[_scope(client)] = {
        "limit": quota.limit,
        "remaining": quota.remaining,
        "reset": quota.reset.isoformat() if quota.reset else None,
        "seen": quota.updated_at.isoformat(),
    }
    temporary = path.with_name(f".{SEEN_FILE}.{os.getpid()}")
    with contextlib.suppress(OSError):  # a hint for the next command: losing it costs 1 request
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_text(json.dumps(seen, sort_keys=True), encoding="utf-8")
        os.replace(temporary, path)


def _time(text: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(text)) if text else None
    except ValueError:
        return None


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def last_seen(client: Client, now: datetime | None = None) -> Quota | None:
    """The quota the last command saw for this service and key, its ``remaining`` raised to
    the daily limit when the reset has passed since (an upper bound of what is left now).
    """
    entry = _read(_seen_path(client)).get(_scope(client))
    if not isinstance(entry, dict):
        return None
    limit, remaining = _count(entry.get("limit")), _count(entry.get("remaining"))
    reset, seen = _time(entry.get("reset")), _time(entry.get("seen"))
    if remaining is None or seen is None:
        return None
    now = now or datetime.now(UTC)
    if reset is None or reset <= now:
        if limit is None:
            return None  # a new day, and no limit to bound it
        remaining = limit
    return Quota(limit=limit, remaining=remaining, reset=reset, updated_at=seen)


# ----- refusals at zero requests ---------------------------------------------------------------

_RANK = {plan.name: rank for rank, plan in enumerate(PLANS)}


def _as_seen(quota: Quota) -> str:
    assert quota.updated_at is not None
    of = f" of {quota.limit}" if quota.limit is not None else ""
    when = quota.updated_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return f"the quota as last reported ({when}): at most {quota.remaining}{of} left"


def refuse_early(
    est: Estimate, spend: dict[str, Any], client: Client, *, command: str = "fetch"
) -> None:
    """Raise the refusal the load would meet, when it can be proved with nothing sent (module
    docstring); return otherwise. ``spend``: the load's ``confirm``/``max_requests``/
    ``partial``.
    """
    confirm, partial = bool(spend.get("confirm")), bool(spend.get("partial"))
    ceiling: int | None = spend.get("max_requests")
    needed = est.requests  # exact, or a lower bound (a paged load's first page)
    fields: dict[str, Any] = {
        "endpoint": est.endpoint,
        "needed": needed,
        "fetched": 0,
        "limit": est.limit,
        "reset": est.reset,
        "reserve": est.reserve,
    }
    if ceiling is not None and needed > ceiling and not partial:
        raise QuotaShareExceededError(
            Said(
                "{endpoint} needs {least}{cost} requests, more than {max_requests}: sent nothing. "
                "{Advice}.",
                ("raise_max_requests", "partial_allowed"),
                {
                    "endpoint": est.endpoint,
                    "least": "" if est.exact else "at least ",
                    "cost": needed,
                    "ceiling": ceiling,
                },
            ),
            share=est.share,
            remaining=est.remaining or 0,
            ceiling=ceiling,
            **fields,
        )
    quota = client.quota if client.quota.updated_at is not None else last_seen(client)
    if quota is None or quota.remaining is None:
        return
    if not needed:  # the cache holds it all: no plan or quota rule applies
        return
    plan = plan_for_limit(quota.limit)
    needs_plan = first_plan_for("GET", est.endpoint)
    if plan is not None and needs_plan is not None and _RANK[plan] < _RANK[needs_plan]:
        raise PlanTooSmallError(
            f"{est.endpoint} needs the {needs_plan.title()} plan or above; this key's plan is "
            f"{plan.title()} (daily limit {quota.limit}, as last reported): sent nothing"
        )
    fields |= {"remaining": quota.remaining, "limit": quota.limit, "reset": quota.reset}
    seen = _as_seen(quota)
    if needed > quota.remaining - est.reserve and not partial:
        error: Exception = QuotaWouldBeExceededError(
            Said(
                "{endpoint} needs {needed} requests, but {remaining} are left at most: sent "
                "nothing. {Advice} to fetch what fits.",
                ("wait_for_reset", "partial"),
                {
                    "endpoint": est.endpoint,
                    "needed": needed,
                    "remaining": quota.remaining,
                    "reset": format_reset(quota.reset),
                },
            ),
            **fields,
        )
    elif ceiling is None and not confirm and needed > share_limit(est.share, quota.remaining):
        error = QuotaShareExceededError(
            Said(
                "{endpoint} needs {cost} requests, more than {pct} of the {remaining} left at "
                "most: sent nothing. To load it, {confirm}.",
                values={
                    "endpoint": est.endpoint,
                    "cost": needed,
                    "pct": f"{est.share:.0%}",
                    "remaining": quota.remaining,
                },
            ),
            share=est.share,
            **fields,
        )
    else:
        return
    error.add_note(seen)
    raise error


def _allowed(endpoint: str, quota: Quota | None) -> bool:
    """Whether the plan of the quota last seen has ``endpoint`` (True when unknown)."""
    plan = plan_for_limit(quota.limit) if quota is not None else None
    needs = first_plan_for("GET", endpoint)
    return plan is None or needs is None or _RANK[plan] >= _RANK[needs]


def price_report(client: Client, quant_id: int, spend: dict[str, Any]) -> Estimate:
    """The lower bound of what ``quantscope report --quant N`` sends before its details
    (module docstring), refused by ``refuse_early`` when it cannot fit; sends nothing.
    """
    from dataclasses import replace

    import quantscope.loaders as L
    from quantscope._http.estimate import estimate

    loads: list[tuple[Callable[..., Any], dict[str, Any]]] = [
        (L.load_trades, {"trading_status": "all"}),
        (L.load_evaluations, {}),
        (L.load_playbook, {}),
        (L.load_recommendations, {}),
    ]
    seen = client.quota if client.quota.updated_at is not None else last_seen(client)
    priced = [estimate(loader, quant_id, client=client, **kw) for loader, kw in loads]
    kept = [e for e in priced if _allowed(e.endpoint, seen)]
    total = replace(
        kept[0],
        endpoint=f"the report of quant {quant_id}",
        requests=sum(e.requests for e in kept),
        cached=sum(e.cached for e in kept),
        exact=False,
    )
    refuse_early(total, spend, client, command="report")
    return total
