"""Helpers the test modules share (fixtures are in conftest.py).

* ``ApiClient``: a keyed session on one sandbox server, ``get(path, **params)`` and ``ok``
  (200, the JSON body); the HTTP test modules subclass it with their endpoints.
* ``assert_error``: a response is the contract's error body with this status, code and param.
* ``WidgetData``, ``QUANT``, ``service_playbook``, ``value_of``: the widget tests' quant, its
  frames (the session fixture ``widget_data``) and the playbook as the service holds it.
"""

from __future__ import annotations

import tempfile
from types import EllipsisType
from typing import Any, NamedTuple

import pandas as pd
import requests

import quantscope.loaders as L
from quantscope._client import Client
from quantscope.sandbox.models import ErrorBody, validate_response
from quantscope.sandbox.serve import SandboxServer

# --- HTTP ------------------------------------------------------------------------------------


class ApiClient:
    """A keyed session on one server: ``client.get("/api/trades", quantId=1)``."""

    def __init__(self, url: str, key: str) -> None:
        self.url = url
        self.session = requests.Session()
        self.session.headers["X-API-Key"] = key

    def get(self, path: str, **params: Any) -> requests.Response:
        return self.session.get(self.url + path, params=params, timeout=60)

    def ok(self, path: str, **params: Any) -> Any:
        """The JSON body of a GET that must answer 200."""
        response = self.get(path, **params)
        assert response.status_code == 200, response.text
        return response.json()

    def close(self) -> None:
        self.session.close()


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


# --- widgets ---------------------------------------------------------------------------------

QUANT = 2  # the quant the widget tests study


class WidgetData(NamedTuple):
    """``QUANT``'s executed trades and the eval details of its closed buys."""

    trades: pd.DataFrame
    details: pd.DataFrame


def service_playbook(server: SandboxServer) -> pd.DataFrame:
    """``QUANT``'s playbook as the service holds it now (a new client and cache: nothing
    cached)."""
    with (
        tempfile.TemporaryDirectory() as cache,
        Client(server.url, server.keys["enterprise"], cache_dir=cache, progress=False) as c,
    ):
        return L.load_playbook(QUANT, client=c)


def value_of(playbook: pd.DataFrame, config_id: str, field: str = "threshold") -> Any:
    """A field of one playbook entry."""
    return playbook.loc[playbook["config_id"] == config_id, field].iloc[0]
