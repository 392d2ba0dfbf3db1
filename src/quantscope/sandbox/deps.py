"""What routers use: the caller and its plan checks, the store, and fast JSON responses.

A router module looks like this::

    router = APIRouter(route_class=JSONRoute)

    @router.get("/api/trades/{trade_id}")
    def trade(
        trade_id: int,
        caller: Annotated[Caller, Depends(require("trades"))],
        store: StoreDep,
    ) -> dict[str, Any]:
        row = ...  # raise errors.not_found(...) when unknown
        caller.check_chain(row["chain"])
        return {...}

The authentication middleware (app.py) has already checked the key and counted the request;
``require`` only checks the plan's capabilities.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar, cast

import orjson
from fastapi import Depends, Request
from fastapi.encoders import jsonable_encoder
from fastapi.routing import APIRoute
from starlette.responses import JSONResponse, Response

from quantscope.sandbox import fastsolve, inline
from quantscope.sandbox.catalog import CHAINS
from quantscope.sandbox.datadir import WorldInfo
from quantscope.sandbox.errors import ApiError
from quantscope.sandbox.plans import (
    Plan,
    check_capability,
    smallest_plan_with,
    smallest_plan_with_chain,
)
from quantscope.sandbox.store import Store

CALLER_STATE = "caller"  # request.state attribute the middleware sets


@dataclass(frozen=True)
class Caller:
    """The authenticated key behind a request: its id, plan and the chains the plan covers."""

    key_id: int
    plan: Plan
    chains: tuple[str, ...]

    def resolve_chains(self, chain: str | None, param: str = "chain") -> tuple[str, ...]:
        """The chains a request may query: the named one (any case), or all of the plan's.

        Raises:
            ApiError: 422 ``invalid_parameter`` for an unknown chain, 403 ``chain_not_allowed``
                for one outside the plan.
        """
        if chain is None:
            return self.chains
        name = chain.upper() if chain.isascii() else chain  # "ſ".upper() is "S"
        if name not in CHAINS:
            raise ApiError(
                422,
                "invalid_parameter",
                f"{param} must be one of {', '.join(CHAINS)} (any case), got {chain!r}",
                param,
            )
        if name not in self.chains:
            raise ApiError(
                403,
                "chain_not_allowed",
                f"{param}={name} is outside the {self.plan.name} plan, which covers "
                f"{', '.join(self.chains)}; {name} needs the "
                f"{smallest_plan_with_chain(name).name} plan or above",
                param,
            )
        return (name,)

    def check_chain(self, chain: str) -> None:
        """403 ``chain_not_allowed`` when a single resource lives on a chain outside the plan."""
        if chain not in self.chains:
            raise ApiError(
                403,
                "chain_not_allowed",
                f"this resource is on {chain}, outside the {self.plan.name} plan, which covers "
                f"{', '.join(self.chains)}; {chain} needs the "
                f"{smallest_plan_with_chain(chain).name} plan or above",
            )


def current_caller(request: Request) -> Caller:
    """The Caller the middleware put on the request (only paths under /api have one)."""
    caller = getattr(request.state, CALLER_STATE, None)
    if not isinstance(caller, Caller):
        raise RuntimeError(
            f"no authenticated caller on {request.url.path}: require() is for paths under /api"
        )
    return caller


def require(capability: str) -> Callable[[Request], Any]:
    """A dependency that returns the Caller when its plan includes ``capability``.

    Use as ``Depends(require("signals"))``. An unknown capability raises ValueError at once,
    when the router module is imported.

    Raises:
        ApiError: 403 ``plan_not_allowed`` naming the smallest plan that includes it.
    """
    check_capability(capability)
    needed = smallest_plan_with(capability)

    async def dependency(request: Request) -> Caller:
        caller = current_caller(request)
        if not caller.plan.allows(capability):
            raise ApiError(
                403,
                "plan_not_allowed",
                f"{request.method} {request.url.path} needs the {needed.name} plan or above; "
                f"this key is on the {caller.plan.name} plan",
            )
        return caller

    dependency.__name__ = f"require_{capability}"
    return dependency


async def get_store(request: Request) -> Store:
    """The world's Store (app.state.store). ``async``: FastAPI runs a plain ``def``
    dependency in its thread pool, two thread hops per request for an attribute read.
    """
    store: Store = request.app.state.store
    return store


async def get_world(request: Request) -> WorldInfo:
    """The WorldInfo being served (seed, scale, data dir)."""
    world: WorldInfo = request.app.state.world
    return world


StoreDep = Annotated[Store, Depends(get_store)]
WorldDep = Annotated[WorldInfo, Depends(get_world)]

_ORJSON_OPTIONS = orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY


class OrjsonResponse(JSONResponse):
    """JSON rendered by orjson (NaN becomes null; numpy scalars and arrays are accepted).

    Types orjson does not know (Decimal, pydantic models, sets) go through FastAPI's
    jsonable_encoder, so anything a plain FastAPI route could return still renders.
    """

    def render(self, content: Any) -> bytes:
        return orjson.dumps(content, default=jsonable_encoder, option=_ORJSON_OPTIONS)


def _as_response(result: Any, status_code: int) -> Any:
    return result if isinstance(result, Response) else OrjsonResponse(result, status_code)


#: The worker threads of the sync endpoints (SQL blocks; the event loop must not). FastAPI
#: would run them through anyio's thread pool, whose hop costs about 1.5x a plain executor's.
WORKERS = ThreadPoolExecutor(max_workers=40, thread_name_prefix="quantscope-sandbox")


class JSONRoute(APIRoute):
    """An APIRoute whose plain dict/list results are rendered straight by orjson.

    FastAPI passes a returned dict through ``jsonable_encoder`` before any response class sees
    it: a walk of every value in Python, many times orjson's cost on a large page (benchmarks/
    README.md, scale). This route
    wraps the endpoint so it returns an ``OrjsonResponse`` itself, with the route's
    ``status_code``. Returned Response objects pass unchanged; headers set on an injected
    ``response: Response`` parameter are not merged, so return a Response to set headers.
    A plain ``def`` endpoint runs, and its response renders, in a ``WORKERS`` thread, unless
    it is marked ``inline_first`` and its attempt on the event loop's thread succeeds.

    A route simple enough (``fastsolve.plan_for``) gets its arguments without FastAPI's
    per-request look-ups when every value is valid; an invalid one goes to FastAPI's handler,
    which answers the 422 as before. ``app.state.fast_solve = False`` (tests) turns it off.
    """

    def __init__(self, path: str, endpoint: Callable[..., Any], **kwargs: Any) -> None:
        if not getattr(endpoint, "_orjson_wrapped", False):
            endpoint = _wrap_endpoint(endpoint, kwargs.get("status_code") or 200)
        super().__init__(path, endpoint, **kwargs)

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        full = super().get_route_handler()
        plan = fastsolve.plan_for(self.dependant)
        call = self.dependant.call
        if plan is None or call is None or not getattr(call, "_orjson_wrapped", False):
            return full
        provider = self.dependency_overrides_provider

        async def handler(request: Request) -> Response:
            if getattr(request.app.state, "fast_solve", True) and not getattr(
                provider, "dependency_overrides", None
            ):
                values = await plan.solve(request)
                if values is not None:
                    response: Response = await call(**values)  # wrapped: always a Response
                    return response
            return await full(request)

        return handler


F = TypeVar("F", bound=Callable[..., Any])


def inline_first(endpoint: F) -> F:
    """Mark a read-only sync endpoint to be attempted on the event loop's thread first.

    Put it under the route decorator. The endpoint must take a ``StoreDep`` parameter, read
    only tables that never change while a world is served, and may be run twice (an attempt
    that would not be cheap is abandoned and the endpoint run again in a worker thread:
    inline.py). Without a Store among its arguments it runs in a worker as usual.
    """
    endpoint._inline_first = True  # type: ignore[attr-defined]  # a marker attribute on the function
    return endpoint


def _wrap_endpoint(endpoint: Callable[..., Any], status_code: int) -> Callable[..., Any]:
    wrapper: Any  # a function that gets a marker attribute
    first_inline = bool(getattr(endpoint, "_inline_first", False))
    if inspect.iscoroutinefunction(endpoint):

        @functools.wraps(endpoint)
        async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
            return _as_response(await endpoint(*args, **kwargs), status_code)

        wrapper = async_wrapper
    else:

        def respond(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
            return _as_response(endpoint(*args, **kwargs), status_code)

        @functools.wraps(endpoint)
        async def offloaded(*args: Any, **kwargs: Any) -> Any:
            if first_inline:
                store = next((v for v in kwargs.values() if isinstance(v, Store)), None)
                if store is not None and store.inline_first:
                    try:
                        with inline.attempt(store.connect_nowait()):
                            answer = respond(args, kwargs)
                        inline.COUNTS["inline"] += 1
                        return answer
                    except inline.RunElsewhere:
                        inline.COUNTS["moved"] += 1
            call = functools.partial(respond, args, kwargs)
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(WORKERS, contextvars.copy_context().run, call)

        wrapper = offloaded
    wrapper._orjson_wrapped = True
    return cast(Callable[..., Any], wrapper)
