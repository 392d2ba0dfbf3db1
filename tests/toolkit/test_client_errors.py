"""error_from_response: status + body code -> class, tolerant body parsing, messages, no key."""

from __future__ import annotations

import json
import pickle
from datetime import UTC, datetime

import pytest

from quantscope._errors import (
    APIStatusError,
    AuthenticationError,
    ChainNotAllowedError,
    ConflictError,
    InvalidParameterError,
    NotFoundError,
    PermissionDeniedError,
    PlanNotAllowedError,
    QuantscopeError,
    RateLimitError,
    ServerError,
    error_from_response,
    format_reset,
    redact,
)

KEY = "sk-live-SECRET-0123456789"
NOW = datetime(2026, 11, 21, 19, 0, tzinfo=UTC)
RESET = datetime(2026, 11, 22, tzinfo=UTC)


def body(status: int, code: str, message: str, param: str | None = None) -> bytes:
    err = {"status": status, "code": code, "message": message, "param": param}
    return json.dumps({"error": err}).encode()


@pytest.mark.parametrize(
    ("status", "code", "cls"),
    [
        (401, "invalid_api_key", AuthenticationError),
        (401, "missing_api_key", AuthenticationError),
        (403, "plan_not_allowed", PlanNotAllowedError),
        (403, "chain_not_allowed", ChainNotAllowedError),
        (403, "something_new", PermissionDeniedError),
        (404, "not_found", NotFoundError),
        (405, "method_not_allowed", APIStatusError),
        (409, "already_applied", ConflictError),
        (422, "invalid_parameter", InvalidParameterError),
        (400, "bad_request", InvalidParameterError),
        (429, "rate_limited", RateLimitError),
        (500, "internal_error", ServerError),
        (503, "unavailable", ServerError),
        (418, "teapot", APIStatusError),
    ],
)
def test_status_and_code_choose_the_class(status: int, code: str, cls: type) -> None:
    error = error_from_response(status, body(status, code, "msg"), endpoint="/api/x")
    assert type(error) is cls
    assert error.status_code == status
    assert error.code == code


def test_a_code_never_moves_an_error_to_another_status_branch() -> None:
    # plan_not_allowed on a 404 stays a NotFoundError (the status is the authority)
    error = error_from_response(404, body(404, "plan_not_allowed", "x"), endpoint="/api/x")
    assert type(error) is NotFoundError


def test_plan_message_names_the_plan_and_the_plan_that_would_do() -> None:
    error = error_from_response(
        403,
        body(403, "plan_not_allowed", "the basic plan does not include /api/eval-details"),
        endpoint="/api/eval-details",
        plan="basic",
    )
    assert "Your plan (basic) does not include /api/eval-details; Growth or higher does" in str(
        error
    )
    write = error_from_response(403, b"", endpoint="/api/degen/config", method="PUT")
    assert "Enterprise or higher does" in str(write)
    read = error_from_response(403, b"", endpoint="/api/degen/config", method="GET")
    assert "Growth or higher does" in str(read)


def test_chain_message_names_the_chain() -> None:
    error = error_from_response(
        403,
        body(403, "chain_not_allowed", "chain BSC is not in the basic plan", "chain"),
        endpoint="/api/trades",
        params={"chain": "bsc"},
        plan="basic",
    )
    assert "Your plan (basic) does not include chain BSC" in str(error)
    assert error.param == "chain"


def test_not_found_and_invalid_parameter_name_the_value() -> None:
    nf = error_from_response(
        404,
        body(404, "not_found", "no trade 999999", "id"),
        endpoint="/api/trades/{id}",
        params={"id": "999999"},
    )
    assert "No id=999999 at /api/trades/{id}: check the id" in str(nf)
    bad = error_from_response(
        422,
        body(422, "invalid_parameter", "pageSize must be 1-1000", "pageSize"),
        endpoint="/api/trades",
        params={"pageSize": "abc"},
    )
    assert str(bad) == (
        "422 from GET /api/trades (invalid_parameter): pageSize must be 1-1000. "
        "Fix the value of pageSize='abc'."
    )


def test_rate_limit_message_gives_reset_and_time_left() -> None:
    error = error_from_response(
        429,
        body(429, "rate_limited", "daily limit reached"),
        endpoint="/api/trades",
        plan="basic",
        reset=RESET,
        limit=100,
        retry_after=18000,
        now=NOW,
    )
    assert isinstance(error, RateLimitError)
    assert (error.reset, error.limit, error.retry_after) == (RESET, 100, 18000)
    assert (
        "Quota spent (100 requests/day, basic plan); resets at 2026-11-22T00:00:00Z (in 5 h 0 min)"
        in str(error)
    )


def test_authentication_message_says_where_the_key_comes_from() -> None:
    error = error_from_response(401, body(401, "invalid_api_key", "bad key"), endpoint="/api/x")
    assert "check QUANTSCOPE_API_KEY" in str(error)


@pytest.mark.parametrize(
    ("raw", "code", "message"),
    [
        (b'{"detail": "Not Found"}', None, "Not Found"),
        (b'{"code": "nope", "message": "flat shape"}', "nope", "flat shape"),
        (b'{"error": "rate_limited", "message": "slow down"}', "rate_limited", "slow down"),
        (b'{"detail": [{"loc": ["query", "x"], "msg": "bad x"}]}', None, "bad x"),
        (b"<html>Bad Gateway</html>", None, "<html>Bad Gateway</html>"),
        (b"", None, None),
        (b"[1, 2]", None, None),
    ],
)
def test_any_body_shape_is_tolerated(raw: bytes, code: str | None, message: str | None) -> None:
    error = error_from_response(502, raw, endpoint="/api/x", attempts=4)
    assert isinstance(error, ServerError)
    assert error.code == code
    assert error.service_message == message
    assert str(error).endswith("The service failed after 4 attempts; try again later.")


def test_the_key_is_scrubbed_from_message_and_body() -> None:
    echoed = body(401, "invalid_api_key", f"unknown key {KEY}")
    error = error_from_response(401, echoed, endpoint="/api/x", secrets=[KEY])
    assert KEY not in str(error)
    assert KEY not in repr(error.body)
    assert KEY.encode() not in pickle.dumps(error.body)
    assert "unknown key ***" in str(error)


def test_redact_walks_nested_values() -> None:
    value = {"a": [KEY, {"b": f"x{KEY}y"}], KEY: 1, "n": 3}
    assert redact(value, [KEY]) == {"a": ["***", {"b": "x***y"}], "***": 1, "n": 3}
    assert redact("abc", [""]) == "abc"


def test_format_reset() -> None:
    assert format_reset(RESET, NOW) == "2026-11-22T00:00:00Z (in 5 h 0 min)"
    assert format_reset(RESET, datetime(2026, 11, 21, 23, 50, tzinfo=UTC)).endswith("(in 10 min)")
    assert format_reset(None) == "an unknown time"


def test_ipython_sees_the_message_not_a_traceback() -> None:
    error = error_from_response(404, body(404, "not_found", "no trade 5", "id"), endpoint="/a")
    assert error._render_traceback_() == [f"NotFoundError: {error}"]
    try:
        QuantscopeError.compact_traceback = False
        try:
            raise error
        except NotFoundError as raised:
            frames = raised._render_traceback_()
        assert any("Traceback" in line for line in frames)
    finally:
        QuantscopeError.compact_traceback = True
