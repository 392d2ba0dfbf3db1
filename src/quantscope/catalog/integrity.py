"""A catalog knows its own integrity: every file checked against its manifest record.

The manifest records each partition's file, its size, its SHA-256 and (since issue 20) the
SHA-256 of its Parquet footer (``footer_sha256``); files written since also carry a CRC-32
per data page (pyarrow's ``write_page_checksum``). Three depths:

* **confined** (always): a record's file must be
  ``<resource>/<key>=<value>/<key>=<value>/part-<16 hex>.parquet`` of its own resource and
  partition keys; on a local disk its real path (symlinks resolved) must lie inside the
  catalog. A path that leaves the catalog (``../``, absolute, a link out) is never opened,
  never deleted.
* **cheap** (every read, ``Catalog.info``, a sync's start outside its scope): the file
  exists and has the recorded size, ``PAR1`` at both ends, and its footer has the recorded
  digest (schema, row counts, offsets, key-value metadata: nothing in the footer can change
  unseen). A read then verifies every page's CRC-32 as pyarrow decodes it and the row
  count (a page header's own bytes are not covered: a flip there that changes no value
  reads as the stored rows; ``verify`` sees it). Together these
  cost 0-4% of a read (``benchmarks/bench_catalog.py``: ``cat.trades`` against the same read
  unchecked); a file written before footers were recorded is hashed whole instead (it has no
  page CRCs to check: ~1 GB/s, ~10% of a read).
* **full** (``Catalog.verify``, ``quantscope catalog info``/``verify``, before a bundle is
  exported, a sync's start for what it may fetch again): the SHA-256 of the whole file.

A problem is a ``Problem`` (partition, file, what); reads raise ``CatalogIntegrityError``
naming the file, and ``sync`` fetches damaged partitions again (``catalog.sync``).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from quantscope._errors import CatalogIntegrityError
from quantscope.catalog.layout import RESOURCES, Resource, with_keys
from quantscope.catalog.manifest import Store

__all__ = [
    "Problem",
    "check",
    "confined",
    "damaged_error",
    "footer_digest",
    "read_checked",
    "scan",
]

_MAGIC = b"PAR1"
_TAIL = 8  # footer length (4 bytes, little-endian) and the magic
_KEY_VALUE = {
    "quant_id": r"[0-9]{1,18}",
    "token_id": r"[0-9]{1,18}",
    "month": r"[0-9]{4}-[0-9]{2}",
    "snapshot": r"[0-9]{4}-[0-9]{2}-[0-9]{2}",
    "timeframe": r"[0-9]{1,4}[a-zA-Z]{1,3}",
}
OUTSIDE = "outside the catalog"
MISSING = "missing"


@dataclass(frozen=True)
class Problem:
    """What is wrong with one partition's file: ``problem`` is ``missing``, ``outside the
    catalog`` or a sentence (another size, footer, page checksum, SHA-256, row count).
    """

    partition: str
    file: str
    problem: str

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


def footer_digest(data: bytes | memoryview) -> str | None:
    """SHA-256 of a Parquet file's footer and tail (``data`` is the file, or its end);
    None when ``data`` does not end as a Parquet file.
    """
    if len(data) < _TAIL or bytes(data[-4:]) != _MAGIC:
        return None
    length = int.from_bytes(bytes(data[-_TAIL:-4]), "little")
    if length + _TAIL > len(data):
        return None
    return hashlib.sha256(data[-(length + _TAIL) :]).hexdigest()


def _shape_ok(record: Mapping[str, Any]) -> bool:
    """Whether the record's file is named as its partition's (no I/O)."""
    resource = RESOURCES.get(str(record.get("resource")))
    file, keys = record.get("file"), record.get("keys")
    if resource is None or not isinstance(file, str) or not isinstance(keys, Mapping):
        return False
    parts = []
    for key in resource.partition_keys:
        value = keys.get(key)
        if not isinstance(value, str) or not re.fullmatch(_KEY_VALUE[key], value):
            return False
        parts.append(f"{key}={value}")
    directory = "/".join([resource.name, *parts])
    return re.fullmatch(re.escape(directory) + r"/part-[0-9a-f]{16}\.parquet", file) is not None


def confined(store: Store, record: Mapping[str, Any]) -> str | None:
    """The file's full path when it is named as its partition's (its resource and keys) and
    lies in the catalog (``Store.inside``: no link out); None when not (``OUTSIDE``).
    """
    if not _shape_ok(record) or not store.inside(str(record["file"])):
        return None
    return store.path(str(record["file"]))


def _ends(store: Store, path: str, size: int) -> tuple[bytes, bytes]:
    """The file's first 4 bytes and its end from the footer on (one open, two or three reads:
    a footer of up to 64 kB comes with the first read of the end).
    """
    with store.fs.open(path, "rb") as f:
        head: bytes = f.read(4)
        f.seek(max(0, size - 65536))
        tail: bytes = f.read()
        if len(tail) >= _TAIL:
            length = int.from_bytes(tail[-_TAIL:-4], "little")
            if len(tail) < length + _TAIL <= size:
                f.seek(size - length - _TAIL)
                tail = f.read()
    return head, tail


def _size(store: Store, path: str) -> int | None:
    try:
        if store.local:
            return os.stat(path).st_size
        return int(store.fs.info(path)["size"])
    except FileNotFoundError:
        return None


def check(store: Store, record: Mapping[str, Any], *, full: bool = False) -> str | None:
    """What is wrong with a partition's file (module docstring: cheap, or ``full``), or None."""
    path = confined(store, record)
    if path is None:
        return OUTSIDE
    size = _size(store, path)
    if size is None:
        return MISSING
    want = int(record.get("bytes", -1))
    if size != want:
        return f"{size} bytes, the manifest lists {want}"
    if full or "footer_sha256" not in record:
        data = store.fs.cat_file(path)
        digest = hashlib.sha256(data).hexdigest()
        if digest != record.get("sha256"):
            listed = str(record.get("sha256"))[:16]
            return f"sha256 {digest[:16]}..., the manifest lists {listed}..."
        return None
    head, tail = _ends(store, path, size)
    if head != _MAGIC:
        return "no Parquet header"
    return _footer_problem(tail, record)


def _footer_problem(data: bytes | memoryview, record: Mapping[str, Any]) -> str | None:
    found = footer_digest(data)
    if found is None:
        return "no Parquet footer"
    if "footer_sha256" in record and found != record["footer_sha256"]:
        return "its footer differs from the one written"
    return None


def damaged_error(store: Store, problems: Iterable[Problem]) -> CatalogIntegrityError:
    """One error naming every damaged file, one line, saying what to do."""
    found = list(problems)
    head = "; ".join(f"{p.file} is damaged ({p.problem})" for p in found[:3])
    more = f" and {len(found) - 3} more" if len(found) > 3 else ""
    return CatalogIntegrityError(
        f"catalog {store.url}: {head}{more}: the same qsc.sync (or quantscope sync) fetches "
        "damaged partitions again; `quantscope catalog verify` lists them all",
        catalog=store.url,
        files=[p.file for p in found],
        problems=[p.problem for p in found],
    )


def read_checked(store: Store, resource: Resource, record: Mapping[str, Any]) -> pa.Table:
    """The Arrow table of one partition's file, its keys restored (``layout.with_keys``),
    checked as the module docstring says; ``CatalogIntegrityError`` naming it when not whole.
    """
    file = str(record.get("file"))

    def fail(problem: str) -> CatalogIntegrityError:
        return damaged_error(store, [Problem(file.rpartition("/")[0], file, problem)])

    path = confined(store, record)
    if path is None:
        raise fail(OUTSIDE)
    try:
        data = store.fs.cat_file(path)
    except FileNotFoundError:
        raise fail(MISSING) from None
    want = int(record.get("bytes", -1))
    if len(data) != want:
        raise fail(f"{len(data)} bytes, the manifest lists {want}")
    if "footer_sha256" in record:
        if data[:4] != _MAGIC:
            raise fail("no Parquet header")
        problem = _footer_problem(data, record)
        if problem is not None:
            raise fail(problem)
    elif hashlib.sha256(data).hexdigest() != record.get("sha256"):
        raise fail("sha256 differs from the manifest's")
    try:
        table = pq.read_table(pa.BufferReader(data), page_checksum_verification=True)
    except (pa.ArrowException, OSError) as exc:
        raise fail(f"unreadable: {str(exc).splitlines()[0][:120]}") from None
    if table.num_rows != int(record.get("rows", -1)):
        raise fail(f"{table.num_rows} rows, the manifest lists {record.get('rows')}")
    return with_keys(resource, table, record["keys"])


def scan(
    store: Store, partitions: Mapping[str, Mapping[str, Any]], *, full: bool = False
) -> list[Problem]:
    """Every partition whose file is not whole (cheap checks, or ``full``), in order."""
    found = []
    for name, record in sorted(partitions.items()):
        problem = check(store, record, full=full)
        if problem is not None:
            found.append(Problem(name, str(record.get("file")), problem))
    return found
