"""A faster way to a route's arguments when every value is valid; FastAPI's own way otherwise.

FastAPI solves an endpoint's arguments anew on every request, and most of that cost is not
validation but looking each parameter up again (its aliases, whether it is a sequence, a JSON
or a model field, for each query parameter). A list endpoint has up to 14 of them, a visible
share of a list page's server CPU (benchmarks/README.md, scale).

``plan_for(dependant)`` does those look-ups once, when the route is created, for routes simple
enough to be solved exactly like FastAPI does: query parameters that are plain scalar fields
(no sequence, JSON or model parameter), no path, header, cookie or body parameter, and
sub-dependencies that are ``async`` functions of the ``Request`` alone (``require``,
``get_store``...). ``Plan.solve`` then calls those dependencies in FastAPI's order and validates
each query value with the same pydantic field FastAPI would (a missing one gets its default,
unvalidated, as in FastAPI). When any value is invalid it returns None and the route hands the
request to FastAPI's full handler, so every 422 body is FastAPI's own; ``/openapi.json`` comes
from the unchanged route and does not change either. Dependency overrides (tests) also take
FastAPI's path, and so does every request of an app whose ``state.fast_solve`` is False
(tests compare both).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from copy import deepcopy
from dataclasses import dataclass
from typing import Any

import fastapi
from fastapi.dependencies.models import Dependant
from fastapi.dependencies.utils import get_validation_alias
from fastapi.params import Query
from starlette.requests import Request

from quantscope.sandbox.versions import Span, within

#: FastAPI versions whose private helpers and ``ModelField.validate`` this module was verified
#: on, [from, to); pyproject.toml caps the ``[sandbox]`` extra below ``to``. On any other
#: version no route gets a plan: FastAPI solves every request itself.
VERIFIED_FASTAPI: Span = ((0, 110), (0, 166))

_IMMUTABLE = (type(None), bool, int, float, str, bytes, tuple, frozenset)


@dataclass(frozen=True)
class _QueryField:
    name: str
    alias: str
    loc: tuple[str, str]
    field: Any  # FastAPI's ModelField
    required: bool
    default: Any
    validate_default: bool

    def missing(self) -> Any:
        return self.default if isinstance(self.default, _IMMUTABLE) else deepcopy(self.default)


@dataclass(frozen=True)
class Plan:
    """How to solve one route's arguments without FastAPI's per-request look-ups."""

    dependencies: tuple[tuple[str, Callable[[Request], Any]], ...]
    queries: tuple[_QueryField, ...]

    async def solve(self, request: Request) -> dict[str, Any] | None:
        """The endpoint's keyword arguments, or None when FastAPI must solve the request
        (a value is invalid or missing, so its error body is FastAPI's).
        """
        values: dict[str, Any] = {}
        for name, call in self.dependencies:  # FastAPI solves dependencies first
            values[name] = await call(request)
        params = request.query_params
        for q in self.queries:
            raw = params.get(q.alias)
            if raw is None:
                if q.required:
                    return None
                if not q.validate_default:
                    values[q.name] = q.missing()
                    continue
                raw = q.missing()
            value, errors = q.field.validate(raw, values, loc=q.loc)
            if errors:
                return None
            values[q.name] = value
        return values


def plan_for(dependant: Dependant) -> Plan | None:
    """The fast plan of a route's ``dependant``, or None when it is not simple enough (or
    FastAPI is not a verified version: ``VERIFIED_FASTAPI``).
    """
    if (
        not within(fastapi.__version__, VERIFIED_FASTAPI)
        or dependant.path_params
        or dependant.header_params
        or dependant.cookie_params
        or dependant.body_params
        or dependant.request_param_name
        or dependant.http_connection_param_name
        or dependant.websocket_param_name
        or dependant.background_tasks_param_name
        or dependant.response_param_name
        or dependant.security_scopes_param_name
    ):
        return None
    dependencies = []
    for sub in dependant.dependencies:
        call = sub.call
        if (
            sub.name is None
            or call is None
            or not inspect.iscoroutinefunction(call)
            or sub.dependencies
            or sub.own_oauth_scopes
            or sub.path_params
            or sub.query_params
            or sub.header_params
            or sub.cookie_params
            or sub.body_params
            or not sub.request_param_name
            or _takes_more_than_request(call)
        ):
            return None
        dependencies.append((sub.name, call))
    queries = []
    for field in dependant.query_params:
        query = _query_field(field)
        if query is None:
            return None
        queries.append(query)
    return Plan(tuple(dependencies), tuple(queries))


def _takes_more_than_request(call: Callable[..., Any]) -> bool:
    return len(inspect.signature(call).parameters) != 1


def _query_field(field: Any) -> _QueryField | None:
    """A scalar query parameter as FastAPI would read it, or None for any other kind."""
    try:  # FastAPI's private helpers (its pinned version has them): without them, no plan
        from fastapi._compat import field_annotation_is_sequence
        from fastapi.dependencies.utils import _get_param_model, _is_json_field
    except ImportError:
        return None

    info = field.field_info
    alias = get_validation_alias(field)
    if (
        not isinstance(info, Query)
        or not isinstance(alias, str)
        or info.validation_alias not in (None, alias)
        or _get_param_model(field) is not None
        or _is_json_field(field)
        or field_annotation_is_sequence(info.annotation)
    ):
        return None
    required = info.is_required()
    return _QueryField(
        name=field.name,
        alias=alias,
        loc=("query", alias),
        field=field,
        required=required,
        default=None if required else field.default,
        validate_default=bool(info.validate_default),
    )
