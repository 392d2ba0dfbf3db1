"""Every non-2xx answer of the sandbox has the contract's error body, whatever raised it."""

from __future__ import annotations

import logging
import math
import sqlite3
from contextlib import closing
from typing import Annotated, Any

import numpy as np
import pytest
from fastapi import APIRouter, Depends, FastAPI, Query
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import Request

from quantscope.sandbox.app import http_error, validation_error
from quantscope.sandbox.deps import Caller, JSONRoute, require
from quantscope.sandbox.errors import ApiError, error_body, not_found


class Change(BaseModel):
    configId: str
    threshold: float


class Changes(BaseModel):
    newConfigs: list[Change]


# Module level: with postponed annotations FastAPI resolves names in the module's globals.
Trades = Annotated[Caller, Depends(require("trades"))]


def _error_probe(app: FastAPI) -> None:
    """Test-only routes: validated parameters, a body, an ApiError, a bug, fast JSON."""
    router = APIRouter(route_class=JSONRoute)

    @router.get("/api/probe/items")
    def items(
        caller: Trades,
        n: Annotated[int, Query(ge=1, le=10)],
        page: int = 1,
    ) -> dict[str, int]:
        return {"n": n, "page": page}

    @router.get("/api/probe/items/{item_id}")
    def item(item_id: int, caller: Trades) -> dict[str, int]:
        raise not_found(f"no item {item_id}", "item_id")

    @router.put("/api/probe/config")
    def config(changes: Changes, caller: Trades) -> dict[str, int]:
        return {"changed": len(changes.newConfigs)}

    @router.post("/api/probe/apply", status_code=201)
    def apply(caller: Trades) -> dict[str, Any]:
        raise ApiError(409, "already_applied", "recommendation 3 was applied before", "id")

    @router.post("/api/probe/created", status_code=201)
    async def created(caller: Trades) -> dict[str, Any]:
        return {"values": np.array([1.5, 2.0]), "count": np.int64(3), "missing": math.nan}

    @router.get("/api/probe/bug")
    def bug(caller: Trades) -> dict[str, int]:
        raise RuntimeError("secret internal detail")

    @router.get("/open/bug")
    def open_bug() -> dict[str, int]:
        raise KeyError("another secret")

    app.include_router(router)


@pytest.fixture(scope="module")
def probe(sandbox_world, tmp_path_factory):
    from quantscope.sandbox.app import create_app
    from quantscope.sandbox.datadir import copy_world
    from quantscope.sandbox.serve import SandboxServer

    info = copy_world(sandbox_world, tmp_path_factory.mktemp("errors"))
    app = create_app(info)
    _error_probe(app)
    with SandboxServer(info, app=app) as server:
        yield server


def test_unknown_api_path_is_404_with_rate_headers(api):
    response = api("enterprise").get("/api/no/such/thing")
    assert response.status_code == 404
    assert response.json() == error_body(404, "not_found", "no endpoint GET /api/no/such/thing")
    assert int(response.headers["X-RateLimit-Limit"]) == 5000


def test_unknown_path_outside_api_needs_no_key(api):
    response = api(None).get("/nowhere")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
    assert "X-RateLimit-Limit" not in response.headers


def test_trailing_slash_is_not_redirected(api):
    response = api(None).get("/health/", allow_redirects=False)
    assert response.status_code == 404


def test_wrong_method_is_405_with_allow(api, probe):
    response = api(None).post("/health")
    assert response.status_code == 405
    assert response.headers["Allow"] == "GET"
    assert response.json() == error_body(
        405, "method_not_allowed", "POST is not allowed on /health; allowed: GET"
    )
    under_api = api("basic", probe).delete("/api/probe/items")
    assert under_api.status_code == 405
    assert under_api.json()["error"]["code"] == "method_not_allowed"
    assert "X-RateLimit-Remaining" in under_api.headers


def test_bad_query_value_is_422_naming_the_parameter(api, probe):
    response = api("basic", probe).get("/api/probe/items", params={"n": "abc"})
    assert response.status_code == 422
    assert response.json() == error_body(
        422,
        "invalid_parameter",
        "n: input should be a valid integer, unable to parse string as an integer, got 'abc'",
        "n",
    )
    too_big = api("basic", probe).get("/api/probe/items", params={"n": "11"}).json()["error"]
    assert too_big["param"] == "n"
    assert too_big["message"] == "n: input should be less than or equal to 10, got '11'"


def test_missing_parameter_is_422_and_every_problem_is_listed(api, probe):
    response = api("basic", probe).get("/api/probe/items", params={"page": "x"})
    assert response.json() == error_body(
        422,
        "invalid_parameter",
        "n is required; page: input should be a valid integer, unable to parse string as an "
        "integer, got 'x'",
        "n",
    )


def test_bad_path_value_is_422(api, probe):
    response = api("basic", probe).get("/api/probe/items/seven")
    assert response.status_code == 422
    assert response.json()["error"]["param"] == "item_id"


def test_unknown_id_is_404_naming_the_parameter(api, probe):
    response = api("basic", probe).get("/api/probe/items/7")
    assert response.json() == error_body(404, "not_found", "no item 7", "item_id")


def test_bad_body_field_is_invalid_body_with_its_path(api, probe):
    body = {"newConfigs": [{"configId": "a", "threshold": 1}, {"configId": "b", "threshold": "x"}]}
    response = api("basic", probe).put("/api/probe/config", json=body)
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "invalid_body"
    assert error["param"] == "newConfigs[1].threshold"
    assert error["message"].startswith("newConfigs[1].threshold: input should be a valid number")
    assert error["message"].endswith("got 'x'")


def test_malformed_json_body_is_invalid_body(api, probe):
    response = api("basic", probe).put(
        "/api/probe/config", data=b"{not json", headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "invalid_body"
    assert error["message"].startswith("the request body is not valid JSON")
    assert error["param"] is None


def test_body_without_json_content_type_is_invalid_body(api, probe):
    response = api("basic", probe).put(
        "/api/probe/config", data=b'{"newConfigs": []}', headers={"Content-Type": "text/plain"}
    )
    assert response.json() == error_body(
        422,
        "invalid_body",
        "the request body must be JSON, sent with Content-Type: application/json",
    )


def test_missing_body_is_invalid_body(api, probe):
    response = api("basic", probe).put("/api/probe/config")
    assert response.json() == error_body(422, "invalid_body", "the request body is required")


def test_api_error_from_a_route_keeps_its_code(api, probe):
    response = api("basic", probe).post("/api/probe/apply")
    assert response.status_code == 409
    assert response.json() == error_body(
        409, "already_applied", "recommendation 3 was applied before", "id"
    )


def test_json_route_renders_numpy_and_nan_with_the_route_status(api, probe):
    response = api("basic", probe).post("/api/probe/created")
    assert response.status_code == 201
    assert response.headers["Content-Type"] == "application/json"
    assert response.json() == {"values": [1.5, 2.0], "count": 3, "missing": None}


def test_unexpected_exception_is_500_without_traceback(api, probe, caplog):
    with caplog.at_level(logging.ERROR, logger="quantscope.sandbox"):
        response = api("basic", probe).get("/api/probe/bug")
    assert response.status_code == 500
    assert response.json() == error_body(
        500, "internal_error", "the sandbox failed on this request (a bug; see its log)"
    )
    assert "secret" not in response.text
    assert "Traceback" not in response.text
    assert "X-RateLimit-Remaining" in response.headers
    logged = [r for r in caplog.records if r.exc_info and r.exc_info[0] is RuntimeError]
    assert logged
    assert "GET /api/probe/bug" in logged[0].getMessage()

    with caplog.at_level(logging.CRITICAL, logger="quantscope.sandbox"):
        open_path = api(None, probe).get("/open/bug")
    assert open_path.status_code == 500
    assert "secret" not in open_path.text


# --- units ----------------------------------------------------------------------------------


def test_api_error_refuses_a_code_with_the_wrong_status():
    with pytest.raises(ValueError, match="goes with status 404, not 400"):
        ApiError(400, "not_found", "x")
    with pytest.raises(ValueError, match="unknown error code 'nope'"):
        ApiError(400, "nope", "x")


def test_validation_error_names_body_paths_and_query_names():
    exc = RequestValidationError(
        [
            {
                "loc": ("query", "pageSize"),
                "msg": "Input should be a valid integer",
                "type": "x",
                "input": "a" * 200,
            },
        ]
    )
    error = validation_error(exc)
    assert (error.status, error.code, error.param) == (422, "invalid_parameter", "pageSize")
    assert error.message.endswith("...")  # a long input is cut
    assert len(error.message) < 150


def _request(method: str, path: str) -> Request:
    return Request(
        {"type": "http", "method": method, "path": path, "query_string": b"", "headers": []}
    )


def test_http_errors_map_onto_contract_codes():
    body_error = http_error(
        _request("PUT", "/api/degen/config"),
        StarletteHTTPException(400, "There was an error parsing the body"),
    )
    assert (body_error.status, body_error.code) == (422, "invalid_body")
    assert body_error.message == "PUT /api/degen/config: There was an error parsing the body"
    custom_404 = http_error(_request("GET", "/api/x"), StarletteHTTPException(404, "no quant 9"))
    assert (custom_404.code, custom_404.message) == ("not_found", "no quant 9")


def test_a_failing_quota_store_is_a_500_body(fresh_sandbox, api, caplog):
    server = fresh_sandbox()
    with closing(sqlite3.connect(server.info.db_path)) as conn, conn:
        conn.execute("DROP TABLE quota")
    with caplog.at_level(logging.CRITICAL, logger="quantscope.sandbox"):
        response = api("basic", server).get("/api/trades")
    assert response.status_code == 500
    assert response.json()["error"]["code"] == "internal_error"
    assert "quota" not in response.text
