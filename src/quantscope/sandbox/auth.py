"""API keys and daily quotas of the sandbox (docs/service-contract.md, Authentication and plans).

Keys are derived from the world's seed, so a notebook run against ``--seed 7`` always uses the
same keys; the database keeps only their SHA-256. Quotas are counted per key and UTC day of the
*real* clock in one SQLite statement, so concurrent requests can neither overspend nor lose a
count, and counters survive restarts (``new_quota_day`` forgets them all: a fresh day for a
tour). Nothing here knows about HTTP: app.py turns the results
into responses.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from pathlib import Path

from quantscope.sandbox.plans import PLANS, Plan, get_plan

KEY_PREFIX = "qs_"


def hash_key(key: str) -> str:
    """The SHA-256 hex digest under which a key is stored."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def derive_keys(seed: int) -> dict[str, str]:
    """The plain keys of a world: ``qs_<plan>_<32 hex>``, one per plan, a function of ``seed``."""
    keys = {}
    for plan in PLANS:
        digest = hashlib.sha256(f"quantscope-sandbox-key/{seed}/{plan}".encode()).hexdigest()
        keys[plan] = f"{KEY_PREFIX}{plan}_{digest[:32]}"
    return keys


def create_keys(conn: sqlite3.Connection, seed: int) -> dict[str, str]:
    """Store the hashes of the world's keys in ``api_keys`` and return the plain keys.

    Idempotent: a key already stored is left as it is. The caller manages the transaction.
    """
    keys = derive_keys(seed)
    conn.executemany(
        "INSERT INTO api_keys (plan, key_hash) VALUES (?, ?) ON CONFLICT (key_hash) DO NOTHING",
        [(plan, hash_key(key)) for plan, key in keys.items()],
    )
    return keys


def keys_match(conn: sqlite3.Connection, keys: dict[str, str]) -> bool:
    """True when every plan's key in ``keys`` is stored in ``api_keys`` under that plan."""
    stored = {
        (str(plan), str(h)) for plan, h in conn.execute("SELECT plan, key_hash FROM api_keys")
    }
    return set(keys) == set(PLANS) and all(
        (plan, hash_key(key)) in stored for plan, key in keys.items()
    )


@dataclass(frozen=True)
class KeyRecord:
    """A stored key: its row id (the quota counter's owner) and its plan."""

    key_id: int
    plan: Plan


def load_key_records(conn: sqlite3.Connection) -> dict[str, KeyRecord]:
    """All stored keys by hash. Keys do not change while a world is served, so callers cache it."""
    return {
        str(key_hash): KeyRecord(int(key_id), get_plan(str(plan)))
        for key_id, plan, key_hash in conn.execute("SELECT id, plan, key_hash FROM api_keys")
    }


def authenticate(records: dict[str, KeyRecord], key: str) -> KeyRecord | None:
    """The record of ``key``, or None for an unknown key."""
    return records.get(hash_key(key))


@dataclass(frozen=True)
class QuotaCheck:
    """The outcome of counting one request: allowed or not, and the values of the rate headers."""

    allowed: bool
    limit: int
    remaining: int
    reset: datetime  # the next 00:00 UTC
    now: datetime

    @property
    def reset_epoch(self) -> int:
        return int(self.reset.timestamp())

    @property
    def retry_after_s(self) -> int:
        """Whole seconds until the reset, at least 1."""
        return max(1, math.ceil((self.reset - self.now).total_seconds()))

    def headers(self) -> dict[str, str]:
        """``X-RateLimit-*`` headers; ``Retry-After`` too when the request was refused."""
        headers = {
            "X-RateLimit-Limit": str(self.limit),
            "X-RateLimit-Remaining": str(self.remaining),
            "X-RateLimit-Reset": str(self.reset_epoch),
        }
        if not self.allowed:
            headers["Retry-After"] = str(self.retry_after_s)
        return headers


def _utc(now: datetime) -> datetime:
    """``now`` in UTC; a naive value is taken to be UTC already."""
    return now.replace(tzinfo=UTC) if now.tzinfo is None else now.astimezone(UTC)


def next_reset(now: datetime) -> datetime:
    """The next 00:00 UTC strictly after ``now``."""
    return datetime.combine(_utc(now).date() + timedelta(days=1), time(0), tzinfo=UTC)


_SPEND = """
INSERT INTO quota (key_id, day, count) VALUES (?, ?, 1)
ON CONFLICT (key_id, day) DO UPDATE SET count = count + 1 WHERE count < ?
RETURNING count
"""


def spend(conn: sqlite3.Connection, key_id: int, limit: int, now: datetime) -> QuotaCheck:
    """Count one request of ``key_id`` on the UTC day of ``now`` unless ``limit`` is reached.

    One statement (an upsert whose update is conditional), so it is atomic on its own: no row
    comes back exactly when the day's count already stood at the limit, and then nothing changes
    (a refused request does not count).
    """
    now = _utc(now)
    rows = conn.execute(_SPEND, (key_id, now.date().isoformat(), limit)).fetchall()
    used = int(rows[0][0]) if rows else limit
    return QuotaCheck(
        allowed=bool(rows),
        limit=limit,
        remaining=max(0, limit - used),
        reset=next_reset(now),
        now=now,
    )


def new_quota_day(db_path: Path) -> int:
    """Give every key of the world at ``db_path`` a fresh day's quota, as if the UTC day had
    just turned: every count is forgotten, nothing else in the world changes. For a tour run
    on a sandbox already used today (``quantscope.tour``). Safe while the world is served: the
    counts live in the database alone, and one statement deletes them.

    Returns:
        How many requests were forgotten (today's and any older day's).
    """
    with contextlib.closing(sqlite3.connect(db_path, timeout=10.0)) as conn, conn:
        (forgotten,) = conn.execute("SELECT COALESCE(SUM(count), 0) FROM quota").fetchone()
        conn.execute("DELETE FROM quota")
    return int(forgotten)
