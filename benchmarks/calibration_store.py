"""The calibration harness's store: loaded worlds and today's answers kept in Parquet.

A world's features (one frame per quant, as ``trade_features`` returned them over HTTP) are
written once, keyed by the seed and the sandbox's version (schema and world-builder versions,
``sandbox.datadir.expected_meta``), so a re-run of the harness only redoes the research. The
frames go through Arrow with pandas' schema metadata (nullable and categorical dtypes come back
as they were) and their ``attrs`` as JSON in the file's metadata; no pickle. Today's answers
(``rank_criteria`` and ``walk_forward``, which do not change while the new methods are worked
on, ~110 s a world) are kept the same way, keyed by the seed and the reference seed too.

Every file is written to a temporary name and renamed, so two processes filling the store
over disjoint seeds never leave a half-written file behind. The features hold no API key
(``trade_features`` keeps values, provenance and playbooks); nothing else is written.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

_ATTRS_KEY = b"quantscope.calibration.attrs"


def version_key(seed: int, scale: int = 1) -> str:
    """The directory name of a seed's world: the seed and the sandbox's versions."""
    from quantscope.sandbox.datadir import expected_meta

    meta = expected_meta(seed, scale)
    return f"s{seed}-x{scale}-schema{meta['schema_version']}-world{meta['world_version']}"


def write_frame(frame: pd.DataFrame, path: Path) -> None:
    """``frame`` (its index dropped) and its JSON ``attrs`` to ``path``, atomically."""
    attrs = json.dumps(frame.attrs, default=_plain).encode()
    plain = frame.copy(deep=False)
    plain.attrs = {}  # kept once, as JSON, below (pyarrow would try its own copy)
    table = pa.Table.from_pandas(plain, preserve_index=False)
    table = table.replace_schema_metadata({**(table.schema.metadata or {}), _ATTRS_KEY: attrs})
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    pq.write_table(table, tmp)
    os.replace(tmp, path)


def read_frame(path: Path) -> pd.DataFrame:
    """The frame ``write_frame`` wrote, dtypes and ``attrs`` restored (tuples come back as
    lists: JSON has no tuple)."""
    table = pq.read_table(path)
    frame = table.to_pandas()
    raw = (table.schema.metadata or {}).get(_ATTRS_KEY)
    frame.attrs = json.loads(raw) if raw else {}
    return frame


def _plain(value: Any) -> Any:
    """JSON for what ``attrs`` may hold beyond JSON's types (numpy scalars, tuples, sets)."""
    if hasattr(value, "item"):
        return value.item()
    if isinstance(value, set | frozenset):
        return sorted(value)
    raise TypeError(f"cannot keep {type(value).__name__} in a calibration store")


class Store:
    """Worlds' features and today's answers under ``root`` (created on first write)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def _world_dir(self, seed: int) -> Path:
        return self.root / "worlds" / version_key(seed)

    def get_world(
        self, seed: int, quants: Sequence[int]
    ) -> tuple[list[pd.DataFrame], dict[str, float]] | None:
        """The kept features of ``seed`` (one frame per quant) and the load's timing."""
        d = self._world_dir(seed)
        files = [d / f"quant{q}.parquet" for q in quants]
        if not (d / "timing.json").exists() or not all(f.exists() for f in files):
            return None
        timing = json.loads((d / "timing.json").read_text(encoding="utf-8"))
        return [read_frame(f) for f in files], timing

    def put_world(
        self,
        seed: int,
        quants: Sequence[int],
        frames: Sequence[pd.DataFrame],
        timing: dict[str, float],
    ) -> None:
        d = self._world_dir(seed)
        d.mkdir(parents=True, exist_ok=True)
        for q, frame in zip(quants, frames, strict=True):
            write_frame(frame, d / f"quant{q}.parquet")
        _write_text(d / "timing.json", json.dumps(timing))

    def _today_dir(self, seed: int, reference: int) -> Path:
        return self.root / "today" / f"{version_key(seed)}-ref{reference}"

    def get_today(self, seed: int, reference: int) -> dict[str, pd.DataFrame] | None:
        """Today's kept answers for ``seed`` (``rank``, ``oos``) and their time (``today_s``)."""
        d = self._today_dir(seed, reference)
        if not (d / "timing.json").exists():
            return None
        found = {name: read_frame(d / f"{name}.parquet") for name in ("rank", "oos")}
        found["timing"] = json.loads((d / "timing.json").read_text(encoding="utf-8"))
        return found

    def put_today(
        self, seed: int, reference: int, parts: dict[str, pd.DataFrame], seconds: float
    ) -> None:
        d = self._today_dir(seed, reference)
        d.mkdir(parents=True, exist_ok=True)
        for name in ("rank", "oos"):
            frame = parts[name].copy()
            frame.attrs = {}
            write_frame(frame, d / f"{name}.parquet")
        _write_text(d / "timing.json", json.dumps({"today_s": seconds}))


def _write_text(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
