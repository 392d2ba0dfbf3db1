"""Study bundles: export a catalog slice with a notebook, verify every hash, open it read-only.

The catalog is synced from the sandbox (quants 1 and 2, July); the bundle takes quant 1's
July. A bundle is refused whole on a bad member (path traversal, a link, a pickle, a
duplicate, one flipped byte), naming it, before anything is written. The offline re-run of a
bundled notebook under nbval is in ``test_catalog_bundle_nbval.py``.
"""

from __future__ import annotations

import json
import re
import stat
import warnings
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest

import quantscope as qsc
from quantscope._http.client import Client
from quantscope.cli import main
from quantscope.sandbox.serve import SandboxServer

QUANT, OTHER = 1, 2
START, END = "2026-07-01", "2026-07-31T23:59:59"
RESOURCES = ["trades", "evaluations", "ohlcv", "signals", "playbook", "recommendations"]


@pytest.fixture(scope="module")
def catalog(own_sandbox: SandboxServer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("bundle-src") / "study"
    cache = tmp_path_factory.mktemp("bundle-cache")
    with Client(
        own_sandbox.url, own_sandbox.keys["enterprise"], cache_dir=str(cache), progress=False
    ) as c:
        qsc.sync(path, quant_id=QUANT, resources=RESOURCES, start=START, end=END, client=c)
        qsc.sync(path, quant_id=OTHER, resources=["trades"], start=START, end=END, client=c)
    return path


@pytest.fixture(scope="module")
def bundle(catalog: Path, tmp_path_factory: pytest.TempPathFactory) -> qsc.Bundle:
    target = tmp_path_factory.mktemp("bundles") / "study.qsbundle"
    return qsc.export_bundle(target, catalog, quant_id=QUANT, start=START, end=END)


@dataclass
class Ran:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., Ran]:
    """``quantscope ARGS...`` run in-process: its exit status, stdout and stderr."""

    def run(*args: str) -> Ran:
        capsys.readouterr()
        code = main(list(args))
        out, err = capsys.readouterr()
        return Ran(code, out, err)

    return run


def test_the_bundle_holds_the_slice_its_manifest_and_hashes(
    bundle: qsc.Bundle, catalog: Path
) -> None:
    source = qsc.open_catalog(catalog)
    wanted = {
        name: p
        for name, p in source.partitions.items()
        if p["keys"].get("quant_id") == str(QUANT) or p["resource"] == "ohlcv"
    }
    with zipfile.ZipFile(bundle.path) as archive:
        names = sorted(archive.namelist())
        manifest = json.loads(archive.read("catalog/manifest.json"))
        described = json.loads(archive.read("bundle.json"))
    assert names == sorted(
        ["bundle.json", "catalog/manifest.json", *(f"catalog/{p['file']}" for p in wanted.values())]
    )
    assert not any("quant_id=2" in n for n in names)  # the other quant stays home
    assert manifest["partitions"] == wanted
    assert manifest["runs"] == source.runs  # the source catalog's history, as is
    assert described["quantscope_version"] == qsc.__version__
    assert described["selection"]["quant_id"] == [QUANT]
    assert described["selection"]["months"] == ["2026-07"]
    assert described["members"]["catalog/manifest.json"]["bytes"] > 0
    trades = source.trades(QUANT)
    assert bundle.rows["trades"] == len(trades) > 0
    assert bundle.partitions == len(wanted)
    # Parquet stored as is (already zstd), so the bundle is about the files' size.
    parquet = sum(int(p["bytes"]) for p in wanted.values())
    assert parquet < bundle.size < parquet + 64 * 1024


def test_verify_passes_and_names_the_first_mismatch(
    bundle: qsc.Bundle, tmp_path: Path, cli: Callable[..., Ran]
) -> None:
    assert qsc.verify_bundle(bundle.path).members == bundle.members
    done = cli("bundle", "verify", str(bundle.path))
    assert done.returncode == 0, done.stderr
    assert f"ok, {len(bundle.members)} members" in done.stdout

    broken = tmp_path / "broken.qsbundle"
    victim = sorted(m for m in bundle.members if m.startswith("catalog/trades/"))[0]
    with zipfile.ZipFile(bundle.path) as src, zipfile.ZipFile(broken, "w") as out:
        for info in src.infolist():
            data = src.read(info)
            if info.filename == victim:
                data = data[:100] + bytes([data[100] ^ 1]) + data[101:]
            out.writestr(info, data)
    with pytest.raises(qsc.BundleError, match=re.escape(f"{victim}: sha256 mismatch")):
        qsc.verify_bundle(broken)
    done = cli("bundle", "verify", str(broken))
    assert done.returncode == 65
    assert victim in done.stderr
    assert "sha256 mismatch" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_open_unpacks_read_only_and_reads_as_the_source(
    bundle: qsc.Bundle, catalog: Path, tmp_path: Path
) -> None:
    opened = qsc.open_bundle(bundle.path, tmp_path / "from-alice")
    assert opened.catalog == tmp_path / "from-alice" / "catalog"
    assert opened.notebook is None
    files = [p for p in opened.directory.rglob("*") if p.is_file()]
    assert len(files) == len(bundle.members) + 1  # and bundle.json
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o444 for p in files)
    assert stat.S_IMODE(opened.directory.stat().st_mode) == 0o555
    source, copy = qsc.open_catalog(catalog), qsc.open_catalog(opened.catalog)
    for name in ("trades", "evaluations"):
        got = getattr(copy, name)(QUANT, start=START, end=END)
        want = getattr(source, name)(QUANT, start=START, end=END)
        assert got.attrs["quantscope"]["catalog"] != want.attrs["quantscope"]["catalog"]
        got.attrs, want.attrs = {}, {}
        pd.testing.assert_frame_equal(got, want)
    token = int(source.trades(QUANT)["token_id"].iloc[0])
    assert copy.ohlcv(token).equals(source.ohlcv(token))
    assert copy.playbook(QUANT).equals(source.playbook(QUANT))
    # Opening again into the same directory reuses it; into another's, refused.
    assert qsc.open_bundle(bundle.path, opened.directory).directory == opened.directory
    with pytest.raises(qsc.BundleError, match=r"holds no copy of study\.qsbundle"):
        qsc.open_bundle(bundle.path, tmp_path)


def test_cli_export_and_open(catalog: Path, tmp_path: Path, cli: Callable[..., Ran]) -> None:
    target = tmp_path / "q2.qsbundle"
    done = cli("bundle", "export", str(target), "--catalog", str(catalog), "--quant", "2")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"wrote {target} (")
    assert "notebook none" in done.stdout
    done = cli("bundle", "open", str(target))
    assert done.returncode == 0, done.stderr
    assert f"opened q2.qsbundle read-only in {tmp_path / 'q2'}" in done.stdout
    assert f'qsc.connect(catalog="{tmp_path / "q2" / "catalog"}")' in done.stdout
    opened = qsc.open_catalog(tmp_path / "q2" / "catalog")
    held = opened.partitions.values()
    assert {p["keys"]["quant_id"] for p in held if p["resource"] != "ohlcv"} == {"2"}
    done = cli("bundle", "export", str(tmp_path / "x.qsbundle"), "--catalog", str(catalog),
                "--quant", "99")  # fmt: skip
    assert done.returncode == 65
    assert "nothing to bundle for quant_id=[99]" in done.stderr
    assert not (tmp_path / "x.qsbundle").exists()
    assert not list(tmp_path.glob(".x.qsbundle*"))


def _rewrite(bundle: qsc.Bundle, target: Path, extra: dict[str, bytes], link: str | None = None):
    """``bundle`` with ``extra`` members added and listed in bundle.json with their hashes."""
    import hashlib

    with zipfile.ZipFile(bundle.path) as src:
        members = {i.filename: src.read(i) for i in src.infolist()}
    described = json.loads(members.pop("bundle.json"))
    for name, data in extra.items():
        described["members"][name] = {
            "sha256": hashlib.sha256(data).hexdigest(),
            "bytes": len(data),
        }
    with zipfile.ZipFile(target, "w") as out:
        for name, data in {**members, **extra}.items():
            info = zipfile.ZipInfo(name)
            if name == link:
                info.external_attr = (stat.S_IFLNK | 0o777) << 16
            out.writestr(info, data)
        out.writestr("bundle.json", json.dumps(described))
    return target


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("../evil.parquet", "not allowed"),
        ("/tmp/evil.parquet", "not allowed"),
        ("catalog/../../evil.json", "not allowed"),
        ("catalog/trades/quant_id=1/month=../part-0123456789abcdef.parquet", "not allowed"),
        ("catalog/frames.pkl", "not allowed"),
        ("notebook/../../evil.ipynb", "not allowed"),
        ("notebook/run.py", "not allowed"),
        ("catalog/trades/quant_id=1/month=2026-07/part-0123456789abcdef.parquet", "not listed"),
    ],
)
def test_a_bad_member_refuses_the_whole_bundle(
    bundle: qsc.Bundle, tmp_path: Path, name: str, why: str
) -> None:
    bad = _rewrite(bundle, tmp_path / "bad.qsbundle", {name: b"PAR1 not what it says PAR1"})
    if why == "not listed":  # a stray Parquet file the catalog's manifest does not list
        why = "is in no manifest partition"
    dest = tmp_path / "out" / "study"
    with pytest.raises(qsc.BundleError, match=why):
        qsc.open_bundle(bad, dest)
    assert not dest.exists()
    assert not (tmp_path / "evil.parquet").exists()
    assert not Path("/tmp/evil.parquet").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["bad.qsbundle"]  # nothing written


def test_links_duplicates_and_non_zips_are_refused(bundle: qsc.Bundle, tmp_path: Path) -> None:
    nb = json.dumps({"cells": [], "nbformat": 4}).encode()
    linked = _rewrite(bundle, tmp_path / "l.qsbundle", {"notebook/x.ipynb": nb}, "notebook/x.ipynb")
    with pytest.raises(qsc.BundleError, match=r"'notebook/x\.ipynb' is not a plain file"):
        qsc.verify_bundle(linked)
    twice = tmp_path / "twice.qsbundle"
    with zipfile.ZipFile(bundle.path) as src, zipfile.ZipFile(twice, "w") as out:
        for info in src.infolist():
            out.writestr(info, src.read(info))
        with pytest.warns(UserWarning, match="Duplicate name"):
            out.writestr("catalog/manifest.json", b"{}")
    with pytest.raises(qsc.BundleError, match=r"'catalog/manifest\.json' appears twice"):
        qsc.verify_bundle(twice)
    named = tmp_path / "named.qsbundle"
    with zipfile.ZipFile(bundle.path) as src, zipfile.ZipFile(named, "w") as out:
        for info in src.infolist():
            data = src.read(info)
            if info.filename == "bundle.json":
                data = json.dumps({**json.loads(data), "notebook": "../../x.ipynb"}).encode()
            out.writestr(info, data)
    with pytest.raises(qsc.BundleError, match=r"one notebook, named in bundle\.json"):
        qsc.verify_bundle(named)
    text = tmp_path / "notes.qsbundle"
    text.write_text("hello")
    with pytest.raises(qsc.BundleError, match="not a zip file"):
        qsc.verify_bundle(text)
    with pytest.raises(qsc.BundleError, match="no such file"):
        qsc.verify_bundle(tmp_path / "nowhere.qsbundle")


def test_export_refuses_a_corrupted_catalog(catalog: Path, tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "cat"
    shutil.copytree(catalog, copy)
    part = next(iter(qsc.open_catalog(copy).partitions.values()))
    path = copy / part["file"]
    data = path.read_bytes()
    path.write_bytes(data[:50] + bytes([data[50] ^ 1]) + data[51:])
    with pytest.raises(qsc.BundleError, match="does not match the catalog's manifest"):
        qsc.export_bundle(tmp_path / "b.qsbundle", copy)
    assert not (tmp_path / "b.qsbundle").exists()
    with pytest.raises(qsc.ConfigurationError, match="no catalog at"):
        qsc.export_bundle(tmp_path / "b.qsbundle", tmp_path / "nothing")


def test_the_notebook_is_checked_and_warned_of_when_it_names_a_service(
    catalog: Path, tmp_path: Path
) -> None:
    named = tmp_path / "named.ipynb"
    cell = {"cell_type": "code", "source": ['qsc.connect("https://svc.test", api_key=KEY)']}
    named.write_text(json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4}))
    with pytest.warns(UserWarning, match=r"named\.ipynb connects to a named service"):
        qsc.export_bundle(tmp_path / "n.qsbundle", catalog, quant_id=2, notebook=named)
    plain = tmp_path / "plain.ipynb"  # plain connect(): QUANTSCOPE_CATALOG redirects it
    cell = {"cell_type": "code", "source": ["import quantscope as qsc\n", "qsc.connect()"]}
    plain.write_text(json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4}))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        made = qsc.export_bundle(tmp_path / "p.qsbundle", catalog, quant_id=2, notebook=plain)
    assert made.notebook == "notebook/plain.ipynb"
    with zipfile.ZipFile(made.path) as archive:
        assert archive.read("notebook/plain.ipynb") == plain.read_bytes()
    opened = qsc.open_bundle(made.path)
    assert opened.notebook == tmp_path / "p" / "notebook" / "plain.ipynb"
    assert "--nbval --nbval-current-env" in str(opened)
    script = tmp_path / "study.py"
    script.write_text("print('hi')")
    with pytest.raises(qsc.BundleError, match=r"study\.py: not a notebook"):
        qsc.export_bundle(tmp_path / "s.qsbundle", catalog, notebook=script)
    assert not (tmp_path / "s.qsbundle").exists()


def _restored(bundle: qsc.Bundle, target: Path, deflate: Callable[[str], bool]) -> Path:
    """``bundle`` rewritten member by member, the members ``deflate`` picks deflated."""
    with zipfile.ZipFile(bundle.path) as src, zipfile.ZipFile(target, "w") as out:
        for info in src.infolist():
            copy = zipfile.ZipInfo(info.filename, date_time=info.date_time)
            copy.external_attr = info.external_attr
            copy.compress_type = (
                zipfile.ZIP_DEFLATED if deflate(info.filename) else zipfile.ZIP_STORED
            )
            out.writestr(copy, src.read(info))
    return target


def test_members_that_could_unpack_past_the_bundle_are_refused(
    bundle: qsc.Bundle, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A zip bomb's shapes: compressed Parquet, a JSON or notebook member declaring more than
    its cap. Refused from the central directory, before a byte is read or written."""
    from quantscope.catalog import bundle_format

    squeezed = _restored(bundle, tmp_path / "sq.qsbundle", lambda n: n.endswith(".parquet"))
    dest = tmp_path / "out"
    with pytest.raises(qsc.BundleError, match=r"part-[0-9a-f]{16}\.parquet' is compressed"):
        qsc.open_bundle(squeezed, dest)
    assert not dest.exists()
    # The same bundle with its JSON deflated (as export writes it) is fine.
    plain = _restored(bundle, tmp_path / "ok.qsbundle", lambda n: n.endswith(".json"))
    assert qsc.verify_bundle(plain).members == bundle.members
    monkeypatch.setattr(bundle_format, "MAX_MANIFEST", 100)
    with pytest.raises(qsc.BundleError, match=r"manifest\.json' declares [\d,]+ bytes unpacked"):
        qsc.verify_bundle(plain)


def test_a_damaged_member_or_a_full_disk_is_one_clear_error(
    bundle: qsc.Bundle, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from quantscope.catalog import bundle_open

    deflated = _restored(bundle, tmp_path / "d.qsbundle", lambda n: n.endswith(".json"))
    with zipfile.ZipFile(deflated) as z:
        info = z.getinfo("catalog/manifest.json")
        start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    raw = bytearray(deflated.read_bytes())
    for i in range(start + 5, start + info.compress_size - 5, 7):  # wreck the deflate stream
        raw[i] ^= 0x55
    damaged = tmp_path / "damaged.qsbundle"
    damaged.write_bytes(bytes(raw))
    with pytest.raises(qsc.BundleError, match=r"'catalog/manifest\.json' cannot be read"):
        qsc.verify_bundle(damaged)

    free = type("Usage", (), {"free": 1000, "total": 10**9, "used": 10**9 - 1000})()
    monkeypatch.setattr(bundle_open.shutil, "disk_usage", lambda path: free)
    dest = tmp_path / "full" / "study"
    with pytest.raises(
        qsc.BundleError, match=r"unpacking needs [\d,]+ bytes and .* has 1,000 free"
    ):
        qsc.open_bundle(bundle.path, dest)
    assert not dest.exists()
    assert list(dest.parent.iterdir()) == []
