"""The trading playbook: read it as a long frame, and change it (all changes or none)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from quantscope import _schemas
from quantscope._client import Client, Fetched
from quantscope._errors import InvalidResponseError
from quantscope._ids import IdArg, one_id
from quantscope.loaders._base import Recipe, client_or_default, field, load, records, typed_frame

CONFIG = "/api/degen/config"


def _pass_mark(element: Mapping[str, Any], config_type: str) -> Any:
    mark = element.get("passMark")
    return mark.get(config_type) if isinstance(mark, Mapping) else mark


def _flatten(elements: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The nested configuration, one record per (class, category, criterion, type, interval)."""
    rows: list[dict[str, Any]] = []
    for element in elements:
        for category, criteria in (element.get("categories") or {}).items():
            for criterion in criteria or []:
                for config_type, entry in (criterion.get("configTypes") or {}).items():
                    for interval in entry.get("thresholds") or {}:
                        row = {name: (entry.get(key) or {}).get(interval) for key, name in _MAPS}
                        row.update(
                            marketCap=element.get("marketCap"),
                            category=category,
                            rootKey=criterion.get("rootKey"),
                            criteriaName=criterion.get("criteriaName"),
                            isHumanCriteria=criterion.get("isHumanCriteria"),
                            configType=config_type,
                            interval=interval,
                            passMark=_pass_mark(element, config_type),
                        )
                        rows.append(row)
    return rows


# The per-interval maps of a config type entry, and the record keys they become.
_MAPS = (
    ("thresholds", "threshold"),
    ("weights", "weight"),
    ("requireds", "required"),
    ("disableds", "disabled"),
    ("delegates", "delegate"),
    ("extraInfos", "extraInfo"),
    ("configIdsByInterval", "configId"),
    ("configKeys", "configKey"),
)


def load_playbook(
    quant_id: IdArg, *, config_group_id: str | None = None, client: Client | None = None
) -> pd.DataFrame:
    """The quant's playbook, long: one row per market-cap class x category x criterion x
    config type x interval, with threshold, weight, flags, operator, range and config id."""
    params = {"quantId": one_id(quant_id, "quant_id"), "configGroupId": config_group_id}
    recipe = Recipe(CONFIG, _schemas.PLAYBOOK, build=_playbook_frame)
    return load(recipe, params, client=client)


def _playbook_frame(recipe: Recipe, fetched: Fetched) -> pd.DataFrame:
    if not isinstance(fetched.data, list):
        raise InvalidResponseError(
            f"{CONFIG}: expected a list of market-cap classes, got {fetched.data!r:.200}",
            endpoint=CONFIG,
            status_code=200,
        )
    rows = _flatten(records(fetched.data, CONFIG))
    params = fetched.provenance.params
    quant_id = int(params["quantId"]) if isinstance(params, dict) else None
    return typed_frame(rows, recipe.spec, fetched.provenance, quant_id=quant_id)


def _change(change: Mapping[str, Any]) -> dict[str, Any]:
    config_id = change.get("configId", change.get("config_id"))
    value = change.get("newValue", change.get("value"))
    name = change.get("field", "threshold")
    if config_id is None or value is None:
        raise ValueError(
            f"a playbook change needs a config id and a value (and optionally a field), got "
            f"{dict(change)!r}"
        )
    return {"configId": str(config_id), "field": str(name), "newValue": value}


def update_playbook(
    quant_id: IdArg,
    changes: Iterable[Mapping[str, Any]],
    *,
    client: Client | None = None,
) -> pd.DataFrame:
    """Change playbook entries in one request; the service applies all of them or none.

    Each change is ``{"config_id": ..., "field": "threshold", "value": 0.7}`` (the spec's
    ``configId``/``field``/``newValue`` spelling works too). Returns the updated entries.
    Cached reads of the playbook and the optimizer dashboard are invalidated.
    """
    body = {"quantId": one_id(quant_id, "quant_id"), "newConfigs": [_change(c) for c in changes]}
    if not body["newConfigs"]:
        raise ValueError("update_playbook needs at least one change")
    fetched = client_or_default(client).put(CONFIG, body)
    updated = records(field(fetched.data, CONFIG, "updatedConfigs", list), CONFIG)
    return typed_frame(updated, _schemas.PLAYBOOK_UPDATE, fetched.provenance)
