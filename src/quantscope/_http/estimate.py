"""What a load will cost, before it runs: ``qsc.estimate(loader, **kwargs)``.

``estimate`` asks the loader for its plan (``loader.plan(...)``: the requests the load needs,
``loaders._planned``) without running it, and prices the plan from the frame cache and the
HTTP cache alone (``_http.plan.Requests.cost``): what the caches hold is free, the rest would be
sent. Nothing is sent, except with ``probe=True``: a paged load whose first page is not in
the cache cannot know how many pages follow, so its estimate counts that page as 1 request and
says the rest is unknown; ``probe=True`` spends that one request (the page stays in the cache,
so the load itself then reuses it) and counts the rest exactly.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from quantscope._errors import format_reset
from quantscope._http.quota import share_limit
from quantscope._reprs import estimate_html

__all__ = ["Costed", "Estimate", "estimate", "plan_of"]


@dataclass(frozen=True)
class Estimate:
    """The cost of one load, as the cache and the last reported quota say.

    ``requests`` would be sent (a lower bound when ``exact`` is False: the first page is
    needed to learn how many pages follow), ``cached`` answers come from the cache at no cost;
    ``remaining``/``limit``/``reset`` are the quota as last reported (None before any
    request), ``share`` the client's rule (``Settings.quota_share``). ``probed`` is the
    request ``probe=True`` spent on the first page (now in the cache, counted in ``cached``).
    ``write``: a write, never cached, whose ``requests`` count ``checks``, the read its
    compare-and-swap sends first.
    """

    endpoint: str
    requests: int
    cached: int
    exact: bool
    remaining: int | None
    limit: int | None
    reset: datetime | None
    share: float
    reserve: int = 0
    write: bool = False
    probed: int = 0
    checks: int = 0

    @property
    def fits(self) -> bool | None:
        """Whether the requests fit in the quota left (minus the reserve); None if unknown."""
        if self.remaining is None:
            return None
        return self.requests <= self.remaining - self.reserve

    @property
    def needs_confirm(self) -> bool | None:
        """Whether the load exceeds the share of the quota left (``confirm=True`` needed)."""
        if self.remaining is None:
            return None
        return self.requests > share_limit(self.share, self.remaining)

    def __str__(self) -> str:
        what = self._write() if self.write else self._cost()
        if self.remaining is None:
            left = "quota not known yet (no request has reached the service)"
        else:
            of = f" of {self.limit}" if self.limit is not None else ""
            left = f"{self.remaining}{of} left, resets at {format_reset(self.reset)}"
        verdict = ""
        if self.fits is False:
            verdict = "; does not fit: partial=True fetches what fits"
        elif self.needs_confirm:
            verdict = f"; more than {self.share:.0%} of what is left: needs confirm=True"
        return f"{self.endpoint}: {what}; {left}{verdict}"

    def __repr__(self) -> str:
        return f"<Estimate {self}>"

    def _repr_html_(self) -> str:
        return estimate_html(self)

    def _write(self) -> str:
        s = "s" if self.requests != 1 else ""
        first = f" (the read its compare-and-swap checks first: {self.checks})"
        first = first if self.checks else ""
        return f"a write, never cached: {self.requests} request{s}{first}"

    def _cost(self) -> str:
        cached = f", {self.cached} from the cache" if self.cached else ""
        if self.probed:
            cached += f" (the first page among them: probe=True spent {self.probed} on it)"
        if self.exact:
            return f"{self.requests} requests{cached}"
        return (
            f"at least {self.requests} request{'s' if self.requests != 1 else ''}{cached} "
            "(the first page, not cached, tells how many pages follow; probe=True spends "
            "it to count them)"
        )


class Costed(Protocol):
    """A plan of requests that can say what it would cost (``loaders._planned.LoadPlan``,
    ``_http.plan.Requests``).
    """

    def cost(self, *, probe: bool = False) -> Estimate: ...


@runtime_checkable
class RequestPlanner(Protocol):
    """What plans its own calls' requests (``Client._request_plan``: ``client.get_pages``...)."""

    def _request_plan(self, method: str, /, *args: Any, **kwargs: Any) -> Costed: ...


def estimate(
    loader: Callable[..., Any], /, *args: Any, probe: bool = False, **kwargs: Any
) -> Estimate:
    """What ``loader(*args, **kwargs)`` would cost, without running it (see module docstring).

    ``qsc.estimate(qsc.load_evaluations, page_size=100)`` -> ``/api/eval-results: 173 requests;
    76 of 100 left, resets at ...; does not fit: partial=True fetches what fits``.
    """
    return plan_of(loader, args, kwargs).cost(probe=probe)


def plan_of(loader: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Costed:
    """The plan of ``loader(*args, **kwargs)``, made without running it: a loader's own
    (``loader.plan``, ``loaders._planned``; also of a ``functools.partial`` of one), or a
    client call's (``client.get_pages`` and the like: ``Client._request_plan``). Anything else
    (a function that calls a loader, too: it would have to run) is a TypeError.
    """
    if isinstance(loader, functools.partial):  # a loader with some arguments given
        return plan_of(loader.func, (*loader.args, *args), {**loader.keywords, **kwargs})
    owner = getattr(loader, "__self__", None)
    if inspect.ismethod(loader) and isinstance(owner, RequestPlanner):
        return owner._request_plan(loader.__name__, *args, **kwargs)
    planner = getattr(loader, "plan", None)
    if not callable(planner):
        name = getattr(loader, "__name__", repr(loader))
        raise TypeError(
            f"estimate() takes a quantscope loader; {name} has no plan of the requests it sends"
        )
    planned: Costed = planner(*args, **kwargs)
    return planned
