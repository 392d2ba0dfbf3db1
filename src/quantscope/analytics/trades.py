"""Trade analytics on a trades frame: summary, by(), win rate, ROI, equity curve and drawdown.

Realised and unrealised stay apart. The metrics are over **closed** trades (``status ==
"Closed"``), at their close time; open positions, whose PnL is only marked, are reported next to
them (``open_trades``, ``unrealised_pnl_usd``). ``include_open=True`` puts the open positions into
the metrics too, at their marked PnL and at the time of the mark (``opened_at + duration_s``),
which is how the service's own summary counts them. Rows without a PnL, or without the times
that place them, are left out. Every formula is in docs/metrics.md.

Executed and hypothetical stay apart too (``_execution``): every function takes ``execution=``
and by default counts the executed trades only (a frame of hypothetical trades alone is
summarised as such); results say which in ``attrs["execution"]``. ``by(freq=...)`` measures each
period's drawdown on the account's own equity (the group without its period), so a period
starts with the equity and the peak the account had then.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import numpy.typing as npt
import pandas as pd

from quantscope.analytics._execution import Basis, Execution, label_result, resolve
from quantscope.analytics._kernel import DAY_MS, grouped_metrics, running_equity, sort_order
from quantscope.analytics._periods import period_start
from quantscope.analytics._stats import MIN_RATIO_DAYS, PERIODS_PER_YEAR

CAPITAL_PER_QUANT_USD = 10_000.0  # the service's starting capital per quant (accountValue)

# The columns every trade function reads (quant_name, when present, sets the default capital).
TRADE_COLUMNS = (
    "trade_id",
    "status",
    "opened_at",
    "closed_at",
    "duration_s",
    "pnl_usd",
    "buy_cost_usd",
)

# The rows of summary() and the columns of by(), in order: name -> what it is.
SUMMARY_METRICS: dict[str, str] = {
    "trades": "trades in the metrics (closed ones, or all with include_open)",
    "wins": "trades with pnl_usd > 0",
    "losses": "trades with pnl_usd < 0",
    "breakeven": "trades with pnl_usd == 0",
    "win_rate": "wins / trades (fraction)",
    "total_pnl_usd": "sum of pnl_usd",
    "gross_profit_usd": "sum of the winning pnl_usd",
    "gross_loss_usd": "sum of the losing pnl_usd (<= 0)",
    "avg_pnl_usd": "total_pnl_usd / trades",
    "avg_win_usd": "gross_profit_usd / wins",
    "avg_loss_usd": "gross_loss_usd / losses (<= 0)",
    "payoff_ratio": "avg_win_usd / |avg_loss_usd|",
    "profit_factor": "gross_profit_usd / |gross_loss_usd|",
    "expectancy_usd": "win_rate * avg_win_usd + loss_rate * avg_loss_usd",
    "sqn": "sqrt(trades) * mean(pnl_usd) / std(pnl_usd) (Van Tharp, on USD PnL)",
    "roi": "total_pnl_usd / total buy_cost_usd (fraction)",
    "best_trade_usd": "largest pnl_usd",
    "worst_trade_usd": "smallest pnl_usd",
    "max_win_streak": "longest run of consecutive wins in close order",
    "max_loss_streak": "longest run of consecutive losses in close order",
    "avg_holding_time": "mean of closed_at - opened_at (Timedelta)",
    "max_drawdown_usd": "deepest fall of the account's cumulative PnL below its peak (<= 0)",
    "max_drawdown": "deepest fall as a fraction of peak equity (<= 0)",
    "max_drawdown_duration": "peak to recovery (or to the last close) of the deepest fall",
    "days": "UTC days from the first to the last close (length of the daily series)",
    "losing_days": "days of the daily series whose PnL is below 0",
    "sharpe": "mean / std of daily PnL, annualised by sqrt(365); NaN for a short period",
    "sortino": "mean / downside deviation of daily PnL, annualised by sqrt(365)",
    "psr": "probabilistic Sharpe ratio: P(true Sharpe > 0) given days, skew and kurtosis",
    "few_days": "days < MIN_RATIO_DAYS: sharpe and sortino rest on too few days",
    "no_losing_day": "no day lost: sortino has no downside (+inf or NaN)",
    "short_sample": "days < SHORT_SAMPLE_DAYS or losing_days < MIN_LOSING_DAYS: ratios uncertain",
    "capital_usd": "starting capital the drawdown fraction is measured against",
    "open_trades": "open positions (never in the metrics unless include_open)",
    "unrealised_pnl_usd": "sum of the marked pnl_usd of the open positions",
    "hypothetical_trades": "trades in the metrics never executed (0 unless execution= has them)",
}

_INT_METRICS = frozenset(
    {
        "trades",
        "wins",
        "losses",
        "breakeven",
        "max_win_streak",
        "max_loss_streak",
        "days",
        "losing_days",
        "open_trades",
        "hypothetical_trades",
    }
)
_BOOL_METRICS = frozenset({"few_days", "no_losing_day", "short_sample"})
# Metrics computed per frame rather than by the kernel.
_FRAME_LEVEL = ("capital_usd", "open_trades", "unrealised_pnl_usd", "hypothetical_trades")
# Timedelta metrics and the kernel's int64-millisecond outputs they come from.
_FROM_MS = {"avg_holding_time": "avg_holding_ms", "max_drawdown_duration": "max_drawdown_ms"}
_KERNEL_METRICS = tuple(_FROM_MS.get(n, n) for n in SUMMARY_METRICS if n not in _FRAME_LEVEL)
# A group with no trade in the metrics: sums are 0, the flat equity has no drawdown, ratios NaN.
_EMPTY: dict[str, float] = {
    "total_pnl_usd": 0.0,
    "gross_profit_usd": 0.0,
    "gross_loss_usd": 0.0,
    "max_drawdown_usd": 0.0,
    "max_drawdown": 0.0,
    "max_drawdown_ms": 0.0,
    "few_days": True,
    "no_losing_day": False,
    "short_sample": True,
}

Keys = str | Sequence[str] | None


class _Book(NamedTuple):
    """A trades frame as arrays: which rows count, and their times in epoch ms (UTC)."""

    basis: Basis  # the execution basis: closed and open hold only the rows it keeps
    closed: np.ndarray  # bool: closed trades with a PnL and both times
    open: np.ndarray  # bool: open positions with a PnL and a mark time
    time_ms: np.ndarray  # close time (closed) or mark time (open)
    open_ms: np.ndarray
    pnl: np.ndarray
    cost: np.ndarray
    trade_id: np.ndarray


def _epoch_ms(series: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """(int64 epoch ms, present mask) of a datetime column (naive values are taken as UTC)."""
    values = pd.to_datetime(series, utc=True).to_numpy(dtype="datetime64[ms]")
    return values.view(np.int64), ~np.isnat(values)


def _book(trades: pd.DataFrame, execution: Execution | None) -> _Book:
    """The frame's columns as arrays, and which rows of the basis can be placed (module doc)."""
    pnl = trades["pnl_usd"].to_numpy(dtype=np.float64, na_value=np.nan)
    status = trades["status"]
    closed = (status == "Closed").to_numpy(dtype=bool, na_value=False)
    is_open = (status == "Open").to_numpy(dtype=bool, na_value=False)
    close_ms, has_close = _epoch_ms(trades["closed_at"])
    open_ms, has_open = _epoch_ms(trades["opened_at"])
    held_s = trades["duration_s"].to_numpy(dtype=np.float64, na_value=np.nan)
    marked = np.isfinite(held_s)
    mark_ms = open_ms + np.round(np.where(marked, held_s, 0.0) * 1000.0).astype(np.int64)
    has_pnl = np.isfinite(pnl)
    basis = resolve(trades, execution)
    closed = closed & has_pnl & has_close & has_open & basis.keep
    is_open = is_open & has_pnl & has_open & marked & basis.keep
    return _Book(
        basis=basis,
        closed=closed,
        open=is_open,
        time_ms=np.where(closed, close_ms, mark_ms),
        open_ms=open_ms,
        pnl=pnl,
        cost=trades["buy_cost_usd"].to_numpy(dtype=np.float64, na_value=np.nan),
        trade_id=trades["trade_id"].to_numpy(dtype=np.int64, na_value=-1),
    )


def _in_metrics(book: _Book, include_open: bool) -> np.ndarray:
    return book.closed | book.open if include_open else book.closed


def _quant_counts(
    trades: pd.DataFrame, rows: np.ndarray, codes: np.ndarray, groups: int
) -> np.ndarray:
    """Distinct quants per group (at least 1), from ``quant_name`` when the frame has it."""
    if "quant_name" not in trades.columns or rows.size == 0:
        return np.ones(groups, dtype=np.int64)
    quant, names = pd.factorize(trades["quant_name"].iloc[rows])
    known, width = quant >= 0, len(names)
    pairs = codes[known] * width + quant[known]
    if groups * width <= 4 * rows.size + 1_000_000:  # a dense (group, quant) table is cheap
        seen = np.bincount(pairs, minlength=groups * width).reshape(groups, width)
        counts: npt.NDArray[np.intp] = np.count_nonzero(seen, axis=1)
    else:
        counts = np.bincount(np.unique(pairs) // width, minlength=groups)
    return np.maximum(counts, 1)


def default_capital(trades: pd.DataFrame) -> float:
    """``CAPITAL_PER_QUANT_USD`` times the number of quants in the frame (at least one)."""
    rows = np.arange(len(trades))
    return CAPITAL_PER_QUANT_USD * float(_quant_counts(trades, rows, np.zeros_like(rows), 1)[0])


def _check_capital(capital: float | None) -> None:
    if capital is not None and not capital > 0:
        raise ValueError(f"capital must be > 0 USD, got {capital!r}")


def _capital(trades: pd.DataFrame, capital: float | None) -> float:
    """The given capital (checked), else ``default_capital(trades)``."""
    _check_capital(capital)
    return default_capital(trades) if capital is None else float(capital)


def _kernel_metrics(
    book: _Book,
    rows: np.ndarray,
    codes: np.ndarray,
    account: np.ndarray,
    groups: int,
    account_caps: np.ndarray,
    *,
    include_open: bool,
    periods_per_year: int,
    min_days: int,
) -> dict[str, np.ndarray]:
    """``grouped_metrics`` of the rows in the metrics, gathered in (code, time, trade id) order.

    Memory (summary() of 1e7 trades): one group carries no per-row codes (a broadcast 0), and
    each intermediate is dropped as soon as the next is built, so the peak stays within 2x
    the frame (benchmarks/bench_summary_memory.py).
    """
    included = _in_metrics(book, include_open)[rows]
    sel = rows[included]
    if not sel.size:
        return {}
    if groups == 1:  # every row is group 0 of account 0
        sel_codes = sel_accounts = np.broadcast_to(np.int64(0), sel.shape)
    else:
        sel_codes, sel_accounts = codes[included], account[included]
    del included
    order = sort_order(sel_codes, book.time_ms[sel], book.trade_id[sel])
    sel = sel[order]
    if groups > 1:
        sel_codes, sel_accounts = sel_codes[order], sel_accounts[order]
    del order
    time_ms, open_ms, pnl, cost = (
        book.time_ms[sel],
        book.open_ms[sel],
        book.pnl[sel],
        book.cost[sel],
    )
    del sel
    return grouped_metrics(
        sel_codes,
        time_ms,
        open_ms,
        pnl,
        cost,
        account_caps,
        periods_per_year,
        accounts=sel_accounts,
        min_days=min_days,
    )


def _table(
    trades: pd.DataFrame,
    book: _Book,
    rows: np.ndarray,
    codes: np.ndarray,
    index: pd.Index,
    *,
    capital: float | None,
    include_open: bool,
    periods_per_year: int,
    accounts: np.ndarray | None = None,
    min_days: int = 2,
) -> pd.DataFrame:
    """SUMMARY_METRICS per group: ``rows`` (positions in the frame) carry group ``codes``.

    ``accounts`` (per row, or None: each group its own account) groups the groups whose equity
    is one: a quant's periods. The default capital is 10,000 USD per quant of the account.
    """
    groups = len(index)
    _check_capital(capital)
    account = codes if accounts is None else accounts
    n_accounts = int(account.max()) + 1 if account.size else groups
    account_caps = (
        np.full(n_accounts, float(capital))
        if capital is not None
        else CAPITAL_PER_QUANT_USD * _quant_counts(trades, rows, account, n_accounts)
    )
    group_account = np.zeros(groups, dtype=np.int64)
    group_account[codes] = account
    metrics = _kernel_metrics(
        book,
        rows,
        codes,
        account,
        groups,
        account_caps,
        include_open=include_open,
        periods_per_year=periods_per_year,
        min_days=min_days,
    )
    code = metrics.pop("code", np.zeros(0, dtype=np.int64))

    columns: dict[str, np.ndarray] = {}
    for name in _KERNEL_METRICS:
        dtype = np.int64 if name in _INT_METRICS else bool if name in _BOOL_METRICS else np.float64
        full = np.full(groups, _EMPTY.get(name, 0 if name in _INT_METRICS else np.nan), dtype)
        if name in metrics:
            full[code] = metrics[name]
        columns[name] = full
    for name, ms_name in _FROM_MS.items():
        columns[name] = pd.to_timedelta(np.round(columns.pop(ms_name)), unit="ms").as_unit("ms")
    columns["capital_usd"] = account_caps[group_account]
    opened = book.open[rows]
    columns["open_trades"] = np.bincount(codes[opened], minlength=groups).astype(np.int64)
    columns["unrealised_pnl_usd"] = np.bincount(
        codes[opened], weights=book.pnl[rows][opened], minlength=groups
    )
    shadow = _in_metrics(book, include_open)[rows] & ~book.basis.executed[rows]
    columns["hypothetical_trades"] = np.bincount(codes[shadow], minlength=groups).astype(np.int64)
    table = pd.DataFrame({name: columns[name] for name in SUMMARY_METRICS}, index=index)
    label_result(table, book.basis)
    return table


def summary(
    trades: pd.DataFrame,
    *,
    capital: float | None = None,
    include_open: bool = False,
    execution: Execution | None = None,
    periods_per_year: int = PERIODS_PER_YEAR,
) -> pd.Series:
    """Every trade-level metric of a trades frame, as a Series labelled by ``SUMMARY_METRICS``.

    Args:
        trades: a trades frame (``load_trades``).
        capital: starting capital in USD for the drawdown fraction; default 10,000 USD per
            quant in the frame.
        include_open: also count open positions at their marked PnL (see the module doc).
        execution: ``executed``, ``hypothetical`` or ``all`` trades; None: the executed ones,
            or the hypothetical ones of a frame that has no executed trade.
        periods_per_year: annualisation of the daily Sharpe and Sortino.

    Returns:
        The metrics, named after the basis (``executed``, ``hypothetical`` or ``all``), which
        ``attrs["execution"]`` describes with what it left out.
    """
    book = _book(trades, execution)
    rows = np.flatnonzero(book.closed | book.open)
    table = _table(
        trades,
        book,
        rows,
        np.broadcast_to(np.int64(0), rows.shape),  # one group: no per-row codes
        pd.Index(["all"]),
        capital=capital,
        include_open=include_open,
        periods_per_year=periods_per_year,
    )
    out = table.iloc[0].rename(book.basis.name)
    out.index.name = "metric"
    label_result(out, book.basis)
    return out


def by(
    trades: pd.DataFrame,
    keys: Keys = None,
    *,
    freq: str | None = None,
    capital: float | None = None,
    include_open: bool = False,
    execution: Execution | None = None,
    periods_per_year: int = PERIODS_PER_YEAR,
) -> pd.DataFrame:
    """``summary()`` per group, one row each: by column(s), by period of the close, or both.

    Args:
        trades: a trades frame.
        keys: a column name or list of names (chain, quant_name, token_symbol, result,
            decision, ...). Only combinations that occur get a row (``observed=True``); a
            missing key value is a group of its own.
        freq: a calendar period (``h``, ``D``, ``W``, ``M``, ``Q``, ``Y``; ``ME``/``MS`` mean
            ``M``, ...: ``FREQS``): adds a ``period`` level, the UTC start of the period of
            each trade's close (weeks start on Monday). Open positions fall in the period of
            their mark. Only periods with a trade or position get a row. Each period's
            drawdown is the account's (the keys' group over all its periods): the deepest point
            of ``drawdown()`` of that group within the period. Sharpe and Sortino are NaN for
            periods of fewer than ``MIN_RATIO_DAYS`` days (``few_days``).
        capital, include_open, execution, periods_per_year: as in ``summary()``; the default
            capital is 10,000 USD per quant in each group (in each account, with ``freq``).
    """
    names = [keys] if isinstance(keys, str) else list(keys or [])
    if not names and freq is None:
        raise TypeError("by() needs keys or freq; summary() gives the whole frame")
    book = _book(trades, execution)
    rows = np.flatnonzero(book.closed | book.open)
    parts = {name: trades[name].iloc[rows].reset_index(drop=True) for name in names}
    accounts = None
    if freq is not None:
        parts["period"] = period_start(book.time_ms[rows], freq)
        accounts = (
            pd.DataFrame(parts)
            .groupby(names, observed=True, dropna=False, sort=True)
            .ngroup()
            .to_numpy(dtype=np.int64)
            if names
            else np.zeros(rows.size, dtype=np.int64)
        )
    grouped = pd.DataFrame(parts).groupby(list(parts), observed=True, dropna=False, sort=True)
    return _table(
        trades,
        book,
        rows,
        grouped.ngroup().to_numpy(dtype=np.int64),
        grouped.size().index,
        capital=capital,
        include_open=include_open,
        periods_per_year=periods_per_year,
        accounts=accounts,
        min_days=2 if freq is None else MIN_RATIO_DAYS,
    )


def executed(trades: pd.DataFrame) -> pd.Series:
    """Whether each trade was executed (a boolean Series on the frame's index, ``executed``).

    False for the hypothetical trades: ``REJECT`` and ``RECOMMEND`` decisions, and a ``DELAY``
    still waiting at the service's clock (docs/metrics.md, Executed and hypothetical trades).
    """
    return pd.Series(
        resolve(trades, "all").executed, index=trades.index, name="executed", dtype="boolean"
    )


def select_execution(trades: pd.DataFrame, execution: Execution | None = None) -> pd.DataFrame:
    """The frame's rows of one basis (as ``summary(execution=...)`` chooses them), labelled.

    Returns:
        Those rows, every column kept, with the basis in ``attrs["execution"]`` (and the
        frame's other attrs).
    """
    basis = resolve(trades, execution)
    rows = trades.iloc[np.flatnonzero(basis.keep)]
    rows.attrs = {**trades.attrs, "execution": basis.note()}
    return rows


def win_rate(
    trades: pd.DataFrame, *, include_open: bool = False, execution: Execution | None = None
) -> float:
    """Winning trades (pnl > 0) over all trades in the metrics; NaN when there are none."""
    book = _book(trades, execution)
    pnl = book.pnl[_in_metrics(book, include_open)]
    return float(np.count_nonzero(pnl > 0) / pnl.size) if pnl.size else float("nan")


def roi(
    trades: pd.DataFrame, *, include_open: bool = False, execution: Execution | None = None
) -> float:
    """Total PnL over total buy cost of the trades in the metrics (a fraction)."""
    book = _book(trades, execution)
    mask = _in_metrics(book, include_open)
    cost = float(np.sum(book.cost[mask]))
    return float(np.sum(book.pnl[mask])) / cost if cost else float("nan")


def daily_pnl(
    trades: pd.DataFrame, *, include_open: bool = False, execution: Execution | None = None
) -> pd.Series:
    """PnL per UTC day of close, every day from the first to the last (zero days included).

    The series the Sharpe and Sortino of ``summary()`` are computed on.
    """
    book = _book(trades, execution)
    mask = _in_metrics(book, include_open)
    day = book.time_ms[mask] // DAY_MS
    if day.size == 0:
        index = pd.DatetimeIndex([], dtype="datetime64[ms, UTC]", name="date")
        out = pd.Series([], index=index, dtype=np.float64, name="pnl_usd")
    else:
        first = int(day.min())
        values = np.bincount(day - first, weights=book.pnl[mask])
        stamps = (first + np.arange(values.size)) * DAY_MS
        index = pd.DatetimeIndex(
            pd.to_datetime(stamps, unit="ms", utc=True).as_unit("ms"), name="date"
        )
        out = pd.Series(values, index=index, name="pnl_usd")
    label_result(out, book.basis)
    return out


def daily_returns(
    trades: pd.DataFrame,
    *,
    capital: float | None = None,
    include_open: bool = False,
    execution: Execution | None = None,
) -> pd.Series:
    """Daily PnL over the equity at the start of the day: ``pnl_d / (capital + cum_pnl_{d-1})``.

    Compounding these returns rebuilds the equity exactly (``capital * prod(1 + r) == capital +
    cum_pnl``), so return-based tools (quantstats) see the same drawdowns as ``summary()``.
    """
    pnl = daily_pnl(trades, include_open=include_open, execution=execution)
    cap = _capital(trades, capital)
    start_equity = cap + np.concatenate(([0.0], np.cumsum(pnl.to_numpy())[:-1]))
    out = pd.Series(pnl.to_numpy() / start_equity, index=pnl.index, name="return")
    out.attrs["execution"] = pnl.attrs["execution"]
    return out


def equity_curve(
    trades: pd.DataFrame, *, capital: float | None = None, execution: Execution | None = None
) -> pd.DataFrame:
    """Equity after each closed trade, in close order (ties by trade id).

    Returns:
        A frame indexed by ``closed_at``: ``trade_id``, ``pnl_usd``, ``cum_pnl_usd`` and
        ``equity_usd`` (capital + cumulative PnL), over the trades of ``execution`` (as in
        ``summary()``: by default the executed ones, realised). Open positions are not in it:
        their PnL is unrealised (``summary()["unrealised_pnl_usd"]``).
    """
    book = _book(trades, execution)
    sel = np.flatnonzero(book.closed)
    sel = sel[sort_order(np.zeros(sel.size, dtype=np.int64), book.time_ms[sel], book.trade_id[sel])]
    cap = _capital(trades, capital)
    pnl = book.pnl[sel]
    cum, _ = running_equity(pnl, np.zeros(min(pnl.size, 1), dtype=np.int64))
    index = pd.DatetimeIndex(
        pd.to_datetime(book.time_ms[sel], unit="ms", utc=True).as_unit("ms"), name="closed_at"
    )
    curve = pd.DataFrame(
        {
            "trade_id": pd.array(book.trade_id[sel], dtype="Int64"),
            "pnl_usd": pnl,
            "cum_pnl_usd": cum,
            "equity_usd": cap + cum,
        },
        index=index,
    )
    label_result(curve, book.basis)
    return curve


def drawdown(
    trades: pd.DataFrame, *, capital: float | None = None, execution: Execution | None = None
) -> pd.DataFrame:
    """How far equity is below its running peak after each closed trade.

    Returns:
        A frame indexed by ``closed_at``: ``trade_id``, ``peak_equity_usd`` (the running peak,
        never below the capital), ``drawdown_usd`` (<= 0) and ``drawdown`` (fraction of the
        peak equity, <= 0), over the trades of ``execution`` (as in ``summary()``).
    """
    curve = equity_curve(trades, capital=capital, execution=execution)
    cum = curve["cum_pnl_usd"].to_numpy()
    cap = _capital(trades, capital)
    peak = np.maximum(np.maximum.accumulate(cum), 0.0) if cum.size else cum  # as running_equity
    fall = cum - peak
    out = pd.DataFrame(
        {
            "trade_id": curve["trade_id"],
            "peak_equity_usd": cap + peak,
            "drawdown_usd": fall,
            "drawdown": fall / (cap + peak),
        },
        index=curve.index,
    )
    out.attrs["execution"] = curve.attrs["execution"]
    return out
