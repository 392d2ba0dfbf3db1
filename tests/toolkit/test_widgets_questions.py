"""The panels on the two questions (issue 21), headless against the sandbox.

ThresholdPanel shows the effect (replayed: what applying does) and the signal (the criterion
as a hard filter: kept against dropped) of the selected threshold side by side, each decision
number with its interval from ``backtest.uncertainty`` and the sample it rests on; a threshold
that moves nothing shows the rule-of-three interval, not "±0"; nothing says "upper bound".
RecommendationsPanel shows each claim beside its replayed effect and interval and the screen's
out-of-sample verdict on its criterion, so a recommendation on a noise criterion is not shown
as a finding.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Iterator

import ipywidgets as W
import numpy as np
import pandas as pd
import pytest
from _helpers import QUANT, WidgetData

from quantscope import backtest as bt
from quantscope._http.client import Client
from quantscope.backtest import uncertainty
from quantscope.backtest.questions import QUESTION_LABELS
from quantscope.sandbox.serve import SandboxServer
from quantscope.widgets import RecommendationsPanel, ThresholdPanel


def with_interval(kind: str, estimate: float, lo: float, hi: float) -> str:
    """How the panels write an estimate and its 95 % interval (shares in points)."""

    def num(v: float) -> str:
        if kind == "usd":
            v = v if abs(v) >= 0.005 else 0.0
            return f"{'-' if v < 0 else '+' if v > 0 else ''}${abs(v):,.2f}"
        v = v if abs(v) >= 0.0005 else 0.0
        return f"{v * 100:+.1f}" if v else "0.0"

    unit = " pts" if kind == "share" else ""
    return f"{num(estimate)}{unit} [{num(lo)}, {num(hi)}]"


def texts(widget: W.Widget) -> Iterator[str]:
    """Every text a panel shows: HTML values, labels, descriptions, options, tooltips."""
    todo = [widget]
    while todo:
        w = todo.pop()
        todo += list(getattr(w, "children", ()))
        for name in ("value", "description", "tooltip"):
            value = getattr(w, name, None)
            if isinstance(value, str):
                yield value
        for option in getattr(w, "options", ()) or ():
            yield str(option)


def class_rows(widget_data: WidgetData, panel: ThresholdPanel) -> pd.DataFrame:
    features = bt.trade_features(widget_data.trades, details=widget_data.details)
    mine = features[
        (features["quant_id"] == QUANT).to_numpy(bool)
        & (features["market_cap_class"] == panel.class_picker.value).to_numpy(bool)
    ]
    mine.attrs = features.attrs
    return mine


@pytest.fixture
def threshold_panel(
    sandbox: SandboxServer, widget_data: WidgetData, client_for: Callable[..., Client]
) -> ThresholdPanel:
    return ThresholdPanel(
        QUANT, client=client_for(sandbox), trades=widget_data.trades, details=widget_data.details
    )


def test_the_selected_threshold_shows_both_questions_with_intervals_and_samples(
    threshold_panel: ThresholdPanel, widget_data: WidgetData
) -> None:
    panel = threshold_panel
    panel.select("smart_money_buys")
    entry = panel.entry
    assert entry is not None
    current = float(entry["threshold"])
    panel.set_threshold(current + 1)
    html = panel.questions_html.value
    mine = class_rows(widget_data, panel)
    for rule, question in (("replay", "effect"), ("filter", "signal")):
        assert QUESTION_LABELS[question] in html  # each column named by its question
        got = bt.what_if_intervals(
            mine, "smart_money_buys", [current + 1, current], rule=rule, playbook=panel.playbook
        )
        row, now = got.iloc[0], got.iloc[1]
        for name, kind in (
            ("d_win_rate", "share"),
            ("d_total_pnl_usd", "usd"),
            ("d_roi", "share"),
        ):
            cell = with_interval(kind, row[name], row[f"{name}_lo"], row[f"{name}_hi"])
            assert cell in html, (rule, name, cell)
            assert row[f"{name}_lo"] < row[f"{name}_hi"]
        trades = f"{int(now['trades']):,} → {int(row['trades']):,}"
        assert trades in html, trades  # the sample: trades now and kept
        tokens = got.attrs["intervals"]["clusters"]
        assert f"{tokens:,} ({int(row['moved_tokens']):,} move)" in html
    # the signal's defining number: kept against dropped, tokens resampled, with its sample
    kept = panel.kept_dropped
    assert kept is not None
    values = mine["smart_money_buys"]
    usable = values.notna() & mine["pnl_usd"].notna() & mine["buy_cost_usd"].notna()
    is_kept = (values >= current + 1) & usable
    won = mine["profitable"].fillna(False).astype(bool)
    assert kept["kept"] == int(is_kept.sum())
    assert kept["dropped"] == int((usable & ~is_kept).sum())
    assert kept["signal"] == pytest.approx(
        won[is_kept].mean() - won[usable & ~is_kept].mean(), abs=1e-12
    )
    assert kept["signal_lo"] < kept["signal"] < kept["signal_hi"]
    assert f"{kept['kept']:,} kept / {kept['dropped']:,} dropped trades" in html
    assert panel.effect is not None
    assert panel.effect.question == "effect"
    assert panel.signal is not None
    assert panel.signal.question == "signal"


def test_a_threshold_that_moves_nothing_shows_the_rule_of_three_not_zero(
    threshold_panel: ThresholdPanel,
) -> None:
    panel = threshold_panel
    panel.select("smart_money_buys")
    entry = panel.entry
    assert entry is not None
    panel.set_threshold(float(entry["threshold"]))  # proposed = now: nothing moves
    html = panel.questions_html.value
    assert "rule of three" in html
    assert panel.effect is not None
    assert panel.effect.nothing_moved
    row = panel.effect.row
    assert row["d_win_rate_lo"] < 0 < row["d_win_rate_hi"]  # an interval, not [0, 0]
    assert row["d_total_pnl_usd_hi"] > 0
    assert "±0" not in html.replace("not ±0", "")
    assert "[+0.0, +0.0]" not in html
    assert "[$0.00, $0.00]" not in html


@pytest.mark.slow  # a RecommendationsPanel computes every claim's effect and a screen: ~2 s
def test_no_upper_bound_anywhere_in_the_panels(
    threshold_panel: ThresholdPanel,
    sandbox: SandboxServer,
    widget_data: WidgetData,
    client_for: Callable[..., Client],
) -> None:
    panel = threshold_panel
    panel.select("smart_money_buys")
    entry = panel.entry
    assert entry is not None
    panel.set_threshold(float(entry["threshold"]) + 2)
    shown = []
    for rule in ("replay", "filter"):
        panel.rule_picker.value = rule
        assert panel.table is not None
        assert panel.table.attrs["question"] == {"replay": "effect", "filter": "signal"}[rule]
        shown += [*texts(panel.widget), str(panel.table.attrs["rule"])]
    recs = RecommendationsPanel(
        QUANT, client=client_for(sandbox), trades=widget_data.trades, details=widget_data.details
    )
    shown += list(texts(recs.widget))
    assert not [t for t in shown if "upper bound" in t.lower()]
    assert any(QUESTION_LABELS["signal"] in t for t in shown)


def test_a_slider_step_reads_the_cache_per_criterion_class_and_rule(
    threshold_panel: ThresholdPanel, monkeypatch: pytest.MonkeyPatch
) -> None:
    panel = threshold_panel
    calls: list[tuple[str, str]] = []
    real = uncertainty.what_if_intervals

    def counted(features: pd.DataFrame, criterion: str, *args: object, **kw: object) -> object:
        calls.append((criterion, str(kw.get("rule"))))
        return real(features, criterion, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(bt, "what_if_intervals", counted)
    panel.select("buy_sell_ratio")
    assert sorted(calls) == [("buy_sell_ratio", "filter"), ("buy_sell_ratio", "replay")]
    for value in panel.control.values[::20]:  # slider steps: every stop was computed at once
        panel.slider.value = panel.control.index(value)
    assert len(calls) == 2
    panel.select("smart_money_buys")
    panel.select("buy_sell_ratio")  # back: still cached
    assert len(calls) == 4
    panel.set_threshold(0.9012345)  # a typed value off the list: one more call per rule
    assert len(calls) == 6
    assert panel.effect is not None
    panel.reload()  # the playbook may have changed: the replayed effect is recomputed
    assert len(calls) == 8


@pytest.fixture
def recommendations(
    sandbox: SandboxServer, widget_data: WidgetData, client_for: Callable[..., Client]
) -> RecommendationsPanel:
    return RecommendationsPanel(
        QUANT, client=client_for(sandbox), trades=widget_data.trades, details=widget_data.details
    )


@pytest.mark.slow
def test_every_recommendation_sits_beside_its_replayed_effect_and_interval(
    recommendations: RecommendationsPanel,
) -> None:
    panel = recommendations
    recs, effects = panel.recommendations, panel.effects
    assert recs is not None
    assert effects is not None
    assert panel.research is not None
    assert effects["recommendation_id"].tolist() == recs["recommendation_id"].tolist()
    html = panel.table.value
    assert "effect: win rate change [95 %]" in html
    assert "effect: PnL change [95 %]" in html
    features = panel.research.features
    for _, rec in recs.iterrows():
        rows = features[(features["market_cap_class"] == rec["market_cap_class"]).to_numpy(bool)]
        rows.attrs = features.attrs
        got = bt.what_if_intervals(
            rows,
            str(rec["criterion"]),
            [float(rec["new_threshold"])],
            current=float(rec["old_threshold"]),
            playbook=panel.playbook,
        ).iloc[0]
        mine = effects[effects["recommendation_id"] == rec["recommendation_id"]].iloc[0]
        for name in ("d_win_rate", "d_total_pnl_usd", "d_roi"):
            for suffix in ("", "_lo", "_hi"):
                assert mine[f"effect_{name}{suffix}"] == pytest.approx(
                    got[f"{name}{suffix}"], rel=1e-9, abs=1e-6
                )
        cell = with_interval(
            "usd", got["d_total_pnl_usd"], got["d_total_pnl_usd_lo"], got["d_total_pnl_usd_hi"]
        )
        assert cell in html
        # the replayed point figures are crosscheck's (one definition of the effect)
    checks = panel.checks
    assert checks is not None
    np.testing.assert_allclose(
        effects["effect_d_win_rate"].to_numpy(float),
        checks["win_rate_change_replay"].to_numpy(float),
        atol=1e-12,
    )
    # before the Apply button: the selected one's effect in words, with its interval
    assert panel.selected is not None
    detail = panel.detail.value
    assert "Replayed, applying it does" in detail
    assert "95 % intervals" in detail
    children = list(panel.widget.children)
    assert children.index(panel.detail) < next(
        i for i, c in enumerate(children) if panel.apply_button in getattr(c, "children", ())
    )


@pytest.mark.slow
def test_a_noise_criterion_recommendation_is_not_shown_as_a_finding(
    recommendations: RecommendationsPanel,
) -> None:
    panel = recommendations
    recs = panel.recommendations
    assert recs is not None
    assert panel.research is not None
    # seed 7, quant 2: the optimizer recommends holder_growth_pct (noise: drawn independently
    # of every outcome) -3 -> -2.38 in MID_CAP with confidence 0.199
    noise = recs[(recs["criterion"] == "holder_growth_pct") & (recs["confidence"] > 0.18)]
    assert len(noise) == 1
    rec = noise.iloc[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        screened = bt.screen(panel.research.features)
    row = screened[
        (screened["market_cap_class"] == rec["market_cap_class"])
        & (screened["criterion"] == "holder_growth_pct")
    ].iloc[0]
    assert not row["significant"]
    assert panel.screen is not None
    mine = panel.screen[
        (panel.screen["market_cap_class"] == rec["market_cap_class"])
        & (panel.screen["criterion"] == "holder_growth_pct")
    ].iloc[0]
    for name in ("signal", "signal_lo", "signal_hi", "p_value", "hypotheses"):
        assert mine[name] == row[name]  # the signal-only screen is the screen's signal
    assert f"p = {row['p_value']:.3f}: no evidence" in panel.table.value
    panel.select(int(rec["recommendation_id"]))
    detail = panel.detail.value
    assert "Not a finding" in detail
    assert f"{int(row['hypotheses'])} criteria × classes screened" in detail
    assert "confidence is not a test" in detail
    text = re.sub(r"<[^>]+>", " ", detail)
    assert text.index("Not a finding") < len(text)  # said in the detail, above Apply
