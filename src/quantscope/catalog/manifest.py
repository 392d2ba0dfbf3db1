"""The catalog's manifest: the one JSON file that says what the catalog holds.

``manifest.json`` at the catalog's root records the schema version, each resource's Arrow
schema, every partition (its one file, rows, SHA-256 of the file's bytes, whether it is
sealed, when it was synced) and every sync run (when, what, requests spent, rows added and
updated, the tasks done, how it ended). Readers see only the files it lists. It is replaced
whole and atomically (``Store.save``: a new file renamed over the old one on a local disk, a
single PUT on an object store), after the new partition files are written, so a catalog is
always the state of its last swap, never half of a sync.
"""

from __future__ import annotations

import contextlib
import json
import os
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import fsspec
from fsspec.implementations.local import LocalFileSystem

from quantscope._errors import ConfigurationError
from quantscope.catalog.layout import RESOURCES, SCHEMA_VERSION, arrow_schema

__all__ = ["MANIFEST", "Manifest", "Store", "now_iso"]

MANIFEST = "manifest.json"


def now_iso(moment: datetime | None = None) -> str:
    """UTC ISO text to the second, ``Z``-suffixed (as the manifest writes times)."""
    moment = moment or datetime.now(UTC)
    return moment.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


@dataclass
class Manifest:
    """What the catalog holds (module docstring); ``partitions`` maps a partition's
    directory (``trades/quant_id=1/month=2026-09``) to its record."""

    schema_version: int = SCHEMA_VERSION
    created_at: str = field(default_factory=now_iso)
    schemas: dict[str, Any] = field(default_factory=dict)
    partitions: dict[str, dict[str, Any]] = field(default_factory=dict)
    runs: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def new(cls) -> Manifest:
        schemas = {
            name: {"spec": r.spec.name, "arrow": str(arrow_schema(r)).splitlines()}
            for name, r in RESOURCES.items()
        }
        return cls(schemas=schemas)

    def to_json(self) -> bytes:
        body = {
            "schema_version": self.schema_version,
            "created_at": self.created_at,
            "schemas": self.schemas,
            "partitions": dict(sorted(self.partitions.items())),
            "runs": self.runs,
        }
        return json.dumps(body, indent=1, sort_keys=False).encode()

    @classmethod
    def from_json(cls, data: bytes, where: str) -> Manifest:
        try:
            body = json.loads(data)
        except ValueError as exc:
            raise ConfigurationError(f"{where}: not a catalog manifest ({exc})") from None
        version = body.get("schema_version") if isinstance(body, dict) else None
        if version != SCHEMA_VERSION:
            raise ConfigurationError(
                f"{where}: catalog schema version {version!r}, this quantscope reads "
                f"{SCHEMA_VERSION}: sync it into a new catalog"
            )
        return cls(
            schema_version=version,
            created_at=body.get("created_at", ""),
            schemas=body.get("schemas", {}),
            partitions=body.get("partitions", {}),
            runs=body.get("runs", []),
        )

    def of(self, resource: str) -> dict[str, dict[str, Any]]:
        """The partitions of one resource."""
        return {k: v for k, v in self.partitions.items() if v["resource"] == resource}


class Store:
    """A catalog's location: an fsspec filesystem and the root path within it.

    ``storage_options``: the filesystem's options (``s3://``: ``endpoint_url``, ``key``,
    ``secret``, ``client_kwargs``...), as ``fsspec.core.url_to_fs`` takes them.
    """

    def __init__(
        self, path: str | os.PathLike[str], storage_options: Mapping[str, Any] | None = None
    ) -> None:
        text = os.fspath(path)
        self.url = text
        self.fs, root = fsspec.core.url_to_fs(text, **dict(storage_options or {}))
        self.root = root.rstrip("/")
        self.local = isinstance(self.fs, LocalFileSystem)

    def path(self, relative: str) -> str:
        return f"{self.root}/{relative}"

    def exists(self) -> bool:
        return bool(self.fs.exists(self.path(MANIFEST)))

    def load(self) -> Manifest:
        """The manifest, or a new one when the catalog does not exist yet."""
        if not self.exists():
            return Manifest.new()
        return Manifest.from_json(self.fs.cat_file(self.path(MANIFEST)), self.url)

    def load_existing(self) -> Manifest:
        if not self.exists():
            raise ConfigurationError(
                f"no catalog at {self.url} (no {MANIFEST}): qsc.sync({self.url!r}, ...) makes one"
            )
        return self.load()

    def write_bytes(self, relative: str, data: bytes) -> None:
        """Write one whole file (its directory made first)."""
        target = self.path(relative)
        self.fs.makedirs(target.rsplit("/", 1)[0], exist_ok=True)
        self.fs.pipe_file(target, data)

    def save(self, manifest: Manifest) -> None:
        """Swap the manifest atomically (module docstring)."""
        data = manifest.to_json()
        self.fs.makedirs(self.root, exist_ok=True)
        if self.local:
            tmp = self.path(f".{MANIFEST}.{uuid.uuid4().hex}.tmp")
            with open(tmp, "wb") as out:
                out.write(data)
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, self.path(MANIFEST))
        else:  # one PUT replaces an object whole
            self.fs.pipe_file(self.path(MANIFEST), data)

    def remove(self, relative: str) -> None:
        """Delete a file no manifest lists any more (best effort: a reader may hold it)."""
        with contextlib.suppress(OSError):
            self.fs.rm_file(self.path(relative))
