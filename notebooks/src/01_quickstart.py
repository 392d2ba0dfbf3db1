# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 1. Quickstart: from nothing to a quant's equity curve
#
# quantscope turns the Quant Trading Data Service, the HTTP API of AI trading agents
# ("quants"), into typed pandas frames. This notebook shows the three lines that get you a
# frame, what is in it, the one-call performance summary, the equity curve, and what the
# on-disk cache does for your daily request quota.
#
# Everything here runs on the **embedded sandbox**: a faithful local copy of the service with a
# deterministic simulated market (seed 7, world clock frozen at 2026-10-01 00:00 UTC), so every
# number below is the same on every machine.

# %%
# %matplotlib inline
import pandas as pd

import quantscope as qsc
from quantscope import tour

pd.set_option("display.width", 120)
pd.set_option("display.max_columns", 12)
pd.set_option("display.max_colwidth", 40)

# %% [markdown]
# ## Connect
#
# `qsc.connect()` with no arguments and no configuration starts the embedded sandbox and says
# so in one line. It returns the client and makes it the default that every loader uses.
# The notebooks of this tour connect with `tour.connect()`: the same, and on the embedded
# sandbox (only there) a fresh quota day, said in a second line, so that CLI runs, reports
# and notebooks earlier today never leave a notebook short of quota.

# %%
client = tour.connect()
client.settings.service

# %% [markdown]
# To work against the real service instead, set two environment variables before starting
# Jupyter (or pass `qsc.connect(url, api_key)`); the notebooks then run unchanged:
#
# ```bash
# export QUANTSCOPE_URL=https://...        # the service's base address
# export QUANTSCOPE_API_KEY=...            # from your profile's API section
# ```
#
# The key is only ever sent as the `X-API-Key` header: it is never shown in a repr, written
# to the cache or put in an error message.

# %% [markdown]
# ## Load trades
#
# `qsc.load_trades()` fetches every page of `/api/trades` (1,000 trades per request) and
# returns one row per trade. By default these are the **executed** trades of all quants, as
# the service defines them; notebook 2 shows the filters.

# %%
trades = qsc.load_trades()
len(trades)

# %% [markdown]
# Columns are typed once, in one place (`docs/frames.md`): datetimes are UTC, enumerations are
# categories, money is `float64` in USD with the unit in the name, and ratios are fractions
# (`roi = 0.0592` means +5.92 %). The display strings the service sends (`"+$86.68"`,
# `"+5.92%"`) have already been parsed.

# %%
columns = ["trade_id", "quant_name", "token_symbol", "chain", "opened_at", "closed_at"]
columns += ["status", "buy_cost_usd", "pnl_usd", "roi"]
trades[columns].head()

# %%
trades[columns].dtypes

# %% [markdown]
# Every frame remembers where it came from in `attrs["quantscope"]`: the endpoint, the
# parameters (never the key), how many pages and requests it took, and whether it came from
# the cache.

# %%
provenance = trades.attrs["quantscope"]
{k: provenance[k] for k in ["endpoint", "params", "pages", "requests", "from_cache", "service"]}

# %% [markdown]
# ## The summary
#
# `trades.quant.summary()` computes every trade-level metric in one vectorised pass
# (definitions in `docs/metrics.md`). Metrics are over **closed** trades; the positions still
# open are reported apart, as `open_trades` and their marked `unrealised_pnl_usd`. The win
# rate is the share of winning *trades*; drawdowns are negative; `capital_usd` is the
# starting capital the drawdown fraction is measured against (10,000 USD per quant).

# %%
summary = trades.quant.summary()
summary

# %% [markdown]
# The service sends its own summary with the first page, and quantscope keeps it in the
# provenance. The two agree (the service's rates are percentages; the list rounds each PnL to
# the cent, so sums may differ by a few cents):

# %%
realised = provenance["summary"]["realized"]
pd.DataFrame(
    {
        "service": [realised["trades"], realised["winRate"] / 100, realised["pnl"]],
        "quantscope": [summary["trades"], summary["win_rate"], summary["total_pnl_usd"]],
    },
    index=["closed trades", "win rate", "realised PnL (USD)"],
).round(4)

# %% [markdown]
# ## The equity curve
#
# Realised equity after each closed trade (starting capital plus cumulative PnL), with the
# drawdown from the running peak underneath. The three quants together start with 30,000 USD.

# %% tags=["figure-equity"]
_ = trades.quant.plot.equity()

# %% [markdown]
# The numbers behind the figure are a frame too, indexed by close time:

# %%
trades.quant.equity_curve().tail()

# %% [markdown]
# One line per quant: `by()` computes the same metrics per group.

# %%
trades.quant.by("quant_name")[["trades", "win_rate", "total_pnl_usd", "max_drawdown", "sharpe"]]

# %% [markdown]
# ## The cache is your quota
#
# The Basic plan allows 100 requests a day, so every GET goes through an on-disk HTTP cache.
# The load above cost 4 requests (4 pages); the service reports what is left of today's
# quota in its response headers, and the client keeps the latest figures in `client.quota`.
# The embedded sandbox runs on the Enterprise plan.

# %%
{"plan": client.quota.plan, "limit": client.quota.limit, "remaining": client.quota.remaining}

# %% [markdown]
# Loading the same trades again is served from disk: no request, no quota spent.

# %%
again = qsc.load_trades()
again_provenance = again.attrs["quantscope"]
{
    "same frame": again.equals(trades),
    "from_cache": again_provenance["from_cache"],
    "requests": again_provenance["requests"],
    "remaining": client.quota.remaining,
}

# %% [markdown]
# Lists expire after a few minutes (new trades arrive); things that cannot change, such as
# an evaluation's criteria or a closed trade, never expire. `client.cache.info()` counts what
# is on disk and this session's hits and misses:

# %%
info = client.cache.info()
{"entries": info.entries, "hits": info.hits, "misses": info.misses}

# %% [markdown]
# ## Where next
#
# * **2. Trades and performance**: filters, realised vs unrealised, breakdowns by chain,
#   quant and month, drawdowns, one trade's transactions, and the trades the model
#   validation rejected.
# * **3. Evaluations and market**: how the quants scored tokens, criterion by criterion, and
#   candles with evaluations and trades marked.
# * **4. Alpha signals**: the signal pipeline's stages, one signal's detail, and what
#   happened to prices afterwards.
