"""A catalog knows its own integrity (issue 20, item 4): a battery of damage and full disks.

One catalog of quant 1's July with every resource (trades, evaluations, eval details, candles
of its 43 tokens, the three snapshots) is damaged case by case, each case on the same files
restored afterwards:

* **files**: cut at 0, 4, half and all-but-one bytes; deleted; 64 bytes flipped at 24 seeded
  places inside the column chunks; one byte flipped at 12 seeded places anywhere; 16 bytes
  flipped in the footer at 4 places; for every file of seven partitions (one per resource).
* **manifest**: one byte flipped at 40 seeded places; a row count, a size, a digest edited
  (valid JSON, its own digest left as it was).
* **paths**: a record naming ``../../../../etc/passwd``, an absolute path, ``../`` out of the
  catalog, a key value with ``..``; a file and a partition directory replaced by symlinks out
  of the catalog (the manifest's own digest recomputed: an attacker can).

Each case counts as *detected* when the read of the partition raises
``CatalogIntegrityError`` naming the file (the manifest: opening the catalog raises a
quantscope error), and ``info(verify=True)`` (``quantscope catalog info``) lists it; a read
that returns rows differing from the reference would be *silent* (the issue saw 870 rows
with one column wrong). One case of each kind is then repaired by a sync.

**Full disks** (as root: an 8 MB tmpfs; skipped in one line where mounting is refused): the
catalog synced onto the tmpfs with a filler file leaving 0.05 to 3 MB free, so the sync runs
out of space at another file each time; then the filler removed and the same sync run
again. Counted: files under final names not listed whole in the manifest (0), temporary files
left (0), runs the next sync completed (all). And a load whose HTTP cache and frame cache
live on a full tmpfs: the right frame, one ``CacheWriteWarning``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import random
import shutil
import subprocess
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq
import pytest

import quantscope as qs
from quantscope._http.client import Client
from quantscope.catalog.layout import RESOURCES
from quantscope.catalog.manifest import Store
from quantscope.catalog.read import read_resource
from quantscope.sandbox.serve import SandboxServer

pytestmark = [pytest.mark.slow, pytest.mark.reliability]

START, END = "2026-07-01", "2026-07-31T23:59:59"
ALL = ["trades", "evaluations", "eval_details", "ohlcv", "signals", "playbook", "recommendations"]
SEED = 20


def _client(server: SandboxServer, cache: Path) -> Client:
    return Client(server.url, server.keys["enterprise"], cache_dir=str(cache), progress=False)


def _sync(server: SandboxServer, cache: Path, path: Path) -> qs.SyncReport:
    with _client(server, cache) as c:
        return qs.sync(path, quant_id=1, resources=ALL, start=START, end=END, client=c)


@pytest.fixture(scope="module")
def made(own_sandbox: SandboxServer, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the reference catalog, a warm HTTP cache of its sync)."""
    cache = tmp_path_factory.mktemp("warm-cache")
    path = tmp_path_factory.mktemp("reference") / "cat"
    assert _sync(own_sandbox, cache, path).status == "complete"
    return path, cache


def _victims(path: Path) -> dict[str, dict[str, Any]]:
    """One partition of each resource: name -> record."""
    chosen: dict[str, dict[str, Any]] = {}
    for name, p in sorted(qs.open_catalog(path).partitions.items()):
        chosen.setdefault(p["resource"], {"name": name, **p})
    assert set(chosen) == set(ALL)
    return {v["name"]: v for v in chosen.values()}


def _flip(data: bytes, at: int, n: int) -> bytes:
    return data[:at] + bytes(b ^ 0xFF for b in data[at : at + n]) + data[at + n :]


def _chunks(data_path: Path) -> list[tuple[int, int]]:
    meta = pq.read_metadata(data_path).row_group(0)
    spans = []
    for i in range(meta.num_columns):
        c = meta.column(i)
        start = c.dictionary_page_offset or c.data_page_offset
        spans.append((start, c.total_compressed_size))
    return spans


def _file_damages(file: Path, rng: random.Random) -> Iterator[tuple[str, bytes | None]]:
    """(kind, the damaged bytes or None for deleted) of one file."""
    data = file.read_bytes()
    size = len(data)
    for cut in (0, 4, size // 2, size - 1):
        yield "truncated", data[:cut]
    yield "deleted", None
    spans = [s for s in _chunks(file) if s[1] > 80]
    for _ in range(24):
        start, length = rng.choice(spans)
        yield (
            "64 bytes flipped in a column chunk",
            _flip(data, start + rng.randrange(length - 64), 64),
        )
    for _ in range(12):
        yield "1 byte flipped anywhere", _flip(data, rng.randrange(size), 1)
    footer = int.from_bytes(data[-8:-4], "little")
    for _ in range(4):
        yield (
            "16 bytes flipped in the footer",
            _flip(data, size - 8 - rng.randrange(16, footer), 16),
        )


def _reference_frames(path: Path, victims: dict[str, dict[str, Any]]) -> dict[str, pd.DataFrame]:
    store = Store(path)
    return {n: read_resource(store, RESOURCES[v["resource"]], [v]) for n, v in victims.items()}


def _outcome(path: Path, victim: dict[str, Any], want: pd.DataFrame) -> dict[str, bool]:
    """How a damaged file was met: the read raised naming it, or returned the reference's
    rows exactly (a byte no decoded value depends on: a page header's statistics), or
    returned other rows (silent: the issue's failure); ``info(verify=True)`` listed it."""
    cat = qs.open_catalog(path)
    record = cat.partitions[victim["name"]]
    seen = dict.fromkeys(("read raised", "read the same rows", "silent", "info listed"), False)
    try:
        got = read_resource(cat.store, RESOURCES[victim["resource"]], [record])
    except qs.CatalogIntegrityError as exc:
        seen["read raised"] = exc.files == [record["file"]]
    else:
        try:
            pd.testing.assert_frame_equal(got, want)
            seen["read the same rows"] = True
        except AssertionError:
            seen["silent"] = True
    seen["info listed"] = [d["file"] for d in cat.info(verify=True)["damaged"]] == [record["file"]]
    return seen


def test_every_damaged_file_is_detected_and_none_reads_silently_wrong(
    made: tuple[Path, Path], tmp_path: Path
) -> None:
    path = tmp_path / "cat"
    shutil.copytree(made[0], path)
    victims = _victims(path)
    wants = _reference_frames(path, victims)
    rng = random.Random(SEED)
    counts: Counter[tuple[str, str]] = Counter()
    for name, victim in victims.items():
        file = path / victim["file"]
        original = file.read_bytes()
        for kind, damaged in _file_damages(file, rng):
            if damaged is None:
                file.unlink()
            else:
                file.write_bytes(damaged)
            counts[(kind, "cases")] += 1
            for what, yes in _outcome(path, victim, wants[name]).items():
                counts[(kind, what)] += yes
            file.write_bytes(original)
    kinds = sorted({k for k, _ in counts})
    print("\ncatalog damage, files:")
    for kind in kinds:
        print(f"  {kind}: " + ", ".join(f"{w} {n}" for (k, w), n in counts.items() if k == kind))
    for kind in kinds:
        assert counts[(kind, "silent")] == 0, kind
        met = counts[(kind, "read raised")] + counts[(kind, "read the same rows")]
        assert met == counts[(kind, "cases")], kind
        assert counts[(kind, "info listed")] == counts[(kind, "cases")], kind
    # Only a byte no decoded value depends on may read as whole (the full hash still sees it).
    assert all(counts[(k, "read the same rows")] == 0 for k in kinds if "1 byte" not in k)


def test_every_damaged_manifest_is_refused(made: tuple[Path, Path], tmp_path: Path) -> None:
    path = tmp_path / "cat"
    shutil.copytree(made[0], path)
    manifest = path / "manifest.json"
    original = manifest.read_bytes()
    rng = random.Random(SEED)
    cases: list[tuple[str, bytes]] = [
        ("1 byte flipped", _flip(original, rng.randrange(len(original)), 1)) for _ in range(40)
    ]
    text = original.decode()
    record = json.loads(text)["partitions"]["trades/quant_id=1/month=2026-07"]
    for field in ("rows", "bytes"):
        old = f'"{field}": {record[field]}'
        cases.append((f"{field} edited", text.replace(old, old[:-1] + "9", 1).encode()))
    cases.append(("sha256 edited", text.replace(record["sha256"], "0" * 64, 1).encode()))
    refused: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for kind, data in cases:
        manifest.write_bytes(data)
        total[kind] += 1
        try:
            qs.open_catalog(path).trades(1)
        except (qs.CatalogIntegrityError, qs.ConfigurationError):
            refused[kind] += 1
    manifest.write_bytes(original)
    print("\ncatalog damage, manifest:", dict(total), "refused:", dict(refused))
    assert refused == total


def _point(path: Path, name: str, **changes: Any) -> None:
    store = Store(path)
    manifest = store.load()
    manifest.partitions[name].update(changes)
    store.save(manifest)  # its own digest recomputed: an attacker can


def test_paths_out_of_the_catalog_are_refused_never_opened_never_removed(
    made: tuple[Path, Path], own_sandbox: SandboxServer, tmp_path: Path
) -> None:
    reference, cache = made
    name = "trades/quant_id=1/month=2026-07"
    outside = tmp_path / "outside"
    shutil.copytree(reference / name, outside)  # valid files with the very rows
    escapes: dict[str, Callable[[Path, dict[str, Any]], None]] = {
        "../../../../etc/passwd": lambda p, r: _point(p, name, file="../../../../etc/passwd"),
        "absolute path": lambda p, r: _point(p, name, file=str(outside / Path(r["file"]).name)),
        "../ out of the catalog": lambda p, r: _point(
            p, name, file=f"../../outside/{Path(r['file']).name}"
        ),
        "a key value with ..": lambda p, r: _point(
            p, name, keys={**r["keys"], "month": "../../../outside"}
        ),
        "symlinked file": lambda p, r: (
            (p / r["file"]).unlink(),
            (p / r["file"]).symlink_to(outside / Path(r["file"]).name),
        ),
        "symlinked directory": lambda p, r: (
            shutil.rmtree(p / name),
            (p / name).symlink_to(outside, target_is_directory=True),
        ),
    }
    refused = repaired = 0
    for how, escape in escapes.items():
        path = tmp_path / f"cat-{len(os.listdir(tmp_path))}"
        shutil.copytree(reference, path)
        record = qs.open_catalog(path).partitions[name]
        escape(path, record)
        cat = qs.open_catalog(path)
        outcomes = []
        with contextlib.suppress(qs.CatalogIntegrityError):
            cat.trades(1)
            outcomes.append("read")
        with contextlib.suppress(qs.CatalogIntegrityError):
            cat.sql("SELECT count(*) FROM trades")
            outcomes.append("sql")
        with contextlib.suppress(qs.BundleError):
            qs.export_bundle(tmp_path / "b.qsbundle", path)
            outcomes.append("export")
        if not any(d["partition"] == name for d in cat.info()["damaged"]):
            outcomes.append("info")
        refused += not outcomes
        assert not outcomes, (how, outcomes)
        report = _sync(own_sandbox, cache, path)
        repaired += report.status == "complete" and qs.open_catalog(path).verify() == []
        assert sorted(p.name for p in outside.iterdir()) == [Path(record["file"]).name], how
    assert Path("/etc/passwd").is_file()
    print(f"\ncatalog damage, paths: {len(escapes)} cases, {refused} refused, {repaired} repaired")
    assert refused == repaired == len(escapes)


def test_one_damage_of_each_kind_is_re_fetched_by_the_next_sync(
    made: tuple[Path, Path], own_sandbox: SandboxServer, tmp_path: Path
) -> None:
    reference, cache = made
    repaired = 0
    kinds = 0
    for resource in ALL:
        path = tmp_path / resource
        shutil.copytree(reference, path)
        victim = next(v for v in _victims(path).values() if v["resource"] == resource)
        file = path / victim["file"]
        data = file.read_bytes()
        start, length = max(_chunks(file), key=lambda s: s[1])
        file.write_bytes(_flip(data, start + length // 2, 64))
        kinds += 1
        report = _sync(own_sandbox, cache, path)
        whole = qs.open_catalog(path).verify() == []
        repaired += report.status == "complete" and whole and victim["file"] in report.repaired
    print(f"\ncatalog damage, repairs: {repaired} of {kinds} resources re-fetched whole")
    assert repaired == kinds


# ----- full disks -----


@contextlib.contextmanager
def _tmpfs(where: Path, size: str = "8m") -> Iterator[Path]:
    where.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.strip() or done.returncode})")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def _fill(disk: Path, leave: int) -> Path:
    """A filler file leaving ``leave`` bytes free on ``disk``."""
    filler = disk / "filler"
    free = shutil.disk_usage(disk).free
    with open(filler, "wb") as out:
        out.write(b"\0" * max(0, free - leave))
    return filler


def test_full_disks_leave_no_file_under_a_final_name_and_resume(
    made: tuple[Path, Path], own_sandbox: SandboxServer, tmp_path: Path
) -> None:
    _, cache = made
    figures: Counter[str] = Counter()
    with _tmpfs(tmp_path / "disk") as disk:
        for leave in (50_000, 150_000, 400_000, 1_000_000, 2_000_000, 3_000_000):
            path = disk / "cat"
            filler = _fill(disk, leave)
            figures["runs"] += 1
            stopped: qs.CatalogWriteError | None = None
            try:
                _sync(own_sandbox, cache, path)
            except qs.CatalogWriteError as exc:
                stopped = exc
            if stopped is not None:
                figures["stopped by CatalogWriteError"] += 1
                assert "\n" not in str(stopped)
                assert "No space left" in str(stopped)
            else:
                figures["completed (it fitted)"] += 1
            if (path / "manifest.json").exists():
                cat = qs.open_catalog(path)
                listed = {p["file"]: p["sha256"] for p in cat.partitions.values()}
                figures[f"run status {cat.runs[-1]['status']}"] += 1
            else:
                listed = {}
            for file in path.rglob("*") if path.exists() else ():
                rel = file.relative_to(path).as_posix()
                if file.is_dir() or rel in ("manifest.json", ".sync.lock"):
                    continue
                whole = (
                    rel in listed and hashlib.sha256(file.read_bytes()).hexdigest() == listed[rel]
                )
                figures["files under final names not whole or unlisted"] += not whole
                figures["temporary files left"] += rel.rpartition("/")[2].endswith(".tmp")
            filler.unlink()
            again = _sync(own_sandbox, cache, path)
            ok = again.status == "complete" and qs.open_catalog(path).verify() == []
            figures["next sync completed whole"] += ok
            shutil.rmtree(path)
    print("\ncatalog full disk:", json.dumps(dict(figures)))
    assert figures["files under final names not whole or unlisted"] == 0
    assert figures["temporary files left"] == 0
    assert figures["next sync completed whole"] == figures["runs"]
    assert figures["stopped by CatalogWriteError"] >= 4


def test_a_full_cache_disk_loads_uncached_with_one_warning(
    own_sandbox: SandboxServer, tmp_path: Path
) -> None:
    with _client(own_sandbox, tmp_path / "roomy") as c:
        want = qs.load_evaluations(1, start=START, end=END, client=c)
    with _tmpfs(tmp_path / "disk", "1m") as disk:
        _fill(disk, 100_000)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            with _client(own_sandbox, disk / "cache") as c:
                got = qs.load_evaluations(1, start=START, end=END, client=c)
                again = qs.load_evaluations(1, start=START, end=END, client=c)
    kinds = Counter(type(w.message).__name__ for w in seen)
    print(f"\ncache full disk: {len(got)} rows loaded, warnings {dict(kinds)}")
    pd.testing.assert_frame_equal(got, want)
    pd.testing.assert_frame_equal(again, want)
    assert kinds == {"CacheWriteWarning": 1}
