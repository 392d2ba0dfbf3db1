"""The catalog's manifest: the one JSON file that says what the catalog holds.

``manifest.json`` at the catalog's root records the schema version, each resource's Arrow
schema, every partition (its one file, rows, SHA-256 of the file's bytes, whether it is
sealed, when it was synced) and every sync run (when, what, requests spent, rows added and
updated, the tasks done, how it ended). Readers see only the files it lists. It is replaced
whole and atomically (``Store.save``: a new file renamed over the old one on a local disk, a
single PUT on an object store), after the new partition files are written, so a catalog is
always the state of its last swap, never half of a sync.

The manifest carries the SHA-256 of its own content (``sha256``, the last field: the digest of
the same JSON without it), so an edit or a flipped byte that leaves valid JSON is refused
(``CatalogIntegrityError``) rather than believed; manifests without it (older quantscope) are
read as they are. It is no signature: whoever edits the manifest can edit its digest.

Every file is written to a temporary name beside its final one (``.<name>.<random>.tmp``),
flushed to the disk and renamed only when whole (``Store.write_bytes``, ``Store.save``): a full
disk or a killed process leaves no file under a final name, and a failed write removes its
temporary file and raises ``CatalogWriteError`` (one line) instead of the system's error.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import fsspec
from fsspec.implementations.local import LocalFileSystem

from quantscope._errors import CatalogIntegrityError, CatalogWriteError, ConfigurationError
from quantscope.catalog.layout import RESOURCES, SCHEMA_VERSION, arrow_schema

__all__ = ["MANIFEST", "Manifest", "Store", "is_temporary", "now_iso"]

MANIFEST = "manifest.json"


def now_iso(moment: datetime | None = None) -> str:
    """UTC ISO text to the second, ``Z``-suffixed (as the manifest writes times)."""
    moment = moment or datetime.now(UTC)
    return moment.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


@dataclass
class Manifest:
    """What the catalog holds (module docstring); ``partitions`` maps a partition's
    directory (``trades/quant_id=1/month=2026-09``) to its record.
    """

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
        body: dict[str, Any] = {
            "schema_version": self.schema_version,
            "created_at": self.created_at,
            "schemas": self.schemas,
            "partitions": dict(sorted(self.partitions.items())),
            "runs": self.runs,
        }
        body[_DIGEST] = _content_digest(body)
        return json.dumps(body, indent=1, sort_keys=False).encode()

    @classmethod
    def from_json(cls, data: bytes, where: str) -> Manifest:
        try:
            body = json.loads(data)
        except ValueError as exc:
            raise ConfigurationError(f"{where}: not a catalog manifest ({exc})") from None
        version = body.get("schema_version") if isinstance(body, dict) else None
        if isinstance(body, dict) and _DIGEST in body:
            stated = body.pop(_DIGEST)
            if stated != _content_digest(body):
                raise CatalogIntegrityError(
                    f"{where}: {MANIFEST} is damaged (its content does not match the sha256 it "
                    "was written with): restore it from a copy, or sync into a new catalog",
                    catalog=where,
                    files=[MANIFEST],
                    problems=["content differs from its sha256"],
                )
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


_DIGEST = "sha256"


def _content_digest(body: dict[str, Any]) -> str:
    """SHA-256 of ``body`` (without the digest) as ``to_json`` writes it."""
    return hashlib.sha256(json.dumps(body, indent=1, sort_keys=False).encode()).hexdigest()


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
        self.root: str = root.rstrip("/")
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
        """Write one whole file (its directory made first): on a local disk to a temporary
        name, flushed, then renamed (module docstring); ``CatalogWriteError`` when it cannot.
        """
        target = self.path(relative)
        try:
            if self.local:
                self._unlink_links(relative)
            self.fs.makedirs(target.rsplit("/", 1)[0], exist_ok=True)
            if self.local:
                _write_atomic(target, data)
            else:  # one PUT creates an object whole
                self.fs.pipe_file(target, data)
        except OSError as exc:
            raise self.write_error(relative, exc) from None

    def save(self, manifest: Manifest) -> None:
        """Swap the manifest atomically (module docstring)."""
        self.write_bytes(MANIFEST, manifest.to_json())

    def _unlink_links(self, relative: str) -> None:
        """Remove the links (to anywhere) among the directories on the way to ``relative``,
        so a write never goes through one out of the catalog (the link goes, not its target;
        the file itself is replaced by a rename, which replaces a link, not its target).
        """
        if not _plain(relative):
            raise OSError(errno.EINVAL, f"not a path inside the catalog: {relative!r}")
        here = self.root
        for part in relative.split("/")[:-1]:
            here = f"{here}/{part}"
            if os.path.islink(here):
                os.unlink(here)

    def write_error(self, relative: str, exc: OSError) -> CatalogWriteError:
        """The one-line error for ``relative`` that could not be written."""
        code = exc.errno
        name = errno.errorcode.get(code, "") if code is not None else ""
        why = f"{exc.strerror or exc} ({name})" if name else str(exc.strerror or exc)
        return CatalogWriteError(
            f"catalog {self.url}: cannot write {relative}: {why}: free space (or raise the "
            "limit) and run the same sync again, it resumes; no file was left half written",
            catalog=self.url,
            path=relative,
            errno=code,
        )

    def inside(self, relative: str) -> bool:
        """Whether ``relative`` names a place inside the catalog (no ``..``, not absolute,
        and, on a local disk, no link out of it).
        """
        if not _plain(relative):
            return False
        if not self.local:
            return True
        root = os.path.realpath(self.root)
        real = os.path.realpath(self.path(relative))
        return real != root and os.path.commonpath([root, real]) == root

    def remove(self, relative: str) -> None:
        """Delete a file no manifest lists any more (best effort: a reader may hold it);
        never one outside the catalog (a link in it is removed, not what it points to).
        """
        with contextlib.suppress(OSError):
            if self.local and _plain(relative) and os.path.islink(self.path(relative)):
                os.unlink(self.path(relative))
            elif self.inside(relative):
                self.fs.rm_file(self.path(relative))


def _plain(relative: str) -> bool:
    """No ``..``, not absolute, no empty part, no backslash."""
    parts = relative.split("/")
    return not (relative.startswith("/") or ".." in parts or "" in parts or "\\" in relative)


def _write_atomic(target: str, data: bytes) -> None:
    """``data`` to a temporary name beside ``target``, flushed to the disk, renamed over it;
    the temporary file removed when any of it fails.
    """
    head, _, name = target.rpartition("/")
    tmp = f"{head}/.{name}.{uuid.uuid4().hex}.tmp"
    try:
        with open(tmp, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def is_temporary(relative: str) -> bool:
    """Whether ``relative`` is a temporary file ``_write_atomic`` left (a killed process)."""
    name = relative.rpartition("/")[2]
    return name.startswith(".") and name.endswith(".tmp")
