"""``qsc.export_bundle``: a slice of a catalog and a notebook written as one study file.

The slice: the month partitions (trades, evaluations, eval details) of the quants asked whose
month meets the window (widened to whole months, as ``sync`` does), every snapshot of those
quants (signals, playbook, recommendations), and the candles of the tokens the sliced trades
traded. Files are copied as stored (confined to the catalog and their SHA-256 checked against
the catalog's manifest on the way, ``catalog.integrity``: a corrupted catalog is not
shipped); the manifest keeps only their partitions (its ``runs`` are the source catalog's
history, as is). The format is ``catalog.bundle_format``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import warnings
import zipfile
from collections.abc import Iterable, Mapping
from datetime import date, datetime
from pathlib import Path
from typing import Any

from quantscope._errors import CatalogIntegrityError
from quantscope._ids import IdArg, many_ids
from quantscope._versions import QUANTSCOPE_VERSION
from quantscope.catalog.bundle_format import (
    BUNDLE_JSON,
    CATALOG_MANIFEST,
    Bundle,
    BundleError,
    sha256,
)
from quantscope.catalog.integrity import OUTSIDE, confined
from quantscope.catalog.layout import RESOURCES
from quantscope.catalog.manifest import Manifest, Store, now_iso
from quantscope.catalog.read import month_of, parse_time, read_table

__all__ = ["export_bundle", "select_partitions"]

#: Members' time in the zip (zip cannot store none): fixed, so members do not vary by day.
_EPOCH = (1980, 1, 1, 0, 0, 0)
#: A connect call that names a service: opened elsewhere, such a notebook cannot be pointed at
#: the bundle's catalog by ``QUANTSCOPE_CATALOG`` (docs/catalog.md, Bundles).
_NAMES_SERVICE = re.compile(r"connect\(\s*(['\"]https?://|[^)]*\b(url|api_key)\s*=)")


def select_partitions(
    store: Store,
    manifest: Manifest,
    quants: Iterable[int] | None,
    start: datetime | date | str | None,
    end: datetime | date | str | None,
) -> dict[str, dict[str, Any]]:
    """The manifest's partitions in the slice (module docstring), by directory."""
    wanted = None if quants is None else {str(q) for q in quants}
    lo, hi = parse_time(start), parse_time(end)
    first = month_of(lo) if lo is not None else None
    last = month_of(hi) if hi is not None else None
    chosen: dict[str, dict[str, Any]] = {}
    for name, p in sorted(manifest.partitions.items()):
        keys = p["keys"]
        if "quant_id" in keys and wanted is not None and keys["quant_id"] not in wanted:
            continue
        month = keys.get("month")
        if month is not None and (
            (first is not None and month < first) or (last is not None and month > last)
        ):
            continue
        if p["resource"] != "ohlcv":
            chosen[name] = p
    tokens: set[str] = set()
    for p in chosen.values():
        if p["resource"] == "trades":
            table = read_table(store, RESOURCES["trades"], [p])
            tokens |= {str(t) for t in table.column("token_id").to_pylist() if t is not None}
    for name, p in manifest.of("ohlcv").items():
        if p["keys"]["token_id"] in tokens:
            chosen[name] = p
    return chosen


def _stored(store: Store, record: Mapping[str, Any]) -> bytes:
    """The bytes of a partition's file, confined to the catalog; ``BundleError`` naming it
    when it is outside the catalog or missing.
    """
    path = confined(store, record)
    problem = OUTSIDE if path is None else None
    if path is not None:
        try:
            data: bytes = store.fs.cat_file(path)
            return data
        except FileNotFoundError:
            problem = "missing"
    raise BundleError(
        f"{store.url}: {record.get('file')} does not match the catalog's manifest ({problem}): "
        "not exported; the same sync fetches it again"
    )


def _notebook(path: Path) -> bytes:
    """The notebook's bytes, checked to be a notebook (JSON with cells), with a warning when
    its ``connect`` names a service (``QUANTSCOPE_CATALOG`` could not redirect it).
    """
    data = path.read_bytes()
    try:
        body = json.loads(data)
    except ValueError as exc:
        raise BundleError(f"{path}: not a notebook ({exc})") from None
    if not isinstance(body, Mapping) or not isinstance(body.get("cells"), list):
        raise BundleError(f"{path}: not a notebook (no cells)")
    code = "".join(
        "".join(c.get("source", "")) for c in body["cells"] if c.get("cell_type") == "code"
    )
    if _NAMES_SERVICE.search(code):
        warnings.warn(
            f"{path.name} connects to a named service (url= or api_key=): opened elsewhere it "
            "will ask that service; plain qsc.connect() answers from QUANTSCOPE_CATALOG when "
            "it is set",
            UserWarning,
            stacklevel=3,
        )
    return data


def _add(archive: zipfile.ZipFile, name: str, data: bytes, *, compress: bool) -> None:
    info = zipfile.ZipInfo(name, date_time=_EPOCH)
    info.compress_type = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    info.external_attr = 0o100644 << 16  # a plain file, rw-r--r--
    archive.writestr(info, data)


def export_bundle(
    path: str | os.PathLike[str],
    catalog: str | os.PathLike[str],
    *,
    quant_id: IdArg | Iterable[IdArg] | None = None,
    start: datetime | date | str | None = None,
    end: datetime | date | str | None = None,
    notebook: str | os.PathLike[str] | None = None,
    storage_options: Mapping[str, Any] | None = None,
) -> Bundle:
    """Write the study bundle ``path`` (one zip file, ``.qsbundle`` by convention): the
    slice of ``catalog`` for ``quant_id`` (default all) and the window ``start``..``end``
    (widened to whole months; default everything), the notebook, quantscope's version and
    every member's SHA-256 (``catalog.bundle_format``). Written beside ``path`` and renamed
    over it, so a failed export leaves no half file. ``qsc.verify_bundle`` checks it and
    ``qsc.open_bundle`` unpacks it (docs/catalog.md, Bundles).
    """
    store = Store(catalog, storage_options)
    manifest = store.load_existing()
    quants = None if quant_id is None else many_ids(quant_id, "quant_id")
    try:
        chosen = select_partitions(store, manifest, quants, start, end)
    except CatalogIntegrityError as exc:
        raise BundleError(f"{exc}; not exported") from None
    if not chosen:
        raise BundleError(
            f"{store.url}: nothing to bundle for quant_id={quants}, window {start}..{end} "
            f"(the catalog holds {len(manifest.partitions)} partitions)"
        )
    nb_path = None if notebook is None else Path(notebook)
    nb_data = None if nb_path is None else _notebook(nb_path)
    nb_member = None if nb_path is None else f"notebook/{nb_path.name}"
    target = Path(path)
    partial = target.with_name(f".{target.name}.partial")
    members: dict[str, dict[str, Any]] = {}
    rows: dict[str, int] = {}
    try:
        with zipfile.ZipFile(partial, "w") as archive:
            for p in chosen.values():
                data = _stored(store, p)
                digest = sha256(data)
                if digest != p["sha256"]:
                    raise BundleError(
                        f"{store.url}: {p['file']} does not match the catalog's manifest "
                        f"(sha256 {digest[:16]}..., listed {p['sha256'][:16]}...): not exported"
                    )
                name = f"catalog/{p['file']}"
                _add(archive, name, data, compress=False)
                members[name] = {"sha256": digest, "bytes": len(data)}
                rows[p["resource"]] = rows.get(p["resource"], 0) + int(p["rows"])
            sliced = Manifest(
                schema_version=manifest.schema_version,
                created_at=manifest.created_at,
                schemas=manifest.schemas,
                partitions=chosen,
                runs=manifest.runs,
            ).to_json()
            _add(archive, CATALOG_MANIFEST, sliced, compress=True)
            members[CATALOG_MANIFEST] = {"sha256": sha256(sliced), "bytes": len(sliced)}
            if nb_member is not None and nb_data is not None:
                _add(archive, nb_member, nb_data, compress=True)
                members[nb_member] = {"sha256": sha256(nb_data), "bytes": len(nb_data)}
            months = sorted({p["keys"]["month"] for p in chosen.values() if "month" in p["keys"]})
            bundle = Bundle(
                path=target,
                quantscope_version=QUANTSCOPE_VERSION,
                created_at=now_iso(),
                selection={
                    "quant_id": quants,
                    "start": None if start is None else str(start),
                    "end": None if end is None else str(end),
                    "months": months,
                },
                notebook=nb_member,
                members=members,
                rows=dict(sorted(rows.items())),
            )
            _add(archive, BUNDLE_JSON, bundle.to_json(), compress=True)
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    return dataclasses.replace(bundle, size=target.stat().st_size)
