"""Jupyter-native objects (issue 24, "Jupyter fit"): the client, the quota, an estimate, a
catalog and a sync report have ``_repr_html_``: small escaped tables, never the key in any
spelling, no memory address, the same HTML for the same object (nbval stores it)."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import quantscope as qs
import quantscope.loaders as L
from quantscope._http.client import Client
from quantscope._http.estimate import Estimate
from quantscope._http.quota import Quota
from quantscope.catalog.manifest import Manifest, Store
from quantscope.sandbox.serve import SandboxServer
from tests._helpers.leaks import spellings

HOSTILE = '<script>alert("x")</script>&'
IN_PATH = '<img src=x onerror="alert(1)">&'  # markup a directory name can hold
ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,}")


def _no_key(text: str, key: str) -> None:
    data = text.encode()
    found = [name for name, form in spellings(key).items() if form in data]
    assert not found, found


def _clean(text: str) -> None:
    assert "<script>" not in text
    assert "<img" not in text
    assert "<table>" in text
    assert not ADDRESS.search(text)


def test_client_html_shows_the_service_never_the_key(
    sandbox: SandboxServer, client_for: Callable[..., Client], tmp_path: Path
) -> None:
    key = sandbox.keys["enterprise"]
    hostile_dir = tmp_path / f"{IN_PATH}{key}"  # a path that spells markup and the key
    hostile_dir.mkdir()
    with Client(sandbox.url, key, cache_dir=str(hostile_dir), progress=False) as c:
        before = c._repr_html_()
        assert "unknown: no request has reached the service yet" in before
        L.load_playbook(1, client=c)
        html = c._repr_html_()
        assert html == c._repr_html_()  # deterministic
        _clean(html)
        _no_key(html, key)
        assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&amp;***" in html
        assert '<th style="text-align:left">api key</th><td>set</td>' in html
        assert sandbox.url in html
        assert f"<td>{c.quota.remaining:,}</td>" in html
        _no_key(repr(c), key)  # the text repr neither


def test_quota_and_estimate_html_are_escaped_tables() -> None:
    reset = datetime(2026, 11, 29, tzinfo=UTC)
    quota = Quota(100, 95, reset, datetime(2026, 11, 28, 3, 0, tzinfo=UTC))
    html = quota._repr_html_()
    _clean(html)
    for text in ("<td>95</td>", "<td>100</td>", "<td>basic</td>", "2026-11-29 00:00 UTC"):
        assert text in html, text
    assert " in " not in html  # no time relative to now: the same HTML tomorrow
    assert "unknown" in Quota()._repr_html_()
    estimate = Estimate(HOSTILE, 3, 1, False, 95, 100, reset, 0.25)
    html = estimate._repr_html_()
    _clean(html)
    assert "&lt;script&gt;" in html
    assert "<td>at least 3</td>" in html
    assert "needs confirm=True" not in html
    assert "<td>fits</td>" in html
    big = Estimate("/api/trades", 500, 0, True, 95, 100, reset, 0.25)
    assert "does not fit: partial=True fetches what fits" in big._repr_html_()


def test_catalog_and_sync_report_html(
    module_client: Client, tmp_path: Path, sandbox: SandboxServer
) -> None:
    path = tmp_path / "study"
    report = qs.sync(
        path,
        quant_id=1,
        resources=["playbook"],
        client=module_client,
    )
    html = report._repr_html_()
    _clean(html)
    assert all(f"<td>{t['task']}</td>" in html for t in report.tasks)
    assert f"<td>{report.rows_added:,}</td>" in html
    _no_key(html, sandbox.keys["enterprise"])
    cat = qs.open_catalog(path)
    html = cat._repr_html_()
    _clean(html)
    assert html == cat._repr_html_()
    rows = cat.info()["resources"]["playbook"]["rows"]
    assert f"<td>playbook</td><td>1</td><td>{rows:,}</td>" in html
    report.tasks.append({"task": HOSTILE, "requests": 1, "note": HOSTILE})
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;" in report._repr_html_()


def test_catalog_html_escapes_its_path(tmp_path: Path) -> None:
    path = tmp_path / IN_PATH
    Store(path).save(Manifest())
    html = qs.open_catalog(path)._repr_html_()
    _clean(html)
    assert "&lt;img src=x" in html
    assert "<td>0</td>" in html


def test_a_dry_run_report_says_so(module_client: Client, tmp_path: Path) -> None:
    report = qs.sync(
        tmp_path / "dry", quant_id=1, resources=["playbook"], dry_run=True, client=module_client
    )
    html = report._repr_html_()
    assert "<td>dry run</td>" in html
    assert "<td>-</td>" in html
