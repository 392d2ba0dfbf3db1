"""The widget tests' quant, its frames and the playbook as the service holds it.

``QUANT`` is the quant the widget tests study; ``WidgetData`` holds its executed trades and eval
details (the session fixture ``widget_data`` loads them once); ``service_playbook`` reads the
playbook through a new client and cache; ``value_of`` reads one entry's field;
``smart_money`` is the entry the write tests move; ``other_client`` is someone else.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd

import quantscope.loaders as L
from quantscope._http.client import Client
from quantscope.sandbox.serve import SandboxServer

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


def smart_money(playbook: pd.DataFrame, cls: str = "DEGEN_CAP") -> pd.Series:
    """The BUYING ``smart_money_buys`` entry of ``cls``: the entry the write tests move."""
    return playbook[
        (playbook["criterion"] == "smart_money_buys")
        & (playbook["market_cap_class"] == cls)
        & (playbook["config_type"] == "BUYING")
    ].iloc[0]


def other_client(server: SandboxServer, tmp_path: Path) -> Client:
    """Someone else: another client with a cache of its own."""
    return Client(
        server.url, server.keys["enterprise"], cache_dir=str(tmp_path / "other"), progress=False
    )
