"""Playbook changes as data, and the service's rules for them, checked before anything is sent.

A ``Change`` is one field of one playbook entry, from its old value to a new one, in the form
``update_playbook`` takes. ``check_change`` says why the service would refuse it (the
contract's PUT rules, docs/service-contract.md "Playbook"), so a panel can refuse it first.
``stale_changes`` is the compare half of compare-and-swap: which changes' entries no longer
hold the ``old_value`` the caller saw in a playbook read just before the write, and
``stale_write_error`` the refusal that names them. No client and no I/O here:
``loaders.update_playbook`` and ``audit`` read and send, ``widgets`` edits.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from quantscope._advice import Said
from quantscope._errors import StaleWriteError

__all__ = [
    "FIELD_COLUMNS",
    "Change",
    "check_change",
    "number",
    "option_ids",
    "plain",
    "same_value",
    "stale_changes",
    "stale_write_error",
]

#: The playbook frame column that holds each writable field.
FIELD_COLUMNS: dict[str, str] = {
    "threshold": "threshold",
    "weight": "weight",
    "required": "required",
    "disabled": "disabled",
}


def plain(value: Any) -> Any:
    """A JSON-ready scalar: numpy/pandas numbers and flags as Python ones, missing as None."""
    if value is None or value is pd.NA:
        return None
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def number(value: Any) -> str:
    """A threshold or field value as people read it (6 significant digits, flags as is)."""
    value = value.item() if hasattr(value, "item") else value
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int | float):
        return f"{value:.6g}"
    return str(value)


@dataclass(frozen=True)
class Change:
    """One field of one playbook entry, from ``old_value`` to ``new_value``."""

    config_id: str
    field: str
    old_value: Any
    new_value: Any
    criterion: str | None = None
    market_cap_class: str | None = None
    config_type: str | None = None

    @classmethod
    def of(cls, row: pd.Series, field: str, new_value: Any) -> Change:
        """The change of ``field`` of a playbook row (``load_playbook``) to ``new_value``."""
        if field not in FIELD_COLUMNS:
            raise ValueError(f"unknown playbook field {field!r}; one of {sorted(FIELD_COLUMNS)}")
        return cls(
            config_id=str(row["config_id"]),
            field=field,
            old_value=plain(row[FIELD_COLUMNS[field]]),
            new_value=plain(new_value),
            criterion=plain(row.get("criterion")),
            market_cap_class=plain(row.get("market_cap_class")),
            config_type=plain(row.get("config_type")),
        )

    @classmethod
    def of_recommendation(cls, recommendation: pd.Series) -> Change:
        """The threshold change an optimizer recommendation (``load_recommendations`` row)
        makes: its ``old_threshold`` (what the user saw) to its ``new_threshold``.
        """
        return cls(
            config_id=str(recommendation["config_id"]),
            field="threshold",
            old_value=plain(recommendation["old_threshold"]),
            new_value=plain(recommendation["new_threshold"]),
            criterion=plain(recommendation.get("criterion")),
            market_cap_class=plain(recommendation.get("market_cap_class")),
            config_type="BUYING",
        )

    @property
    def where(self) -> str:
        """The entry and field, as messages name them: ``rsi_14 (MID_CAP BUYING) weight``."""
        name = self.criterion or f"config {self.config_id}"
        return f"{name} ({self.market_cap_class} {self.config_type}) {self.field}"

    def request(self) -> dict[str, Any]:
        """The change as ``update_playbook`` takes it."""
        return {"config_id": self.config_id, "field": self.field, "value": self.new_value}

    def reverted(self) -> Change:
        """The change that restores ``old_value``."""
        return Change(
            self.config_id,
            self.field,
            self.new_value,
            self.old_value,
            self.criterion,
            self.market_cap_class,
            self.config_type,
        )


def extra_info(row: pd.Series) -> Any:
    """A playbook or details row's ``extra_info``: the JSON text of the loaders' frames parsed
    (a hand-made frame's dict as it is); None when missing or unreadable.
    """
    info = row.get("extra_info")
    if isinstance(info, str):
        try:
            return json.loads(info)
        except ValueError:
            return None
    return info if isinstance(info, dict) else None


def option_ids(row: pd.Series) -> list[Any] | None:
    """The option ids of an options criterion (worst to best), None for a numeric one."""
    info = extra_info(row)
    options = info.get("options") if isinstance(info, dict) else None
    return [o.get("id") for o in options] if options else None


def check_change(row: pd.Series, field: str, value: Any) -> str | None:
    """Why the service would refuse ``field = value`` for this playbook row, or None.

    The contract's PUT rules ("Playbook"): a threshold inside the criterion's range, or one of
    its option ids; a weight >= 0; flags are booleans. Checked before anything is sent.
    """
    name = f"{row['criterion']} ({row['market_cap_class']} {row['config_type']}) {field}"
    if field in ("required", "disabled"):
        return None if isinstance(value, bool | np.bool_) else f"{name} must be True or False"
    try:
        v = float(value)
    except (TypeError, ValueError):
        return f"{name} must be a number, got {value!r}"
    if not math.isfinite(v):
        return f"{name} must be a finite number, got {value!r}"
    if field == "weight":
        return None if v >= 0 else f"{name} must be >= 0, got {number(v)}"
    if field != "threshold":
        return f"{name}: only threshold, weight, required and disabled can be edited here"
    ids = option_ids(row)
    if ids is not None:
        return None if v in ids else f"{name} must be one of the option ids {ids}, got {number(v)}"
    low, high = row.get("range_min"), row.get("range_max")
    if pd.notna(low) and pd.notna(high) and not float(low) <= v <= float(high):
        return f"{name} must lie in its range [{number(low)}, {number(high)}], got {number(v)}"
    return None


def same_value(a: Any, b: Any) -> bool:
    """Whether two field values are the same: numbers by value (2 == 2.0), flags as flags,
    missing as missing.
    """
    a, b = plain(a), plain(b)
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool | int) and isinstance(b, bool | int) and bool(a) == bool(b)
    if isinstance(a, int | float) and isinstance(b, int | float):
        return float(a) == float(b)
    return bool(a == b)


def stale_changes(playbook: pd.DataFrame, changes: Sequence[Change]) -> list[tuple[Change, Any]]:
    """The changes whose entry in ``playbook`` (read just now) no longer holds the change's
    ``old_value``, each with the value it holds (the change named as the playbook names its
    entry). An entry missing from the playbook is left to the service (404).
    """
    by_id = playbook.drop_duplicates("config_id").set_index("config_id")
    found = []
    for change in changes:
        if change.config_id not in by_id.index:
            continue
        row = by_id.loc[change.config_id]
        current = plain(row[FIELD_COLUMNS[change.field]])
        if not same_value(current, change.old_value):
            named = replace(
                change,
                criterion=change.criterion or plain(row.get("criterion")),
                market_cap_class=change.market_cap_class or plain(row.get("market_cap_class")),
                config_type=change.config_type or plain(row.get("config_type")),
            )
            found.append((named, current))
    return found


def stale_write_error(
    stale: Sequence[tuple[Change, Any]], playbook: pd.DataFrame | None = None
) -> StaleWriteError:
    """The refusal of a write whose entries moved: each entry, its value now and the one seen."""
    moved = "; ".join(
        f"{c.where} is now {number(now)}, you saw {number(c.old_value)}" for c, now in stale
    )
    return StaleWriteError(
        Said(
            "stale write refused, nothing was written: {moved}. {Advice}.",
            ("reload_write", "force_write"),
            {"moved": moved},
        ),
        stale=stale,
        playbook=playbook,
    )
