"""Every eval-details answer of the seed-7 world is the bytes the route gave before its speed-up.

``evaldetail.detail`` computes each evaluation's values once and applies the pass rule once
(it did both twice), renders criterion results from per-slice constants and spells values
without numpy's formatter. The digest below was recorded on ``main`` at b9c80f1, before that
change, over HTTP: all 48,799 bodies in id order, each prefixed by its id. About three minutes
(one request per evaluation, a server process with its quota lifted); the sampled digest of
tests/sandbox/test_eval_details_bytes.py is the fast check in ``make test``.
"""

from __future__ import annotations

import contextlib
import hashlib
import signal
import sqlite3
from pathlib import Path

import pytest
import requests
from reliability._server_process import ServerProcess

from quantscope.sandbox.datadir import WorldInfo, copy_world

pytestmark = pytest.mark.reliability

EVERY_ID_SHA256 = "1eee082d4f9f0524cb223d3ea17584794c1e277bccb2fd87c4b78d660caf2622"


def test_every_answer_is_the_recorded_bytes(sandbox_world: WorldInfo, tmp_path: Path) -> None:
    with contextlib.closing(sqlite3.connect(sandbox_world.db_path)) as conn:
        ids = [int(r[0]) for r in conn.execute("SELECT id FROM evaluations ORDER BY id")]
    assert len(ids) == 48_799
    info = copy_world(sandbox_world, tmp_path / "world")
    server = ServerProcess(info.data_dir, unmetered=True).start()
    digest = hashlib.sha256()
    try:
        with requests.Session() as session:
            session.headers["X-API-Key"] = sandbox_world.keys["enterprise"]
            for evaluation_id in ids:
                response = session.get(
                    f"{server.url}/api/eval-details",
                    params={"evaluationId": evaluation_id},
                    timeout=60,
                )
                assert response.status_code == 200, (evaluation_id, response.text)
                digest.update(f"{evaluation_id}\n".encode() + response.content + b"\n")
    finally:
        server.stop(signal.SIGKILL)
    assert digest.hexdigest() == EVERY_ID_SHA256
