"""The live playbook: read a quant's config entries, validate changes to them, write them.

The ``config`` table holds one entry per (quant, market-cap class, config type, criterion,
interval). ``read_playbook`` shapes a quant's entries as GET /api/degen/config serves them;
``apply_changes`` (PUT /api/degen/config) and ``apply_threshold`` (the optimizer applying a
recommendation) change them. Both write through ``_write``, the one UPDATE of the table, and both
run inside a transaction their caller opened with ``Store.transaction()``: they validate every
change first and raise ``ApiError`` before writing anything, so the caller's rollback is only a
safety net.

Validation follows docs/service-contract.md (Playbook): ``threshold`` a number inside the
criterion's ``range`` or one of its option ids; ``weight`` a number >= 0; ``required`` and
``disabled`` booleans; ``extraInfo`` an object of the criterion's own shape (the same option ids
in the same order, a known operator, a range with min <= max that still holds the threshold).
Changes apply in order: each is checked against the entry as the earlier changes of the same
request left it.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from quantscope.sandbox.catalog import CATEGORIES, CONFIG_TYPES, MARKET_CAP_CLASSES, OPERATORS
from quantscope.sandbox.errors import invalid_body, not_found

FIELDS: tuple[str, ...] = ("threshold", "weight", "required", "disabled", "extraInfo")
"""The ``field`` values a change may name."""


_ENTRY_SQL = """
SELECT c.id, c.quant_id, c.market_cap, c.config_type, c.criteria_id, k.key AS criteria_key,
       c.threshold, c.weight, c.required, c.disabled, c.extra_info
FROM config AS c JOIN criteria AS k ON k.id = c.criteria_id
WHERE c.id = ?
"""


@dataclass(frozen=True)
class ConfigEntry:
    """One config entry (a row of ``config``) with its criterion's key."""

    id: str
    quant_id: int
    market_cap: str
    config_type: str
    criteria_id: int
    criteria_key: str
    threshold: float
    weight: float
    required: bool
    disabled: bool
    extra_info: dict[str, Any]

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> ConfigEntry:
        return cls(
            id=row["id"],
            quant_id=row["quant_id"],
            market_cap=row["market_cap"],
            config_type=row["config_type"],
            criteria_id=row["criteria_id"],
            criteria_key=row["criteria_key"],
            threshold=float(row["threshold"]),
            weight=float(row["weight"]),
            required=bool(row["required"]),
            disabled=bool(row["disabled"]),
            extra_info=json.loads(row["extra_info"]),
        )

    def as_updated_config(self) -> dict[str, Any]:
        """The entry as an element of ``updatedConfigs`` (models.playbook.UpdatedConfig)."""
        return {
            "id": self.id,
            "criteriaId": self.criteria_id,
            "criteriaKey": self.criteria_key,
            "threshold": self.threshold,
            "weight": self.weight,
            "required": self.required,
            "disabled": self.disabled,
            "configType": self.config_type,
            "extraInfo": self.extra_info,
        }


@dataclass(frozen=True)
class Change:
    """One requested change; ``param`` names it in errors (``newConfigs[2]``, or ``""``)."""

    config_id: str
    field: str
    value: Any
    param: str


# ---------------------------------------------------------------------------------------------
# Reading

# The interval-keyed maps of a config type: (map name, config column, JSON value of the column).
_INTERVAL_MAPS: tuple[tuple[str, str, Callable[[Any], Any]], ...] = (
    ("thresholds", "threshold", float),
    ("weights", "weight", float),
    ("requireds", "required", bool),
    ("disableds", "disabled", bool),
    ("extraInfos", "extra_info", json.loads),
    ("delegates", "delegate", bool),
    ("configIdsByInterval", "id", str),
    ("configKeys", "config_key", str),
)


def get_entry(conn: sqlite3.Connection, config_id: str) -> ConfigEntry | None:
    """The config entry ``config_id``, or None when there is none."""
    row = conn.execute(_ENTRY_SQL, (config_id,)).fetchone()
    return None if row is None else ConfigEntry.from_row(row)


def read_playbook(conn: sqlite3.Connection, quant_id: int, config_group_id: str) -> list[Any]:
    """A quant's live playbook as GET /api/degen/config serves it (models.playbook.PlaybookConfig).

    One element per market-cap class (``DEGEN_CAP``, ``LOW_CAP``, ``MID_CAP``), each with its
    pass marks by config type and the criteria by category, in catalog order.
    """
    classes = [name for name, _ in MARKET_CAP_CLASSES]
    rows = conn.execute(
        """
        SELECT c.id, c.market_cap, c.config_type, c.interval, c.threshold, c.weight,
               c.required, c.disabled, c.delegate, c.extra_info, c.config_key,
               k.key, k.name, k.category, k.short_description, k.long_description, k.is_human
        FROM config AS c JOIN criteria AS k ON k.id = c.criteria_id
        WHERE c.quant_id = :quant
        ORDER BY (SELECT key FROM json_each(:classes) WHERE value = c.market_cap), k.position,
                 (SELECT key FROM json_each(:types) WHERE value = c.config_type), c.interval
        """,
        {"quant": quant_id, "classes": json.dumps(classes), "types": json.dumps(CONFIG_TYPES)},
    ).fetchall()
    marks: dict[str, dict[str, float]] = {name: {} for name in classes}
    for mc, ctype, mark in conn.execute(
        "SELECT market_cap, config_type, pass_mark FROM pass_marks WHERE quant_id = :quant "
        "ORDER BY (SELECT key FROM json_each(:types) WHERE value = config_type)",
        {"quant": quant_id, "types": json.dumps(CONFIG_TYPES)},
    ):
        marks[mc][ctype] = float(mark)
    elements: dict[str, dict[str, Any]] = {
        name: {
            "marketCap": name,
            "categories": {category: [] for category in CATEGORIES},
            "passMark": marks[name],
            "configGroupId": config_group_id,
        }
        for name in classes
    }
    criteria: dict[tuple[str, str], dict[str, Any]] = {}
    for row in rows:
        criterion = criteria.get((row["market_cap"], row["key"]))
        if criterion is None:
            criterion = criteria[row["market_cap"], row["key"]] = {
                "rootKey": row["key"],
                "criteriaName": row["name"],
                "shortDescription": row["short_description"],
                "longDescription": row["long_description"],
                "isHumanCriteria": bool(row["is_human"]),
                "configTypes": {},
            }
            elements[row["market_cap"]]["categories"][row["category"]].append(criterion)
        maps = criterion["configTypes"].setdefault(
            row["config_type"], {name: {} for name, _, _ in _INTERVAL_MAPS}
        )
        for name, column, convert in _INTERVAL_MAPS:
            maps[name][row["interval"]] = convert(row[column])
    return [elements[name] for name in classes]


# ---------------------------------------------------------------------------------------------
# Validating and writing


def apply_changes(
    conn: sqlite3.Connection, quant_id: int, changes: Sequence[Change]
) -> list[ConfigEntry]:
    """Validate every change of a quant's playbook, then write them all (PUT /api/degen/config).

    Call inside ``Store.transaction()``. Changes apply in order, each checked against the entry
    as the earlier ones left it; nothing is written unless all of them are valid.

    Returns:
        The changed entries as they are now, one per entry, in order of first mention.

    Raises:
        ApiError: 404 ``not_found`` for an unknown config id or one of another quant
            (``param`` ``newConfigs[i].configId``); 422 ``invalid_body`` for a value the entry
            cannot take (``param`` ``newConfigs[i].newValue``) or an unknown field.
    """
    working: dict[str, ConfigEntry] = {}
    for change in changes:
        entry = working.get(change.config_id)
        if entry is None:
            entry = _entry_of_quant(conn, change, quant_id)
        working[change.config_id] = validated(entry, change)
    for entry in working.values():
        _write(conn, entry)
    return list(working.values())


def apply_threshold(
    conn: sqlite3.Connection, config_id: str, new_threshold: float
) -> tuple[ConfigEntry, ConfigEntry]:
    """Set one entry's threshold (the optimizer applying a recommendation).

    Call inside ``Store.transaction()``; validated like a PUT change of ``threshold``.

    Returns:
        The entry before and after the change.

    Raises:
        ApiError: 404 ``not_found`` when ``config_id`` is unknown; 422 ``invalid_body`` when
            the threshold is outside the criterion's range or not one of its option ids.
    """
    before = get_entry(conn, config_id)
    if before is None:
        raise not_found(f"no config entry {config_id!r}", "configId")
    after = validated(before, Change(config_id, "threshold", new_threshold, ""))
    _write(conn, after)
    return before, after


def _write(conn: sqlite3.Connection, entry: ConfigEntry) -> None:
    """The one UPDATE of the live playbook: every settable column of one entry."""
    conn.execute(
        "UPDATE config SET threshold = ?, weight = ?, required = ?, disabled = ?, extra_info = ? "
        "WHERE id = ?",
        (
            entry.threshold,
            entry.weight,
            int(entry.required),
            int(entry.disabled),
            json.dumps(entry.extra_info),
            entry.id,
        ),
    )


def _entry_of_quant(conn: sqlite3.Connection, change: Change, quant_id: int) -> ConfigEntry:
    param = f"{change.param}.configId"
    entry = get_entry(conn, change.config_id)
    if entry is None or entry.quant_id != quant_id:
        raise not_found(f"quant {quant_id} has no config entry {change.config_id}", param)
    return entry


def validated(entry: ConfigEntry, change: Change) -> ConfigEntry:
    """``entry`` with ``change`` applied, or ApiError 422 ``invalid_body`` if it cannot take it."""
    param = f"{change.param}.newValue" if change.param else "newValue"
    value = change.value
    what = f"{entry.criteria_key} ({entry.market_cap} {entry.config_type})"
    if change.field == "threshold":
        return replace(entry, threshold=_threshold(entry.extra_info, value, param, what))
    if change.field == "weight":
        weight = _number(value, param, what, "weight")
        if weight < 0:
            raise invalid_body(
                param, f"{param}: the weight of {what} must be >= 0, got {short_repr(value)}"
            )
        return replace(entry, weight=weight)
    if change.field in ("required", "disabled"):
        if not isinstance(value, bool):
            raise invalid_body(
                param,
                f"{param}: {change.field} of {what} must be true or false, got {short_repr(value)}",
            )
        if change.field == "required":
            return replace(entry, required=value)
        return replace(entry, disabled=value)
    if change.field == "extraInfo":
        return replace(entry, extra_info=_extra_info(entry, value, param, what))
    raise invalid_body(
        f"{change.param}.field",
        f"{change.param}.field must be one of {', '.join(FIELDS)}, got {short_repr(change.field)}",
    )


def _number(value: Any, param: str, what: str, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise invalid_body(
            param, f"{param}: the {name} of {what} must be a number, got {short_repr(value)}"
        )
    number = float(value)
    if not math.isfinite(number):
        raise invalid_body(
            param, f"{param}: the {name} of {what} must be finite, got {short_repr(value)}"
        )
    return number


def _threshold(extra_info: dict[str, Any], value: Any, param: str, what: str) -> float:
    threshold = _number(value, param, what, "threshold")
    options = extra_info.get("options")
    if options is not None:
        ids = [option["id"] for option in options]
        if threshold not in ids:
            raise invalid_body(
                param,
                f"{param}: the threshold of {what} must be one of its option ids "
                f"{ids}, got {short_repr(value)}",
            )
    span = extra_info.get("range")
    if span is not None and not span["min"] <= threshold <= span["max"]:
        raise invalid_body(
            param,
            f"{param}: the threshold of {what} must lie in its range "
            f"[{span['min']:g}, {span['max']:g}], got {short_repr(value)}",
        )
    return threshold


def _extra_info(entry: ConfigEntry, value: Any, param: str, what: str) -> dict[str, Any]:
    """A new Extra info object of the entry's own shape, normalised (operator first)."""
    current = entry.extra_info
    if not isinstance(value, dict):
        raise invalid_body(
            param, f"{param}: extraInfo of {what} must be an object, got {short_repr(value)}"
        )
    keys = sorted(current)
    if sorted(value) != keys:
        raise invalid_body(
            param,
            f"{param}: extraInfo of {what} must have exactly the keys {keys}, got {sorted(value)}",
        )
    operator = value["operator"]
    if operator not in OPERATORS:
        raise invalid_body(
            param,
            f"{param}: operator must be one of {', '.join(OPERATORS)}, got {short_repr(operator)}",
        )
    info: dict[str, Any] = {"operator": operator}
    if "options" in current:
        info["options"] = _options(current["options"], value["options"], param, what)
    if "range" in current:
        info["range"] = _range(value["range"], entry.threshold, param, what)
    return info


def _options(
    current: list[dict[str, Any]], options: Any, param: str, what: str
) -> list[dict[str, Any]]:
    ids = [option["id"] for option in current]
    problem = f"{param}: options of {what} must be the objects {{id, label}} with ids {ids}"
    if not isinstance(options, list) or len(options) != len(ids):
        raise invalid_body(param, f"{problem}, got {short_repr(options)}")
    out = []
    for option, option_id in zip(options, ids, strict=True):
        if (
            not isinstance(option, dict)
            or sorted(option) != ["id", "label"]
            or type(option["id"]) is not int
            or option["id"] != option_id
            or not isinstance(option["label"], str)
            or not option["label"].strip()
        ):
            raise invalid_body(
                param, f"{problem} in that order and non-empty labels, got {short_repr(option)}"
            )
        out.append({"id": option_id, "label": option["label"]})
    return out


def _range(span: Any, threshold: float, param: str, what: str) -> dict[str, float]:
    if not isinstance(span, dict) or sorted(span) != ["max", "min"]:
        raise invalid_body(
            param, f"{param}: range of {what} must be {{min, max}}, got {short_repr(span)}"
        )
    low = _number(span["min"], param, what, "range min")
    high = _number(span["max"], param, what, "range max")
    if low > high:
        raise invalid_body(param, f"{param}: range of {what} has min {low:g} > max {high:g}")
    if not low <= threshold <= high:
        raise invalid_body(
            param,
            f"{param}: range [{low:g}, {high:g}] of {what} must hold its threshold {threshold:g}",
        )
    return {"min": low, "max": high}


def short_repr(value: Any) -> str:
    """``repr(value)`` cut to 80 characters, for error messages."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
