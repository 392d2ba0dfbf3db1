# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 5. Threshold research
#
# A playbook is a list of thresholds: buy when smart-money buys are at least 2, when the
# top-10 holders own at most 45 %, and so on. Which of them matter, and what would moving one
# have done? This notebook joins Atlas's trades to the criterion values that bought them,
# checks that replaying the playbook on those values gives the service's own verdicts, sweeps
# thresholds one and two at a time, stands in for the trades a looser threshold would have
# made with clearly labelled *simulated* entries, and ends with the threshold panel: move a
# threshold, apply it to the playbook, read it back, and undo it.
#
# Everything below is `quantscope.backtest` (imported as `bt`) on frames from the loaders;
# the panel is `quantscope.widgets.ThresholdPanel`.

# %%
# %matplotlib inline
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import quantscope as qsc
from quantscope import backtest as bt
from quantscope.widgets import ThresholdPanel

pd.set_option("display.width", 120)
pd.set_option("display.max_columns", 12)
pd.set_option("display.max_colwidth", 40)

client = qsc.connect()

# %% [markdown]
# ## The values that bought each trade
#
# Every trade names the `TOKEN_BUY` evaluation that bought it (`evaluation_id`), and that
# evaluation's details hold the value of every criterion at the moment of the decision.
# Threshold research needs those values next to each trade's outcome, so it costs **one
# eval-details request per trade**. Details never change, so they are cached forever: the
# first load spends quota, every later one (in this notebook, the next notebook, next month)
# spends none.
#
# Atlas (quant 1) alone keeps this reasonable. Only closed trades have an outcome; an open
# position's PnL is a mark, not a result:

# %%
trades = qsc.load_trades(1)
closed = trades[trades["status"] == "Closed"]
buy_ids = [int(i) for i in closed["evaluation_id"].unique()]
details = qsc.load_eval_details(buy_ids)
{"closed trades": len(closed), "buy evaluations": len(buy_ids), "criterion rows": len(details)}

# %% [markdown]
# What the load cost (the notebooks before this one already loaded a few of these details),
# and what loading them again costs:

# %%
def cost(frame):
    return {k: frame.attrs["quantscope"][k] for k in ("pages", "requests", "from_cache")}


again = qsc.load_eval_details(buy_ids)
pd.DataFrame({"first load": cost(details), "second load": cost(again)})

# %% [markdown]
# `bt.trade_features` joins them: one row per closed trade, its outcome (`profitable` is the
# service's own verdict, `result == "Profit"`), the market-cap class the playbook used, and
# one column per criterion. It also keeps the playbook, which the research below replays.
# Without `details=` it loads the details and the playbook itself, at the same cost.

# %%
playbook = qsc.load_playbook(1)
features = bt.trade_features(trades, details=details, playbook=playbook)
shown = ["trade_id", "market_cap_class", "pnl_usd", "profitable"]
shown += ["smart_money_buys", "buy_sell_ratio", "ai_confidence", "twitter_followers"]
features[shown].head()

# %%
features.groupby("market_cap_class", observed=True).agg(
    trades=("trade_id", "size"), win_rate=("profitable", "mean"), pnl_usd=("pnl_usd", "sum")
).round(4)

# %% [markdown]
# ## Replaying the playbook
#
# `bt.replay(playbook, details)` applies the contract's pass rule (every required criterion
# passes, and the weighted score reaches the pass mark) with the given playbook to the stored
# values. With the playbook as it is, it must give the service's verdict and score for every
# buy check: `agrees` compares both, exactly.

# %%
replayed = bt.replay(playbook, details)
replayed[["evaluation_id", "market_cap_class", "internal_score", "passed"]].join(
    replayed[["service_internal_score", "service_passed", "agrees"]]
).head()

# %%
{"evaluations": len(replayed), "agreements": int(replayed["agrees"].sum())}

# %% [markdown]
# Those were all passed buy checks (they made trades). The rule must also reproduce the
# failures: here are Atlas's failed buy checks of September (one details request each; they
# serve again for the simulated entries below).

# %%
failed = qsc.load_evaluations(
    1, evaluation_type="TOKEN_BUY", passed=False, start="2026-09-01", end="2026-09-30T23:59:59"
)
failed_details = qsc.load_eval_details([int(i) for i in failed["evaluation_id"]])
replayed_failed = bt.replay(playbook, failed_details)
{"evaluations": len(replayed_failed), "agreements": int(replayed_failed["agrees"].sum())}

# %%
both = pd.concat([replayed, replayed_failed], ignore_index=True)
pd.crosstab(both["service_passed"], both["passed"], rownames=["service"], colnames=["replay"])

# %% [markdown]
# The replay is exact, so an edited playbook replayed on the same values answers "what would
# this playbook have decided?" without approximation. What it cannot answer alone is how a
# trade that never happened would have ended; that comes below.

# %% [markdown]
# ## What if one threshold moved?
#
# `bt.what_if(features, criterion, thresholds)` counts, for each candidate threshold, the
# trades the playbook would have kept and how they did. By default it **replays the whole
# pass rule** with the threshold moved (the playbook that `trade_features` kept): a criterion
# that is not required only adds its weight to the score, so a trade that fails it is still
# bought when the rest of its score reaches the pass mark. That is what applying the
# threshold would do. The `d_` columns are changes against the current threshold
# (`is_current`). Rows with `admits_unseen` loosen the current threshold: they would also
# admit evaluations that failed, which have no trade, so their counts are incomplete.
#
# `rule="filter"` counts the criterion as a hard filter instead (a trade is kept when its
# value passes), which is how the service's optimizer counts: an **upper bound** on what
# applying the threshold changes, and labelled so. Side by side for `smart_money_buys`
# (tied to the next day's return in the simulator, weight 3 of 18.5 in Atlas's playbook):

# %%
thresholds = [1, 2, 3, 4, 5, 6]
replayed_smart = bt.what_if(features, "smart_money_buys", thresholds)
filter_smart = bt.what_if(features, "smart_money_buys", thresholds, rule="filter")
columns = ["threshold", "trades", "win_rate", "d_win_rate", "total_pnl_usd", "admits_unseen"]
pd.concat(
    {
        "replayed (what applying does)": replayed_smart[columns],
        "hard filter (UPPER BOUND)": filter_smart[columns[1:4]],
    },
    axis=1,
).round(4)

# %%
{rule.attrs["what_if"]["rule"]: rule.attrs["what_if"]["label"] for rule in (replayed_smart, filter_smart)}

# %% [markdown]
# At the current threshold 2 the playbook keeps all 838 trades, the filter only 702: a
# criterion that is not required can fail and the trade still happen. Raising it to 5 would
# drop 231 trades and add 2.6 win-rate points when applied; the filter claims 17 points on
# 170 trades, its upper bound. The filter drops every trade whose value fails and so measures
# the criterion's full power to separate winners from losers; the replay keeps the trades
# whose other criteria score enough. The same sweep over 50 quantiles of each criterion's values,
# as win rate against the share of trades kept, for the two planted criteria and two social
# ones, replayed (solid) and as the filter's upper bound (dotted); thresholds keeping fewer
# than 40 trades are left out:

# %% tags=["figure-what-if"]
fig, ax = plt.subplots(figsize=(9, 4))
for i, criterion in enumerate(
    ["smart_money_buys", "buy_sell_ratio", "twitter_followers", "telegram_members"]
):
    for rule, style in (("replay", "-"), ("filter", ":")):
        curve = bt.what_if(features, criterion, 50, rule=rule).drop_duplicates("trades")
        curve = curve[curve["trades"] >= 40]
        label = f"{criterion} ({'replayed' if rule == 'replay' else 'filter: upper bound'})"
        ax.plot(
            curve["kept_share"], curve["win_rate"], ls=style, color=f"C{i}", marker=".", label=label
        )
ax.axhline(features["profitable"].mean(), color="grey", ls=":", label="every trade")
ax.set_xlabel("share of the 838 closed trades kept")
ax.set_ylabel("win rate of the kept trades")
ax.set_title("Atlas: win rate as a threshold tightens (replayed vs the filter's upper bound)")
ax.xaxis.set_major_formatter("{x:.0%}")
ax.yaxis.set_major_formatter("{x:.0%}")
ax.invert_xaxis()
ax.grid(alpha=0.3)
_ = ax.legend(fontsize=7, ncols=2)

# %% [markdown]
# ## Does a threshold chosen on the past hold up?
#
# A sweep over all the trades picks its best threshold with hindsight: among a hundred
# candidates, one fits the noise of these trades. `bt.walk_forward` asks the honest
# question: in time order, each market-cap class's trades are cut into four blocks; fold *i*
# chooses the threshold with the best win-rate gain on the blocks before block *i* (the
# current threshold is always a candidate), and reports what that threshold did on block
# *i*, which it never saw. As hard filters (how well a criterion separates winners from
# losers: the upper bound) and replayed (what applying would have done), for the three
# planted criteria and three noise ones:

# %%
rows = {}
for criterion in [
    "smart_money_buys",
    "buy_sell_ratio",
    "ai_confidence",
    "social_sentiment",
    "liquidity_usd",
    "holder_growth_pct",
]:
    for rule in ("filter", "replay"):
        info = bt.walk_forward(features, criterion, rule=rule).attrs["walk_forward"]
        rows[criterion, rule] = {
            "in sample (pts)": 100 * info["mean_in_sample_gain"],
            "out of sample (pts)": 100 * info["mean_out_of_sample_gain"],
        }
walked = pd.DataFrame(rows).T.unstack()
walked.columns = [f"{rule}: {figure}" for figure, rule in walked.columns]
order = [c for c in walked.columns if c.startswith("filter")]
order += [c for c in walked.columns if c.startswith("replay")]
walked.loc[list(dict.fromkeys(c for c, _ in rows)), order].round(2)

# %% [markdown]
# The means are over Atlas's three classes and three folds each, in win-rate points. The
# planted criteria hold up: as filters, smart money gains 7.2 points in sample and 7.5 out of
# sample, the buy/sell ratio 11.7 and 10.8, AI conviction 3.8 and 3.8. The noise criteria
# looked as good in sample (social sentiment 7.4, liquidity 8.2) and lose it all out of
# sample (−0.6, −0.4, and −1.2 for holder growth). Replayed, what applying the chosen
# threshold would have done, every gain is smaller, and the same split shows: the planted
# criteria keep 1.3 to 5.4 points ahead, the noise criteria −0.1 to 0.6.

# %% [markdown]
# Each fold of one criterion, to see where a mean comes from:

# %%
folds = bt.walk_forward(features, "smart_money_buys", rule="filter")
folds[
    ["market_cap_class", "fold", "threshold", "train_trades", "in_sample_gain"]
    + ["test_trades", "test_kept", "out_of_sample_gain"]
].round(4)

# %% [markdown]
# `bt.rank_criteria` does this for every criterion, within each market-cap class (a class has
# thresholds of its own, up to 25 times apart): `mean_gain` is the average win-rate gain over
# the thresholds that keep at least 30 % of the trades (the area under the curve above, per
# step), `best_gain` the best single threshold, an optimizer's pick. Trying many thresholds
# of many criteria, some will look good by luck, so the ranking says how many combinations it
# searched and orders by a `p_value` adjusted for all of them: a permutation test reshuffles
# the outcomes within each class 200 times (seeded) and asks how often the best of *every*
# combination beats this criterion's. As hard filters (separating power, an upper bound),
# Atlas's five strongest in each class:

# %%
ranking = bt.rank_criteria(features, rule="filter")
info = ranking.attrs["rank_criteria"]
print({k: info[k] for k in ("combos_searched", "permutations", "rule")})
columns = ["criterion", "p_value", "mean_gain", "best_gain", "trades", "tokens", "small_sample"]
ranking.groupby("market_cap_class", observed=True).head(5).set_index("market_cap_class")[
    columns
].round(4)

# %% [markdown]
# Among 3,136 combinations searched, the planted criteria survive the adjustment where Atlas
# has the trades for it: smart-money buys in DEGEN_CAP (p 0.035) and LOW_CAP (0.040), the
# buy/sell ratio in LOW_CAP (0.005). AI conviction's weaker signal does not clear it on one
# quant's trades. In MID_CAP the first row is a social criterion, `telegram_members`
# (p 0.040), but look at what it rests on: 84 trades in 6 tokens, flagged `small_sample`.
# Social criteria know nothing about the future in the simulator; they are static traits of
# a token (their value barely changes between evaluations), so a threshold on them selects
# *tokens*, not trades, and Atlas's 838 trades are in only 43 tokens:

# %%
features.groupby("token_id").size().describe()[["count", "min", "50%", "max"]]

# %% [markdown]
# A trait that happens to pick the better tokens looks like a signal on a hundred trades when
# it is a draw among six tokens. That is why every row says how many tokens it rests on, and
# why a row under 10 tokens (or 30 trades) is flagged whatever its p-value. The walk-forward
# above is the other check: a threshold that only fitted its tokens' luck does not hold up on
# the trades that come after.

# %% [markdown]
# ## Two thresholds at once
#
# `bt.what_if_grid` sweeps every pair of thresholds of two criteria and `bt.pivot_grid` turns
# one metric into a table. By default it replays both moved thresholds; here, to see how the
# two criteria's information combines, as hard filters (a trade is kept when both pass: an
# upper bound on what applying both would do). Win rate for smart-money buys
# against the buy/sell ratio; cells that keep fewer than 40 trades are left blank, and the
# current thresholds are outlined.

# %%
grid = bt.what_if_grid(
    features,
    ("smart_money_buys", "buy_sell_ratio"),
    ([1, 2, 3, 4, 5, 6, 7, 8], [0.6, 0.8, 0.9, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0]),
    rule="filter",
)
win_rate = bt.pivot_grid(grid, "win_rate")
kept = bt.pivot_grid(grid, "trades")
kept

# %% tags=["figure-heatmap"]
shown = win_rate.where(kept >= 40)
fig, ax = plt.subplots(figsize=(8, 5))
image = ax.imshow(
    shown.to_numpy(), cmap="RdYlGn", vmin=0.4, vmax=0.8, origin="lower", aspect="auto"
)
for (i, j), value in np.ndenumerate(shown.to_numpy()):
    if np.isfinite(value):
        ax.text(j, i, f"{value:.0%}", ha="center", va="center", fontsize=8)
row, col = win_rate.index.get_loc(2.0), win_rate.columns.get_loc(0.9)
ax.add_patch(plt.Rectangle((col - 0.5, row - 0.5), 1, 1, fill=False, lw=2, ec="black"))
ax.set_xticks(range(len(win_rate.columns)), [f"{v:g}" for v in win_rate.columns])
ax.set_yticks(range(len(win_rate.index)), [f"{v:g}" for v in win_rate.index])
ax.set_xlabel("buy_sell_ratio ≥")
ax.set_ylabel("smart_money_buys ≥")
ax.set_title("Atlas: win rate of the trades both thresholds keep (hard filters: upper bound)")
_ = fig.colorbar(image, ax=ax, format="{x:.0%}", label="win rate")

# %% [markdown]
# The win rate climbs along both axes, toward the upper right, where few trades are left:
# the two planted criteria carry partly separate information. The total PnL tells the other
# half of the trade-off (fewer, better trades can make less money in total):

# %%
bt.pivot_grid(grid, "total_pnl_usd").round(0)

# %% [markdown]
# ## Loosening a threshold: simulated entries
#
# A sweep over trades cannot show what a *looser* threshold would have bought: the
# evaluations it would newly pass failed at the time, so no trade exists. `bt.simulated_entries`
# makes a stand-in for each failed evaluation: it enters at the detection price (here plus
# Atlas's 0.5 % slippage, 1 % fee each side, 400 USD each) and exits by the rule *we* set,
# read off the token's hourly candles (one OHLCV request per token, cached). Atlas's own rule
# is +80 % take-profit, −35 % stop-loss, 72 hours. **These are simulated trades, estimates,
# not trades**: there is no model validation, and a simulated position does not block the
# quant's later evaluations of the same token.

# %%
rule = bt.ExitRule(take_profit=0.8, stop_loss=0.35, horizon_h=72)
simulated = bt.simulated_entries(
    failed, rule, details=failed_details, slippage=0.005, size_usd=400
)
simulated[
    ["evaluation_id", "market_cap_class", "opened_at", "exit_reason", "roi", "simulated"]
].head()

# %%
simulated.groupby("exit_reason", observed=True).agg(
    entries=("evaluation_id", "size"), win_rate=("profitable", "mean"), mean_roi=("roi", "mean")
).round(4)

# %% [markdown]
# Most of these evaluations failed a *required* criterion (notebook 3: mostly the LP lock),
# the replay above says, and loosening `smart_money_buys` would not have passed them:

# %%
required_ok = replayed_failed["required_ok"]
{"failed a required criterion": int((~required_ok).sum()), "only the score": int(required_ok.sum())}

# %% [markdown]
# Given the simulated entries and the playbook, `what_if` admits one only when its value
# passes the new threshold **and** the rest of the playbook would then have passed it. The
# sweep over September's trades (the period of the failed evaluations), with the simulated
# entries counted apart:

# %%
september = features[features["opened_at"] >= "2026-09-01"]
loosened = bt.what_if(
    september, "smart_money_buys", [0, 1, 2, 3, 4], playbook=playbook, simulated=simulated
)
columns = ["threshold", "trades", "simulated_trades", "win_rate", "total_pnl_usd", "admits_unseen"]
loosened[columns].round(4)

# %% [markdown]
# Lowering the threshold from 2 to 1 admits 68 simulated entries, and 0 admits no more. The
# same sweep without them shows which part of each row is real: the simulated entries are the
# difference.

# %%
real = bt.what_if(september, "smart_money_buys", [0, 1, 2, 3, 4], playbook=playbook)
added = loosened[["trades", "wins", "total_pnl_usd"]] - real[["trades", "wins", "total_pnl_usd"]]
pd.DataFrame(
    {
        "threshold": loosened["threshold"],
        "real trades": real["trades"],
        "real win rate": real["win_rate"],
        "simulated entries": added["trades"],
        "simulated win rate": added["wins"] / added["trades"],
        "simulated PnL (USD)": added["total_pnl_usd"],
    }
).round(4)

# %% [markdown]
# Loosening to 1 adds no real trade (the playbook bought the trades whose smart money was
# below 2 anyway: the criterion is not required) and 68 simulated ones. The simulated entries
# win 29 % of the time, against 50 % for the trades the playbook keeps now: on this evidence,
# and under the exit rule we chose, loosening would not have helped. The note the sweep carries says
# what its rows mean:

# %%
print(loosened.attrs["what_if"]["note"])

# %% [markdown]
# ## The threshold panel
#
# `ThresholdPanel` puts the same what-if on a slider: pick a class and a criterion, move the
# threshold, and the before/after table (replayed: what applying does) and the
# winning/losing value distributions follow.
# *Apply…* shows the exact change (config id, old and new value) and waits for *Confirm*;
# the change is one PUT, the playbook is read back to verify it, and it is logged to an audit
# log (`audit.jsonl` next to the HTTP cache), from which *Undo* restores the old value.
#
# It reuses the frames loaded above. Its class defaults to the one with most trades
# (`DEGEN_CAP`). A widget needs a live kernel: a stored copy of this notebook shows only its
# one-line text placeholder, so the cells after it show the panel's state as tables.

# %%
panel = ThresholdPanel(1, trades=trades, details=details, criterion="smart_money_buys")
panel

# %% [markdown]
# In a live kernel you would drag the slider; here the panel is driven from code with the
# methods its controls call. Its table at the current threshold, then at 3:

# %%
{
    "class": panel.class_picker.value,
    "criterion": panel.criterion_picker.value,
    "threshold": panel.threshold,
}

# %%
panel.set_threshold(3)
panel.table.round(4)

# %% [markdown]
# The panel replays the whole pass rule (its rule picker offers the hard filter, labelled an
# upper bound): raising the threshold to 3 on `DEGEN_CAP` would keep 290 of the 340 trades
# and lift their win rate by 1.6 points, with 563 USD more PnL. Before applying it, the
# playbook entry as the service holds it:

# %%
def smart_money_entries(playbook):
    """The BUYING entries of smart_money_buys, one per market-cap class."""
    rows = (playbook["criterion"] == "smart_money_buys") & (playbook["config_type"] == "BUYING")
    return playbook[rows].set_index("market_cap_class")


before = qsc.load_playbook(1)
smart_money_entries(before)[["criterion", "config_type", "threshold", "weight", "required"]]

# %% [markdown]
# *Apply…* prepares the change and shows it for confirmation; nothing is sent yet:

# %%
change = panel.apply()
pd.Series({**vars(change), "confirmation shown": panel.confirmation.visible}, name="pending")

# %% [markdown]
# *Confirm* sends it, reads the playbook back and logs the change. Read back independently
# with `load_playbook`:

# %%
written = panel.confirm()
after = qsc.load_playbook(1)
now = float(smart_money_entries(after).loc["DEGEN_CAP", "threshold"])
{"verified": written.verified, "DEGEN_CAP threshold now": now}

# %% [markdown]
# *Undo* restores the old value with one more verified, logged PUT:

# %%
undone = panel.undo()
after_undo = qsc.load_playbook(1)
pd.DataFrame(
    {
        "before": smart_money_entries(before)["threshold"],
        "after apply": smart_money_entries(after)["threshold"],
        "after undo": smart_money_entries(after_undo)["threshold"],
    }
).rename_axis("smart_money_buys, BUYING")

# %% [markdown]
# The whole playbook (every threshold, weight and flag of every entry) is as it was before
# the panel touched it, so the next notebook finds the world as this one did:

# %%
fields = ["config_id", "threshold", "weight", "required", "disabled"]
{"verified": undone.verified, "playbook restored": before[fields].equals(after_undo[fields])}

# %% [markdown]
# The audit log holds both writes. Each line also records the wall-clock time, the service's
# address and random ids for the entry and its batch; they change on every run and are left
# out here. The undo line names the entry it reverts:

# %%
log = panel.audit_log.frame(1).tail(2).reset_index(drop=True)
log["undoes_the_change"] = log["undoes"] == log["id"].iloc[0]
log[
    ["action", "market_cap_class", "criterion", "field", "old_value", "new_value", "verified"]
    + ["undoes_the_change"]
]

# %% [markdown]
# Next, notebook 6 lets the service's optimizer make the recommendations, checks them with
# the same what-if, and asks what a recommended threshold would really change.
