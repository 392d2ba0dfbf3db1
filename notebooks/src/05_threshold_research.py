# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 5. Threshold research: the signal and the effect
#
# A playbook is a list of thresholds: buy when smart-money buys are at least 2, when the
# top-10 holders own at most 45 %, and so on. Threshold research asks two questions that have
# different answers. **The signal**: does a criterion predict outcomes (do the trades a
# threshold keeps do better than those it drops)? **The effect**: what would applying a change
# to the live playbook do? This notebook joins Atlas's trades to the criterion values that
# bought them, checks that replaying the playbook on those values gives the service's own
# verdicts, screens every criterion's signal out of sample with a p-value adjusted for
# everything searched, measures the effect of a change with intervals, stands in for the
# trades a looser threshold would have made with clearly labelled *simulated* entries, and
# ends with the threshold panel: move a threshold, apply it (by its effect), read it back,
# and undo it.
#
# Everything below is `quantscope.backtest` (imported as `bt`) on frames from the loaders;
# the panel is `quantscope.widgets.ThresholdPanel`. **Cost**: one eval-details request per
# closed trade of Atlas (838, fewer when notebooks 1–4 already cached some) and about 40
# more (the failed evaluations of September and their details, the candles of the simulated
# entries, the playbook reads and the panel's two writes); a second run costs a few
# requests, the details being cached forever.

# %%
# %matplotlib inline
import warnings

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import quantscope as qsc
from quantscope import tour
from quantscope import backtest as bt
from quantscope.backtest.questions import QUESTION_LABELS, QUESTION_NOTES, RULE_OF
from quantscope.widgets import ThresholdPanel

pd.set_option("display.width", 120)
pd.set_option("display.max_columns", 12)
pd.set_option("display.max_colwidth", 40)

client = tour.connect()  # qsc.connect(); on the embedded sandbox, a fresh quota day

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
# this playbook have decided?" without approximation: that is how the *effect* of a change is
# measured. What it cannot answer alone is how a trade that never happened would have ended;
# that comes below.

# %% [markdown]
# ## Two questions, two answers
#
# Threshold research asks two different questions, and this notebook answers them in turn,
# each under its own name (`quantscope.backtest.questions`):

# %%
for question, note in QUESTION_NOTES.items():
    print(f"{question.upper()} (rule={RULE_OF[question]!r})\n  {note}\n")

# %% [markdown]
# The **signal** is what tells a criterion that predicts outcomes from one that does not; it
# is how criteria are screened and ranked. The **effect** is what a researcher who changes a
# live threshold gets: a criterion that is not required only adds its weight to the score, so
# a trade that fails it is still bought when the rest of its score reaches the pass mark. It
# is the question of anything that writes (the panel at the end of this notebook, the
# recommendations of notebook 6).
#
# **Neither bounds the other.** The hard filter keeps a *subset* of the trades the replay
# keeps, but the win rate, PnL or ROI of a subset can lie on either side of the whole set's.
# Over Atlas's criteria at five quantiles of their values each, how often the kept trades'
# win rate under the filter is *below* the replayed one:

# %%
rows = []
criteria = sorted(set(details["criterion"].astype(str)) & set(features.columns))
for criterion in criteria:
    points = features[criterion].quantile([0.1, 0.3, 0.5, 0.7, 0.9]).unique()
    replay = bt.what_if(features, criterion, points, rule=RULE_OF["effect"])
    hard = bt.what_if(features, criterion, points, rule=RULE_OF["signal"])
    rows.append(
        pd.DataFrame(
            {
                "criterion": criterion,
                "threshold": replay["threshold"],
                "effect: win rate": replay["win_rate"],
                "signal: win rate of the kept trades": hard["win_rate"],
            }
        )
    )
both_rules = pd.concat(rows, ignore_index=True).dropna()
below = both_rules["signal: win rate of the kept trades"] < both_rules["effect: win rate"]
{"rows": len(both_rules), "filter's win rate below the replayed one": int(below.sum())}

# %%
both_rules[below].head(6).round(4)

# %% [markdown]
# ## Trades cluster by token
#
# Before any interval: Atlas's 838 closed trades are not 838 independent draws. They are in
# 43 tokens, and a token's trades share its launch, its traits and its market:

# %%
features.groupby("token_id").size().describe()[["count", "min", "50%", "max"]]

# %% [markdown]
# A token whose trades all won lifts the win rate of every threshold that keeps it. Treating
# its trades as independent evidence (a Wilson interval, a trade-by-trade reshuffle) makes an
# interval too narrow and a test too eager: with social criteria, which are static traits of
# a token in the simulator, a threshold selects *tokens*, and a trait that happens to line up
# with a few lucky tokens looks like a signal on a hundred trades. So every interval and test
# below comes from one module, `backtest/uncertainty.py`, and **resamples or flips whole
# tokens**: a Poisson bootstrap over tokens (seeded, 1,000 resamples, widened by the Student
# quantile of the tokens a figure rests on) for intervals, and a sign-flip test of whole
# tokens for p-values (docs/metrics.md, "Calibrated research").

# %% [markdown]
# ## The signal: does a criterion predict outcomes? (`bt.screen`)
#
# A sweep over all the trades picks its best threshold with hindsight: among dozens of
# candidate thresholds of 18 criteria in three classes, some fit the noise of these trades.
# `bt.screen(features)` asks the honest question for **every criterion of every market-cap
# class in one call**:
#
# * **out of sample, purged**: each class's trades, in time order, are cut into five blocks;
#   block *i* is tested with a threshold chosen on the blocks before it, and a training trade
#   that closed after the test block opened is dropped (its outcome was not known yet);
# * **tokens apart**: the tokens are split at random (seeded) into two sets, and a test
#   trade's threshold is chosen on the *other* set's trades, so a token's luck cannot be both
#   learnt and tested;
# * the **signal** is the win rate of the test trades the chosen threshold keeps minus that
#   of the ones it drops, with its token-bootstrap interval; the **p-value** comes from a
#   one-sided sign-flip test of whole tokens, **adjusted** (Westfall–Young max-T) for every
#   criterion and class of the call, and the call says how many combinations it searched;
# * beside it, the **effect** of the chosen threshold (replayed, against the current one, on
#   the same test trades).
#
# It runs on the features already loaded: no request.

# %%
screened = bt.screen(features)
design = screened.attrs["screen"]
{
    key: design[key]
    for key in ("hypotheses", "combos_searched", "folds", "token_groups", "flips", "seed", "alpha")
}

# %% [markdown]
# Every row is one hypothesis of one family: its `p_value` is adjusted for all
# `hypotheses` rows and states nothing about a criterion tried alone. The criteria it
# could not test (a value that nearly every trade shares, so no training set can split
# it), and the groups it could not use (fewer than 60 trades or 10 tokens):

# %%
{"untested": design["untested"], "unused_groups": design["unused_groups"]}

# %% [markdown]
# Atlas has enough trades in every class. Screened on its last two weeks only, the small
# classes fall out, and the screen says so with a warning (caught here, shown as text) and in
# its attrs:

# %%
recent = features[features["opened_at"] >= "2026-09-17"]
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    recent_screen = bt.screen(recent)
for warning in caught:
    print(f"{warning.category.__name__}: {warning.message}")
pd.DataFrame(recent_screen.attrs["screen"]["unused_groups"])

# %% [markdown]
# The signal of every criterion, strongest first within each class:

# %%
signal_columns = ["criterion", "threshold", "test_trades", "tokens", "signal", "signal_lo"]
signal_columns += ["signal_hi", "p_raw", "p_value", "significant"]
ranked = screened.sort_values(
    ["market_cap_class", "p_value", "statistic"], ascending=[True, True, False]
)
ranked.groupby("market_cap_class", observed=True).head(5).set_index("market_cap_class")[
    signal_columns
].round(4)

# %% [markdown]
# What survives the adjustment:

# %%
screened[screened["significant"]].set_index(["market_cap_class", "criterion"])[
    ["threshold", "signal", "signal_lo", "signal_hi", "p_raw", "p_value"]
].round(4)

# %% [markdown]
# The same screen as a picture: each criterion's out-of-sample signal with its 95 % token
# bootstrap interval, per class; filled markers are significant after the adjustment. Many
# intervals exclude zero while their adjusted p-value does not clear 5 %: an interval is for
# one row alone, the adjusted p-value for one row *among all that were searched*.

# %% tags=["figure-screen"]
classes = [c for c, _ in bt.MARKET_CAP_CLASSES if c in set(screened["market_cap_class"])]
fig, axes = plt.subplots(1, len(classes), figsize=(11, 5), sharex=True, sharey=True)
order = screened.groupby("criterion")["signal"].mean().sort_values().index
for ax, cls in zip(np.atleast_1d(axes), classes, strict=True):
    rows = screened[screened["market_cap_class"] == cls].set_index("criterion").reindex(order)
    y = np.arange(len(rows))
    ax.hlines(y, rows["signal_lo"], rows["signal_hi"], color="grey", lw=1.5)
    sig = rows["significant"].fillna(False).to_numpy(dtype=bool)
    ax.plot(rows["signal"][~sig], y[~sig], "o", mfc="white", color="C0", label="not significant")
    ax.plot(rows["signal"][sig], y[sig], "o", color="C3", label="significant (adjusted p < 5 %)")
    ax.axvline(0, color="black", lw=0.8)
    ax.set_title(f"{cls} ({int(rows['test_trades'].max())} test trades)", fontsize=9)
    ax.xaxis.set_major_formatter("{x:+.0%}")
    ax.grid(axis="x", alpha=0.3)
axes[0].set_yticks(np.arange(len(order)), order, fontsize=8)
axes[0].legend(fontsize=7, loc="lower right")
fig.supxlabel(
    "win rate of the kept test trades − win rate of the dropped ones"
    " (95 % interval, tokens resampled)"
)
fig.suptitle(
    f"Atlas: {QUESTION_LABELS['signal']}\nout of sample, purged; "
    f"{design['hypotheses']} hypotheses, {design['combos_searched']:,} combinations searched",
    fontsize=10,
)
fig.tight_layout()

# %% [markdown]
# Read the table before the picture: how many test trades and tokens a row rests on, its
# interval, and its adjusted p-value. In this simulated market `smart_money_buys`,
# `buy_sell_ratio`, `ai_confidence` and `top10_holders_pct` are planted (tied to the next
# day's return) and the social criteria are noise (static traits of a token); the screen's
# figures on 40 such worlds, scored against that truth, are in docs/metrics.md
# ("Calibration") and notebook 7. Atlas's 43 tokens are a small sample: a planted criterion
# can fail to clear the adjustment in a class, and a noise one can look good before it.

# %% [markdown]
# ## The effect: what would applying a change do? (`bt.what_if_intervals`)
#
# `bt.what_if(features, criterion, thresholds)` counts, for each candidate threshold, the
# trades the playbook would have kept and how they did. By default it **replays the whole
# pass rule** with the threshold moved (the playbook that `trade_features` kept): the effect.
# The `d_` columns are changes against the current threshold (`is_current`). Rows with
# `admits_unseen` loosen the current threshold: they would also admit evaluations that failed,
# which have no trade, so their counts are incomplete (simulated entries, below, stand in).
#
# `bt.what_if_intervals` gives the same rows their intervals, from the same module as the
# screen's: `win_rate`, and the three changes a researcher acts on, `d_win_rate`,
# `d_total_pnl_usd` and `d_roi`, each with `_lo`/`_hi`, plus the tokens whose kept trades
# move. A row where nothing moves (the threshold keeps exactly today's trades) still gets an
# interval: the rule of three says how much a future sample could move (`interval`).
#
# The change a researcher would consider: `smart_money_buys` (weight 3 of 18.5 in Atlas's
# playbook, not required), from its current 2 up to 6. Its effect, with the signal of each
# threshold (the filter's kept trades) beside it:

# %%
def interval(frame, name, scale=1.0, digits=1):
    """'estimate [lo, hi]' of ``name`` and its ``_lo``/``_hi`` columns, scaled, for reading."""

    def one(row):
        ends = ("", "_lo", "_hi")
        est, lo, hi = (round(scale * row[f"{name}{end}"], digits) + 0.0 for end in ends)
        return f"{est:+.{digits}f} [{lo:+.{digits}f}, {hi:+.{digits}f}]"

    return frame.apply(one, axis=1)


thresholds = [1, 2, 3, 4, 5, 6]
effect = bt.what_if_intervals(features, "smart_money_buys", thresholds, rule=RULE_OF["effect"])
signal = bt.what_if_intervals(features, "smart_money_buys", thresholds, rule=RULE_OF["signal"])
pd.DataFrame(
    {
        "threshold": effect["threshold"],
        "effect: trades": effect["trades"],
        "moved tokens": effect["moved_tokens"],
        "d_win_rate (pts)": interval(effect, "d_win_rate", 100),
        "d_total_pnl_usd": interval(effect, "d_total_pnl_usd", digits=0),
        "d_roi (pts)": interval(effect, "d_roi", 100),
        "interval": effect["interval"],
        "signal: kept trades": signal["trades"],
        "kept win rate (%)": interval(signal, "win_rate", 100),
    }
).set_index("threshold")

# %%
recorded = ("rule", "unit", "clusters", "resamples", "seed", "confidence")
{
    "effect": {k: effect.attrs["intervals"][k] for k in recorded},
    "signal": {k: signal.attrs["intervals"][k] for k in recorded},
}

# %% [markdown]
# Every figure is an estimate and a 95 % interval, tokens resampled. At the current threshold
# 2 the playbook keeps all 838 trades, the filter only 702: a criterion that is not required
# can fail and the trade still happen. Raising the threshold keeps fewer trades under both
# rules, and the two answers differ by a factor: the kept trades of the filter win far more
# often (the criterion predicts), while applying the threshold moves the win rate by a few
# points, and the total PnL falls with the trades it drops. Where nothing moves (thresholds 1
# and 2), the rule-of-three interval still says how much a future sample could move.
#
# Per market-cap class (each class has a playbook slice of its own), the move 2 → 3, with the
# screen's out-of-sample signal for the same class beside it:

# %%
per_class = {}
for cls, rows in features.groupby("market_cap_class", observed=True):
    moved = bt.what_if_intervals(rows, "smart_money_buys", [3], current=2)
    found = screened[
        (screened["market_cap_class"] == cls) & (screened["criterion"] == "smart_money_buys")
    ]
    per_class[cls] = {
        "trades now": int(rows["smart_money_buys"].notna().sum()),
        "effect: trades": int(moved["trades"].iloc[0]),
        "moved tokens": int(moved["moved_tokens"].iloc[0]),
        "d_win_rate (pts)": interval(moved, "d_win_rate", 100).iloc[0],
        "d_total_pnl_usd": interval(moved, "d_total_pnl_usd", digits=0).iloc[0],
        "d_roi (pts)": interval(moved, "d_roi", 100).iloc[0],
        "signal (pts)": interval(found, "signal", 100).iloc[0],
        "signal p_value": round(float(found["p_value"].iloc[0]), 4),
    }
pd.DataFrame.from_dict(per_class, orient="index")

# %% [markdown]
# Read the two halves apart. The signal says whether smart-money buys separate winners from
# losers in a class, out of sample, after the search; the effect says what writing 3 into that
# class's playbook would have done to its trades, win rate, PnL and ROI. A class can have a
# strong signal and a small or uncertain effect (the criterion is one of many in the score), or
# the other way round; a decision needs both.

# %% [markdown]
# The same sweep over 50 quantiles of each criterion's values, as win rate against the share
# of trades kept, for two planted criteria and two social ones: the effect (solid) and the
# signal's kept trades (dotted); thresholds keeping fewer than 40 trades are left out. The
# dotted lines climb much faster: that is the criterion's power to separate winners from
# losers, not what applying the threshold would do.

# %% tags=["figure-what-if"]
fig, ax = plt.subplots(figsize=(9, 4))
for i, criterion in enumerate(
    ["smart_money_buys", "buy_sell_ratio", "twitter_followers", "telegram_members"]
):
    for question, style in (("effect", "-"), ("signal", ":")):
        curve = bt.what_if(features, criterion, 50, rule=RULE_OF[question])
        curve = curve.drop_duplicates("trades")
        curve = curve[curve["trades"] >= 40]
        ax.plot(
            curve["kept_share"],
            curve["win_rate"],
            ls=style,
            color=f"C{i}",
            marker=".",
            label=f"{criterion} ({question})",
        )
ax.axhline(features["profitable"].mean(), color="grey", ls=":", label="every trade")
ax.set_xlabel("share of the 838 closed trades kept")
ax.set_ylabel("win rate of the kept trades")
ax.set_title("Atlas: win rate as a threshold tightens (effect: replayed; signal: hard filter)")
ax.xaxis.set_major_formatter("{x:.0%}")
ax.yaxis.set_major_formatter("{x:.0%}")
ax.invert_xaxis()
ax.grid(alpha=0.3)
_ = ax.legend(fontsize=7, ncols=2)

# %% [markdown]
# ## Two thresholds at once
#
# `bt.what_if_grid` sweeps every pair of thresholds of two criteria and `bt.pivot_grid` turns
# one metric into a table. By default it replays both moved thresholds (the effect); here, to
# see how the two criteria's information combines, as hard filters (the signal: a trade is
# kept when both pass). Win rate for smart-money buys against the buy/sell ratio; cells that
# keep fewer than 40 trades are left blank, and the current thresholds are outlined.

# %%
grid = bt.what_if_grid(
    features,
    ("smart_money_buys", "buy_sell_ratio"),
    ([1, 2, 3, 4, 5, 6, 7, 8], [0.6, 0.8, 0.9, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0]),
    rule=RULE_OF["signal"],
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
ax.set_title("Atlas, every class: win rate of the trades both keep (signal: hard filters)")
_ = fig.colorbar(image, ax=ax, format="{x:.0%}", label="win rate (kept trades in the table above)")

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
# The panel shows the effect, the whole pass rule replayed (its rule picker also offers the
# signal, the hard filter, named as such), because applying is what it does: raising the threshold to 3 on `DEGEN_CAP` would keep 290 of the 340 trades
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
