"""``qsc.verify_bundle`` and ``qsc.open_bundle``: a colleague's study file checked, then unpacked.

``verify_bundle`` refuses a bundle whole on the first problem, named: a member whose name or
kind is not allowed (``catalog.bundle_format``: no path traversal, no link, nothing but JSON,
Parquet and one notebook), a member missing, extra, of another size or another SHA-256 than
``bundle.json`` lists, or a catalog manifest whose partitions are not exactly the Parquet
members with the same hashes. ``open_bundle`` verifies, then unpacks into a new directory
(written beside it and renamed into place, each member hashed again as it is written) with
files and directories made read-only, and says how to re-run the notebook offline. Nothing is
unpickled, imported or executed.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import uuid
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from quantscope._versions import QUANTSCOPE_VERSION
from quantscope.catalog.bundle_format import (
    BUNDLE_JSON,
    CATALOG_MANIFEST,
    Bundle,
    BundleError,
    is_partition,
    read_bundle_json,
)
from quantscope.catalog.manifest import Manifest

__all__ = ["OpenedBundle", "open_bundle", "verify_bundle"]

_CHUNK = 1 << 20


def _zip(path: Path) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(path)
    except FileNotFoundError:
        raise BundleError(f"{path}: no such file") from None
    except (zipfile.BadZipFile, OSError) as exc:
        raise BundleError(f"{path}: not a bundle (not a zip file: {exc})") from None


def _copy_hashed(archive: zipfile.ZipFile, info: zipfile.ZipInfo, out: object) -> str:
    """Read one member in chunks (written to ``out`` if it has ``write``); its SHA-256. A
    member that cannot be read (a damaged deflate stream, a wrong CRC, cut short) is a
    ``BundleError`` naming it. Reading stops at the size its entry declares (zipfile's own
    bound), which ``bundle_format.check_member`` has capped.
    """
    digest = hashlib.sha256()
    write = getattr(out, "write", None)
    try:
        with archive.open(info) as member:
            while chunk := member.read(_CHUNK):
                digest.update(chunk)
                if write is not None:
                    write(chunk)
    except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
        raise BundleError(
            f"{archive.filename}: member {info.filename!r} cannot be read ({exc})"
        ) from None
    return digest.hexdigest()


def _check(bundle: Bundle, info: zipfile.ZipInfo, digest: str | None) -> None:
    listed = bundle.members[info.filename]
    if info.file_size != listed.get("bytes", info.file_size):
        raise BundleError(
            f"{bundle.path}: {info.filename}: {info.file_size} bytes, bundle.json lists "
            f"{listed.get('bytes')}"
        )
    if digest is not None and digest != listed["sha256"]:
        raise BundleError(
            f"{bundle.path}: {info.filename}: sha256 mismatch (bundle.json lists "
            f"{listed['sha256'][:16]}..., the member is {digest[:16]}...)"
        )


def _check_manifest(bundle: Bundle, data: bytes) -> None:
    manifest = Manifest.from_json(data, f"{bundle.path}: {CATALOG_MANIFEST}")
    parquet = {m for m in bundle.members if is_partition(m)}
    for name, p in sorted(manifest.partitions.items()):
        member = f"catalog/{p.get('file')}"
        if member not in parquet or not member.startswith(f"catalog/{name}/"):
            raise BundleError(
                f"{bundle.path}: the catalog's manifest lists {p.get('file')!r} for {name}, "
                "which is no Parquet member of its partition"
            )
        if p.get("sha256") != bundle.members[member]["sha256"]:
            raise BundleError(
                f"{bundle.path}: {member}: sha256 differs from the catalog's manifest"
            )
        parquet.discard(member)
    if parquet:
        raise BundleError(f"{bundle.path}: {sorted(parquet)[0]} is in no manifest partition")


def verify_bundle(path: str | os.PathLike[str]) -> Bundle:
    """Check every member of the bundle at ``path`` (module docstring); its description.
    Raises ``BundleError`` naming the first member that fails.
    """
    where = Path(path)
    with _zip(where) as archive:
        bundle = read_bundle_json(where, archive)
        for info in archive.infolist():
            if info.filename == BUNDLE_JSON:
                continue
            _check(bundle, info, None)  # sizes first: nothing is read past a wrong one
            _check(bundle, info, _copy_hashed(archive, info, None))
        _check_manifest(bundle, archive.read(CATALOG_MANIFEST))
    return bundle


@dataclass(frozen=True)
class OpenedBundle:
    """A bundle unpacked read-only: where its catalog and notebook are, and how to re-run."""

    bundle: Bundle
    directory: Path
    catalog: Path
    notebook: Path | None

    def how_to_run(self) -> str:
        """What to type to re-run the notebook offline (no service, no key)."""
        b = self.bundle
        cat = shlex.quote(str(self.catalog))
        lines = [
            f"opened {b.path.name} read-only in {self.directory}: {b.partitions} partitions "
            f"({', '.join(f'{k} {v} rows' for k, v in b.rows.items())}), made with quantscope "
            f"{b.quantscope_version} on {b.created_at}",
        ]
        if b.quantscope_version != QUANTSCOPE_VERSION:
            lines.append(
                f"  note: this is quantscope {QUANTSCOPE_VERSION}; "
                "outputs may differ from the stored ones"
            )
        lines.append(f'  in Python:  qsc.connect(catalog="{self.catalog}")  (no service, no key)')
        if self.notebook is not None:
            nb = shlex.quote(str(self.notebook))
            lines += [
                f"  re-run the notebook:  QUANTSCOPE_CATALOG={cat} jupyter lab {nb}",
                f"  check its outputs:    QUANTSCOPE_CATALOG={cat} python -m pytest --nbval "
                f"--nbval-current-env -p no:cacheprovider {nb}",
            ]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.how_to_run()


def _read_only(top: Path) -> None:
    for root, dirs, files in os.walk(top, topdown=False):
        for name in files:
            os.chmod(os.path.join(root, name), 0o444)
        for name in dirs:
            os.chmod(os.path.join(root, name), 0o555)


def _default_directory(path: Path) -> Path:
    return path.with_suffix("") if path.suffix else path.with_name(f"{path.name}.open")


def open_bundle(
    path: str | os.PathLike[str], to: str | os.PathLike[str] | None = None
) -> OpenedBundle:
    """Verify the bundle at ``path`` and unpack it read-only into ``to`` (default: beside it,
    named as it without its suffix), a new directory; ``to`` already holding this very
    bundle is reused. ``str()`` of the result says how to re-run the notebook offline.
    """
    source = Path(path)
    bundle = verify_bundle(source)
    dest = Path(to) if to is not None else _default_directory(source)
    with _zip(source) as archive:
        description = archive.read(BUNDLE_JSON)
        if dest.exists():
            held = dest / BUNDLE_JSON
            if not (held.is_file() and held.read_bytes() == description):
                raise BundleError(
                    f"{dest} exists and holds no copy of {source.name}: open it --to another "
                    "directory"
                )
        else:
            _unpack(bundle, archive, dest)
    notebook = None if bundle.notebook is None else dest / bundle.notebook
    return OpenedBundle(bundle, dest, dest / "catalog", notebook)


def _unpack(bundle: Bundle, archive: zipfile.ZipFile, dest: Path) -> None:
    """Every member into a new sibling directory, hashed again as it is written (the file
    may have changed since it was verified), made read-only, then renamed to ``dest``.
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    needed = sum(info.file_size for info in archive.infolist())
    free = shutil.disk_usage(dest.parent).free
    if needed > free:
        raise BundleError(
            f"{bundle.path}: unpacking needs {needed:,} bytes and {dest.parent} has {free:,} "
            "free: open it --to a directory on a larger disk"
        )
    partial = dest.with_name(f".{dest.name}.partial-{uuid.uuid4().hex[:8]}")
    partial.mkdir()
    top = partial.resolve()
    try:
        for info in archive.infolist():
            target = (partial / PurePosixPath(info.filename)).resolve()
            if top not in target.parents:  # the names were checked: a second lock
                raise BundleError(f"{bundle.path}: member {info.filename!r} leaves the directory")
            target.parent.mkdir(parents=True, exist_ok=True)
            with open(target, "xb") as out:
                digest = _copy_hashed(archive, info, out)
            if info.filename != BUNDLE_JSON:
                _check(bundle, info, digest)
        _read_only(partial)
        os.rename(partial, dest)
        os.chmod(dest, 0o555)
    except BaseException:
        _remove(partial)
        raise


def _remove(directory: Path) -> None:
    if not directory.exists():
        return
    for root, dirs, _ in os.walk(directory):
        for name in dirs:
            os.chmod(os.path.join(root, name), 0o755)
    os.chmod(directory, 0o755)
    shutil.rmtree(directory, ignore_errors=True)
