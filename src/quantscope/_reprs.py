"""HTML reprs for Jupyter: the client, the quota, an estimate, a catalog and a sync report.

Each object's ``_repr_html_`` is one line that calls its function here. What they show:

* small tables, every value passed through ``html.escape`` (a quant name, a path or a service
  answer may hold markup), no style sheet, no script, nothing fetched;
* never the API key (``api key: set`` or ``not set``; any other value that happens to spell
  the key, such as a URL or a path, is scrubbed with ``_secret``) and no memory address;
* deterministic: the same object gives the same HTML, so nbval can store it. Times are
  absolute UTC (``2026-11-29 00:00 UTC``); the text reprs' "in 3 h 5 min" would change
  from one run to the next.

The functions read public attributes only, so this module imports nothing of the objects'
modules (no import circle).
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from quantscope._secret import scrubber

__all__ = [
    "catalog_html",
    "client_html",
    "estimate_html",
    "quota_html",
    "sync_report_html",
    "table_html",
]

Row = tuple[str, Any]


def _text(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, datetime):
        return when(value)
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def when(moment: datetime | None) -> str:
    """``moment`` as absolute UTC text to the minute ("-" when unknown)."""
    if moment is None:
        return "-"
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def table_html(
    title: str,
    rows: Iterable[Row],
    *,
    columns: Sequence[str] | None = None,
    body: Iterable[Sequence[Any]] = (),
    secret: str | None = None,
) -> str:
    """A titled two-column table of ``rows`` (label, value), then, when ``columns`` are
    given, a table of ``body`` rows under those headers; every text escaped, and ``secret``
    (the API key) scrubbed from it first.
    """
    scrub = scrubber(secret).scrub_text if secret else str

    def cell(value: Any, tag: str = "td") -> str:
        return f"<{tag}>{html.escape(scrub(_text(value)))}</{tag}>"

    parts = [
        '<div class="quantscope-repr">',
        f"<strong>{html.escape(scrub(title))}</strong>",
        "<table>",
    ]
    parts += [
        f'<tr><th style="text-align:left">{html.escape(label)}</th>{cell(value)}</tr>'
        for label, value in rows
    ]
    parts.append("</table>")
    if columns:
        parts.append("<table>")
        parts.append("<tr>" + "".join(cell(c, "th") for c in columns) + "</tr>")
        parts += ["<tr>" + "".join(cell(v) for v in line) + "</tr>" for line in body]
        parts.append("</table>")
    parts.append("</div>")
    return "\n".join(parts)


def _quota_rows(quota: Any) -> list[Row]:
    if quota.updated_at is None:
        return [("quota", "unknown: no request has reached the service yet")]
    return [
        ("requests left", quota.remaining),
        ("daily limit", quota.limit),
        ("plan", quota.plan),
        ("resets at", when(quota.reset)),
        ("as of", when(quota.updated_at)),
    ]


def quota_html(quota: Any) -> str:
    """A ``Quota``: requests left of the daily limit, the plan, when it resets."""
    return table_html("quantscope quota", _quota_rows(quota))


def client_html(client: Any) -> str:
    """A ``Client``: the service, its URL, whether a key is set (never the key), the cache,
    the quota rules and the quota as last reported.
    """
    s = client.settings
    rows: list[Row] = [
        ("service", s.service),
        ("url", client.base_url),
        ("api key", "set" if s.api_key else "not set"),
        ("offline", s.offline),
        ("cache", s.cache_dir),
        ("quota share", f"{s.quota_share:.0%} of what is left per load"),
        ("quota reserve", s.quota_reserve),
        ("timeout", f"{s.timeout_s:g} s"),
        *_quota_rows(client.quota),
    ]
    return table_html("quantscope client", rows, secret=s.api_key)


def estimate_html(estimate: Any) -> str:
    """An ``Estimate``: what the load would send, what the cache holds, what is left, and
    whether it fits (or needs ``confirm=True``).
    """
    requests = estimate.requests if estimate.exact else f"at least {estimate.requests}"
    if estimate.write:
        requests = f"{estimate.requests} (a write, never cached)"
    verdict = "unknown (quota not known yet)"
    if estimate.fits is False:
        verdict = "does not fit: partial=True fetches what fits"
    elif estimate.needs_confirm:
        verdict = f"more than {estimate.share:.0%} of what is left: needs confirm=True"
    elif estimate.fits:
        verdict = "fits"
    rows: list[Row] = [
        ("endpoint", estimate.endpoint),
        ("requests", requests),
        ("from the cache", estimate.cached),
        ("requests left", estimate.remaining),
        ("daily limit", estimate.limit),
        ("resets at", when(estimate.reset)),
        ("verdict", verdict),
    ]
    if estimate.probed:
        rows.append(("spent by probe=True", estimate.probed))
    return table_html("quantscope estimate", rows)


def catalog_html(url: str, manifest: Any) -> str:
    """A ``Catalog`` (its manifest as last read): per resource its partitions, rows and
    bytes; the schema version; the sync runs and how the last one ended.
    """
    held: dict[str, list[int]] = {}
    for p in manifest.partitions.values():
        counts = held.setdefault(p["resource"], [0, 0, 0])
        counts[0] += 1
        counts[1] += int(p["rows"])
        counts[2] += int(p["bytes"])
    runs: Sequence[Mapping[str, Any]] = manifest.runs
    last = runs[-1] if runs else None
    rows: list[Row] = [
        ("catalog", url),
        ("schema version", manifest.schema_version),
        ("created at", manifest.created_at),
        ("partitions", len(manifest.partitions)),
        ("sync runs", len(runs)),
        ("last run", None if last is None else f"{last.get('started_at')}: {last.get('status')}"),
    ]
    body = [(name, *counts) for name, counts in sorted(held.items())]
    return table_html(
        "quantscope catalog",
        rows,
        columns=("resource", "partitions", "rows", "bytes"),
        body=body,
    )


def sync_report_html(report: Any) -> str:
    """A ``SyncReport``: the run, its end, requests and rows, the quota, each task."""
    rows: list[Row] = [
        ("catalog", report.catalog),
        ("run", "dry run" if report.dry_run else report.run),
        ("status", report.status),
        ("requests", report.requests),
        ("rows added", None if report.dry_run else report.rows_added),
        ("rows updated", None if report.dry_run else report.rows_updated),
        ("quota", report.quota or None),
    ]
    for label, files in (
        ("fetched again (damaged)", report.repaired),
        ("dropped (a damaged past snapshot)", report.dropped),
        ("still damaged", report.damaged),
    ):
        if files:
            rows.append((label, ", ".join(files)))
    body = [
        (
            t["task"],
            t.get("requests", 0),
            None if report.dry_run else t.get("added", 0),
            None if report.dry_run else t.get("updated", 0),
            t.get("note"),
        )
        for t in report.tasks
    ]
    return table_html(
        "quantscope sync",
        rows,
        columns=("task", "requests", "added", "updated", "note"),
        body=body,
    )
