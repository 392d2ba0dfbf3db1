"""``df.quant.plot``: the figures of ``quantscope.plots`` as methods of a frame.

Like the accessor, it keeps nothing but the frame: each method checks the columns it needs
(the frame's and those of any second frame it takes) with ``quantscope._kinds``, whose
``MissingColumnsError`` names them and the loader to use, then calls the plot function.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import pandas as pd
from matplotlib.axes import Axes

from quantscope import analytics
from quantscope._kinds import FRAME_KINDS, FrameKind, require_columns
from quantscope.plots import calendar as _calendar
from quantscope.plots import evaluations as _evaluations
from quantscope.plots import market as _market
from quantscope.plots import trades as _trades
from quantscope.plots import windows as _windows
from quantscope.plots import worst_drawdowns as _worst

Keys = str | Sequence[str] | None

# Frames the accessor does not recognise by kind (not in FRAME_KINDS) but the plots take.
OHLCV = FrameKind("ohlcv", "an OHLCV frame", ("open", "high", "low", "close"), "qsc.load_ohlcv()")
TRANSACTIONS = FrameKind(
    "transactions",
    "a transactions frame",
    ("trade_id", "action", "timestamp", "price_usd"),
    "qsc.load_trade(trade_id).transactions",
)
TRADES, CRITERIA, EVALUATIONS = (
    FRAME_KINDS["trades"],
    FRAME_KINDS["criteria"],
    FRAME_KINDS["evaluations"],
)

# Columns each figure reads, beyond a kind's identifying ones.
_ROI_COLUMNS = ("status", "roi")
_CANDLE_EVALUATION_COLUMNS = ("created_at", "passed", "detection_price_usd")
_CANDLE_TRADE_COLUMNS = (
    "trade_id",
    "status",
    "opened_at",
    "closed_at",
    "detection_price_usd",
    "pnl_usd",
)
_OUTCOME_COLUMNS = ("evaluation_id", "status", "pnl_usd")


def _require(
    frame: pd.DataFrame,
    method: str,
    kinds: Sequence[FrameKind],
    columns: Sequence[str],
    what: str = "",
) -> None:
    """The shared column check, naming the method as ``plot.<method>``."""
    require_columns(frame, f"plot.{method}", kinds, columns, what)


def _keys(keys: Keys) -> list[str]:
    return [keys] if isinstance(keys, str) else list(keys or [])


class QuantPlots:
    """Figures of a frame: ``df.quant.plot.equity()``, ``.candles(evaluations=...)``...

    Every method takes ``ax=`` (``axes=`` for two panels), returns the Axes and never shows.
    """

    def __init__(self, frame: pd.DataFrame) -> None:
        self._obj = frame

    # --- trades ---------------------------------------------------------------------------

    def equity(
        self,
        *,
        capital: float | None = None,
        execution: analytics.Execution | None = None,
        axes: Sequence[Axes] | None = None,
    ) -> tuple[Axes, Axes]:
        """Realised equity with its drawdown underneath (``plots.equity``)."""
        _require(self._obj, "equity", [TRADES], analytics.TRADE_COLUMNS)
        return _trades.equity(self._obj, capital=capital, execution=execution, axes=axes)

    def roi_distribution(
        self,
        *,
        by: str = "result",
        bins: int | Sequence[float] = 30,
        include_open: bool = False,
        execution: analytics.Execution | None = None,
        ax: Axes | None = None,
    ) -> Axes:
        """Histogram of trade ROI by result (``plots.roi_distribution``)."""
        _require(self._obj, "roi_distribution", [TRADES], (*_ROI_COLUMNS, by))
        return _trades.roi_distribution(
            self._obj, by=by, bins=bins, include_open=include_open, execution=execution, ax=ax
        )

    def metric_by(
        self,
        by: Keys = None,
        metric: str = "win_rate",
        *,
        freq: str | None = None,
        capital: float | None = None,
        include_open: bool = False,
        execution: analytics.Execution | None = None,
        ax: Axes | None = None,
    ) -> Axes:
        """One bar per group of ``by()[metric]`` (``plots.metric_by``)."""
        _require(self._obj, "metric_by", [TRADES], (*analytics.TRADE_COLUMNS, *_keys(by)))
        return _trades.metric_by(
            self._obj,
            by,
            metric,
            freq=freq,
            capital=capital,
            include_open=include_open,
            execution=execution,
            ax=ax,
        )

    def rolling(
        self,
        window: int | str = 50,
        *,
        execution: analytics.Execution | None = None,
        periods_per_year: int = analytics.PERIODS_PER_YEAR,
        axes: Sequence[Axes] | None = None,
    ) -> tuple[Axes, Axes, Axes]:
        """Win rate, PnL and Sharpe over the last N trades or days (``plots.rolling``)."""
        _require(self._obj, "rolling", [TRADES], analytics.TRADE_COLUMNS)
        return _windows.rolling(
            self._obj, window, execution=execution, periods_per_year=periods_per_year, axes=axes
        )

    def drawdowns(
        self,
        n: int = 5,
        *,
        capital: float | None = None,
        execution: analytics.Execution | None = None,
        ax: Axes | None = None,
    ) -> Axes:
        """The equity curve with its worst drawdowns shaded (``plots.drawdowns``)."""
        _require(self._obj, "drawdowns", [TRADES], analytics.TRADE_COLUMNS)
        return _worst.drawdowns(self._obj, n, capital=capital, execution=execution, ax=ax)

    def pnl_calendar(
        self,
        freq: str = "M",
        metric: str = "total_pnl_usd",
        *,
        capital: float | None = None,
        include_open: bool = False,
        execution: analytics.Execution | None = None,
        ax: Axes | None = None,
    ) -> Axes:
        """A metric per month or ISO week, years x periods (``plots.pnl_calendar``)."""
        _require(self._obj, "pnl_calendar", [TRADES], analytics.TRADE_COLUMNS)
        return _calendar.pnl_calendar(
            self._obj,
            freq,
            metric,
            capital=capital,
            include_open=include_open,
            execution=execution,
            ax=ax,
        )

    # --- market ---------------------------------------------------------------------------

    def candles(
        self,
        *,
        evaluations: pd.DataFrame | None = None,
        trades: pd.DataFrame | None = None,
        transactions: pd.DataFrame | None = None,
        token_id: int | None = None,
        width: float = 0.7,
        ax: Axes | None = None,
    ) -> Axes:
        """Candlesticks of an OHLCV frame, evaluations and trades marked (``plots.candles``)."""
        _require(self._obj, "candles", [OHLCV], OHLCV.columns)
        if evaluations is not None:
            _require(
                evaluations,
                "candles",
                [EVALUATIONS],
                _CANDLE_EVALUATION_COLUMNS,
                " as its evaluations",
            )
        if trades is not None:
            _require(trades, "candles", [TRADES], _CANDLE_TRADE_COLUMNS, " as its trades")
        if transactions is not None:
            _require(
                transactions,
                "candles",
                [TRANSACTIONS],
                TRANSACTIONS.columns,
                " as its transactions",
            )
        return _market.candles(
            self._obj,
            evaluations=evaluations,
            trades=trades,
            transactions=transactions,
            token_id=token_id,
            width=width,
            ax=ax,
        )

    # --- evaluations and criterion results --------------------------------------------------

    def pass_rate_over_time(
        self,
        freq: str = "D",
        *,
        by: Keys = None,
        time_column: str = "created_at",
        ax: Axes | None = None,
    ) -> Axes:
        """Pass rate per period (``plots.pass_rate_over_time``)."""
        _require(
            self._obj,
            "pass_rate_over_time",
            [EVALUATIONS, CRITERIA],
            ("passed", time_column, *_keys(by)),
        )
        return _evaluations.pass_rate_over_time(
            self._obj, freq, by=by, time_column=time_column, ax=ax
        )

    def pass_rate(
        self,
        freq: str = "D",
        *,
        by: Keys = None,
        time_column: str = "created_at",
        ax: Axes | None = None,
    ) -> Axes:
        """Deprecated old name of ``pass_rate_over_time`` (kept one release; warns)."""
        warnings.warn(
            "df.quant.plot.pass_rate is deprecated and will be removed in the next release: "
            "use df.quant.plot.pass_rate_over_time (df.quant.pass_rate() is the number)",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.pass_rate_over_time(freq, by=by, time_column=time_column, ax=ax)

    def criterion_distributions(
        self,
        trades: pd.DataFrame,
        criterion: str,
        *,
        threshold: float | None = None,
        bins: int | Sequence[float] = 30,
        outcomes: Sequence[str] = ("win", "loss"),
        ax: Axes | None = None,
    ) -> Axes:
        """A criterion's values for winning vs losing trades (``plots.criterion_distributions``)."""
        _require(self._obj, "criterion_distributions", [CRITERIA], CRITERIA.columns)
        _require(trades, "criterion_distributions", [TRADES], _OUTCOME_COLUMNS, " as its trades")
        return _evaluations.criterion_distributions(
            self._obj,
            trades,
            criterion,
            threshold=threshold,
            bins=bins,
            outcomes=outcomes,
            ax=ax,
        )
