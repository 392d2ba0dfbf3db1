"""The trading playbook: read it as a long frame, and change it (all changes or none).

Changes are compare-and-swap when they say what the caller saw (an ``audit.Change``, whose
``old_value`` is the value it was made from, or a dict with ``old_value``): the entries are
read again from the service (one request, never the cache) and the write is refused with a
``StaleWriteError`` naming each entry that moved, before anything is sent.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from quantscope import _endpoints as E
from quantscope._changes import Change, stale_changes, stale_write_error
from quantscope._errors import InvalidResponseError
from quantscope._http.client import Client, Fetched
from quantscope._http.writelock import playbook_lock
from quantscope._ids import IdArg, one_id
from quantscope._typed import schemas as _schemas
from quantscope.loaders._base import Recipe, client_or_default, field, records, typed_frame
from quantscope.loaders._planned import LoadPlan, frame_plan, planned, planned_write

CONFIG = E.CONFIG.path


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


@planned
def load_playbook(
    quant_id: IdArg,
    *,
    config_group_id: str | None = None,
    fresh: bool = False,
    client: Client | None = None,
) -> LoadPlan[pd.DataFrame]:
    """The quant's playbook, long: one row per market-cap class x category x criterion x
    config type x interval, with threshold, weight, flags, operator, range and config id.

    ``fresh=True`` reads it from the service (one request) even when the cache holds a copy
    young enough: what a write compares against (someone else may have changed it).
    """
    params = E.query(E.CONFIG, locals())
    recipe = Recipe(CONFIG, _schemas.PLAYBOOK, build=_playbook_frame)
    return frame_plan(recipe, params, client=client, fresh=fresh)


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


def _change(change: Change | Mapping[str, Any]) -> tuple[dict[str, Any], Change | None]:
    """The change as the service takes it, and what the caller saw (None: not said)."""
    if isinstance(change, Change):
        wire = {"configId": change.config_id, "field": change.field, "newValue": change.new_value}
        return wire, change
    config_id = change.get("configId", change.get("config_id"))
    value = change.get("newValue", change.get("value"))
    name = change.get("field", "threshold")
    if config_id is None or value is None:
        raise ValueError(
            f"a playbook change needs a config id and a value (and optionally a field and the "
            f"old_value seen), got {dict(change)!r}"
        )
    wire = {"configId": str(config_id), "field": str(name), "newValue": value}
    if "old_value" not in change:
        return wire, None
    return wire, Change(str(config_id), str(name), change["old_value"], value)


def compare_read(
    quant_id: IdArg, seen: bool, force: bool, client: Client | None
) -> LoadPlan[pd.DataFrame] | None:
    """The read a compare-and-swap write sends before it writes: the quant's playbook from the
    service (``fresh``: never the cache), when the write says what the caller saw (``seen``)
    and is not ``force``d; None otherwise. The write runs it; ``qsc.estimate`` prices it.
    """
    if not seen or force:
        return None
    return load_playbook.plan(quant_id, fresh=True, client=client)


def refuse_stale(check: LoadPlan[pd.DataFrame] | None, seen: Sequence[Change]) -> None:
    """Run a ``compare_read`` (None: nothing to check) and refuse (``StaleWriteError``,
    nothing written) when an entry no longer holds the value the caller saw.
    """
    if check is None:
        return
    now = check.run()
    stale = stale_changes(now, seen)
    if stale:
        raise stale_write_error(stale, now)


def _update_check(
    quant_id: IdArg,
    changes: Iterable[Change | Mapping[str, Any]],
    force: bool,
    client: Client | None,
) -> LoadPlan[pd.DataFrame] | None:
    """``update_playbook``'s ``compare_read`` (what ``qsc.estimate`` of it counts)."""
    seen = any(change is not None for _, change in map(_change, changes))
    return compare_read(quant_id, seen, force, client)


@planned_write(CONFIG, check=_update_check)
def update_playbook(
    quant_id: IdArg,
    changes: Iterable[Change | Mapping[str, Any]],
    *,
    force: bool = False,
    client: Client | None = None,
) -> pd.DataFrame:
    """Change playbook entries in one request; the service applies all of them or none.

    Each change is an ``audit.Change`` or ``{"config_id": ..., "field": "threshold", "value":
    0.7, "old_value": 0.5}`` (the spec's ``configId``/``field``/``newValue`` spelling works
    too). When changes say what the caller saw (a ``Change``'s ``old_value``, a dict's
    ``old_value``), the playbook is read from the service first (one more request) and a
    ``StaleWriteError`` names every entry that no longer holds it: nothing is sent.
    ``force=True`` skips that check; a dict without ``old_value`` sets the value it gives,
    whatever the entry holds. Returns the updated entries. Cached reads of the playbook and
    the optimizer dashboard are invalidated.

    The check and the PUT hold the playbook's lock (``_http.writelock``): no other write through
    quantscope on this machine lands between them (nor, for a plain set, between another
    writer's check and its PUT).
    """
    parsed = [_change(c) for c in changes]
    if not parsed:
        raise ValueError("update_playbook needs at least one change")
    c = client_or_default(client)
    quant = one_id(quant_id, "quant_id")
    seen = [change for _, change in parsed if change is not None]
    body = E.body(E.CONFIG_WRITE, {"quant_id": quant, "changes": [wire for wire, _ in parsed]})
    with playbook_lock(c, quant):
        refuse_stale(compare_read(quant, bool(seen), force, c), seen)
        fetched = c.put(CONFIG, body)
    updated = records(field(fetched.data, CONFIG, "updatedConfigs", list), CONFIG)
    return typed_frame(updated, _schemas.PLAYBOOK_UPDATE, fetched.provenance)
