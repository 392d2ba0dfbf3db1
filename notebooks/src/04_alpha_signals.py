# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 4. Alpha signals
#
# The service condenses the quants' latest view of every token into an *alpha signal*: one
# per token evaluated in the last 7 days, with a stage that says where the token stands.
# This notebook counts signals by stage and chain, opens one signal down to the criteria
# behind it, and then asks what can honestly be said about price moves after a signal when
# the world's clock stands still.
#
# The stages (`docs/service-contract.md`):
#
# | stage | meaning |
# |---|---|
# | `BUY` | the quant holds an open position in the token |
# | `SELL` | the quant closed a position in the last 48 hours |
# | `SCREENING` | no position; the newest evaluation passed |
# | `WATCH` | no position; the newest evaluation failed |

# %%
# %matplotlib inline
import matplotlib.pyplot as plt
import pandas as pd

import quantscope as qsc
from quantscope import tour

pd.set_option("display.width", 120)
pd.set_option("display.max_columns", 12)
pd.set_option("display.max_colwidth", 40)

client = tour.connect()  # qsc.connect(); on the embedded sandbox, a fresh quota day

# %% [markdown]
# ## Stages by chain
#
# `qsc.load_signal_stats()` returns the service's own counts, one row per chain group
# (`all`, then each chain):

# %%
stats = qsc.load_signal_stats()
stats

# %% [markdown]
# The signals themselves, one row per token, ordered by stage and then newest first.
# `change_24h` is the token's 24-hour price change and `roi` the position's return
# (fractions); `entry_price_usd` and `roi` are only set for `BUY` and `SELL`:

# %%
signals = qsc.load_signals()
columns = ["token_id", "symbol", "chain", "stage", "price_usd", "change_24h"]
columns += ["entry_price_usd", "roi", "updated_at"]
signals[columns].head(8)

# %% [markdown]
# Counting the frame gives the same table (`stage_counts()`), with the service's enum
# spelling (`SOLANA`, `BUY`) where the stats endpoint uses lower case:

# %%
counts = signals.quant.stage_counts()
counts

# %%
aligned = counts.rename(index=str.lower, columns=str.lower).loc[stats.index, stats.columns]
bool((aligned.to_numpy() == stats.to_numpy()).all())

# %% [markdown]
# Without `quant_id`, a token's signal belongs to the quant that evaluated it last. Per
# quant, the picture differs with each quant's exit rule: Borealis holds positions for up
# to a week, so many of its signals are open positions.

# %%
quants = {1: "Atlas", 2: "Borealis", 3: "Cinder"}
pd.DataFrame({name: qsc.load_signals(q)["stage"].value_counts() for q, name in quants.items()})

# %% [markdown]
# ## One signal
#
# `qsc.load_signal(token_id)` returns the signal and the criterion results of the evaluation
# behind it. The first `SCREENING` signal: a token whose newest scan passed but which no
# quant holds yet.

# %%
token_id = int(signals.loc[signals["stage"] == "SCREENING", "token_id"].iloc[0])
signal, criteria = qsc.load_signal(token_id)
signal[["token_id", "symbol", "chain", "stage", "evaluation_type", "passed", "price_usd"]].T

# %%
print(signal["alert"].iloc[0])

# %%
criteria[["criterion", "operator", "value", "threshold", "weight", "passed"]]

# %% [markdown]
# The criteria carry no category or quant; `load_eval_details` on the signal's
# `evaluation_id` gives the full rows (the same values):

# %%
full = qsc.load_eval_details(int(signal["evaluation_id"].iloc[0]))
full[["quant_id", "evaluation_type", "evaluation_passed", "internal_score"]].drop_duplicates()

# %% [markdown]
# ## Signals and price moves
#
# The sandbox's world is frozen at 2026-10-01 00:00 UTC, and every signal is at most 7 days
# old, most of them hours. There is no "later" for today's signals, so no claim about what
# they predict can be checked. Three things can be said honestly.
#
# **1. Where the positions stand.** `SELL` signals carry the realised return of a position
# closed in the last 48 hours; `BUY` signals the return of an open position, marked to the
# last price (it will change). Neither is a forecast:

# %%
positions = signals[signals["stage"].isin(["BUY", "SELL"])]
positions.groupby("stage", observed=True)["roi"].agg(
    count="count", median="median", mean="mean", share_up=lambda r: (r > 0).mean()
).round(4)

# %% [markdown]
# **2. What happened before the signal.** `change_24h` is the move over the 24 hours up to
# the world's clock, for every stage. It describes the recent past, it does not forecast;
# with a few dozen signals per stage, the spread within a stage is larger than the
# differences between the medians:

# %%
signals.groupby("stage", observed=True)["change_24h"].describe()[
    ["count", "25%", "50%", "75%"]
].round(4)

# %% [markdown]
# **3. Over the history, what followed the evaluations that make signals.** A passed scan is
# what puts a token into `SCREENING`, and every evaluation records `roi_24h`: the price
# change from its detection price to 24 hours later. Atlas's scans of September, up to the
# 29th so that every 24-hour window is complete:

# %%
scans = qsc.load_evaluations(
    1, evaluation_type="TOKEN_STATUS", start="2026-09-01", end="2026-09-29T23:59:59"
)
forward = scans.groupby("passed")["roi_24h"].agg(
    count="count", mean="mean", std_error="sem", median="median", share_up=lambda r: (r > 0).mean()
)
forward.round(4)

# %% [markdown]
# Tokens whose scan passed went on to do better over the next 24 hours than those whose scan
# failed: higher median, more often up. The mean is pulled up by pumps, so the median and
# the share up are the sturdier numbers. One caution on the standard errors: the same token
# is scanned every 12 hours and each window is 24 hours long, so neighbouring samples overlap
# and the errors are somewhat too small.
#
# In this world that edge is there by construction: the simulator ties a few criteria (smart
# money buys, the buy/sell ratio, AI conviction) to the token's next 24 hours; see "The
# planted truth" in `docs/service-contract.md`. On the real service, this table is the
# question to ask, not an answer to assume.
#
# The weighted score itself orders the outcomes; by score band:

# %%
edges, names = [0, 70, 80, 90, 100], ["70 or less", "70-80", "80-90", "90-100"]
bands = pd.cut(scans["internal_score"], edges, labels=names, include_lowest=True)
by_band = scans.groupby(bands, observed=True)["roi_24h"].agg(
    count="count", median="median", share_up=lambda r: (r > 0).mean()
)
by_band.round(4)

# %% tags=["figure-score-bands"]
fig, ax = plt.subplots(figsize=(8, 3.5), layout="constrained")
labels = [f"{band}\n({n:,} scans)" for band, n in by_band["count"].items()]
heights = by_band["median"].to_numpy() * 100
_ = ax.bar(labels, heights, color=["#1b9e77" if h > 0 else "#d95f02" for h in heights])
_ = ax.axhline(0, color="#7f7f7f", linewidth=0.8)
_ = ax.set_title("Atlas's September scans: median price change over the next 24 hours")
_ = ax.set_xlabel("internal score of the scan")
_ = ax.set_ylabel("median change (%)")
_ = ax.grid(axis="y", alpha=0.3)

# %% [markdown]
# Does the stricter buy check that follows a passed scan add more? Atlas's September buy
# checks, passed against failed:

# %%
buy_checks = qsc.load_evaluations(
    1, evaluation_type="TOKEN_BUY", start="2026-09-01", end="2026-09-29T23:59:59"
)
buy_checks.groupby("passed")["roi_24h"].agg(
    count="count", mean="mean", std_error="sem", median="median", share_up=lambda r: (r > 0).mean()
).round(4)

# %% [markdown]
# Less clearly. The means differ by about one standard error; the median and the share up
# lean the same way as for scans, the share up by about 7 points, some two standard errors
# of a share at these counts before allowing for the overlapping windows: weak evidence.
# Every buy check follows a passed scan, so both groups already carry the scan's edge.
#
# All of this is about one simulated world, one quant, one month and a 24-hour horizon.
# Which criteria carry the information, and what a different threshold would have done, is
# what the playbook notebooks examine.
