"""Playbook changes as data, and the service's rules for them, checked before anything is sent.

A ``Change`` is one field of one playbook entry, from its old value to a new one, in the form
``update_playbook`` takes. ``check_change`` says why the service would refuse it (the
contract's PUT rules, docs/service-contract.md "Playbook"), so a panel can refuse it first.
No client and no I/O here: ``audit`` sends, verifies and logs changes, ``widgets`` edits them.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["FIELD_COLUMNS", "Change", "check_change", "number", "option_ids", "plain"]

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
    (a hand-made frame's dict as it is); None when missing or unreadable."""
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
