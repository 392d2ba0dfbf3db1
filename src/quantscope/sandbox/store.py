"""SQLite storage of the sandbox world: the schema, connections and transactions.

One database file per world (``world.sqlite`` in the data directory). The world generator fills
it once; the routers read it and the write endpoints change it inside ``transaction()``.
Timestamps are stored as integer epoch milliseconds (UTC); JSON objects as text.

Candles and criterion values are not stored: ``sim.market.token_path(seed, token_id)`` and
``sim.criteria.criterion_values(...)`` regenerate them deterministically,
and the per-token figures the endpoints need at ``WORLD_NOW`` (last price, 24 h change and
volume, market cap, liquidity) are stored in ``tokens``.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from quantscope.sandbox import inline
from quantscope.sandbox.listing import Listing
from quantscope.sandbox.rendered import WorldConnection

SCHEMA_VERSION = "2"
BUSY_TIMEOUT_S = 10.0  # how long a statement waits for another connection's lock

SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);

CREATE TABLE api_keys (
    id INTEGER PRIMARY KEY,
    plan TEXT NOT NULL,                 -- basic | growth | enterprise
    key_hash TEXT NOT NULL UNIQUE       -- sha256 hex of the key
);
CREATE TABLE quota (
    key_id INTEGER NOT NULL REFERENCES api_keys(id),
    day TEXT NOT NULL,                  -- UTC date, YYYY-MM-DD
    count INTEGER NOT NULL,
    PRIMARY KEY (key_id, day)
);

CREATE TABLE quants (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    trading_mode TEXT NOT NULL,         -- live | paper
    capital_usd REAL NOT NULL,
    take_profit REAL NOT NULL,          -- fraction, e.g. 0.8 = +80 %
    stop_loss REAL NOT NULL,            -- fraction, e.g. 0.35 = -35 %
    horizon_h INTEGER NOT NULL,
    config_group_id TEXT NOT NULL
);

CREATE TABLE tokens (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    symbol TEXT NOT NULL,
    address TEXT NOT NULL UNIQUE,
    chain TEXT NOT NULL,
    image TEXT NOT NULL,
    created_ms INTEGER NOT NULL,
    status TEXT NOT NULL,               -- ACTIVE | DORMANT | RUGGED
    supply REAL NOT NULL,
    rug_hour INTEGER,                   -- candle index of the rug, NULL when none
    holders INTEGER NOT NULL,
    price REAL NOT NULL,                -- last close before WORLD_NOW
    change_24h REAL NOT NULL,           -- percent
    volume_24h REAL NOT NULL,           -- USD
    market_cap REAL NOT NULL,           -- USD
    liquidity REAL NOT NULL             -- USD
);
CREATE INDEX tokens_chain ON tokens(chain);

CREATE TABLE criteria (
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    category TEXT NOT NULL,
    category_id INTEGER NOT NULL,
    short_description TEXT NOT NULL,
    long_description TEXT NOT NULL,
    is_human INTEGER NOT NULL,
    position INTEGER NOT NULL           -- index of the criterion in eval_values.vals
);

-- The live playbook. config_original is the build-time copy that decided all history.
CREATE TABLE config (
    id TEXT PRIMARY KEY,                -- UUID text (configIdsByInterval)
    quant_id INTEGER NOT NULL REFERENCES quants(id),
    market_cap TEXT NOT NULL,           -- DEGEN_CAP | LOW_CAP | MID_CAP
    config_type TEXT NOT NULL,          -- SCANNING | BUYING
    interval TEXT NOT NULL,             -- noTime
    criteria_id INTEGER NOT NULL REFERENCES criteria(id),
    threshold REAL NOT NULL,
    weight REAL NOT NULL,
    required INTEGER NOT NULL,
    disabled INTEGER NOT NULL,
    delegate INTEGER NOT NULL,
    extra_info TEXT NOT NULL,           -- JSON Extra info
    config_key TEXT NOT NULL
);
CREATE INDEX config_quant ON config(quant_id, market_cap, config_type);
CREATE TABLE config_original AS SELECT * FROM config WHERE 0;

CREATE TABLE pass_marks (
    quant_id INTEGER NOT NULL,
    market_cap TEXT NOT NULL,
    config_type TEXT NOT NULL,
    pass_mark REAL NOT NULL,
    PRIMARY KEY (quant_id, market_cap, config_type)
);

CREATE TABLE evaluations (
    id INTEGER PRIMARY KEY,
    quant_id INTEGER NOT NULL,
    token_id INTEGER NOT NULL,
    chain TEXT NOT NULL,
    type TEXT NOT NULL,                 -- TOKEN_STATUS | TOKEN_BUY | TOKEN_SELL
    created_ms INTEGER NOT NULL,
    hour INTEGER NOT NULL,              -- candle index at evaluation
    market_cap REAL NOT NULL,
    mc_class TEXT NOT NULL,
    price REAL NOT NULL,                -- detection price (USD)
    liquidity REAL NOT NULL,
    volume_24h REAL NOT NULL,
    passed INTEGER NOT NULL,
    scored INTEGER NOT NULL,
    internal_score REAL NOT NULL,
    ai_score REAL NOT NULL,
    avg_score REAL NOT NULL,
    perf_roi REAL NOT NULL,             -- percent, detection price to +24 h
    holders INTEGER NOT NULL
);
CREATE INDEX evaluations_time ON evaluations(created_ms);
CREATE INDEX evaluations_quant_time ON evaluations(quant_id, created_ms);
CREATE INDEX evaluations_token ON evaluations(token_id, quant_id, created_ms);

CREATE TABLE trades (
    id INTEGER PRIMARY KEY,
    quant_id INTEGER NOT NULL,
    token_id INTEGER NOT NULL,
    chain TEXT NOT NULL,
    buy_eval_id INTEGER NOT NULL,
    sell_eval_id INTEGER,
    decision TEXT NOT NULL,             -- APPROVE | DELAY | REJECT | RECOMMEND
    trading_status TEXT NOT NULL,       -- executed | delayed | rejected | recommended
    wait_until_ms INTEGER,
    validated_ms INTEGER NOT NULL,
    confidence REAL NOT NULL,
    mode TEXT NOT NULL,                 -- live | paper
    tracking INTEGER NOT NULL,
    open_ms INTEGER NOT NULL,
    close_ms INTEGER,                   -- NULL while open
    status TEXT NOT NULL,               -- Open | Closed
    result TEXT NOT NULL,               -- Profit | Loss | Breakeven
    exit_reason TEXT,                   -- take_profit | stop_loss | horizon | NULL
    entry_price REAL NOT NULL,
    exit_price REAL,                    -- mark price while open
    buy_cost REAL NOT NULL,
    sell_revenue REAL NOT NULL,
    pnl REAL NOT NULL,
    roi REAL NOT NULL,                  -- percent
    native_spent REAL NOT NULL,
    native_received REAL NOT NULL,
    tokens_bought REAL NOT NULL,
    tokens_sold REAL NOT NULL,
    avg_buy_price_native REAL NOT NULL
);
CREATE INDEX trades_quant_open ON trades(quant_id, open_ms);
CREATE INDEX trades_open ON trades(open_ms);

CREATE TABLE transactions (
    id INTEGER PRIMARY KEY,
    trade_id INTEGER NOT NULL REFERENCES trades(id),
    action TEXT NOT NULL,               -- BUY | SELL
    tx_hash TEXT NOT NULL,
    ts_ms INTEGER NOT NULL,
    input_token TEXT NOT NULL,
    output_token TEXT NOT NULL,
    input_amount REAL NOT NULL,
    output_amount REAL NOT NULL,
    input_value_usd REAL NOT NULL,
    output_value_usd REAL NOT NULL,
    price_usd REAL NOT NULL
);
CREATE INDEX transactions_trade ON transactions(trade_id);

CREATE TABLE recommendations (
    id INTEGER PRIMARY KEY,
    quant_id INTEGER NOT NULL,
    config_id TEXT NOT NULL REFERENCES config(id),
    criteria_id INTEGER NOT NULL,
    market_cap TEXT NOT NULL,
    config_type TEXT NOT NULL,          -- BUY
    old_threshold REAL NOT NULL,
    new_threshold REAL NOT NULL,
    old_extra_info TEXT NOT NULL,
    new_extra_info TEXT NOT NULL,
    confidence REAL NOT NULL,
    reasoning TEXT NOT NULL,
    applied INTEGER NOT NULL,
    applied_ms INTEGER,
    before_win_rate REAL NOT NULL,
    after_win_rate REAL NOT NULL,
    trade_difference INTEGER NOT NULL,
    profitable_accuracy REAL NOT NULL,
    unprofitable_accuracy REAL NOT NULL,
    f1_score REAL NOT NULL,
    sample_size INTEGER NOT NULL,
    profitable_avg REAL NOT NULL,
    unprofitable_avg REAL NOT NULL,
    value_difference_ratio REAL NOT NULL,
    actual_impact REAL NOT NULL,
    created_ms INTEGER NOT NULL,
    updated_ms INTEGER NOT NULL
);
CREATE INDEX recommendations_quant ON recommendations(quant_id, applied);
"""


class _Holder:
    """Kept in one thread's slot of a store's thread-local beside the connection opened for
    that thread: when the thread ends (its slot is dropped) the holder goes, and the
    ``weakref.finalize`` attached to it closes the connection.
    """

    __slots__ = ("__weakref__",)


class Store:
    """The world database: a connection per thread, writes serialised in transactions.

    ``listing`` keeps the list endpoints' memoised aggregates and keyset marks (listing.py):
    one per served world, since its tables of history never change while it is served.

    Every connection is closed deterministically, never left to the garbage collector (which
    Python 3.13 reports as ``ResourceWarning: unclosed database``): a thread's connections
    when the thread ends (a worker thread retired by its pool), all of them at ``close()``
    (``SandboxServer.stop`` calls it once the server has stopped).
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.listing = Listing()
        #: False: the endpoints marked ``deps.inline_first`` always run in a worker thread
        self.inline_first = True
        self._local = threading.local()
        self._write_lock = threading.Lock()
        self._held: set[weakref.finalize[[], _Holder]] = set()
        self._held_lock = threading.Lock()
        if self.path.is_file():
            self._enable_wal()

    def _enable_wal(self) -> None:
        """Switch the file to WAL once, before any request: the switch needs the database to
        itself, so racing it from the first concurrent requests failed with "database is
        locked". WAL is a property of the file; later connections find it set.
        """
        with contextlib.closing(self._open()) as conn:
            conn.execute("PRAGMA journal_mode=WAL")

    def _open(self) -> sqlite3.Connection:
        conn = sqlite3.connect(
            self.path,
            isolation_level=None,
            check_same_thread=False,
            timeout=BUSY_TIMEOUT_S,
            factory=WorldConnection,
        )
        try:
            # the busy timeout first: every later statement (the journal mode too) waits
            conn.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")
        except BaseException:
            conn.close()
            raise
        return conn

    def connect(self) -> sqlite3.Connection:
        """This thread's connection; a statement waits up to ``BUSY_TIMEOUT_S`` for a lock.

        Inside an ``inline.attempt`` (the event loop's thread) it is ``connect_nowait()``'s:
        the loop never waits for a lock, and its reads share the page cache of the quota
        counts made on the same connection (a commit on another connection would reset it).
        """
        if inline.active():
            return self.connect_nowait()
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._open()
            holder = self._hold(conn)  # dropped (and conn closed) if configuring raises
            self._local.conn, self._local.conn_holder = self._configure(conn), holder
        return conn

    def connect_nowait(self) -> sqlite3.Connection:
        """This thread's connection that never waits for a lock: a statement that would
        wait fails at once with ``SQLITE_BUSY`` (``is_busy``). For the event loop's thread,
        which must not block; the caller retries elsewhere with ``connect()``.
        """
        conn: sqlite3.Connection | None = getattr(self._local, "nowait", None)
        if conn is None:
            conn = self._open()
            holder = self._hold(conn)  # dropped (and conn closed) if configuring raises
            self._configure(conn).execute("PRAGMA busy_timeout=0")
            self._local.nowait, self._local.nowait_holder = conn, holder
        return conn

    def _hold(self, conn: sqlite3.Connection) -> _Holder:
        """A holder whose end closes ``conn`` (see ``_Holder``); ``close()`` closes it too."""
        holder = _Holder()
        closing = weakref.finalize(holder, conn.close)
        with self._held_lock:
            self._held = {held for held in self._held if held.alive}
            self._held.add(closing)
        return holder

    def close(self) -> None:
        """Close every connection this store opened, in whatever thread. Call it once
        nothing uses the store any more (the server has stopped); a later ``connect()``
        opens a new connection.
        """
        with self._held_lock:
            held, self._held = self._held, set()
            self._local = threading.local()
        for closing in held:
            closing()

    @staticmethod
    def _configure(conn: sqlite3.Connection) -> sqlite3.Connection:
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA journal_mode=WAL")  # a no-op once _enable_wal has run
        # WAL + NORMAL: a commit (the quota count of every request) is not fsynced; still
        # atomic and consistent after a process crash, only a power cut may lose the last.
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
        return conn

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """All-or-nothing: commits when the block ends, rolls back if it raises."""
        inline.ensure_cheap("a transaction")  # writes wait for the write lock: never inline
        conn = self.connect()
        with self._write_lock:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def meta(self, key: str) -> str | None:
        row = self.connect().execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])


def is_busy(exc: sqlite3.Error) -> bool:
    """True when ``exc`` is SQLite's "database is locked" (SQLITE_BUSY and its extended
    codes): the statement did nothing and may be run again.
    """
    code = getattr(exc, "sqlite_errorcode", None)
    return code is not None and code & 0xFF == sqlite3.SQLITE_BUSY


def create_schema(conn: sqlite3.Connection) -> None:
    """Create the world's tables and indexes on ``conn``."""
    conn.executescript(SCHEMA)
