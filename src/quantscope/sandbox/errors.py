"""The sandbox's one error type and the JSON error body every non-2xx answer carries.

docs/service-contract.md (Errors) fixes the body::

    {"error": {"status": 422, "code": "invalid_parameter", "message": "...", "param": "pageSize"}}

``param`` is always present (``null`` when no single parameter is to blame), so clients can read
the body with one shape. Routers raise ``ApiError``; app.py turns it (and FastAPI's own errors)
into a response. The codes and their statuses are a registry, so a typo fails loudly in tests
instead of inventing a code the contract does not know.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

ERROR_CODES: dict[str, int] = {
    "bad_request": 400,
    "missing_api_key": 401,
    "invalid_api_key": 401,
    "plan_not_allowed": 403,
    "chain_not_allowed": 403,
    "not_found": 404,
    "method_not_allowed": 405,
    "already_applied": 409,
    "stale_recommendation": 409,
    "invalid_parameter": 422,
    "invalid_body": 422,
    "insufficient_trades": 422,
    "payload_too_large": 413,
    "uri_too_long": 414,
    "rate_limited": 429,
    "internal_error": 500,
}


class ApiError(Exception):
    """A failure the client is told about: HTTP status, contract code, message, parameter.

    Args:
        status: the HTTP status; must be the one ``ERROR_CODES`` lists for ``code``.
        code: a code of the contract's error table (``invalid_parameter``, ...).
        message: what was wrong and, where it helps, what was received or what to do.
        param: the query/path/body parameter to blame, if one is.
        headers: extra response headers (``Retry-After``, ``Allow``).
    """

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        param: str | None = None,
        *,
        headers: dict[str, str] | None = None,
    ) -> None:
        expected = ERROR_CODES.get(code)
        if expected != status:
            raise ValueError(
                f"error code {code!r} goes with status {expected}, not {status}"
                if expected is not None
                else f"unknown error code {code!r}; codes are {', '.join(ERROR_CODES)}"
            )
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.param = param
        self.headers = dict(headers or {})

    def body(self) -> dict[str, Any]:
        return error_body(self.status, self.code, self.message, self.param)

    def __repr__(self) -> str:
        return f"ApiError({self.status}, {self.code!r}, {self.message!r}, param={self.param!r})"


def error_body(status: int, code: str, message: str, param: str | None = None) -> dict[str, Any]:
    """The contract's JSON error body."""
    return {"error": {"status": status, "code": code, "message": message, "param": param}}


def not_found(message: str, param: str | None = None) -> ApiError:
    """404 ``not_found`` for an unknown id (``param`` names it) or path."""
    return ApiError(404, "not_found", message, param)


def invalid_parameter(param: str, message: str) -> ApiError:
    """422 ``invalid_parameter``: a malformed, out-of-range or unknown-enum query value."""
    return ApiError(422, "invalid_parameter", message, param)


def invalid_body(param: str | None, message: str) -> ApiError:
    """422 ``invalid_body``: a request body that is not what the endpoint takes."""
    return ApiError(422, "invalid_body", message, param)


class ErrorDetail(BaseModel):
    """OpenAPI schema of the ``error`` object."""

    status: int
    code: str
    message: str
    param: str | None


class ErrorBody(BaseModel):
    """OpenAPI schema of every non-2xx body."""

    error: ErrorDetail


def _doc(description: str) -> dict[str, Any]:
    return {"model": ErrorBody, "description": description}


# The error answers every /api endpoint may give, for the OpenAPI document.
API_ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: _doc("`bad_request`: `Content-Length` with `Transfer-Encoding`, or a malformed request"),
    401: _doc("`missing_api_key` or `invalid_api_key`"),
    403: _doc("`plan_not_allowed` or `chain_not_allowed`"),
    404: _doc("`not_found`: unknown id (`param` names it)"),
    413: _doc(
        "`payload_too_large`: a body over the route's limit (PUT /api/degen/config "
        "262,144 bytes, POST /api/refine-eval/analyze 4,096 bytes, any other request 1,024 "
        "bytes); answered before the body is read, the connection is closed"
    ),
    414: _doc("`uri_too_long`: path and query string over 8,192 bytes"),
    422: _doc("`invalid_parameter` / `invalid_body`: `param` names the value"),
    429: _doc("`rate_limited`: the daily limit is spent; see `Retry-After`"),
}


def unprocessable(rule: str) -> dict[int | str, dict[str, Any]]:
    """The 422 answer of an operation with a rule across its parameters, stated in the document.

    JSON Schema describes each parameter alone, so a rule that joins two of them (a date
    range's order) or depends on the data (a quant's closed trades) is stated in words here.
    """
    return {422: _doc(f"`invalid_parameter` / `invalid_body`: `param` names the value. {rule}")}


DATE_ORDER = "`{0}` after `{1}` is 422 `invalid_parameter` naming `{0}` (`{0}` <= `{1}`)."
