"""One self-contained HTML study report of a quant: ``qsc.report(quant_id, path)``.

::

    import quantscope as qsc
    qsc.report(1, "atlas.html", criteria=["smart_money_buys"])   # loads what it needs
    trades.quant.report("atlas.html")                              # from a frame you have

The page holds, in order (``sections.SECTIONS``): an overview (what was loaded and what it cost
in requests), the headline metrics with their definitions and sample sizes, equity and
drawdowns, the tear-sheet figures of the daily returns (CAGR, volatility, Sharpe with its
probabilistic Sharpe, VaR/CVaR, Calmar, skew, kurtosis, best and worst day, monthly returns, an
optional benchmark), breakdowns by chain / decision / token / week, the hypothetical trades
apart, the playbook, the optimizer's recommendations with their effect (the whole pass rule
replayed) and their signal (kept versus dropped trades; the service's claim is one) side by
side, each change with its interval, the out-of-sample screen of every criterion
(``backtest.screen``: adjusted p-values, what was searched, what could not be used), a what-if
section for the criteria named (both questions, intervals, walk-forward folds with intervals),
two trades on the chart (entries and exits at their fills), and the definitions. Figures are
PNG inside the file; nothing is fetched when it is opened; the same data gives the same bytes
(docs/report.md).

Modules: ``build`` (gathering the data through the loaders, quota-aware), ``sections`` (the
registry of sections), ``_trading``, ``_returns``, ``_research`` and ``_screen`` (their
builders), ``stages`` (the progress bar while it builds),
``plugs`` (named places where new figures plug in), ``blocks`` (what sections are made of),
``cells`` (number formats), ``png`` (reproducible figures), ``html`` (the page), ``render``
(all of it to a file), ``cli`` (``quantscope report``). Importing this package does not
import matplotlib.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, TypeAlias

import pandas as pd

from quantscope._http.client import Client

# A benchmark: daily returns, a token's candles, or a token id (``build.Benchmark``).
Benchmark: TypeAlias = pd.Series | pd.DataFrame | int | None

__all__ = ["report", "report_trades"]


def report(
    quant_id: Any,
    path: str | Path,
    *,
    criteria: Sequence[str] = (),
    client: Client | None = None,
    confirm: bool = False,
    generated_at: datetime | None = None,
    benchmark: Benchmark = None,
    progress: bool | None = None,
    max_requests: int | None = None,
) -> Path:
    """Write the study report of quant ``quant_id`` to ``path`` (an ``.html`` file).

    Args:
        quant_id: the quant (an int, a numpy integer or an int-valued string).
        path: where to write the page (parent folders are created).
        criteria: criterion keys for the threshold section (what-if per market-cap class,
            walk-forward, distributions); none: that section says how to ask.
        client: the client to load with (default: the default client).
        confirm: spend more than the client's share of the quota left (``quota_share``).
            The report prices its loads first and, over the share, is refused with the cost
            (``QuotaShareExceededError``), having sent only the trades' pages.
        generated_at: a time to print as the writing time; default none (the page is dated
            by its data, so the same data gives the same bytes).
        benchmark: beside the account's daily returns: a Series of daily returns, a token's
            candles (``load_ohlcv``), or a token id (its candles are loaded, one request,
            priced with the rest); none by default.
        progress: a bar of the stages on stderr while it builds (a notebook widget in
            Jupyter); default the client's ``progress`` setting (``QUANTSCOPE_PROGRESS``).
        max_requests: a ceiling on the requests the whole report may send, instead of the
            quota share (``QuotaShareExceededError`` over it: before the trades when they
            exceed it, else having sent only the trades' pages).

    Returns:
        The path written.

    The path and the benchmark are checked before any request is sent.
    """
    from quantscope.reporting import build, render  # matplotlib only once a report is asked for
    from quantscope.reporting.stages import show_progress, stages

    render.check_path(path)
    build.check_benchmark(benchmark)
    # the trades, the criterion values, then rendering; the loads add theirs when priced
    with stages(2 + render.STAGES, enabled=show_progress(progress, client)) as counted:
        data = build.gather(
            quant_id,
            criteria=criteria,
            client=client,
            confirm=confirm,
            benchmark=benchmark,
            stages=counted,
            max_requests=max_requests,
        )
        return render.write(data, path, generated_at=generated_at, stages=counted)


def report_trades(
    trades: pd.DataFrame,
    path: str | Path,
    *,
    criteria: Sequence[str] = (),
    client: Client | None = None,
    confirm: bool = False,
    load: bool = True,
    generated_at: datetime | None = None,
    benchmark: Benchmark = None,
    progress: bool | None = None,
) -> Path:
    """``report`` from a trades frame already loaded (``df.quant.report``).

    With ``load`` (default) the report loads what the frame lacks: the buy evaluations'
    details and two tokens' candles, and for a frame of one quant its evaluations, playbook
    and recommendations (priced and refused over the quota share as ``report``). With
    ``load=False`` nothing is sent: the research sections say their data is missing (a
    benchmark is then a Series or candles, not a token id). ``benchmark`` and ``progress``
    as in ``report``.
    """
    from quantscope.reporting import build, render
    from quantscope.reporting.stages import show_progress, stages

    render.check_path(path)
    enabled = show_progress(progress, client if load else None)
    with stages(int(load) + render.STAGES, enabled=enabled) as counted:
        data = build.from_trades(
            trades,
            criteria=criteria,
            client=client,
            confirm=confirm,
            load=load,
            benchmark=benchmark,
            stages=counted,
        )
        return render.write(data, path, generated_at=generated_at, stages=counted)
