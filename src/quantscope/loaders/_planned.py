"""A load is a plan: what every GET loader makes, runs, and what ``qsc.estimate`` prices.

A loader is written as a function that returns a ``LoadPlan`` (its recipe, Python
parameters, what it may spend, its client, and ``finish``: what it makes of the recipe's
frames), and ``@planned`` turns it into the public loader: the same signature and docstring,
whose call makes the plan and runs it (``LoadPlan.run``: ``_base.run_recipe``, then
``finish``), plus ``loader.plan(...)``, the plan alone. ``qsc.estimate(loader, ...)`` prices
``loader.plan(...)`` (``LoadPlan.cost``) without running any of the loader's request code:
a catalog's answer is free (or refused in one line when the catalog does not keep it), so is
a frame kept in the frame cache; the rest is the client's price of the plan's requests
(``_http.plan.Requests``, ``Client._price``), from its HTTP cache alone.

Writes are no load: ``@planned_write(endpoint, check=...)`` gives them a ``.plan``
(``WritePlan``): the write, one request never cached, and the read its compare-and-swap
sends first (``check``, a load plan; none for a write that checks nothing).
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, ParamSpec, Protocol, TypeVar, cast

import pandas as pd

from quantscope._http.client import Client
from quantscope._http.estimate import Estimate
from quantscope._http.plan import Requests
from quantscope._http.quota import Spend
from quantscope._typed.frames import FrameSpec, row_series
from quantscope._wire import Params, wire_params
from quantscope.loaders._base import (
    Frames,
    Recipe,
    client_or_default,
    frame_keys,
    run_recipe,
    stored_frames,
    wired,
)
from quantscope.loaders._source import catalog_source

__all__ = [
    "LoadPlan",
    "PlannedLoader",
    "WritePlan",
    "frame_plan",
    "parts_plan",
    "planned",
    "planned_write",
    "series_plan",
]

P = ParamSpec("P")
R = TypeVar("R")
R_co = TypeVar("R_co", covariant=True)


@dataclass(frozen=True, eq=False)
class LoadPlan(Generic[R]):
    """One load, not yet run: its recipe and Python parameters (``params``, or ``many``: one
    request per set, ``shown`` in provenance), ``max_pages``, ``spend``, the client (None:
    the default one, found when the plan runs or is priced), ``fresh`` (read the service
    even when the cache holds a copy) and ``finish``, which makes the loader's result of the
    recipe's frames (``frame_plan``/``series_plan``/``parts_plan`` below).
    """

    recipe: Recipe
    finish: Callable[[Frames, Client], R]
    params: Params | None = None
    many: Sequence[Params] | None = None
    shown: dict[str, str] | None = None
    max_pages: int | None = None
    spend: Spend | None = None
    client: Client | None = None
    fresh: bool = False

    def run(self) -> R:
        """Load (``_base.run_recipe``) and ``finish``; warnings point at the loader's caller."""
        c = client_or_default(self.client)
        if self.fresh:  # only these answers: the next read is new
            c.cache.invalidate("GET", self.recipe.endpoint)
        frames = run_recipe(
            self.recipe, self.params, c, self.many, self.shown, self.max_pages, self.spend
        )
        return self.finish(frames, c)

    def cost(self, *, probe: bool = False) -> Estimate:
        """What running the plan would spend now, sending nothing (module docstring;
        ``probe``: ``_http.plan``).
        """
        c = client_or_default(self.client)
        recipe = self.recipe
        if c.settings.catalog is not None:  # read, never sent: nothing to pay
            catalog_source().kept(
                c.settings.catalog, recipe.endpoint, recipe.spec.name, self.many is not None
            )
            return c.estimate_for(recipe.endpoint, requests=0, cached=0)
        wire = wired(recipe, self.params, self.many, self.shown).wire
        keys = frame_keys(c, recipe, wire, self.max_pages, self.many is not None)
        hits = None if self.fresh else stored_frames(c, keys)
        if hits is not None:
            return c.estimate_for(recipe.endpoint, requests=0, cached=len(hits[0].entries))
        return self.requests(c).cost(probe=probe)

    def requests(self, c: Client) -> Requests:
        """The plan's requests as ``c`` would send them (``_http.plan.Requests``)."""
        recipe = self.recipe
        many = tuple(wire_params(p) for p in self.many) if self.many is not None else None
        return Requests(
            recipe.endpoint,
            c,
            wire_params(self.params),
            many=many,
            paging=recipe.paging,
            max_pages=self.max_pages,
            spend=self.spend or Spend(),
            decode=recipe.decoder(),
            desc=recipe.desc,
            fresh=self.fresh,
        )


def frame_plan(
    recipe: Recipe,
    params: Params | None = None,
    *,
    client: Client | None,
    many: Sequence[Params] | None = None,
    shown: dict[str, str] | None = None,
    max_pages: int | None = None,
    spend: Spend | None = None,
    fresh: bool = False,
) -> LoadPlan[pd.DataFrame]:
    """The plan of a load whose result is the recipe's one frame."""
    return LoadPlan(recipe, _first, params, many, shown, max_pages, spend, client, fresh)


def series_plan(
    recipe: Recipe, params: Params | None = None, *, client: Client | None
) -> LoadPlan[pd.Series]:
    """The plan of a load of one record (``_base.record_frame``) returned as a Series named
    after the spec (``_typed.frames.row_series``), with the frame's attrs.
    """
    return LoadPlan(recipe, functools.partial(_row, recipe.spec), params, client=client)


def parts_plan(
    recipe: Recipe,
    params: Params | None,
    finish: Callable[[Frames, Client], R],
    *,
    client: Client | None,
) -> LoadPlan[R]:
    """The plan of a recipe with ``parts`` (one answer, several frames, each kept in the frame
    cache): ``finish`` makes the loader's result of them (``spec``'s frame first).
    """
    return LoadPlan(recipe, finish, params, client=client)


def _first(frames: Frames, c: Client) -> pd.DataFrame:
    return frames[0]


def _row(spec: FrameSpec, frames: Frames, c: Client) -> pd.Series:
    (one,) = frames
    return row_series(one, spec, spec.name)


class PlannedLoader(Protocol[P, R_co]):
    """A loader made by ``@planned``: called, it loads; ``.plan(...)`` is its plan alone."""

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R_co: ...

    @property
    def plan(self) -> Callable[P, LoadPlan[Any]]: ...


def planned(plan: Callable[P, LoadPlan[R]]) -> PlannedLoader[P, R]:
    """The public loader of a function returning its ``LoadPlan`` (module docstring): same
    name, docstring and parameters; its result is what the plan's ``finish`` returns.
    """

    @functools.wraps(plan)
    def loader(*args: P.args, **kwargs: P.kwargs) -> R:
        return plan(*args, **kwargs).run()

    hints = dict(plan.__annotations__)
    returns = hints.get("return")
    if isinstance(returns, str) and returns.startswith("LoadPlan[") and returns.endswith("]"):
        hints["return"] = returns[len("LoadPlan[") : -1]  # what the loader returns
    loader.__annotations__ = hints
    signature = inspect.signature(plan).replace(return_annotation=hints.get("return"))
    vars(loader).update(__signature__=signature, plan=plan)
    return cast(PlannedLoader[P, R], loader)


@dataclass(frozen=True, eq=False)
class WritePlan:
    """A write, not yet sent: ``check``, the read its compare-and-swap sends first (None: it
    checks nothing), then ``write``, one request never cached.
    """

    write: Requests
    check: LoadPlan[Any] | None = None

    def cost(self, *, probe: bool = False) -> Estimate:
        """What the write would send now: its check's read (never from the cache) and itself."""
        sent = self.write.cost()
        if self.check is None:
            return sent
        read = self.check.cost(probe=probe)
        requests = read.requests + sent.requests
        return dataclasses.replace(sent, requests=requests, exact=read.exact, checks=read.requests)


def planned_write(
    endpoint: str, *, check: Callable[..., LoadPlan[Any] | None] | None = None
) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """A write function priced by ``qsc.estimate`` (``.plan``: its ``WritePlan``, on its
    ``client`` argument): one request to ``endpoint``, after ``check``'s read, which is
    called with the write's arguments (defaults applied, as keywords) and returns the plan of
    the read the write's compare-and-swap sends first, or None when it sends none.
    """

    def wrap(write: Callable[P, R]) -> Callable[P, R]:
        signature = inspect.signature(write)

        def plan(*args: Any, **kwargs: Any) -> WritePlan:
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            given = bound.arguments
            client = client_or_default(given.get("client"))
            read = check(**{**given, "client": client}) if check is not None else None
            return WritePlan(Requests(endpoint, client, write=True), read)

        vars(write).update(plan=plan)
        return write

    return wrap
