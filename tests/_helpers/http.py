"""A keyed HTTP session on one server, and the check of the contract's error body.

``ApiSession`` is the one keyed-session helper of the tests: the ``api`` fixture hands them out
per plan, and the HTTP test modules subclass it with their endpoints (``TradesApi``, ...).
"""

from __future__ import annotations

from types import EllipsisType
from typing import Any

import requests

from quantscope.sandbox.models import ErrorBody, validate_response


class ApiSession(requests.Session):
    """A Session bound to one server and key that takes paths: ``session.get("/api/...")``.

    ``query(path, **params)`` is a GET with query parameters as keywords; ``ok`` is the JSON body
    of such a GET that must answer 200.
    """

    def __init__(self, base_url: str, key: str | None = None) -> None:
        super().__init__()
        self.base_url = base_url
        if key is not None:
            self.headers["X-API-Key"] = key

    def request(self, method: str | bytes, url: str | bytes, *args: Any, **kwargs: Any) -> Any:
        if isinstance(url, str) and url.startswith("/"):
            url = self.base_url + url
        kwargs.setdefault("timeout", 60)
        return super().request(method, url, *args, **kwargs)

    def query(self, path: str, **params: Any) -> requests.Response:
        """``GET path?params``: ``session.query("/api/trades", quantId=1)``."""
        return self.get(path, params=params)

    def ok(self, path: str, **params: Any) -> Any:
        """The JSON body of a GET that must answer 200."""
        response = self.query(path, **params)
        assert response.status_code == 200, response.text
        return response.json()


def assert_error(
    response: requests.Response,
    status: int,
    code: str,
    param: str | EllipsisType | None = ...,
) -> dict[str, Any]:
    """The response is a contract error body (``ErrorBody``) with this status and code, a
    message, and ``param`` (not checked when left out). Returns the ``error`` object."""
    assert response.status_code == status, response.text
    body = response.json()
    validate_response(ErrorBody, body)
    error: dict[str, Any] = body["error"]
    assert (error["status"], error["code"]) == (status, code), error
    if param is not ...:
        assert error["param"] == param, error
    assert error["message"], error
    return error
