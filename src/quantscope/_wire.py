"""Query parameters as the text the service receives, and endpoint path templates.

One conversion from Python values (bools, datetimes, sequences) to query text, used for the
request, the cache key and the provenance alike, so the three always agree. Split out of
``_http.client`` so that this pure, dependency-free logic can be read and tested on its own;
``_http.client`` re-exports ``wire_params``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime
from typing import Any
from urllib.parse import quote, unquote

ParamValue = str | int | float | bool | datetime | date | Sequence[Any] | None
Params = Mapping[str, ParamValue]


class Wire(dict[str, str]):
    """Parameters already as the service's text (``wire_params``' result): passed on as they
    are, so a load computes them once, in ``loaders._base``, for its key, request and
    provenance alike.
    """


def wire_text(value: Any) -> str:
    """One value as the text the service receives (see ``wire_params``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime):
        aware = value if value.tzinfo else value.replace(tzinfo=UTC)
        return aware.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, list | tuple | set | frozenset):
        items = sorted(value) if isinstance(value, set | frozenset) else value
        return ",".join(wire_text(v) for v in items)
    return str(value)


def wire_params(params: Params | None) -> Wire:
    """Query parameters as the text the service receives, sorted; None values dropped.

    Booleans become ``true``/``false``, datetimes ISO UTC with milliseconds and ``Z``,
    sequences comma lists. The same text goes into the cache key and the provenance.
    ``Wire`` parameters (already converted) are returned as they are.
    """
    if isinstance(params, Wire):
        return params
    return Wire({k: wire_text(v) for k, v in sorted((params or {}).items()) if v is not None})


def _split_path(endpoint: str, wire: Mapping[str, str]) -> tuple[str, dict[str, str]]:
    """``/api/trades/{id}`` + ``{"id": "5", ...}`` -> ``/api/trades/5`` and the query rest."""
    query = dict(wire)
    path = endpoint
    while "{" in path:
        head, rest = path.split("{", 1)
        name, tail = rest.split("}", 1)
        if name not in query:
            raise ValueError(f"{endpoint} needs the path parameter {name!r}")
        path = head + quote(query.pop(name), safe="") + tail
    if not path.startswith("/"):
        raise ValueError(f"endpoints start with '/', got {endpoint!r}")
    return path, query


def _path_params(endpoint: str, path: str) -> dict[str, str]:
    """The values ``_split_path`` put into the template: ``{"id": "5"}`` for ``/api/trades/5``."""
    names = [part[1:-1] for part in endpoint.split("/") if part.startswith("{")]
    values = [
        unquote(got)
        for want, got in zip(endpoint.split("/"), path.split("/"), strict=False)
        if want.startswith("{")
    ]
    return dict(zip(names, values, strict=False))
