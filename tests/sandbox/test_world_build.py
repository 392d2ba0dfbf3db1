"""The world build's speed-ups change no byte: parallel staging, vectorised rounding, base58,
and a killed build's leftovers are cleared before the next build."""

from __future__ import annotations

import contextlib
import hashlib
import math
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from quantscope.sandbox import datadir, store
from quantscope.sandbox.sim import build, stage
from quantscope.sandbox.sim.criteria import round_sig6
from quantscope.sandbox.sim.tokens import base58


def _build_file(path: Path, seed: int, scale: int, workers: int) -> str:
    """Build into ``path`` (as ``datadir`` does, without keys) and return its dump's SHA-256."""
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as conn:
        conn.execute("PRAGMA journal_mode=OFF")
        conn.execute("PRAGMA synchronous=OFF")
        store.create_schema(conn)
        conn.execute("BEGIN")
        build.build_world(conn, seed, scale, workers=workers)
        conn.execute("COMMIT")
        assert conn.execute("SELECT count(*) FROM temp.sqlite_master").fetchone()[0] == 0
        digest = hashlib.sha256()
        for line in conn.iterdump():
            digest.update(line.encode() + b"\n")
    return digest.hexdigest()


@pytest.mark.slow  # two scale-2 worlds and two worker processes: ~20 s
def test_parallel_staging_builds_the_same_world(tmp_path: Path) -> None:
    serial = _build_file(tmp_path / "serial.db", 7, 2, workers=1)
    parallel = _build_file(tmp_path / "parallel.db", 7, 2, workers=2)
    assert parallel == serial
    # the workers' staging files are gone (unlinked while attached, freed on close)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["parallel.db", "serial.db"]


def test_a_failing_worker_fails_the_build_and_leaves_no_files(tmp_path: Path) -> None:
    path = tmp_path / "world.db"
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as conn:
        store.create_schema(conn)
        conn.execute("BEGIN")
        with pytest.raises(
            ValueError, match="non-negative"
        ):  # numpy refuses a negative seed, in the worker
            build.build_world(conn, -1, 1, workers=2)
    assert [p.name for p in tmp_path.iterdir()] == ["world.db"]


def test_worker_count() -> None:
    assert stage.worker_count(1) == 1
    assert stage.worker_count(stage.PARALLEL_MIN_SCALE - 1) == 1
    assert 1 <= stage.worker_count(stage.PARALLEL_MIN_SCALE) <= stage.MAX_WORKERS
    assert stage.worker_count(1, workers=3) == 3
    with pytest.raises(ValueError, match="workers must be at least 1"):
        stage.worker_count(10, workers=0)


def test_worker_shares_cover_every_token_once() -> None:
    for scale, parts in ((1, 2), (3, 2), (2, 3)):
        shares = [list(stage._share(scale, p, parts)) for p in range(parts)]
        every = sorted(t for share in shares for t in share)
        assert every == list(range(1, stage.TOKENS_PER_SCALE * scale + 1))
        assert all(share == sorted(share) for share in shares)


def test_round_sig6_is_format_6g() -> None:
    rng = np.random.default_rng(3)
    values = np.concatenate(
        [
            rng.standard_normal(20_000) * 10.0 ** rng.integers(-30, 30, 20_000),
            np.round(rng.uniform(-1e7, 1e7, 5_000)),  # seven-digit integers: exact ties
            np.round(rng.uniform(0, 2e6, 5_000)) + 0.5,
            10.0 ** np.arange(-25, 26),
            np.nextafter(10.0 ** np.arange(-25, 26), 0),
            [0.0, -0.0, math.inf, -math.inf, math.nan, 5e-324, 1.7976931348623157e308],
            [999_999.5, 9_999_995.0, 99_999.95, 123_456.5, 1_234_565.0, 0.1],
        ]
    )
    got = round_sig6(values).tolist()
    want = [float(format(v, ".6g")) for v in values.tolist()]
    assert [repr(v) for v in got] == [repr(v) for v in want]  # -0.0 and NaN included
    assert round_sig6(values.reshape(-1, 1)).shape == (len(values), 1)


def _base58_digit_by_digit(digest: bytes, length: int) -> str:
    alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
    num, chars = int.from_bytes(digest, "big"), []
    for _ in range(length):
        num, rem = divmod(num, 58)
        chars.append(alphabet[rem])
    return "".join(chars)


def test_base58_matches_the_digit_by_digit_definition() -> None:
    for i in range(500):
        digest = hashlib.blake2b(str(i).encode(), digest_size=64 if i % 2 else 32).digest()
        for length in (88, 44, 7, 1, 0):
            assert base58(digest, length) == _base58_digit_by_digit(digest, length)


def test_a_dead_builds_files_are_removed_before_building(tmp_path: Path) -> None:
    name = datadir.world_db_name(7, 1)
    dead = [
        tmp_path / f".{name}.build-0123abcd.tmp",
        tmp_path / f".{name}.build-0123abcd.tmp.stage0-ff00",
    ]
    other = tmp_path / f".{datadir.world_db_name(7, 2)}.build-0123abcd.tmp"
    for path in (*dead, other):
        path.write_bytes(b"half a world")
    info = datadir.ensure_world(tmp_path, seed=7, scale=1)
    assert not any(p.exists() for p in dead)
    assert other.exists()  # another world's build is not this one's to clear
    assert info.db_path.exists()
