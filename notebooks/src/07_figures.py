# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 7. The figures researchers expect
#
# Rolling metrics, the worst drawdowns, a PnL calendar, a metric per period and group, candles
# under the trades, and for threshold research the what-if curve, the two-threshold heatmap and
# the walk-forward folds. Every figure is a function of `quantscope.plots` that takes the
# frames the loaders and `quantscope.analytics` / `quantscope.backtest` return, draws their
# numbers as they are (no math inside), takes `ax=` (or `axes=`) and returns it. The ones that
# apply to a trades frame are also on `df.quant.plot`.
#
# `quantscope` is imported as `qsc` here, so that it sits next to `import quantstats as qs`
# without a clash.

# %%
# %matplotlib inline
import pandas as pd

import quantscope as qsc
from quantscope import backtest as bt
from quantscope import plots

pd.set_option("display.width", 120)
pd.set_option("display.max_columns", 12)

client = qsc.connect()

# %% [markdown]
# Atlas's executed trades (quant 1), the trades every figure below draws unless it says
# otherwise:

# %%
trades = qsc.load_trades(1)
closed = trades[trades["status"] == "Closed"]
{"trades": len(trades), "closed": len(closed)}

# %% [markdown]
# ## Rolling win rate, PnL and Sharpe
#
# `trades.quant.rolling(window)` slides a window along the closed trades: an int is the last
# *n* trades, a string of days (`"30D"`) the last *n* UTC days. Each row is the window ending
# at that trade (or day); until the window is full the metrics are NaN, so the lines start
# where they mean something. Over trades, Sharpe is the per-trade mean over standard deviation
# of the window's PnL (not annualised: trades are not periods); over days it is the daily
# Sharpe of `docs/metrics.md`, annualised, and only for windows of at least 30 days.

# %%
rolling = trades.quant.rolling(50)
rolling.dropna().tail(3).round(4)

# %%
rolling.attrs["rolling"]

# %% tags=["figure-rolling"]
_ = trades.quant.plot.rolling(50)

# %% [markdown]
# The same over 30-day windows, a line per day:

# %%
_ = trades.quant.plot.rolling("30D")

# %% [markdown]
# ## The worst drawdowns
#
# `trades.quant.worst_drawdowns(n)` lists the deepest falls of the equity curve below its
# running peak, one row per episode: from the last close at the peak (`start`) to the bottom
# (`trough`) and to the first close back at the peak (`recovery`, empty while it has not
# recovered), how deep (`depth`, a fraction of the peak equity, and `depth_usd`) and how long.
# The deepest is `summary()`'s `max_drawdown`:

# %%
worst = trades.quant.worst_drawdowns(5)
worst.round({"depth": 4, "depth_usd": 2, "peak_equity_usd": 2})

# %%
{
    "episodes": worst.attrs["drawdowns"]["episodes"],
    "deepest equals max_drawdown": bool(
        worst["depth"].iloc[0] == trades.quant.summary()["max_drawdown"]
    ),
}

# %% [markdown]
# The same episodes shaded on the equity curve, the deepest darkest:

# %% tags=["figure-drawdowns"]
_ = trades.quant.plot.drawdowns(5)

# %% [markdown]
# ## A PnL calendar
#
# `trades.quant.pnl_calendar(freq)` is `by(freq=...)` laid out years × months (`"M"`) or ×
# ISO weeks (`"W"`); nothing is recomputed. The world's history is ten weeks long, so weeks
# say more than months here. Each cell of the figure carries its trades (`n=`):

# %%
trades.quant.pnl_calendar("W").round(0)

# %% tags=["figure-pnl-calendar"]
_ = trades.quant.plot.pnl_calendar("W")

# %%
_ = trades.quant.plot.pnl_calendar("M", metric="win_rate")

# %% [markdown]
# ## A metric per period and group
#
# `plot.metric_by(by, metric, freq=...)` draws one group of bars per period and one bar per
# key, instead of one flat bar per (key, period). Every quant's weekly PnL:

# %%
everyone = qsc.load_trades()
_ = everyone.quant.plot.metric_by("quant_name", "total_pnl_usd", freq="W")

# %% [markdown]
# ## Executed and hypothetical trades stay apart
#
# Cinder's model validation declines many buys; the service follows each declined trade with
# the quant's exit rule, a *hypothetical* outcome. Loaded with `trading_status="all"`, the
# figures still draw the executed trades unless asked, and say which trades they drew:

# %%
cinder = qsc.load_trades(3, trading_status="all")
executed = cinder.quant.worst_drawdowns(3)
mixed = cinder.quant.worst_drawdowns(3, execution="all")
pd.DataFrame(
    {
        "executed": executed["depth"].round(4).to_numpy(),
        "hypothetical included": mixed["depth"].round(4).to_numpy(),
    },
    index=executed.index,
)

# %%
_ = cinder.quant.plot.drawdowns(3, execution="all")

# %% [markdown]
# ## Candles under the trades
#
# Candles are drawn in greys, so the trade lines, green when a trade made money and orange
# when it lost, stand out on them. The token Atlas traded most in its last week:

# %%
START = "2026-09-24"
recent = qsc.load_trades(1, start=START)
counts = recent.groupby("token_id").size()
token_id = int(counts[counts == counts.max()].index.min())
candles = qsc.load_ohlcv(token_id, "1h").loc[START:]
_ = candles.quant.plot.candles(trades=recent)

# %% [markdown]
# ## The what-if curve of a threshold
#
# `bt.what_if(features, criterion, thresholds)` (notebook 5) counts, for each candidate
# threshold, the trades the playbook would have kept and how they did; `plots.what_if_curve`
# draws it. Three panels: the kept trades' win rate with its 95 % Wilson interval, the
# change in total PnL against the current threshold with its bootstrap interval (tokens
# resampled), and the trades kept. The current threshold is the dotted line; thresholds
# looser than it are shaded (they would also admit evaluations that failed, which have no
# trade); rows resting on fewer than 30 trades or 10 tokens are circled. The replayed rule
# (what applying the threshold does) is solid, the hard filter's **upper bound** dashed:

# %%
features = bt.trade_features(trades)
thresholds = [0, 1, 2, 3, 4, 5, 6, 8, 10, 12]
replayed = bt.what_if(features, "smart_money_buys", thresholds)
upper = bt.what_if(features, "smart_money_buys", thresholds, rule="filter")
replayed[["threshold", "trades", "win_rate", "win_rate_lo", "win_rate_hi", "small_sample"]].round(4)

# %% tags=["figure-what-if-curve"]
_ = plots.what_if_curve(replayed, upper_bound=upper)

# %% [markdown]
# ## Two thresholds at once
#
# `bt.what_if_grid` sweeps every pair of thresholds of two criteria; `plots.threshold_heatmap`
# draws one metric of it (`bt.pivot_grid`), each cell annotated with its value and the trades
# it keeps, cells resting on a small sample hatched and the current pair outlined. Replayed
# (what applying both would do):

# %% tags=["figure-threshold-heatmap"]
pairs = ([1, 2, 3, 4, 5, 6, 8], [0.6, 0.8, 0.9, 1.0, 1.2, 1.4, 1.6, 2.0])
grid = bt.what_if_grid(features, ("smart_money_buys", "buy_sell_ratio"), pairs)
_ = plots.threshold_heatmap(grid, "win_rate")

# %% [markdown]
# And as hard filters, the upper bound, where both criteria's information shows:

# %%
upper_grid = bt.what_if_grid(
    features, ("smart_money_buys", "buy_sell_ratio"), pairs, rule="filter"
)
_ = plots.threshold_heatmap(upper_grid, "win_rate")

# %% [markdown]
# ## Walk-forward folds
#
# `bt.walk_forward` chooses a threshold on each fold's past trades and reports what it did on
# the trades that came after; `plots.walk_forward_folds` puts each fold's in-sample gain next
# to its out-of-sample gain, with the means as dashed lines and the test trades kept above
# each out-of-sample bar. A criterion that carries signal keeps its gain ahead:

# %% tags=["figure-walk-forward"]
folds = bt.walk_forward(features, "smart_money_buys", rule="filter")
_ = plots.walk_forward_folds(folds)

# %%
folds[["market_cap_class", "fold", "threshold", "in_sample_gain", "out_of_sample_gain"]].round(4)
