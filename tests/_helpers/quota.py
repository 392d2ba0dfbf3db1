"""Give a sandbox server's keys their full daily quota again, spend it, read it server-side.

The autouse fixture ``_fresh_quota`` does this before every test on the shared server; module
and session fixtures run before it, so those that spend many requests call it themselves.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from datetime import UTC, datetime, timedelta

import requests

from quantscope._errors import QuotaShareExceededError
from quantscope._plans import plan_named
from quantscope.sandbox.auth import new_quota_day
from quantscope.sandbox.serve import SandboxServer


def reset_quota(server: SandboxServer) -> None:
    """Forget every request counted today on ``server``."""
    new_quota_day(server.info.db_path)


def spend_quota(server: SandboxServer, plan: str, n: int) -> None:
    """Spend ``n`` requests of ``plan``'s quota on ``server`` (unknown paths answer 404, and
    count)."""
    with requests.Session() as session:
        session.headers["X-API-Key"] = server.keys[plan]
        for _ in range(n):
            assert session.get(server.url + "/api/no-such-endpoint", timeout=30).status_code == 404


def quota_left(server: SandboxServer, plan: str) -> int:
    """The requests ``plan`` has left today on ``server``, read from the service's own
    counters (reading spends nothing)."""
    today = datetime.now(UTC).date().isoformat()
    with closing(sqlite3.connect(server.info.db_path)) as conn:
        (spent,) = conn.execute(
            "SELECT COALESCE(SUM(q.count), 0) FROM quota q JOIN api_keys k ON k.id = q.key_id "
            "WHERE k.plan = ? AND q.day = ?",
            (plan, today),
        ).fetchone()
    return plan_named(plan).daily_limit - int(spent)


def share_refusal(
    needed: int, remaining: int, *, reserve: int = 0, fetched: int = 0
) -> QuotaShareExceededError:
    """A load's refusal over the quota share of Growth's 500 (a panel's offer is made from
    one), resetting in 3 hours."""
    return QuotaShareExceededError(
        "refused",
        share=0.25,
        endpoint="/api/eval-details",
        needed=needed,
        fetched=fetched,
        remaining=remaining,
        limit=500,
        reset=datetime.now(UTC) + timedelta(hours=3),
        reserve=reserve,
    )
