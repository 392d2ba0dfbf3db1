"""What a sync does about damage found when it begins (``catalog.integrity``).

* ``damaged_files``: the files not whole: those the sync may fetch again (its resources,
  quants and months, and the trades its details and candles are planned from) hashed whole,
  the others checked cheaply. The sync then fetches the damaged ones in its scope again
  (``catalog.sync``: a damaged month as if unsealed, details, candles and today's snapshot
  as if absent) and names the rest in its report.
* ``drop_past_snapshots``: a damaged snapshot of a past day cannot be fetched again (the
  service answers with today's): it leaves the manifest, its file becomes garbage.
* ``undo_damaged_tasks``: a resumed run does again the tasks it had done over partitions now
  damaged.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any

import pandas as pd

from quantscope.catalog.integrity import scan
from quantscope.catalog.manifest import Manifest, Store
from quantscope.catalog.read import month_of

__all__ = ["damaged_files", "drop_past_snapshots", "undo_damaged_tasks"]

_SNAPSHOTS = ("signals", "playbook", "recommendations")


def damaged_files(
    store: Store,
    manifest: Manifest,
    names: Sequence[str],
    quants: Sequence[int],
    window: tuple[pd.Timestamp | None, pd.Timestamp | None],
) -> set[str]:
    """The files of ``manifest`` not whole (module docstring), relative to the catalog."""
    wanted = {str(q) for q in quants}
    lo, hi = (month_of(t) if t is not None else None for t in window)
    reads = set(names) | ({"trades"} if {"eval_details", "ohlcv"} & set(names) else set())

    def mine(p: Mapping[str, Any]) -> bool:
        keys = p.get("keys") or {}
        month = keys.get("month")
        return (
            p.get("resource") in reads
            and ("quant_id" not in keys or keys["quant_id"] in wanted)
            and (month is None or ((lo is None or month >= lo) and (hi is None or month <= hi)))
        )

    scope = {n: p for n, p in manifest.partitions.items() if mine(p)}
    rest = {n: p for n, p in manifest.partitions.items() if n not in scope}
    return {p.file for p in [*scan(store, scope, full=True), *scan(store, rest)]}


def drop_past_snapshots(
    manifest: Manifest,
    damaged: set[str],
    names: Sequence[str],
    quants: Sequence[int],
    today: str,
) -> list[str]:
    """Remove from ``manifest`` (and ``damaged``) the damaged snapshots of the sync's
    resources and quants taken before ``today``; the files dropped.
    """
    wanted = {str(q) for q in quants}
    dropped = []
    for name, p in sorted(manifest.partitions.items()):
        keys = p.get("keys") or {}
        if (
            p.get("file") in damaged
            and p.get("resource") in _SNAPSHOTS
            and p.get("resource") in names
            and keys.get("quant_id") in wanted
            and keys.get("snapshot") != today
        ):
            del manifest.partitions[name]
            damaged.discard(p.get("file"))
            dropped.append(str(p.get("file")))
    return dropped


def undo_damaged_tasks(
    run: MutableMapping[str, Any], manifest: Manifest, damaged: set[str]
) -> None:
    """Forget the done tasks of ``run`` that wrote partitions now ``damaged``."""
    tasks = run["tasks"]
    for p in manifest.partitions.values():
        if p.get("file") not in damaged:
            continue
        keys, resource = p.get("keys") or {}, p.get("resource")
        if resource == "ohlcv":  # candles are tasks per quant, not per token: all again
            for tid in [t for t in tasks if t.startswith("ohlcv:")]:
                del tasks[tid]
        elif resource == "eval_details":
            tasks.pop(
                f"eval_details:quant_id={keys.get('quant_id')}:month={keys.get('month')}", None
            )
        else:
            tasks.pop(f"{resource}:quant_id={keys.get('quant_id')}", None)
