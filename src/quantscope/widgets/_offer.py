"""A quant's research data under the client's quota share, and the offer a panel makes when
opening would cost more: ``load_research`` (trades, the buys' details, their features), and
``opening_offer`` (only what can succeed: all of it, what fits, or nothing before the reset).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import pandas as pd

from quantscope import backtest as bt
from quantscope import loaders as L
from quantscope._advice import Said
from quantscope._errors import (
    QuotaShareExceededError,
    format_reset,
)
from quantscope._http.client import Client
from quantscope._http.estimate import Estimate, estimate
from quantscope._http.quota import share_limit

# --- data ------------------------------------------------------------------------------------


class Research(NamedTuple):
    """A quant's executed trades, the details of the buys that opened the closed ones, and the
    two joined (``backtest.trade_features``).
    """

    trades: pd.DataFrame
    details: pd.DataFrame
    features: pd.DataFrame


def load_research(
    quant_id: int,
    client: Client,
    *,
    trades: pd.DataFrame | None = None,
    details: pd.DataFrame | None = None,
    confirm: bool = False,
    spent: int = 0,
    max_requests: int | None = None,
    partial: bool = False,
) -> Research:
    """Load (or take) the trades and buy-evaluation details, and join them.

    Cost: the trades (one request per 1,000) and one eval-details request per closed trade not
    yet in the cache (details never change, so they are cached forever); quota-aware with a
    progress bar, as the loaders are. Without ``confirm``, the whole of it (trades and
    details together, and the ``spent`` requests the caller already sent for the same
    purpose, such as a panel's other loads on opening) may spend at most the client's share of
    the quota left when it began (``Settings.quota_share``): more is refused with its cost
    before the details are sent (a ``QuotaShareExceededError``; a panel offers what can fit,
    ``opening_offer``). ``max_requests`` and ``partial`` go to ``load_eval_details``: with
    both, the details of as many closed trades as ``max_requests`` allows are fetched, and
    ``features`` holds those trades only (a trade without details has no criterion values).
    """
    if trades is None:
        trades = L.load_trades(quant_id, client=client, confirm=confirm)
        spent += requests_of(trades)
    if details is None:
        closed = trades[(trades["status"] == "Closed").fillna(False).to_numpy(bool)]
        ids = closed["evaluation_id"].dropna().unique()
        if not confirm and max_requests is None and len(ids):
            _within_share(estimate(L.load_eval_details, ids, client=client), spent)
        details = L.load_eval_details(
            ids, client=client, confirm=confirm, max_requests=max_requests, partial=partial
        )
    features = bt.trade_features(trades, details=details)
    mine = (features["quant_id"] == quant_id).fillna(False).to_numpy(bool)
    return Research(trades, details, features[mine].reset_index(drop=True))


def requests_of(frame: pd.DataFrame | pd.Series) -> int:
    """The requests a loaded frame cost (its provenance; 0 when served from the cache)."""
    return int(frame.attrs.get("quantscope", {}).get("requests") or 0)


def _within_share(cost: Estimate, spent: int) -> None:
    """Refuse the details when they and the ``spent`` requests before them exceed the share of
    the quota left when the load began (unknown quota: the loader's own rule applies).
    """
    if cost.remaining is None or not cost.requests:
        return
    start = cost.remaining + spent
    if spent + cost.requests <= share_limit(cost.share, start):
        return
    of = f" of {cost.limit}" if cost.limit is not None else ""
    raise QuotaShareExceededError(
        Said(
            "{endpoint} needed {requests} requests for evaluation details not in the cache "
            "({cached} cached); with the {spent} this load already sent, more than {pct} of "
            "the {start}{of} left: sent nothing more. To load it, {advice}.",
            ("confirm_details", "details"),
            {
                "endpoint": cost.endpoint,
                "requests": cost.requests,
                "cached": cost.cached,
                "spent": spent,
                "pct": f"{cost.share:.0%}",
                "start": start,
                "of": of,
            },
        ),
        share=cost.share,
        endpoint=cost.endpoint,
        needed=cost.requests,
        fetched=spent,
        remaining=cost.remaining,
        limit=cost.limit,
        reset=cost.reset,
        reserve=cost.reserve,
    )


class Offer(NamedTuple):
    """What a panel offers instead of a load over its quota share: the text saying the cost,
    the quota left and its reset; the Open button's label (None: nothing can be loaded before
    the reset, so there is no button); the keywords of ``load_research`` for the click.
    """

    text: str
    label: str | None
    spend: dict[str, Any]


def opening_offer(exc: QuotaShareExceededError, what: str, host: str | None = None) -> Offer:
    """Only what can succeed, for a load refused on opening (``exc``): all of it when it fits
    in the quota left (minus the client's reserve), else what fits (the panel then studies the
    trades whose details it has), else nothing before the reset. Cached answers cost nothing
    again, so the rest of a partial load is cheaper after the reset. ``host``
    (``service_host``): the service the requests go to, named in the text.
    """
    of = f" of {exc.limit}" if exc.limit is not None else ""
    left = exc.remaining if exc.remaining is not None else 0
    room = left - (exc.reserve or 0)
    reset = format_reset(exc.reset)
    on = f" on {host}" if host else ""
    needs = (
        f"Loading {what} needs {exc.needed:,} more requests{on} ({exc.endpoint}, not in the cache)"
    )
    if exc.remaining is None or exc.needed <= room:
        return Offer(
            f"{needs}: more than the {exc.share:.0%} share of the {exc.remaining}{of} left that "
            "a panel spends without asking. Press Open to spend them.",
            f"Open: spend {exc.needed:,} requests",
            {"confirm": True},
        )
    kept = f", {exc.reserve:,} of them kept in reserve" if exc.reserve else ""
    if room <= 0:
        return Offer(
            f"{needs}, and {left}{of} are left today{kept}: nothing can be loaded before the "
            f"quota resets at {reset}. Open this panel again after the reset.",
            None,
            {},
        )
    return Offer(
        f"{needs}, but {left}{of} are left today{kept}: not all of it fits before the quota "
        f"resets at {reset}. Press Open to spend {room:,} on what fits (the panel then "
        "studies the trades whose details it has), or open the panel again after the reset: "
        f"what is loaded stays cached, so the rest then costs {exc.needed - room:,}.",
        f"Open what fits: spend {room:,} requests",
        {"confirm": True, "max_requests": room, "partial": True},
    )
