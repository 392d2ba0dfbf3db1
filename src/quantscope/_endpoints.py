"""The endpoint registry: the routes of the service (declared in ``_routes``, re-exported
here) and the one encoding of a caller's keywords into a route's request.

``query`` and ``body`` turn a loader's keywords into the wire names of its route, each value
checked before anything is sent: an id by the ``_ids`` validator its ``Param`` names, a value
the spec enumerates against the ``Param``'s ``choices`` (``InvalidChoiceError``, a
``ValueError``, naming the keyword, the value and the allowed ones; any case passes, as the
service takes it). Knowing an endpoint is reading its declaration in ``_routes``.

The declarations live one module down so that ``_plans`` (which derives the plans' routes
from them) stays below ``_errors``, whose class this encoding raises.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from quantscope import _ids, _routes
from quantscope._errors import InvalidChoiceError
from quantscope._routes import *  # noqa: F403 - the declarations, re-exported (module docstring)
from quantscope._routes import Endpoint, Param
from quantscope._wire import wire_text

__all__ = [*_routes.__all__, "body", "checked_choice", "query"]


def _texts(param: Param, value: Any) -> list[str]:
    """The texts ``value`` puts on the wire (``_wire``'s conversion: a bool ``true``/``false``,
    a sequence a comma list): a list parameter's items (stripped, blanks skipped, as the
    service reads them), else the whole text.
    """
    text = wire_text(value)
    if param.nargs is None:
        return [text]
    return [item.strip() for item in text.split(",") if item.strip()]


def _folded(text: str) -> str:
    """The service folds ASCII case only (``"ſ".upper()`` is ``"S"``, yet no chain)."""
    return text.lower() if text.isascii() else text


def checked_choice(param: Param, value: Any, name: str | None = None) -> None:
    """``InvalidChoiceError`` naming ``name`` (default: the keyword) unless every text of
    ``value`` is one of ``param.choices`` in some ASCII case; nothing for an open parameter.
    """
    if not param.choices or value is None or value in param.choices:  # the spec's spelling
        return
    allowed = {choice.lower() for choice in param.choices}
    for text in _texts(param, value):
        if _folded(text) not in allowed:
            raise InvalidChoiceError(name or param.name, text, param.choices)


def _checker(param: Param) -> Callable[[Any, str], Any] | None:
    if param.check is None:
        return None
    check: Callable[[Any, str], Any] = getattr(_ids, param.check)
    return check


def _wire(
    endpoint: Endpoint, values: Mapping[str, Any], where: tuple[str, ...], keep_none: bool
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for param in endpoint.params:
        if param.where not in where or param.name not in values:
            continue
        value = values[param.name]
        if value is None and not keep_none:
            continue
        checked_choice(param, value)
        check = _checker(param)
        out[param.wire] = check(value, param.name) if check is not None else value
    return out


def query(endpoint: Endpoint, values: Mapping[str, Any]) -> dict[str, Any]:
    """The request parameters of ``endpoint`` from a loader's keywords (``values``, e.g. its
    ``locals()``): the wire name of each query or path parameter present in ``values`` (a
    path parameter fills its ``{name}`` in the template), in declaration order, its value
    checked by the parameter's validator and choices (module docstring). None stays (the
    client leaves it out).
    """
    return _wire(endpoint, values, ("query", "path"), keep_none=True)


def body(endpoint: Endpoint, values: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON body of a write from the caller's keywords: the wire name of each body
    parameter given in ``values`` and not None, in declaration order, checked as ``query``.
    """
    return _wire(endpoint, values, ("body",), keep_none=False)
