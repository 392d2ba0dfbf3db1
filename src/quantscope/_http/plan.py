"""The requests a load needs, as data: what ``qsc.estimate`` prices, with nothing sent.

A loader's plan (``loaders._planned.LoadPlan``) and a client call (``Client._request_plan``)
both come down to ``Requests``: the endpoint and its wire parameters, as one request, one
request per parameter set (``many``), or a paged load's head (``paging``, ``max_pages``), or
a write; what the caller lets the load spend; the decoder of its answers. ``cost`` asks the
client (``Pricer``: ``Client._price``) what they would cost from its HTTP cache alone: a
single GET is held or not; many GETs count the held ones; a paged load whose first page is
held reads the total from it and counts the later pages held; one whose first page is not
held is priced at least 1 request (``exact=False``), unless ``probe=True`` spends that page
to learn the size. Pricing raises nothing and sets nothing: no mode, no exception as control.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from quantscope._http.estimate import Estimate
from quantscope._http.quota import Spend
from quantscope._http.results import OffsetPaging, PageNumberPaging
from quantscope._wire import Wire

__all__ = ["Pricer", "Requests"]


class Pricer(Protocol):
    """What prices ``Requests`` from its caches (``Client._price``)."""

    def _price(self, requests: Requests, *, probe: bool = False) -> Estimate: ...


@dataclass(frozen=True, eq=False)
class Requests:
    """The requests of one load (module docstring), bound to the client that would send them.

    ``wire``: one request's parameters, or a paged load's (paging parameters are the
    client's); ``many``: one request per parameter set instead; ``fresh``: the cache is not
    asked (``load_playbook(fresh=True)`` reads the service); ``write``: one POST or PUT,
    never cached.
    """

    endpoint: str
    client: Pricer
    wire: Wire = field(default_factory=Wire)
    many: tuple[Wire, ...] | None = None
    paging: PageNumberPaging | OffsetPaging | None = None
    max_pages: int | None = None
    spend: Spend = field(default_factory=Spend)
    decode: Callable[[bytes], Any] | None = None
    desc: str | None = None
    write: bool = False
    fresh: bool = False

    def cost(self, *, probe: bool = False) -> Estimate:
        """What these requests would cost now (module docstring); ``probe`` may send the
        first page of a paged load, and only that.
        """
        return self.client._price(self, probe=probe)
