"""A catalog knows its own integrity (issue 20, item 4), against the sandbox.

Each test damages a copy of one reference catalog (quant 1's July, six resources, made by one
sync) as a disk, a careless hand or an attacker would: a file cut short, deleted, 64 bytes
flipped inside a column chunk or in the footer, a manifest edited, a path that leaves the
catalog, a symlink out of it. Every read names the damaged file in a ``CatalogIntegrityError``
(never a raw ``ArrowInvalid``/``FileNotFoundError``, never rows silently wrong), ``quantscope
catalog info`` reports it and exits 1, and the next ``sync`` re-fetches exactly what is
damaged and ends with the reference's files.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import pyarrow.parquet as pq
import pytest

import quantscope as qs
from quantscope._http.client import Client
from quantscope.catalog.manifest import Manifest, Store
from quantscope.cli import main
from quantscope.sandbox.serve import SandboxServer

QUANT = 1
START, END = "2026-07-01", "2026-07-31T23:59:59"
RESOURCES = ["trades", "evaluations", "eval_details", "signals", "playbook", "recommendations"]
TRADES = "trades/quant_id=1/month=2026-07"


def _client(server: SandboxServer, cache: Path) -> Client:
    return Client(server.url, server.keys["enterprise"], cache_dir=str(cache), progress=False)


def _sync(server: SandboxServer, cache: Path, path: Path) -> qs.SyncReport:
    with _client(server, cache) as c:
        return qs.sync(path, quant_id=QUANT, resources=RESOURCES, start=START, end=END, client=c)


@pytest.fixture(scope="module")
def reference(own_sandbox: SandboxServer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("reference") / "cat"
    assert _sync(own_sandbox, tmp_path_factory.mktemp("ref-cache"), path).status == "complete"
    return path


@pytest.fixture
def copy(reference: Path, tmp_path: Path) -> Path:
    target = tmp_path / "cat"
    shutil.copytree(reference, target)
    return target


def _rows(path: Path) -> dict[str, tuple[Any, ...]]:
    """Partition -> (file, rows, sha256), the snapshot day made neutral."""
    return {
        re.sub(r"snapshot=[^/]+", "snapshot=*", name): (
            re.sub(r"snapshot=[^/]+", "snapshot=*", p["file"]),
            p["rows"],
            p["sha256"],
        )
        for name, p in qs.open_catalog(path).partitions.items()
    }


def _file(path: Path, partition: str = TRADES) -> Path:
    return path / qs.open_catalog(path).partitions[partition]["file"]


def _flip(data: bytes, at: int, n: int = 64) -> bytes:
    return data[:at] + bytes(b ^ 0xFF for b in data[at : at + n]) + data[at + n :]


def _in_a_column_chunk(file: Path) -> None:
    """64 bytes flipped in the middle of the file's largest column chunk."""
    meta = pq.read_metadata(file).row_group(0)
    chunk = max(
        (meta.column(i) for i in range(meta.num_columns)), key=lambda c: c.total_compressed_size
    )
    start = chunk.dictionary_page_offset or chunk.data_page_offset
    middle = start + chunk.total_compressed_size // 2
    file.write_bytes(_flip(file.read_bytes(), middle - 32))


def _in_the_footer(file: Path) -> None:
    data = file.read_bytes()
    footer = int.from_bytes(data[-8:-4], "little")
    file.write_bytes(_flip(data, len(data) - 8 - footer // 2, 16))


DAMAGES: dict[str, Callable[[Path], None]] = {
    "truncated": lambda f: f.write_bytes(f.read_bytes()[: f.stat().st_size // 2]),
    "deleted": lambda f: f.unlink(),
    "64 bytes flipped in a column chunk": _in_a_column_chunk,
    "16 bytes flipped in the footer": _in_the_footer,
}


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_a_damaged_file_is_named_reported_and_re_fetched(
    damage: str,
    copy: Path,
    reference: Path,
    own_sandbox: SandboxServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    file = _file(copy)
    relative = file.relative_to(copy).as_posix()
    DAMAGES[damage](file)
    cat = qs.open_catalog(copy)
    with pytest.raises(qs.CatalogIntegrityError) as caught:
        cat.trades(QUANT)
    assert caught.value.files == [relative]
    assert relative in str(caught.value)
    assert "\n" not in str(caught.value)
    assert "sync" in str(caught.value)  # says what to do
    pd_evaluations = cat.evaluations(QUANT)  # the other files still read
    assert len(pd_evaluations) == 1868

    capsys.readouterr()
    assert main(["catalog", "info", str(copy)]) == 65
    out, err = capsys.readouterr()
    assert relative in out + err
    assert [d["file"] for d in cat.info(verify=True)["damaged"]] == [relative]
    cheap = [d["file"] for d in cat.info()["damaged"]]  # size and footer only
    assert cheap == ([] if "column chunk" in damage else [relative])

    report = _sync(own_sandbox, tmp_path / "cache", copy)
    assert report.status == "complete"
    tasks = {t["task"]: t for t in report.tasks}
    assert tasks["trades:quant_id=1"]["requests"] == 1  # the damaged month, again
    assert tasks["trades:quant_id=1"]["added"] == 107
    assert tasks["evaluations:quant_id=1"]["requests"] == 0  # sealed and whole: not fetched
    assert tasks["eval_details:quant_id=1"]["note"] == "0 months to fetch"
    assert report.repaired == [relative]
    assert _rows(copy) == _rows(reference)
    assert qs.open_catalog(copy).verify() == []
    assert main(["catalog", "info", str(copy)]) == 0


def test_verify_checks_every_hash_and_names_every_damaged_file(
    copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cat = qs.open_catalog(copy)
    assert cat.verify() == []
    trades, details = _file(copy), _file(copy, "eval_details/quant_id=1/month=2026-07")
    DAMAGES["truncated"](trades)
    _in_a_column_chunk(details)
    found = {d["file"]: d["problem"] for d in cat.verify()}
    assert set(found) == {
        trades.relative_to(copy).as_posix(),
        details.relative_to(copy).as_posix(),
    }
    assert "bytes" in found[trades.relative_to(copy).as_posix()]
    assert "sha256" in found[details.relative_to(copy).as_posix()]
    capsys.readouterr()
    assert main(["catalog", "verify", str(copy)]) == 65
    out, err = capsys.readouterr()
    assert trades.name in out + err
    assert details.name in out + err


def test_sql_over_a_damaged_file_names_it(copy: Path) -> None:
    file = _file(copy)
    DAMAGES["truncated"](file)
    cat = qs.open_catalog(copy)
    assert cat.sql("SELECT count(*) AS n FROM evaluations")["n"].tolist() == [1868]
    with pytest.raises(qs.CatalogIntegrityError, match=re.escape(file.name)):
        cat.sql("SELECT count(*) FROM trades")


def _edit_manifest(path: Path, edit: Callable[[Manifest], None]) -> None:
    store = Store(path)
    manifest = store.load()
    edit(manifest)
    store.save(manifest)


@pytest.mark.parametrize(
    "how",
    ["../../../../etc/passwd", "relative escape", "absolute", "symlink", "symlinked directory"],
)
def test_paths_outside_the_catalog_are_refused_never_opened(
    how: str, copy: Path, own_sandbox: SandboxServer, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.parquet"
    original = _file(copy)
    shutil.copyfile(original, outside)  # a valid file with the very rows: only its place is wrong
    if how == "symlink":
        original.unlink()
        original.symlink_to(outside)
    elif how == "symlinked directory":  # a sync must not write through it either
        away = tmp_path / "away"
        shutil.copytree(original.parent, away)
        shutil.rmtree(original.parent)
        original.parent.symlink_to(away, target_is_directory=True)
        outside = away / original.name
    else:
        target = {
            "../../../../etc/passwd": "../../../../etc/passwd",
            "relative escape": "../outside.parquet",
            "absolute": str(outside),
        }[how]

        def point(manifest: Manifest) -> None:
            manifest.partitions[TRADES]["file"] = target

        _edit_manifest(copy, point)
    cat = qs.open_catalog(copy)
    with pytest.raises(qs.CatalogIntegrityError, match="outside the catalog"):
        cat.trades(QUANT)
    with pytest.raises(qs.CatalogIntegrityError, match="outside the catalog"):
        cat.sql("SELECT count(*) FROM trades")
    with pytest.raises((qs.CatalogIntegrityError, qs.BundleError), match="outside the catalog"):
        qs.export_bundle(tmp_path / "b.qsbundle", copy)
    assert [d["problem"] for d in cat.info()["damaged"]] == ["outside the catalog"]
    report = _sync(own_sandbox, tmp_path / "cache", copy)  # re-fetched; the outside file stays
    assert report.status == "complete"
    assert outside.is_file()
    assert Path("/etc/passwd").is_file()
    assert [p.name for p in outside.parent.iterdir() if p.suffix == ".parquet"] == [
        outside.name
    ]  # nothing written or removed out there
    assert len(qs.open_catalog(copy).trades(QUANT)) == 107
    assert qs.open_catalog(copy).verify() == []


def test_a_changed_manifest_is_refused(copy: Path) -> None:
    manifest = copy / "manifest.json"
    text = manifest.read_text()
    assert '"rows": 107' in text
    manifest.write_text(text.replace('"rows": 107', '"rows": 108', 1))  # still valid JSON
    with pytest.raises(qs.CatalogIntegrityError, match=r"manifest\.json"):
        qs.open_catalog(copy)


def test_a_damaged_manifest_record_is_a_damaged_file(copy: Path) -> None:
    def wrong_size(manifest: Manifest) -> None:
        manifest.partitions[TRADES]["bytes"] += 1

    _edit_manifest(copy, wrong_size)
    with pytest.raises(qs.CatalogIntegrityError, match="bytes"):
        qs.open_catalog(copy).trades(QUANT)


def test_export_refuses_a_missing_file(copy: Path, tmp_path: Path) -> None:
    file = _file(copy, "eval_details/quant_id=1/month=2026-07")
    file.unlink()
    with pytest.raises(qs.BundleError, match=re.escape(file.name)):
        qs.export_bundle(tmp_path / "b.qsbundle", copy)
    assert not (tmp_path / "b.qsbundle").exists()


def test_a_damaged_sealed_month_is_fetched_again_with_its_dry_run_price(
    copy: Path, own_sandbox: SandboxServer, tmp_path: Path
) -> None:
    """A deleted sealed month is fetched again (and a dry run prices that), nothing else."""
    DAMAGES["deleted"](_file(copy, "evaluations/quant_id=1/month=2026-07"))
    with _client(own_sandbox, tmp_path / "cache") as c:
        dry = qs.sync(
            copy,
            quant_id=QUANT,
            resources=["evaluations"],
            start=START,
            end=END,
            client=c,
            dry_run=True,
        )
        assert dry.tasks[0]["requests"] >= 1  # not "every month sealed": 0
        report = qs.sync(
            copy, quant_id=QUANT, resources=["evaluations"], start=START, end=END, client=c
        )
    assert report.tasks[0]["requests"] == 2
    assert report.tasks[0]["added"] == 1868
    assert qs.open_catalog(copy).verify() == []


def test_json_of_info_lists_damage(copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    DAMAGES["deleted"](_file(copy))
    capsys.readouterr()
    assert main(["catalog", "info", str(copy), "--json"]) == 65
    body = json.loads(capsys.readouterr().out)
    assert body["damaged"][0]["problem"] == "missing"


def test_duckdb_errors_of_an_intact_catalog_stay_duckdb_errors(copy: Path) -> None:
    with pytest.raises(duckdb.Error):
        qs.open_catalog(copy).sql("SELECT no_such_column FROM trades")


def test_a_sync_that_cannot_repair_what_it_needs_says_which_sync_can(
    copy: Path, own_sandbox: SandboxServer, tmp_path: Path
) -> None:
    DAMAGES["truncated"](_file(copy))
    with _client(own_sandbox, tmp_path / "cache") as c:
        with pytest.raises(qs.CatalogIntegrityError, match="resources including 'trades'"):
            qs.sync(
                copy, quant_id=QUANT, resources=["eval_details"], start=START, end=END, client=c
            )
        report = qs.sync(copy, quant_id=QUANT, resources=RESOURCES, start=START, end=END, client=c)
    assert report.status == "complete"
    assert len(report.repaired) == 1


def test_a_damaged_snapshot_of_a_past_day_is_dropped(
    copy: Path, own_sandbox: SandboxServer, tmp_path: Path
) -> None:
    """A past day's snapshot cannot be fetched again: the sync drops it and says so."""
    store = Store(copy)
    manifest = store.load()
    name = next(n for n in manifest.partitions if n.startswith("playbook/"))
    record = manifest.partitions.pop(name)
    old_name = "playbook/quant_id=1/snapshot=2026-08-01"
    old_file = f"{old_name}/{Path(record['file']).name}"
    (copy / old_name).mkdir(parents=True)
    shutil.copyfile(copy / record["file"], copy / old_file)
    keys = {**record["keys"], "snapshot": "2026-08-01"}
    manifest.partitions[old_name] = {**record, "file": old_file, "keys": keys}
    manifest.partitions[name] = record
    store.save(manifest)
    DAMAGES["truncated"](copy / old_file)
    with pytest.raises(qs.CatalogIntegrityError, match="2026-08-01"):
        qs.open_catalog(copy).playbook(QUANT, as_of="2026-08-02")
    with _client(own_sandbox, tmp_path / "cache") as c:
        report = qs.sync(copy, quant_id=QUANT, resources=["playbook"], client=c)
    assert report.status == "complete"
    assert report.dropped == [old_file]
    assert "dropped (a damaged past snapshot): " + old_file in str(report)
    cat = qs.open_catalog(copy)
    assert old_name not in cat.partitions
    assert not (copy / old_file).exists()
    assert cat.runs[-1]["dropped"] == [old_file]
    assert cat.verify() == []
