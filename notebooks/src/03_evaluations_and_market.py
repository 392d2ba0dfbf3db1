# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 3. Evaluations and market
#
# A quant decides what to buy by *evaluating* tokens: every criterion of its playbook
# (liquidity, holder concentration, social reach, smart-money buys...) is measured, compared
# with a threshold and weighted into a score. This notebook loads one quant's evaluations of
# the last week, counts them the way the service does, opens one evaluation criterion by
# criterion and reproduces its verdict, follows the token's evaluation history, and draws
# the token's candles with the evaluations and trades on them.

# %%
# %matplotlib inline
import json

import pandas as pd

import quantscope as qsc
from quantscope import tour

pd.set_option("display.width", 120)
pd.set_option("display.max_columns", 12)
pd.set_option("display.max_colwidth", 40)

client = tour.connect()  # qsc.connect(); on the embedded sandbox, a fresh quota day

# %% [markdown]
# ## Evaluation results
#
# There are three kinds of evaluation (`evaluation_type`):
#
# * `TOKEN_STATUS`: the scan a quant runs on every tracked token every 12 hours, against the
#   `SCANNING` part of its playbook;
# * `TOKEN_BUY`: the buy decision, made right after a passed scan, against the `BUYING` part;
#   a passed one goes on to the model validation of notebook 2;
# * `TOKEN_SELL`: the re-check after a position closed (would the quant still buy?).
#
# `internal_score` is the playbook's weighted score, 0 to 100. The AI step only runs when
# every required criterion passed; otherwise `ai_score` is 0.
#
# The last week of the world for Atlas (quant 1); `start` and `end` bound the creation
# time, inclusive:

# %%
START, END = "2026-09-24", "2026-09-30T23:59:59"
evaluations = qsc.load_evaluations(1, start=START, end=END)
columns = ["evaluation_id", "token_symbol", "chain", "evaluation_type", "created_at", "passed"]
columns += ["internal_score", "ai_score", "market_cap_usd"]
evaluations[columns].head()

# %%
evaluations.quant.pass_rates("evaluation_type")

# %% [markdown]
# Per day and type: scans pass about half the time, buy checks (stricter thresholds on the
# same values) less often.

# %% tags=["figure-pass-rate"]
_ = evaluations.quant.plot.pass_rate_over_time("D", by="evaluation_type")

# %% [markdown]
# ## The service's own counts
#
# The service also counts evaluations per time bucket (`load_eval_timeseries`: hourly for
# windows up to 48 hours, daily up to 120 days, weekly beyond) and in total
# (`load_eval_count`). They agree with counting the loaded frame per day:

# %%
series = qsc.load_eval_timeseries(1, start=START, end=END)
counted = evaluations.quant.pass_rates(freq="D")
pd.concat(
    {
        "service": series[["evaluations", "passed", "pass_rate"]],
        "counted": counted.rename(columns={"total": "evaluations"})[
            ["evaluations", "passed", "pass_rate"]
        ].rename_axis("timestamp"),
    },
    axis=1,
).round(4)

# %%
qsc.load_eval_count(1, start=START, end=END)

# %% [markdown]
# ## One evaluation, criterion by criterion
#
# Take Atlas's newest passed buy check and load its criterion results with
# `qsc.load_eval_details` (one row per criterion; details never change, so they are cached
# for good):

# %%
buys = evaluations[evaluations["evaluation_type"] == "TOKEN_BUY"]
passed_buys = buys[buys["passed"].fillna(False)].sort_values("evaluation_id", ascending=False)
evaluation = passed_buys.iloc[0]
evaluation[["evaluation_id", "token_id", "token_symbol", "created_at", "internal_score"]]

# %%
details = qsc.load_eval_details(int(evaluation["evaluation_id"]))
shown = ["category", "criterion", "operator", "value", "threshold", "weight", "passed", "score"]
details[shown]

# %% [markdown]
# Each criterion passes when its value meets the threshold under its operator (`V_GTE_T`:
# value ≥ threshold, `V_LTE_T`: value ≤ threshold...); `score` is its weight when it passed,
# else 0; a disabled criterion has no verdict (`<NA>`). The internal score is the passed
# weight over the enabled weight:

# %%
enabled = details[details["passed"].notna()]
score = 100 * enabled["score"].sum() / enabled["weight"].sum()
{"recomputed": round(float(score), 2), "internal_score": float(evaluation["internal_score"])}

# %% [markdown]
# The evaluation **passes** when every *required* criterion passes and the score reaches the
# playbook's pass mark (`docs/service-contract.md`). Both live in the playbook, per
# market-cap class (`DEGEN_CAP` below 1M USD, `LOW_CAP` to 10M, `MID_CAP` above) and config
# type (`BUYING` for a buy check):

# %%
market_cap = float(details["market_cap_usd"].iloc[0])
cap_class = "DEGEN_CAP" if market_cap < 1e6 else "LOW_CAP" if market_cap < 1e7 else "MID_CAP"
playbook = qsc.load_playbook(1)
rules = playbook[
    (playbook["market_cap_class"] == cap_class) & (playbook["config_type"] == "BUYING")
].set_index("criterion")
required = rules.index[rules["required"].fillna(False)]
verdicts = details.set_index("criterion")["passed"]
{
    "market cap class": cap_class,
    "required criteria": list(required),
    "all required passed": bool(verdicts[required].fillna(False).all()),
    "pass mark": float(rules["pass_mark"].iloc[0]),
    "internal score": float(evaluation["internal_score"]),
    "service's verdict": bool(evaluation["passed"]),
}

# %% [markdown]
# Why do buy checks fail? The criterion results of the week's 60 newest buy checks, split by
# the evaluation's verdict: in failed checks, which criteria failed most often (60 requests
# on a cold cache, none on a warm one):

# %%
newest = buys.sort_values("evaluation_id", ascending=False).head(60)
criteria = qsc.load_eval_details(newest["evaluation_id"].astype(int))
rates = criteria.quant.pass_rates(["criterion", "evaluation_passed"])["pass_rate"].unstack()
rates = rates.rename(columns={False: "in failed checks", True: "in passed checks"})
rates.sort_values("in failed checks").head(8).round(3)

# %% [markdown]
# Almost every failed buy check failed on `lp_locked`, a *required* criterion: the scan
# accepts a partially locked pool (option 1) but the buy check asks for a locked or burned
# one (option 2 or 3), so a token can pass its scan and still never be bought. The playbook
# entry, per class and config type:

# %%
lp = playbook[playbook["criterion"] == "lp_locked"]
lp[["market_cap_class", "config_type", "threshold", "weight", "required"]]

# %% [markdown]
# `extra_info` holds the service's nested JSON as text, so the frame writes to Parquet
# unchanged; `json.loads` reads it:

# %%
json.loads(lp["extra_info"].iloc[0])["options"]

# %% [markdown]
# ## The token's history
#
# `qsc.load_eval_history(evaluation_id)` lists every evaluation of the same token by the same
# quant, newest first: the scans every 12 hours, the buy checks after passed scans, and the
# re-checks after each exit.

# %%
history = qsc.load_eval_history(int(evaluation["evaluation_id"]))
history[["evaluation_id", "created_at", "evaluation_type", "passed", "internal_score", "price_usd"]].head(8)

# %%
history.groupby(["evaluation_type", "passed"], observed=True).size().unstack()

# %% [markdown]
# ## Candles with evaluations and trades
#
# `qsc.load_ohlcv(token_id, timeframe)` returns candles on a UTC index (`1h` to `1w`; the world
# has 70 days of hourly history). Here the token Atlas traded most often this week, drawn with
# `df.quant.plot.candles`: evaluations at their detection price (passed: circles, failed:
# crosses) and each trade from entry (▲) to exit (▼), green when it made money.

# %%
atlas = qsc.load_trades(1, start=START)
counts = atlas.groupby("token_id").size()
token_id = int(counts[counts == counts.max()].index.min())
candles = qsc.load_ohlcv(token_id, "1h").loc[START:]
atlas.loc[atlas["token_id"] == token_id, ["trade_id", "opened_at", "closed_at", "pnl_usd", "roi"]]

# %% tags=["figure-candles"]
_ = candles.quant.plot.candles(evaluations=evaluations, trades=atlas)

# %% [markdown]
# The evaluations sit at the price the quant saw when it made them. A trade's entry follows
# its passed buy check by about a minute, unless the model validation delayed it (the
# `evaluated_at` column of a trade is the time of the buy check that opened it):

# %%
(atlas["opened_at"] - atlas["evaluated_at"]).describe()[["count", "min", "50%", "max"]]

# %% [markdown]
# What a criterion's value says about the outcome of the trade that followed, over many
# trades, is the subject of the playbook notebooks.
