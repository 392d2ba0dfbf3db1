"""The ``df.quant`` accessor: a thin, stateless front of ``quantscope.analytics``.

pandas builds a new accessor object on every attribute access, so the accessor keeps nothing
but the frame. Each method checks the columns it needs, naming the missing ones and the loader
that makes the right frame, then calls a plain function of ``quantscope.analytics`` and returns
its new object; the caller's frame is never modified.

Which kind of frame it is comes from its columns (``quantscope._kinds.FRAME_KINDS``, shared
with the plots, as are the column checks and ``MissingColumnsError``):

* trades (``load_trades``): ``win_rate``, ``roi``, ``summary``, ``by``, ``equity_curve``,
  ``drawdown``, ``daily_pnl``, ``daily_returns``, ``rolling``, ``worst_drawdowns``,
  ``pnl_calendar`` (each over the executed trades unless ``execution=`` says otherwise),
  ``executed`` (which trades were), and ``report(path)`` (the study report,
  ``quantscope.reporting``, imported on first use like the plots);
* evaluations (``load_evaluations``) and criterion results (``load_eval_details``):
  ``pass_rate``, ``pass_rates``; criterion results also ``values_by_outcome(trades)``;
* signals (``load_signals``): ``stage_counts``.

``df.quant.plot`` is the door to figures: it imports ``quantscope.plots`` on first use and
returns ``quantscope.plots.QuantPlots(df)``, whose methods draw (``df.quant.plot.equity()``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from quantscope._errors import MissingColumnsError
from quantscope._http.client import Client
from quantscope._kinds import FRAME_KINDS, frame_kind, require_columns
from quantscope.analytics import calendar as _calendar
from quantscope.analytics import drawdowns as _drawdowns
from quantscope.analytics import evaluations as _evaluations
from quantscope.analytics import trades as _trades
from quantscope.analytics import windows as _windows
from quantscope.analytics._execution import Execution
from quantscope.analytics._stats import PERIODS_PER_YEAR

if TYPE_CHECKING:
    from quantscope.plots import QuantPlots

__all__ = ["QuantAccessor"]


_OUTCOME_TRADE_COLUMNS = ("evaluation_id", "status", "pnl_usd")
Keys = str | Sequence[str] | None


def _require_keys(frame: pd.DataFrame, method: str, keys: Keys) -> list[str]:
    """The key columns as a list, or MissingColumnsError naming those the frame lacks."""
    names = [keys] if isinstance(keys, str) else list(keys or [])
    missing = [k for k in names if k not in frame.columns]
    if missing:
        raise MissingColumnsError(
            f"{method}() cannot group by missing columns {', '.join(missing)}; "
            f"the frame has {', '.join(map(str, frame.columns))}",
            method=method,
            missing=missing,
        )
    return names


@pd.api.extensions.register_dataframe_accessor("quant")
class QuantAccessor:
    """``df.quant``: trade, evaluation and signal analytics (docs/metrics.md)."""

    def __init__(self, frame: pd.DataFrame) -> None:
        self._obj = frame

    @property
    def kind(self) -> str | None:
        """``trades``, ``criteria``, ``evaluations``, ``signals``, or None (from the columns)."""
        return frame_kind(self._obj)

    @property
    def plot(self) -> QuantPlots:
        """Figures of this frame: ``quantscope.plots.QuantPlots(df)``, imported on first use."""
        from quantscope.plots import QuantPlots  # matplotlib only once a figure is asked for

        return QuantPlots(self._obj)

    # --- trades ---------------------------------------------------------------------------

    def _trades(self, method: str) -> pd.DataFrame:
        require_columns(self._obj, method, ["trades"], _trades.TRADE_COLUMNS)
        return self._obj

    def executed(self) -> pd.Series:
        """Whether each trade was executed (False: a hypothetical, shadow outcome)."""
        return _trades.executed(self._trades("executed"))

    def win_rate(self, *, include_open: bool = False, execution: Execution | None = None) -> float:
        """Winning trades (pnl > 0) over closed trades (all trades with ``include_open``)."""
        return _trades.win_rate(
            self._trades("win_rate"), include_open=include_open, execution=execution
        )

    def roi(self, *, include_open: bool = False, execution: Execution | None = None) -> float:
        """Total PnL over total buy cost of closed trades (fraction)."""
        return _trades.roi(self._trades("roi"), include_open=include_open, execution=execution)

    def summary(
        self,
        *,
        capital: float | None = None,
        include_open: bool = False,
        execution: Execution | None = None,
        periods_per_year: int = PERIODS_PER_YEAR,
    ) -> pd.Series:
        """Every trade-level metric of closed trades; open positions reported apart.

        ``execution``: ``executed``, ``hypothetical`` or ``all``; default the executed trades
        (a frame of hypothetical trades alone: those), named and described in the result.
        """
        return _trades.summary(
            self._trades("summary"),
            capital=capital,
            include_open=include_open,
            execution=execution,
            periods_per_year=periods_per_year,
        )

    def by(
        self,
        keys: Keys = None,
        *,
        freq: str | None = None,
        capital: float | None = None,
        include_open: bool = False,
        execution: Execution | None = None,
        periods_per_year: int = PERIODS_PER_YEAR,
    ) -> pd.DataFrame:
        """``summary()`` per chain, quant, token, result, decision... and/or period (``freq``)."""
        frame = self._trades("by")
        names = _require_keys(frame, "by", keys)
        return _trades.by(
            frame,
            names,
            freq=freq,
            capital=capital,
            include_open=include_open,
            execution=execution,
            periods_per_year=periods_per_year,
        )

    def equity_curve(
        self, *, capital: float | None = None, execution: Execution | None = None
    ) -> pd.DataFrame:
        """Equity after each closed trade (executed ones by default), indexed by ``closed_at``."""
        return _trades.equity_curve(
            self._trades("equity_curve"), capital=capital, execution=execution
        )

    def drawdown(
        self, *, capital: float | None = None, execution: Execution | None = None
    ) -> pd.DataFrame:
        """Equity's distance below its running peak after each closed trade."""
        return _trades.drawdown(self._trades("drawdown"), capital=capital, execution=execution)

    def daily_pnl(
        self, *, include_open: bool = False, execution: Execution | None = None
    ) -> pd.Series:
        """PnL per UTC day, zero days included (the Sharpe/Sortino series)."""
        return _trades.daily_pnl(
            self._trades("daily_pnl"), include_open=include_open, execution=execution
        )

    def daily_returns(
        self,
        *,
        capital: float | None = None,
        include_open: bool = False,
        execution: Execution | None = None,
    ) -> pd.Series:
        """Daily PnL over start-of-day equity (compounds back to the equity curve)."""
        return _trades.daily_returns(
            self._trades("daily_returns"),
            capital=capital,
            include_open=include_open,
            execution=execution,
        )

    def rolling(
        self,
        window: int | str = 50,
        *,
        execution: Execution | None = None,
        periods_per_year: int = PERIODS_PER_YEAR,
    ) -> pd.DataFrame:
        """Win rate, PnL and Sharpe over the last ``window`` trades (int) or days (``"30D"``)."""
        return _windows.rolling(
            self._trades("rolling"),
            window,
            execution=execution,
            periods_per_year=periods_per_year,
        )

    def worst_drawdowns(
        self, n: int = 5, *, capital: float | None = None, execution: Execution | None = None
    ) -> pd.DataFrame:
        """The ``n`` deepest drawdown episodes: start, trough, recovery, depth, length."""
        return _drawdowns.worst_drawdowns(
            self._trades("worst_drawdowns"), n, capital=capital, execution=execution
        )

    def pnl_calendar(
        self,
        freq: str = "M",
        metric: str = "total_pnl_usd",
        *,
        capital: float | None = None,
        include_open: bool = False,
        execution: Execution | None = None,
    ) -> pd.DataFrame:
        """``by(freq=...)[metric]`` as years x months (``"M"``) or x ISO weeks (``"W"``)."""
        return _calendar.pnl_calendar(
            self._trades("pnl_calendar"),
            freq,
            metric,
            capital=capital,
            include_open=include_open,
            execution=execution,
        )

    def report(
        self,
        path: str | Path,
        *,
        criteria: Sequence[str] = (),
        client: Client | None = None,
        confirm: bool = False,
        load: bool = True,
        benchmark: pd.Series | pd.DataFrame | int | None = None,
        progress: bool | None = None,
    ) -> Path:
        """Write the study report of these trades to ``path`` (``quantscope.reporting``).

        ``benchmark`` (a daily returns Series, candles or a token id) and ``progress`` as in
        ``quantscope.reporting.report_trades``.
        """
        from quantscope.reporting import report_trades  # matplotlib only once a report is asked

        frame = self._trades("report")
        return report_trades(
            frame,
            path,
            criteria=criteria,
            client=client,
            confirm=confirm,
            load=load,
            benchmark=benchmark,
            progress=progress,
        )

    # --- evaluations and criterion results --------------------------------------------------

    def pass_rate(self) -> float:
        """Passed verdicts over all verdicts (evaluations, or enabled criterion results)."""
        require_columns(self._obj, "pass_rate", ["evaluations", "criteria"], ["passed"])
        return _evaluations.pass_rate(self._obj)

    def pass_rates(
        self, keys: Keys = None, *, freq: str | None = None, time_column: str = "created_at"
    ) -> pd.DataFrame:
        """Pass rate per criterion, category, type... and/or per period of ``time_column``."""
        needed = ["passed", *([time_column] if freq is not None else [])]
        require_columns(self._obj, "pass_rates", ["evaluations", "criteria"], needed)
        names = _require_keys(self._obj, "pass_rates", keys)
        return _evaluations.pass_rates(self._obj, names, freq=freq, time_column=time_column)

    def values_by_outcome(self, trades: pd.DataFrame) -> pd.DataFrame:
        """Each criterion's value distribution for evaluations that led to wins and losses."""
        require_columns(
            self._obj, "values_by_outcome", ["criteria"], FRAME_KINDS["criteria"].columns
        )
        require_columns(
            trades, "values_by_outcome", ["trades"], _OUTCOME_TRADE_COLUMNS, " as its trades"
        )
        return _evaluations.values_by_outcome(self._obj, trades)

    # --- signals ----------------------------------------------------------------------------

    def stage_counts(self) -> pd.DataFrame:
        """Signals per chain and stage, with totals (the shape of ``load_signal_stats``)."""
        require_columns(self._obj, "stage_counts", ["signals"], FRAME_KINDS["signals"].columns)
        return _evaluations.stage_counts(self._obj)
