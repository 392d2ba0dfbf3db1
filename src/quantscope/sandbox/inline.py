"""Read-only requests answered on the event loop's thread when they turn out cheap.

A sync endpoint normally runs in a worker thread (deps.WORKERS): its SQL blocks, and the event
loop must keep serving. On two cores that hop costs more than the work of a warm list page:
the loop's thread and the worker's take the GIL from each other at every SQLite step (the
sqlite3 module releases it around each one), and measured over HTTP a 100-trade page cost the
server more CPU on a quiet machine than with the server held to one core (benchmarks/README.md,
scale).

So an endpoint marked ``deps.inline_first`` is first *attempted* on the loop's thread, under
``attempt``, and handed to a worker only when the attempt would not be cheap:

* SQL runs on the loop thread's own connection (``Store.connect`` hands out the connection the
  quota gate counts with, ``busy_timeout=0``: a read never waits), with a progress handler
  that interrupts any statement still running ``BUDGET_S`` after the attempt began; an
  interrupted or busy statement ends the attempt;
* work that is not SQL and can be long (rendering list items not rendered yet:
  ``rendered.RenderedItems``, a transaction) calls ``ensure_cheap()``, which ends the attempt.

An ended attempt raises ``RunElsewhere``; the endpoint is then run again from the start in a
worker thread, as it would have been. The endpoints marked so only read tables that never
change while a world is served and fill caches with values that do not depend on who filled
them, so an abandoned attempt leaves nothing behind that a second run would see differently.
``Store.inline_first = False`` sends every marked endpoint straight to a worker (tests
compare both). A warm page (its count memoised, its items rendered, its seek from a mark)
costs a few index seeks of SQL; a cold one (the first count over 480k evaluations, a walk of
every row) wastes at most ``BUDGET_S`` before it moves.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

#: Wall seconds an attempt may spend in SQL on the loop's thread before it moves to a worker.
BUDGET_S = 0.005
#: SQLite VM instructions between two looks at the clock (a look is one monotonic read).
CHECK_EVERY_OPS = 4_000

#: Attempts since the process started: answered on the loop, or moved to a worker (for
#: benchmarks and tests; only the event loop's thread counts).
COUNTS = {"inline": 0, "moved": 0}

_state = threading.local()


class RunElsewhere(Exception):
    """The attempt would not be cheap: run the endpoint in a worker thread instead."""


def active() -> bool:
    """Whether this thread is inside an ``attempt``."""
    return bool(getattr(_state, "deadline", None))


def ensure_cheap(what: str) -> None:
    """End an attempt before work that may be long (``what`` names it); no-op outside one."""
    if active():
        raise RunElsewhere(what)


@contextmanager
def attempt(conn: sqlite3.Connection) -> Iterator[None]:
    """Run the block as an attempt whose SQL goes through ``conn``, with a time budget.

    Raises:
        RunElsewhere: the block called ``ensure_cheap``, or a statement ran past the budget
            or found the database locked.
    """
    deadline = time.perf_counter() + BUDGET_S
    over = [False]

    def watch() -> int:
        if time.perf_counter() > deadline:
            over[0] = True
            return 1  # interrupts the statement
        return 0

    _state.deadline = deadline
    conn.set_progress_handler(watch, CHECK_EVERY_OPS)
    try:
        yield
    except sqlite3.OperationalError as exc:
        code = getattr(exc, "sqlite_errorcode", 0) or 0
        if over[0] or code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_INTERRUPT):
            raise RunElsewhere(str(exc)) from None
        raise
    finally:
        conn.set_progress_handler(None, 0)
        _state.deadline = None
