"""No artefact holds the key (issue 20, "Done when"): every file quantscope writes, through a
service that redirects and echoes the key, searched in every encoding.

A proxy in front of the real sandbox (``_helpers.leaks.EchoingProxy``) answers the first
request of each URL with a same-origin 307 and writes the key into free-text fields of every
JSON answer (literal, and JSON-escaped in several mixes) and into a header. Through it: the
loaders (HTTP cache and frame cache, a warm reload), a catalog sync, catalog reads written
out, a bundle, a report (of the loaded trades; the reliability case has the whole one),
``quantscope fetch`` to a file and to stdout, a playbook write through ``audit`` (its log)
and an error message. Then every file under the cache, catalog, output and audit directories
is searched for the key (literal, UTF-16, base64, hex, ``\\u`` escapes, percent-encoding),
every Parquet/Arrow cell and SQLite value too: none holds it. So are ``repr(client)``,
``repr(settings)``, log records and warnings. The bigger run is
``tests/reliability/test_key_secret.py``.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest
from _helpers.leaks import EchoingProxy, leaks

import quantscope as qsc
import quantscope.loaders as L
from quantscope import audit, cli
from quantscope._http.client import Client
from quantscope.sandbox.serve import SandboxServer

QUANT = 1
START, END = "2026-07-01", "2026-07-31T23:59:59"


@pytest.mark.slow  # ~15 s: a sandbox, a proxy, a sync, a report's figures
def test_no_artefact_holds_the_key(
    fresh_sandbox: Callable[..., SandboxServer],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = fresh_sandbox()
    key = server.keys["enterprise"]
    cache, catalog, out, logs = (tmp_path / d for d in ("cache", "catalog", "out", "audit"))
    out.mkdir()
    caplog.set_level(logging.DEBUG)
    with EchoingProxy(server.url) as proxy, warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        client = Client(proxy.url, key, cache_dir=str(cache), progress=False)
        trades = L.load_trades(QUANT, client=client)
        assert trades["token_name"].str.contains("***", regex=False).all()  # echoed, scrubbed
        evaluations = L.load_evaluations(quant_id=QUANT, max_pages=1, client=client)
        ids = [int(i) for i in evaluations["evaluation_id"].head(3)]
        L.load_eval_details(ids, client=client)
        L.load_trades(QUANT, client=client)  # a warm reload: the frame cache
        qsc.sync(
            catalog,
            quant_id=QUANT,
            resources=["trades", "playbook", "recommendations"],
            start=START,
            end=END,
            client=client,
        )
        opened = qsc.open_catalog(catalog)
        opened.trades().to_parquet(out / "catalog-trades.parquet")
        opened.playbook(QUANT).to_csv(out / "catalog-playbook.csv")
        qsc.export_bundle(out / "study.qsbundle", catalog, quant_id=QUANT, start=START, end=END)
        trades.quant.report(out / "report.html", client=client, load=False)

        monkeypatch.setenv("QUANTSCOPE_URL", proxy.url)
        monkeypatch.setenv("QUANTSCOPE_API_KEY", key)
        monkeypatch.setenv("QUANTSCOPE_CACHE_DIR", str(tmp_path / "cli-cache"))
        assert cli.main(["fetch", "trades", "--quant", str(QUANT), "-o", str(out / "t.csv")]) == 0
        assert cli.main(["fetch", "playbook", str(QUANT), "-o", "-"]) == 0
        shown = capsys.readouterr()
        (out / "fetch.stdout").write_text(shown.out)
        (out / "fetch.stderr").write_text(shown.err)

        playbook = L.load_playbook(QUANT, client=client)
        row = playbook.iloc[0]
        change = audit.Change.of(row, "threshold", float(row["threshold"]) + 1)
        audit.write_changes(QUANT, [change], client=client, log=audit.AuditLog(logs / "a.jsonl"))
        with pytest.raises(qsc.NotFoundError) as error:
            client.get("/api/trades/{id}", {"id": 99_999_999})
        (out / "error.txt").write_text(f"{error.value}\n{error.value.body!r}\n{error.value!r}")
        shown_objects = repr(client) + repr(client.settings) + repr(client.cache)
        client.close()

    assert proxy.redirected >= 8  # the service did misbehave
    assert proxy.echoed > 1000
    assert "Client" in shown_objects
    assert key not in shown_objects
    assert not any(key in r.getMessage() for r in caplog.records)
    assert not any(key in str(w.message) for w in warned)
    expected = ["report.html", "study.qsbundle", "t.csv", "fetch.stdout", "error.txt"]
    assert all((out / name).stat().st_size > 0 for name in expected)
    assert (logs / "a.jsonl").stat().st_size > 0
    assert leaks(tmp_path, [key]) == {}
