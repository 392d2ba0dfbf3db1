"""The study bundle's format: one zip file, what may be in it, and how it is checked.

A bundle (``STUDY.qsbundle``) is a zip archive of exactly these members::

    bundle.json                      what it is: format, quantscope's version, the selection,
                                     and every other member's SHA-256 and size
    catalog/manifest.json            the catalog's manifest, restricted to the partitions below
    catalog/<resource>/<k>=<v>/<k>=<v>/part-<hash>.parquet   the catalog slice, as stored
    notebook/<name>.ipynb            at most one notebook, with its stored outputs

Zip, not tar: its central directory names every member before anything is read, so a bundle
is refused whole (a bad name, a link, a member not listed) before one byte is written; members
are read one at a time (hashing is random access); Python reads it with no dependency and
every OS opens it. Parquet files are stored as they are (already zstd-compressed), JSON and
the notebook deflated; member times are fixed, so the same slice makes the same members.

Nothing in a bundle is unpickled or executed on opening: members are checked against the
patterns below (Parquet, JSON, one ``.ipynb``; no ``..``, no absolute path, no link, no
directory entry, no duplicate) and the hashes in ``bundle.json``. The hashes catch corruption
and edits in transit; they are not a signature (whoever edits a member can edit its hash).
"""

from __future__ import annotations

import hashlib
import json
import re
import stat
import zipfile
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from quantscope._errors import QuantscopeError

__all__ = [
    "BUNDLE_JSON",
    "CATALOG_MANIFEST",
    "FORMAT",
    "FORMAT_VERSION",
    "Bundle",
    "BundleError",
    "check_member",
    "read_bundle_json",
    "sha256",
]

FORMAT = "quantscope-bundle"
FORMAT_VERSION = 1
BUNDLE_JSON = "bundle.json"
CATALOG_MANIFEST = "catalog/manifest.json"
#: bundle.json is read into memory before any check can use it: it may not be larger.
MAX_BUNDLE_JSON = 16 * 2**20
#: The catalog's manifest is read into memory and the notebook unpacked whole: the sizes their
#: zip entries declare (which bound what reading them can produce) may not be larger. Parquet
#: members must be stored as they are (``export_bundle`` writes them so), so none unpacks to
#: more than the bytes it occupies in the bundle.
MAX_MANIFEST = 256 * 2**20
MAX_NOTEBOOK = 256 * 2**20
_METHODS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)

_PARTITION = re.compile(
    r"catalog/[a-z_]+/[a-z_]+=[A-Za-z0-9_-]+/[a-z_]+=[A-Za-z0-9_-]+/part-[0-9a-f]{16}\.parquet"
)
_NOTEBOOK = re.compile(r"notebook/[A-Za-z0-9_-][A-Za-z0-9_ .-]*\.ipynb")


class BundleError(QuantscopeError):
    """A study bundle that cannot be written, trusted or opened: the message names the file and,
    for a check that failed, the first member that failed it.
    """


def sha256(data: bytes) -> str:
    """The SHA-256 of ``data`` as 64 hex digits."""
    return hashlib.sha256(data).hexdigest()


def is_partition(name: str) -> bool:
    return _PARTITION.fullmatch(name) is not None


def is_notebook(name: str) -> bool:
    return _NOTEBOOK.fullmatch(name) is not None and ".." not in name


def check_member(where: str, info: zipfile.ZipInfo) -> None:
    """Refuse a member that is not a plain file of an allowed name (module docstring)."""
    name = info.filename
    kind = stat.S_IFMT(info.external_attr >> 16)
    if kind not in (0, stat.S_IFREG):
        raise BundleError(f"{where}: member {name!r} is not a plain file (a link or device)")
    allowed = name in (BUNDLE_JSON, CATALOG_MANIFEST) or is_partition(name) or is_notebook(name)
    if not allowed:
        raise BundleError(
            f"{where}: member {name!r} is not allowed in a bundle (only bundle.json, the "
            "catalog's manifest.json and Parquet partitions, and one .ipynb notebook)"
        )
    _check_size(where, info)


def _check_size(where: str, info: zipfile.ZipInfo) -> None:
    """Refuse a member that could unpack to more than a bundle holds (a zip bomb): compressed
    Parquet, an unknown compression method, a JSON or notebook member declaring too much.
    """
    name = info.filename
    if info.compress_type not in _METHODS:
        raise BundleError(
            f"{where}: member {name!r} uses zip compression method {info.compress_type} "
            "(a bundle's members are stored or deflated)"
        )
    if is_partition(name):
        if info.compress_type != zipfile.ZIP_STORED or info.file_size != info.compress_size:
            raise BundleError(
                f"{where}: member {name!r} is compressed inside the zip (a bundle stores its "
                "Parquet files as they are, so none unpacks to more than it occupies)"
            )
        return
    cap, what = (
        (MAX_BUNDLE_JSON, "bundle.json")
        if name == BUNDLE_JSON
        else (MAX_MANIFEST, "catalog manifest")
        if name == CATALOG_MANIFEST
        else (MAX_NOTEBOOK, "notebook")
    )
    if info.file_size > cap:
        raise BundleError(
            f"{where}: member {name!r} declares {info.file_size:,} bytes unpacked, over the "
            f"{cap:,} a bundle's {what} may hold"
        )


@dataclass(frozen=True)
class Bundle:
    """A study bundle's description (its ``bundle.json``), as written or verified.

    ``members`` maps each member (but ``bundle.json``) to its ``sha256`` and ``bytes``;
    ``selection`` is what was exported (quants, window, months); ``rows`` per resource;
    ``size`` the bundle file's bytes.
    """

    path: Path
    quantscope_version: str
    created_at: str
    selection: dict[str, Any]
    notebook: str | None
    members: dict[str, dict[str, Any]]
    rows: dict[str, int] = field(default_factory=dict)
    size: int = 0

    @property
    def partitions(self) -> int:
        return sum(1 for m in self.members if is_partition(m))

    def to_json(self) -> bytes:
        body = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "quantscope_version": self.quantscope_version,
            "created_at": self.created_at,
            "selection": self.selection,
            "notebook": self.notebook,
            "rows": self.rows,
            "members": dict(sorted(self.members.items())),
        }
        return json.dumps(body, indent=1).encode()

    @classmethod
    def from_json(cls, path: Path, data: bytes) -> Bundle:
        where = str(path)
        try:
            body = json.loads(data)
        except ValueError as exc:
            raise BundleError(f"{where}: bundle.json is not JSON ({exc})") from None
        if not isinstance(body, Mapping) or body.get("format") != FORMAT:
            raise BundleError(f"{where}: not a quantscope bundle (bundle.json has no format)")
        if body.get("format_version") != FORMAT_VERSION:
            raise BundleError(
                f"{where}: bundle format {body.get('format_version')!r}, this quantscope reads "
                f"{FORMAT_VERSION}"
            )
        members = body.get("members")
        if not isinstance(members, Mapping) or not all(
            isinstance(m, Mapping) and isinstance(m.get("sha256"), str) for m in members.values()
        ):
            raise BundleError(f"{where}: bundle.json lists no members with their hashes")
        return cls(
            path=path,
            quantscope_version=str(body.get("quantscope_version")),
            created_at=str(body.get("created_at")),
            selection=dict(body.get("selection") or {}),
            notebook=body.get("notebook"),
            members={str(k): dict(v) for k, v in members.items()},
            rows={str(k): int(v) for k, v in (body.get("rows") or {}).items()},
            size=path.stat().st_size if path.exists() else 0,
        )


def read_bundle_json(path: Path, archive: zipfile.ZipFile) -> Bundle:
    """Every member checked by name and kind (none read yet), then ``bundle.json`` parsed and
    its member list matched against the archive's: nothing missing, nothing extra.
    """
    where = str(path)
    infos = archive.infolist()
    names = [i.filename for i in infos]
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise BundleError(f"{where}: member {dup!r} appears twice")
    for info in infos:
        check_member(where, info)
    if BUNDLE_JSON not in names:
        raise BundleError(f"{where}: not a quantscope bundle (no bundle.json)")
    info = archive.getinfo(BUNDLE_JSON)
    if info.file_size > MAX_BUNDLE_JSON:
        raise BundleError(f"{where}: bundle.json is {info.file_size} bytes: not a bundle's")
    try:
        data = archive.read(info)
    except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
        raise BundleError(f"{where}: bundle.json cannot be read ({exc})") from None
    bundle = Bundle.from_json(path, data)
    held = set(names) - {BUNDLE_JSON}
    listed = set(bundle.members)
    if listed - held:
        raise BundleError(f"{where}: member {sorted(listed - held)[0]!r} is listed but missing")
    if held - listed:
        raise BundleError(f"{where}: member {sorted(held - listed)[0]!r} is not listed")
    notebooks = [n for n in held if is_notebook(n)]
    if len(notebooks) > 1 or bundle.notebook != (notebooks[0] if notebooks else None):
        raise BundleError(f"{where}: a bundle holds one notebook, named in bundle.json")
    if CATALOG_MANIFEST not in held:
        raise BundleError(f"{where}: no catalog/manifest.json")
    return bundle
