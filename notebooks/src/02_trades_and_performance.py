# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 2. Trades and performance
#
# Which trades to look at (the loader's filters), what is realised and what is only marked,
# performance broken down by chain, quant and period, drawdowns, one trade down to its
# on-chain transactions, and the trades the quants' model validation declined, with what
# they would have made.
#
# Metric definitions: `docs/metrics.md`. Frame columns: `docs/frames.md`.

# %%
# %matplotlib inline
import pandas as pd

import quantscope as qsc
from quantscope import tour

pd.set_option("display.width", 120)
pd.set_option("display.max_columns", 12)
pd.set_option("display.max_colwidth", 40)

client = tour.connect()  # qsc.connect(); on the embedded sandbox, a fresh quota day

# %% [markdown]
# ## Choosing the trades
#
# `qsc.load_trades()` passes its filters to the service, which does the filtering, so a
# narrow question costs few requests. The main ones:
#
# | argument | values |
# |---|---|
# | `quant_id` | one quant (1 Atlas, 2 Borealis, 3 Cinder), or all |
# | `trading_status` | `executed` (default), `delayed`, `rejected`, `recommended`, `all` (the model validation's decision, below) |
# | `trading_mode` | `live`, `paper` |
# | `chain` | `SOLANA`, `BASE`, `BSC` |
# | `start`, `end` | bounds on the **open** time, inclusive, UTC; a date alone means its midnight |
# | `position_closed` | `True` closed, `False` still open |
# | `status` | the service's `filterStatus`: `Open`, `Closed`, `Profit`, `Loss`, `Breakeven` |
# | `search` | token name, symbol or address |
#
# How many trades each filter returns:

# %%
filters = {
    "executed (default)": {},
    "quant 1 (Atlas)": {"quant_id": 1},
    "live": {"trading_mode": "live"},
    "paper": {"trading_mode": "paper"},
    "SOLANA": {"chain": "SOLANA"},
    "opened in September": {"start": "2026-09-01", "end": "2026-09-30T23:59:59"},
    "open positions": {"position_closed": False},
    "losses": {"status": "Loss"},
    "all decisions": {"trading_status": "all"},
}
pd.Series({name: len(qsc.load_trades(**kw)) for name, kw in filters.items()}, name="trades")

# %% [markdown]
# `end` is inclusive to the second, so "September" ends at `2026-09-30T23:59:59`:
# `end="2026-09-30"` would stop at the first second of the 30th.
#
# Filters combine. Cinder (quant 3) is the only paper trader; its paper trades on Solana
# opened since September 1:

# %%
cinder = qsc.load_trades(3, trading_mode="paper", chain="SOLANA", start="2026-09-01")
cinder["quant_name"].value_counts()

# %% [markdown]
# The rest of this notebook works on the executed trades of all quants.

# %%
trades = qsc.load_trades()

# %% [markdown]
# ## Realised and unrealised
#
# A closed trade's PnL is final (realised); an open position's is marked to the last price
# and changes until it closes (unrealised). `summary()` keeps them apart: its metrics are
# over closed trades, and the open book is reported as `open_trades` and
# `unrealised_pnl_usd`. `include_open=True` puts the open positions into the metrics at their
# marked PnL, which is how the service's own headline figures count.

# %%
keys = ["trades", "win_rate", "total_pnl_usd", "open_trades", "unrealised_pnl_usd"]
pd.DataFrame(
    {
        "closed only (default)": trades.quant.summary()[keys],
        "include_open=True": trades.quant.summary(include_open=True)[keys],
    }
)

# %% [markdown]
# ## Breakdowns
#
# `by(keys)` computes every summary metric per group in one pass. By chain:

# %%
perf = ["trades", "win_rate", "total_pnl_usd", "avg_pnl_usd", "profit_factor", "max_drawdown"]
trades.quant.by("chain")[perf + ["open_trades"]]

# %% [markdown]
# By quant. Each quant has its own playbook and exit rule (contract: Atlas takes profit at
# +80 %, Borealis at +150 % and holds up to a week, Cinder at +40 % within a day), which shows
# in the number of trades and the holding time:

# %%
by_quant = trades.quant.by("quant_name")
by_quant[perf + ["avg_holding_time"]]

# %%
_ = trades.quant.plot.metric_by("quant_name", "total_pnl_usd")

# %% [markdown]
# By period: `freq` adds the calendar period of each trade's close (UTC). Months:

# %%
trades.quant.by(freq="M")[perf + ["open_trades", "unrealised_pnl_usd"]]

# %% [markdown]
# The world's history runs from 2026-07-23 to its clock, 2026-10-01 00:00 UTC. Open
# positions count in the period of their mark, `opened_at + duration_s`: the world's clock,
# give or take the second the service rounds away (open times are shown to the second and
# durations rounded down), which is why most land in September and a few in October. The
# October row holds no closed trade, only open positions.
#
# Weeks run Monday to Sunday and are labelled by their Monday, like the service's weekly
# trends. Realised PnL per week, per quant:

# %%
weekly = trades.quant.by("quant_name", freq="W")["total_pnl_usd"].unstack("quant_name")
weekly.round(2)

# %% tags=["figure-weekly-pnl"]
_ = trades.quant.plot.metric_by(freq="W", metric="total_pnl_usd")

# %% [markdown]
# ## Drawdowns
#
# `drawdown()` gives, after each closed trade, the running peak of equity and the distance
# below it, in USD and as a fraction of the peak. The deepest point of the three quants
# together:

# %%
drawdown = trades.quant.drawdown()
drawdown.loc[[drawdown["drawdown_usd"].idxmin()]]

# %% [markdown]
# Per quant, the same numbers are in `by()`: the deepest fall in USD and as a fraction of
# peak equity, and how long it took to recover (from the peak to the first close back at the
# peak). Cinder, the busiest trader, has the deepest drawdown relative to its 10,000 USD:

# %%
by_quant[["max_drawdown_usd", "max_drawdown", "max_drawdown_duration", "max_loss_streak"]]

# %% [markdown]
# A period of `by(freq=...)` is a window on the account, not a fresh start: each week begins
# with the equity and the peak its quant had reached by then, so a week's `max_drawdown` is
# the deepest point of the quant's own `drawdown()` within that week (and a week that starts
# under water reports how deep). Annualised ratios need at least 30 daily values
# (`qsc.analytics.MIN_RATIO_DAYS`); a week has at most seven, so its Sharpe and Sortino are not
# reported and `few_days` says why. `no_losing_day` marks the periods without a losing day,
# where a Sortino ratio has no downside to divide by. Atlas's last four weeks:

# %%
atlas_weeks = trades.quant.by("quant_name", freq="W").xs("Atlas", level="quant_name")
week_cols = ["trades", "total_pnl_usd", "max_drawdown", "sharpe", "few_days", "no_losing_day"]
atlas_weeks[week_cols].tail(4)

# %% [markdown]
# The week of 2026-09-21 against Atlas's `drawdown()` over the same closes:

# %%
atlas = trades[trades["quant_name"] == "Atlas"]
fall = atlas.quant.drawdown()["drawdown"]
monday = pd.Timestamp("2026-09-21", tz="UTC")
in_week = fall[(fall.index >= monday) & (fall.index < monday + pd.Timedelta(days=7))]
pd.Series(
    {
        "by(freq='W') max_drawdown": atlas_weeks.loc[monday, "max_drawdown"],
        "min of drawdown() that week": in_week.min(),
    }
)

# %% [markdown]
# Daily figures are kept apart from trade figures: `daily_pnl()` is the realised PnL per UTC
# day (days without a close are 0), the series behind the Sharpe and Sortino ratios. The
# share of winning *days* is a different number from the win rate of *trades*:

# %%
daily = trades.quant.daily_pnl()
pd.Series(
    {
        "days": len(daily),
        "winning days": float((daily > 0).mean()),
        "winning trades (win_rate)": float(trades.quant.win_rate()),
        "worst day (USD)": float(daily.min()),
        "best day (USD)": float(daily.max()),
    }
).round(4)

# %% [markdown]
# How the returns of closed trades are distributed, by result:

# %% tags=["figure-roi-distribution"]
_ = trades.quant.plot.roi_distribution()

# %% [markdown]
# ## One trade, in detail
#
# `qsc.load_trade(trade_id)` returns the trade with the service's exact (`_raw`) numbers and
# its on-chain transactions. The best closed trade of the period:

# %%
closed = trades[trades["status"] == "Closed"]
best_id = int(closed.sort_values(["pnl_usd", "trade_id"], ascending=False)["trade_id"].iloc[0])
trade, transactions = qsc.load_trade(best_id)
detail = ["trade_id", "quant_name", "token_symbol", "chain", "opened_at", "closed_at"]
detail += ["buy_cost_usd", "sell_revenue_usd", "pnl_usd", "roi", "decision", "evaluation_id"]
trade[detail].T

# %%
transactions[["action", "timestamp", "input_value_usd", "output_value_usd", "price_usd"]]

# %% [markdown]
# The transactions account for the trade: the BUY spends the buy cost, the SELL receives the
# revenue, and the difference is the PnL (fees and slippage are inside the prices).

# %%
buy = transactions.loc[transactions["action"] == "BUY", "input_value_usd"].sum()
sell = transactions.loc[transactions["action"] == "SELL", "output_value_usd"].sum()
row = trade.iloc[0]
pd.Series(
    {
        "SELL - BUY (USD)": sell - buy,
        "pnl_usd (USD)": row["pnl_usd"],
        "roi": row["roi"],
        "held (hours)": row["duration_s"] / 3600,
    }
).round(4)

# %% [markdown]
# ## The model validation's decisions
#
# Before a quant buys, a model validates the decision: `APPROVE` (bought), `DELAY` (bought
# later, once the wait has passed), `REJECT` (not bought) or `RECOMMEND` (offered to a human,
# not bought). The service still follows every declined trade with the quant's own exit
# rule, so the trades that were **not** executed carry the outcome they would have had: a
# *shadow* PnL. `trading_status="all"` loads every decision.

# %%
decisions = qsc.load_trades(trading_status="all")
pd.crosstab(decisions["quant_name"], decisions["decision"], margins=True)

# %% [markdown]
# Those shadow outcomes were never traded, so every figure of the accessor counts the
# **executed** trades unless asked otherwise, whatever the frame holds: `decisions.quant`
# gives the same numbers as the executed frame, and says so (a summary is named after its
# basis; `attrs["execution"]` tells what was left out). `execution="all"` or
# `"hypothetical"` brings the others in, and every row counts them in `hypothetical_trades`.
# Counted as realised, the declined trades would more than double Cinder's deepest drawdown:

# %%
cinder_all = decisions[decisions["quant_name"] == "Cinder"]
shown = ["trades", "hypothetical_trades", "win_rate", "total_pnl_usd", "max_drawdown"]
pd.DataFrame(
    {basis: cinder_all.quant.summary(execution=basis)[shown] for basis in ("executed", "all")}
)

# %% [markdown]
# Performance by decision, with `execution="all"`: the executed ones (`APPROVE`, and the
# `DELAY`s that were entered) made real money; `REJECT` and `RECOMMEND` are what those trades
# would have made (all of their trades are hypothetical).

# %%
by_decision = decisions.quant.by("decision", execution="all")
by_decision[["trades", "hypothetical_trades", "win_rate", "total_pnl_usd", "profit_factor"]]

# %% [markdown]
# The rejected trades would have lost money overall, and their win rate is well below the
# approved ones'. Is that more than chance? With *n* closed trades, the standard error of a
# win rate *p* is about √(p(1−p)/n):

# %%
rates = by_decision.loc[["APPROVE", "REJECT"], ["trades", "win_rate"]].astype(float)
rates["std_error"] = (rates["win_rate"] * (1 - rates["win_rate"]) / rates["trades"]) ** 0.5
gap = rates.loc["APPROVE", "win_rate"] - rates.loc["REJECT", "win_rate"]
gap_se = (rates["std_error"] ** 2).sum() ** 0.5
display(rates.round(4))
print(f"gap {gap:.3f} = {gap / gap_se:.1f} standard errors")

# %% [markdown]
# About three standard errors: in this world the validation step does screen out worse
# trades (the simulator makes a rejection likelier when the next day will be bad;
# `docs/service-contract.md`). It is far from perfect, though: the rejected trades still won
# four times in ten, and the `RECOMMEND`ed ones, left to a human, won as often as the
# approved ones.
# Notebook 3 looks at the evaluations behind each buy.
