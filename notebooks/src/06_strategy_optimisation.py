# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 6. Strategy optimisation
#
# The service has its own optimizer: it studies a quant's closed trades and recommends
# stricter `BUYING` thresholds, one criterion and market-cap class at a time. This notebook
# reads the optimizer's dashboard, runs an analysis, recomputes every recommendation
# client-side with the what-if of notebook 5, and sets each claim beside its **effect** (the
# whole pass rule replayed: what applying it would do) with calibrated intervals, and beside
# the **signal** of its criterion from the out-of-sample screen, the guard before applying.
# It then applies one, chosen by that guard and its effect, and ends with the recommendations
# panel.
#
# **Cost**: after notebook 5 the details of Atlas's trades are cached, so the Atlas part costs
# a few requests (dashboard, analysis, recommendations, playbook, the apply); the README's
# showcase, a recommendation for Cinder's `MID_CAP`, costs about 415 more (3 pages of
# evaluations to find the class, one eval-details request per trade of it, once: cached
# forever).
#
# It runs after notebook 5 on the same sandbox world, whose playbook notebook 5 left as it
# found it. Applying a recommendation (below) changes the world's playbook: the tests start
# every session from a fresh copy of the world, but run in JupyterLab on your own sandbox
# world the change stays (the end of the notebook says how to undo it), and a second run then
# shows it among the applied recommendations.

# %%
# %matplotlib inline
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import quantscope as qsc
from quantscope import tour
from quantscope import backtest as bt
from quantscope.backtest.questions import QUESTION_LABELS
from quantscope.widgets import RecommendationsPanel

pd.set_option("display.width", 120)
pd.set_option("display.max_columns", 12)
pd.set_option("display.max_colwidth", 40)

client = tour.connect()  # qsc.connect(); on the embedded sandbox, a fresh quota day

# %% [markdown]
# ## The dashboard
#
# `qsc.load_dashboard(quant_id)` returns four things: the overall performance of the quant's
# executed trades (win rate as a fraction of closed trades, realised PnL), the newest
# unapplied recommendations, the newest applied ones, and a weekly trend of closed trades.
# For Atlas (quant 1):

# %%
dashboard = qsc.load_dashboard(1)
dashboard.performance.round(4)

# %% [markdown]
# The weekly trend, by the week the trades closed (Monday-aligned, UTC):

# %% tags=["figure-weekly"]
weekly = dashboard.weekly
fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 5), sharex=True, height_ratios=[2, 1])
days = weekly.index.tz_localize(None)
colours = ["#2e7d32" if v > 0 else "#c62828" for v in weekly["pnl"]]
top.bar(days, weekly["pnl"], width=5, color=colours)
top.set_ylabel("realised PnL (USD)")
top.set_title("Atlas: closed trades per week")
top.grid(axis="y", alpha=0.3)
bottom.plot(days, weekly["win_rate"], marker="o", color="black")
bottom.axhline(dashboard.performance["win_rate"], color="grey", ls=":", label="overall")
bottom.set_ylabel("win rate")
bottom.yaxis.set_major_formatter("{x:.0%}")
bottom.grid(alpha=0.3)
bottom.legend(loc="lower left")
_ = bottom.set_xlabel("week of the close (UTC)")

# %% [markdown]
# Every week made money; the win rate swings from about 40 % to about 67 % around the overall
# 54 %, with the weakest weeks in mid-September.
#
# The world comes with an analysis already made at its clock (2026-10-01 00:00 UTC), so the
# dashboard lists recommendations; none has been applied:

# %%
columns = ["recommendation_id", "market_cap_class", "criterion", "old_threshold", "new_threshold"]
columns += ["confidence", "created_at"]
dashboard.recent[columns].head()

# %%
{"recent": len(dashboard.recent), "applied": len(dashboard.applied)}

# %% [markdown]
# ## An analysis run
#
# `qsc.run_analysis(quant_id)` asks the optimizer for a new analysis. For each market-cap class
# with at least 20 closed trades, and each numeric, enabled `BUYING` criterion, it tries the
# 5th to 95th percentiles of the trades' values as thresholds (only those stricter than the
# current one), keeps the one with the best F1 score for "kept ⇒ profitable" among those
# keeping at least 30 % of the trades, and recommends it when it raises the win rate by at
# least 2 points (`docs/service-contract.md`, "Strategy optimisation"). `apply=False` (the
# default) only recommends; `apply=True` would apply every recommendation at once.

# %%
analysis = qsc.run_analysis(1)
analysis

# %% [markdown]
# A new analysis replaces the quant's unapplied recommendations: the old ids are gone, and
# the new ones follow. `qsc.load_recommendations(1)` lists them, most confident first:

# %%
recommendations = qsc.load_recommendations(1)
old_ids = set(dashboard.recent["recommendation_id"])
{"still listed from before": len(old_ids & set(recommendations["recommendation_id"]))}

# %%
columns = ["recommendation_id", "market_cap_class", "criterion", "old_threshold", "new_threshold"]
columns += ["confidence", "sample_size", "before_win_rate", "after_win_rate", "trade_difference"]
recommendations[columns].round(4)

# %% [markdown]
# `sample_size` is the closed trades of that class, `before_win_rate` their win rate,
# `after_win_rate` the win rate of the trades whose value passes the new threshold, and
# `trade_difference` how many trades fail it. `confidence` grows with the sample and with how
# well the criterion separates winners from losers (its AUC). Each recommendation explains
# itself:

# %%
print(recommendations["reasoning"].iloc[0])

# %% [markdown]
# ## Checked client-side
#
# `bt.crosscheck(recommendations, features)` recomputes those four figures from the trades
# and the criterion values that bought them (notebook 5's `trade_features`, which keeps the
# playbook to replay; the details are in the cache, so this costs no quota after notebook 5,
# and one request per trade otherwise):

# %%
trades = qsc.load_trades(1)
closed = trades[trades["status"] == "Closed"]
details = qsc.load_eval_details([int(i) for i in closed["evaluation_id"].unique()])
playbook = qsc.load_playbook(1)
features = bt.trade_features(trades, details=details, playbook=playbook)
{"trades": len(features), "details requests": details.attrs["quantscope"]["requests"]}

# %%
checks = bt.crosscheck(recommendations, features)
checks[
    ["recommendation_id", "criterion", "sample_size_service", "sample_size_client"]
    + ["after_win_rate_service", "after_win_rate_client", "trade_difference_service"]
    + ["trade_difference_client", "agrees"]
].round(4)

# %%
{"recommendations": len(checks), "agree": int(checks["agrees"].sum())}

# %% [markdown]
# Every figure agrees: the optimizer counts what it says it counts. What it counts is the
# criterion's **signal** on all of the class's trades (kept versus all, as a hard filter, the
# threshold picked on the same trades), not what applying the recommendation would do.
#
# ## Every claim beside its effect
#
# `bt.crosscheck` also replays the whole pass rule with the recommended threshold against the
# current one: the **effect**, what applying produces (`*_replay`). `bt.what_if_intervals`
# gives that effect its intervals (a Poisson bootstrap over tokens, from the module every
# interval of the toolkit comes from), on the same trades: the recommendation's quant and
# class.

# %%
def interval(frame, name, scale=1.0, digits=1):
    """'estimate [lo, hi]' of ``name`` and its ``_lo``/``_hi`` columns, scaled, for reading."""

    def one(row):
        ends = ("", "_lo", "_hi")
        est, lo, hi = (round(scale * row[f"{name}{end}"], digits) + 0.0 for end in ends)
        return f"{est:+.{digits}f} [{lo:+.{digits}f}, {hi:+.{digits}f}]"

    return frame.apply(one, axis=1)


def effects_of(recommendations, features):
    """The replayed effect of each recommendation with its intervals (what_if_intervals)."""
    rows = []
    for _, rec in recommendations.iterrows():
        sample = features[
            (features["quant_id"] == rec["quant_id"])
            & (features["market_cap_class"] == rec["market_cap_class"])
        ]
        found = bt.what_if_intervals(
            sample,
            rec["criterion"],
            [float(rec["new_threshold"])],
            current=float(rec["old_threshold"]),
        )
        rows.append(found.iloc[0].rename(rec["recommendation_id"]))
    return pd.DataFrame(rows).rename_axis("recommendation_id")


def claims_and_effects(recommendations, checks, effects):
    """One row per recommendation: its claim (service), then its effect with intervals."""
    checks = checks.set_index("recommendation_id")
    recs = recommendations.set_index("recommendation_id")
    return pd.DataFrame(
        {
            "class": recs["market_cap_class"],
            "criterion": recs["criterion"],
            "change": pd.Series(
                [f"{a:g} → {b:g}" for a, b in zip(recs["old_threshold"], recs["new_threshold"])],
                index=recs.index,
            ),
            "confidence": recs["confidence"].round(2),
            "claim: win rate": pd.Series(
                [f"{a:.3f} → {b:.3f}" for a, b in zip(recs["before_win_rate"], recs["after_win_rate"])],
                index=recs.index,
            ),
            "claim: trades": recs["trade_difference"],
            "effect: trades": checks["trades_change_replay"],
            "effect: d_win_rate (pts)": interval(effects, "d_win_rate", 100),
            "effect: d_total_pnl_usd": interval(effects, "d_total_pnl_usd", digits=0),
            "effect: d_roi (pts)": interval(effects, "d_roi", 100),
            "moved tokens": effects["moved_tokens"],
        }
    ).reindex(recs.index)


effects = effects_of(recommendations, features)
claims_and_effects(recommendations, checks, effects)

# %% [markdown]
# The intervals' estimates are crosscheck's replayed figures, to the bit:

# %%
replayed = checks.set_index("recommendation_id")
{
    "same d_win_rate": bool(
        np.allclose(effects["d_win_rate"], replayed["win_rate_change_replay"], equal_nan=True)
    ),
    "same d_total_pnl_usd": bool(
        np.allclose(
            effects["d_total_pnl_usd"], replayed["total_pnl_usd_change_replay"], equal_nan=True
        )
    ),
}

# %%
print(checks.attrs["crosscheck"]["note"])
print(QUESTION_LABELS["effect"])

# %% [markdown]
# The claims are win-rate gains of several points on dozens of trades each; the effects are
# mostly a trade or none, and a win-rate change whose interval holds zero. Where no token's
# trades move ("nothing moved"), the interval is the rule of three: how much a future sample
# could move, not a measured gain.
#
# ## The screen as the guard
#
# A recommendation picks its threshold on the very trades it is scored on, among many
# criteria and thresholds: nothing in its confidence accounts for that search. `bt.screen`
# (notebook 5) does: every criterion and class out of sample, purged, tokens apart, with a
# p-value adjusted for everything it searched. Beside each recommendation, the screen's
# verdict on its criterion in its class (the signal; the screen chooses its own threshold on
# training trades, so it judges the criterion, not the recommended number):

# %%
screened = bt.screen(features)
verdict = screened.set_index(["market_cap_class", "criterion"])
keys = list(zip(recommendations["market_cap_class"], recommendations["criterion"]))
guard = pd.DataFrame(
    {
        "class": recommendations["market_cap_class"].to_numpy(),
        "criterion": recommendations["criterion"].to_numpy(),
        "confidence": recommendations["confidence"].round(2).to_numpy(),
        "signal (pts)": interval(verdict.loc[keys], "signal", 100).to_numpy(),
        "adjusted p": verdict.loc[keys, "p_value"].round(4).to_numpy(),
        "signal found": verdict.loc[keys, "significant"].to_numpy(),
        "effect: d_win_rate above 0": (effects["d_win_rate_lo"] > 0).to_numpy(),
    },
    index=recommendations["recommendation_id"].rename("recommendation_id"),
)
guard

# %%
{
    "hypotheses": screened.attrs["screen"]["hypotheses"],
    "combos_searched": screened.attrs["screen"]["combos_searched"],
    "recommendations": len(guard),
    "signal found": int(guard["signal found"].sum()),
    "signal found and effect above 0": int(
        (guard["signal found"] & guard["effect: d_win_rate above 0"]).sum()
    ),
}

# %% [markdown]
# Call the recommendations what they are. Those on criteria with no signal after the search
# (the social criteria among them: static traits of a token, noise in this simulated market)
# are claims the optimizer's search produced, however confident it says it is. A
# recommendation worth applying has a signal the screen finds **and** an effect whose interval
# says it helps; even then, read its PnL interval: fewer trades can mean less money.

# %% [markdown]
# ## The README's showcase, replayed
#
# The project README quotes one recommendation of this world's first analysis: Cinder (quant
# 3), `MID_CAP`, `smart_money_buys` 2 → 3, win rate 0.528 → 0.765. Its effect needs Cinder's
# `MID_CAP` trades with their values. A trade's class is its buy evaluation's market cap, which
# the evaluations list carries: three pages find the class's evaluations, and only those get
# an eval-details request (about 410, once).

# %%
showcase = qsc.load_recommendations(3)
showcase = showcase[
    (showcase["market_cap_class"] == "MID_CAP") & (showcase["criterion"] == "smart_money_buys")
]
cinder = qsc.load_trades(3)
cinder_closed = cinder[cinder["status"] == "Closed"]
buys = qsc.load_evaluations(3, evaluation_type="TOKEN_BUY", passed=True)
buys = buys[buys["evaluation_id"].isin(cinder_closed["evaluation_id"])]
mid_ids = buys.loc[bt.market_cap_class(buys["market_cap_usd"]) == "MID_CAP", "evaluation_id"]
mid_details = qsc.load_eval_details([int(i) for i in mid_ids])
cinder_mid = bt.trade_features(
    cinder_closed[cinder_closed["evaluation_id"].isin(mid_ids)],
    details=mid_details,
    playbook=qsc.load_playbook(3),
)
{
    "Cinder's closed trades": len(cinder_closed),
    "MID_CAP trades": len(cinder_mid),
    "evaluation pages": buys.attrs["quantscope"]["pages"],
    "details requests": mid_details.attrs["quantscope"]["requests"],
}

# %%
showcase_checks = bt.crosscheck(showcase, cinder_mid)
showcase_effects = effects_of(showcase, cinder_mid)
claims_and_effects(showcase, showcase_checks, showcase_effects).T

# %% [markdown]
# The claim, +23.7 win-rate points on 411 trades, is the filter's: the trades whose
# smart-money buys reach 3, against all of them. In Cinder's playbook the criterion is one
# weight of many, so applying the change drops a few trades, moves the win rate by a fraction
# of a point and loses money, each with its interval above.

# %% [markdown]
# ## What a recommendation means
#
# The optimizer's figures treat the criterion as a **hard filter**: after the change, a trade
# is kept only when its value passes the new threshold. The playbook does not work that way.
# A trade is bought when every *required* criterion passes and the weighted score reaches the
# pass mark (68 of 100 for Atlas); a criterion that is not required only adds its weight to
# the score when it passes. In Atlas's `BUYING` playbook only the LP lock and the mint
# authority are required, and the weights add up to 18.5 per class:

# %%
buying = playbook[playbook["config_type"] == "BUYING"]
weights = buying[buying["market_cap_class"] == "MID_CAP"].set_index("criterion")
weights = weights[["weight", "required", "threshold"]].sort_values("weight", ascending=False)
weights.assign(share_of_score=(100 * weights["weight"] / weights["weight"].sum()).round(1))

# %% [markdown]
# Take the recommendation on `twitter_followers` for `MID_CAP`. Its weight is 0.5, 2.7 points
# of the score: failing it costs a token 2.7 points, no more. Most of the trades the filter
# drops had *already* failed the criterion at the current threshold and were bought anyway:

# %%
rec = recommendations[
    (recommendations["criterion"] == "twitter_followers")
    & (recommendations["market_cap_class"] == "MID_CAP")
].iloc[0]
mid = features[features["market_cap_class"] == "MID_CAP"]
values = mid["twitter_followers"]
{
    "current threshold": float(rec["old_threshold"]),
    "recommended": float(rec["new_threshold"]),
    "MID_CAP trades": len(mid),
    "dropped by the filter": int((values < rec["new_threshold"]).sum()),
    "of which already below the current threshold": int((values < rec["old_threshold"]).sum()),
}

# %% [markdown]
# `bt.compare_playbooks(a, b, features)` replays two whole playbooks (every threshold, weight,
# flag and pass mark, by the exact rule notebook 5 checked) on the same buy evaluations. Here
# the playbook as it is against the same playbook with only this threshold changed, on the
# `MID_CAP` trades:

# %%
def with_threshold(playbook, config_id, threshold):
    """A copy of ``playbook`` with one entry's threshold changed."""
    changed = playbook.copy()
    changed.loc[changed["config_id"] == config_id, "threshold"] = threshold
    return changed


recommended = with_threshold(playbook, rec["config_id"], rec["new_threshold"])
bt.compare_playbooks(playbook, recommended, mid, names=("now", "recommended")).round(4)

# %% [markdown]
# In the playbook, the change drops **no** trade: every one of those trades scored enough
# without the 2.7 points. The 64 trades and the 3.8-point win-rate gain exist only for a
# hard filter.
#
# The same comparison for every recommendation: the criterion's weight, how many of the
# class's trades already fail the *current* threshold (bought anyway), the optimizer's filter
# figures, and the playbook replay's:

# %%
rows = []
for _, rec in recommendations.iterrows():
    sample = features[features["market_cap_class"] == rec["market_cap_class"]]
    recommended = with_threshold(playbook, rec["config_id"], rec["new_threshold"])
    compared = bt.compare_playbooks(playbook, recommended, sample)["change"]
    entry = playbook[playbook["config_id"] == rec["config_id"]].iloc[0]
    passes = bt.OPERATORS[entry["operator"]](sample[rec["criterion"]], rec["old_threshold"])
    rows.append(
        {
            "id": rec["recommendation_id"],
            "class": rec["market_cap_class"],
            "criterion": rec["criterion"],
            "weight": entry["weight"],
            "failing now": int((~passes).sum()),
            "filter: trades": rec["trade_difference"],
            "filter: win rate": rec["after_win_rate"] - rec["before_win_rate"],
            "playbook: trades": int(compared["trades"]),
            "playbook: win rate": compared["win_rate"],
            "playbook: PnL (USD)": compared["total_pnl_usd"],
        }
    )
in_playbook = pd.DataFrame(rows)
in_playbook.round(4)

# %% [markdown]
# Many of each filter's "dropped" trades already fail the current threshold and were bought
# all the same: 58 of the 64 for `twitter_followers`, and for `ai_confidence` on `DEGEN_CAP`
# all 85, so that its recommended move (45 to 45.0019) changes nothing at all. Once in the
# playbook, only the heavier criteria move more than a couple of trades: `smart_money_buys`
# (weight 3, 16 % of the score) drops about a third of what its filter drops, and its
# win-rate gain shrinks from 9 to 10 points to 2 to 3 (and to nothing on `MID_CAP`); criteria
# of weight 0.5 change nothing, or one trade. The optimizer's figures say how well a
# criterion *separates* winners from losers; the playbook replay says what changing the
# threshold would *do*.
#
# A recommendation acts as measured only when the criterion is a filter, that is when it is
# required. For the most confident recommendation, the threshold alone against the threshold
# and `required`:

# %%
top = recommendations.iloc[0]
sample = features[features["market_cap_class"] == top["market_cap_class"]]
threshold_only = with_threshold(playbook, top["config_id"], top["new_threshold"])
as_filter = threshold_only.copy()
as_filter.loc[as_filter["config_id"] == top["config_id"], "required"] = True
pd.concat(
    {
        "threshold only": bt.compare_playbooks(playbook, threshold_only, sample)["change"],
        "threshold and required": bt.compare_playbooks(playbook, as_filter, sample)["change"],
    },
    axis=1,
).loc[["trades", "win_rate", "total_pnl_usd", "roi"]].round(4)

# %% [markdown]
# Required, the threshold drops exactly the optimizer's `trade_difference` (152 trades) and
# gains its win rate (+8.9 points); the threshold alone drops 50 trades for +1.6 points, and
# on these trades it made more money (+563 USD against +274). Which one to want is the
# researcher's call. Both are measured on the trades that happened: had a trade been
# skipped, the quant would have been free to buy the same token at a later evaluation, a
# trade no history holds.

# %% [markdown]
# ## Applying one, by its effect
#
# `qsc.apply_recommendation(id)` sets the playbook entry's threshold to the recommended one.
# Anything that writes is judged by its effect: the recommendation applied here is the first,
# in the optimizer's order, whose criterion has a signal the screen finds and whose replayed
# win-rate change has an interval above zero (the most confident one when none qualifies).

# %%
passes = guard["signal found"] & guard["effect: d_win_rate above 0"]
chosen_id = int(guard.index[passes.to_numpy()][0]) if passes.any() else int(guard.index[0])
chosen = recommendations[recommendations["recommendation_id"] == chosen_id].iloc[0]
claims_and_effects(recommendations, checks, effects).loc[chosen_id].rename(
    f"{chosen_id}: {'passes the guard' if passes.any() else 'none passes: the most confident'}"
)

# %% [markdown]
# Its playbook entry, as the service holds it before:

# %%
entry = playbook["config_id"] == chosen["config_id"]
before = playbook.loc[entry, ["market_cap_class", "criterion", "config_type", "threshold"]]
before

# %%
applied = qsc.apply_recommendation(chosen_id)
applied

# %% [markdown]
# Read back (the apply invalidated the cached playbook), only that entry moved:

# %%
after = qsc.load_playbook(1)
both = playbook[["config_id", "market_cap_class", "criterion", "config_type", "threshold"]].merge(
    after[["config_id", "threshold"]], on="config_id", suffixes=(" before", " after")
)
both[both["threshold before"] != both["threshold after"]]

# %% [markdown]
# The dashboard now lists it among the applied recommendations (applied at the world's
# clock), and the rest stay open:

# %%
applied_list = qsc.load_recommendations(1, applied=True)
applied_list[["recommendation_id", "criterion", "market_cap_class", "new_threshold", "applied_at"]]

# %%
{"unapplied": len(qsc.load_recommendations(1, applied=False))}

# %% [markdown]
# `qsc.apply_recommendation` is the plain API call. The panel below applies through an audit
# log instead (as notebook 5's threshold panel does), so its *Undo* can put the old threshold
# back; without it, `qsc.update_playbook(1, [{"config_id": ..., "value": 2}])` does.

# %% [markdown]
# ## The recommendations panel
#
# `RecommendationsPanel` shows the recommendations with the client-side cross-check beside
# each, and side by side the service's claimed win-rate change, the filter's (the signal) and
# the replayed effect of the new threshold against the current one, which is what applying
# produces; *Analyze* runs the
# optimizer again (never applying), *Apply…* applies the chosen one after confirmation, and
# *Undo* reverts it. In a stored copy of this notebook it shows only its text placeholder;
# its state follows as tables.

# %%
panel = RecommendationsPanel(1, trades=trades, details=details)
panel

# %% [markdown]
# The panel's cross-check is the same `bt.crosscheck`, now with the applied recommendation
# listed too:

# %%
panel.checks[
    ["recommendation_id", "market_cap_class", "criterion", "old_threshold", "new_threshold"]
    + ["agrees", "win_rate_change_service", "win_rate_change_replay"]
].round(4)

# %% [markdown]
# Its picker offers the unapplied recommendations, most confident first:

# %%
[label for label, _ in panel.picker.options]
