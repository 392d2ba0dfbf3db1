"""The seed-7 world is the same bytes whatever the build's speed-ups: its SQL dump's SHA-256."""

from __future__ import annotations

import contextlib
import hashlib
import sqlite3

from quantscope.sandbox.datadir import WorldInfo

# iterdump() of the pristine seed-7, scale-1 world (schema, rows, keys), one line each.
SEED7_SCALE1_SHA256 = "9d58f06b178ef410f797a56e5bce6fcb2e70bad6f81e3c732ad8802181aa7e20"


def test_seed7_world_dump_unchanged(sandbox_world: WorldInfo) -> None:
    digest = hashlib.sha256()
    with contextlib.closing(sqlite3.connect(sandbox_world.db_path)) as conn:
        for line in conn.iterdump():
            digest.update(line.encode() + b"\n")
    assert digest.hexdigest() == SEED7_SCALE1_SHA256
