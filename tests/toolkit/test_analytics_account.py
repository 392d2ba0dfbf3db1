"""The account's figures on sandbox trades over HTTP: period drawdowns, ratio flags, execution.

Issue 10, items 4 and 5, on the seed-7 world. Each period of ``by(freq=...)`` reads the
account's equity (not a fresh 10,000 USD), so its drawdown is exactly the minimum of the
account's ``drawdown()`` over the period; annualised ratios of calendar periods under 30 days
are not reported; trades that were never executed (the service's shadow outcomes) stay out of
every figure unless asked for, and are labelled when they are in.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import quantscope.accessor  # noqa: F401  (registers df.quant)
import quantscope.loaders as L
from quantscope import analytics as A
from quantscope._http.client import Client

QUANTS = {1: "Atlas", 2: "Borealis", 3: "Cinder"}
PANDAS_PERIOD = {"W": "W", "M": "M"}


@pytest.fixture(scope="module")
def executed(module_client: Client) -> pd.DataFrame:
    return L.load_trades(client=module_client)


@pytest.fixture(scope="module")
def everything(module_client: Client) -> pd.DataFrame:
    return L.load_trades(trading_status="all", client=module_client)


def windows(index: pd.DatetimeIndex, freq: str) -> pd.DatetimeIndex:
    """The UTC start of the calendar period of each time, by pandas' own periods."""
    start = index.tz_convert(None).to_period(PANDAS_PERIOD[freq]).start_time
    return pd.DatetimeIndex(start).as_unit("ms").tz_localize("UTC")


def assert_periods_read_the_account(table: pd.DataFrame, account: pd.DataFrame, freq: str) -> None:
    """Every period's drawdown is the minimum of the account's drawdown() over its closes."""
    fall = A.drawdown(account)
    period = windows(pd.DatetimeIndex(fall.index), freq)
    assert len(table) > 0
    for start, row in table.iterrows():
        inside = fall[period == start]
        if row["trades"] == 0:  # only open positions: no close to read
            assert inside.empty
            assert row["max_drawdown"] == 0.0
            continue
        assert row["max_drawdown"] == inside["drawdown"].min(), start
        assert row["max_drawdown_usd"] == inside["drawdown_usd"].min(), start
        assert row["capital_usd"] == A.summary(account)["capital_usd"]


# --------------------------------------------------------------------------------------------
# Item 4: drawdown per period on the account
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("freq", ["W", "M"])
@pytest.mark.parametrize("quant_id", list(QUANTS))
def test_each_periods_drawdown_is_the_accounts_drawdown_over_it(
    module_client: Client, quant_id: int, freq: str
) -> None:
    trades = L.load_trades(quant_id, client=module_client)
    assert_periods_read_the_account(trades.quant.by(freq=freq), trades, freq)


@pytest.mark.parametrize("freq", ["W", "M"])
def test_each_quants_periods_read_that_quants_account(executed: pd.DataFrame, freq: str) -> None:
    table = executed.quant.by("quant_name", freq=freq)
    for name in QUANTS.values():
        account = executed[(executed["quant_name"] == name).to_numpy(bool)]
        assert_periods_read_the_account(table.xs(name, level="quant_name"), account, freq)
    # the three quants together are one account of 30,000 USD
    assert_periods_read_the_account(executed.quant.by(freq=freq), executed, freq)


def test_atlas_week_of_september_21_is_its_accounts_fall_not_a_fresh_starts(
    executed: pd.DataFrame,
) -> None:
    atlas = executed[(executed["quant_name"] == "Atlas").to_numpy(bool)]
    week = atlas.quant.by(freq="W").loc[pd.Timestamp("2026-09-21", tz="UTC")]
    fall = atlas.quant.drawdown()
    inside = fall[(fall.index >= "2026-09-21") & (fall.index < "2026-09-28")]
    assert week["max_drawdown"] == inside["drawdown"].min()
    assert week["max_drawdown"] == pytest.approx(-0.0194, abs=5e-5)  # was -9.56 % from 10,000 USD
    assert week["capital_usd"] == 10_000.0


def test_weekly_rows_report_no_annualised_ratio_and_flag_why(executed: pd.DataFrame) -> None:
    weekly = executed.quant.by("quant_name", freq="W")
    assert (weekly["days"] <= 7).all()
    assert weekly["few_days"].all()
    assert weekly["sharpe"].isna().all()
    assert weekly["sortino"].isna().all()
    assert not np.isinf(weekly["sortino"]).any()
    # no_losing_day says which weeks had no losing day (Sortino without a downside)
    for (name, start), row in weekly.iterrows():
        closed = executed[
            (executed["quant_name"] == name).to_numpy(bool)
            & (executed["status"] == "Closed").to_numpy(bool)
        ]
        days = closed.quant.daily_pnl()
        days = days[(days.index >= start) & (days.index < start + pd.Timedelta(days=7))]
        assert row["no_losing_day"] == bool((days >= 0).all()), (name, start)
    assert weekly["no_losing_day"].any()  # some weeks never lost a day (Sortino was inf)


def test_a_month_of_30_days_reports_its_ratios_and_shorter_ones_do_not(
    executed: pd.DataFrame,
) -> None:
    monthly = executed.quant.by(freq="M")
    long_enough = monthly["days"] >= A.MIN_RATIO_DAYS
    assert long_enough.any()
    assert (~long_enough).any()
    assert (monthly["few_days"] == ~long_enough).all()
    assert monthly.loc[~long_enough, ["sharpe", "sortino"]].isna().all().all()
    month = pd.DatetimeIndex(pd.to_datetime(executed["closed_at"], utc=True))
    for start in monthly.index[long_enough]:
        inside = (month >= start) & (month < start + pd.offsets.MonthBegin(1))
        alone = executed[inside & (executed["status"] == "Closed").to_numpy(bool)]
        assert monthly.loc[start, "sharpe"] == pytest.approx(alone.quant.summary()["sharpe"])
        assert math.isfinite(monthly.loc[start, "sharpe"])


def test_the_whole_history_keeps_its_ratios_and_is_not_flagged(executed: pd.DataFrame) -> None:
    s = executed.quant.summary()
    assert s["days"] > A.MIN_RATIO_DAYS
    assert not s["few_days"]
    assert not s["no_losing_day"]
    assert s["sharpe"] == A.sharpe_ratio(executed.quant.daily_pnl()) or math.isclose(
        s["sharpe"], A.sharpe_ratio(executed.quant.daily_pnl()), rel_tol=1e-9
    )


@pytest.mark.parametrize("freq", ["week", "2W", "weekly", "H", ""])
def test_a_bad_freq_is_one_line_naming_the_spellings(executed: pd.DataFrame, freq: str) -> None:
    with pytest.raises(ValueError, match="is not a calendar period") as caught:
        executed.quant.by(freq=freq)
    message = str(caught.value)
    assert "\n" not in message
    assert f"freq={freq!r} is not a calendar period" in message
    assert "W (week)" in message
    assert "M (month)" in message
    assert "h (hour)" in message
    assert caught.value.__cause__ is None
    assert caught.value.__context__ is None


def test_a_bad_freq_of_pass_rates_is_the_same_line(module_client: Client) -> None:
    evaluations = L.load_evaluations(2, start="2026-09-20", end="2026-09-21", client=module_client)
    with pytest.raises(ValueError, match=r"^freq='week' is not a calendar period; use one of h"):
        evaluations.quant.pass_rates(freq="week")


# --------------------------------------------------------------------------------------------
# Item 5: executed versus hypothetical
# --------------------------------------------------------------------------------------------


def test_executed_is_the_services_trading_status(
    module_client: Client, everything: pd.DataFrame, executed: pd.DataFrame
) -> None:
    flags = everything.quant.executed()
    assert flags.name == "executed"
    assert flags.index.equals(everything.index)
    assert set(everything.loc[flags.to_numpy(bool), "trade_id"]) == set(executed["trade_id"])
    hypothetical = set(everything.loc[~flags.to_numpy(bool), "trade_id"])
    declined = {
        int(i)
        for status in ("rejected", "recommended", "delayed")
        for i in L.load_trades(trading_status=status, client=module_client)["trade_id"]
    }
    assert hypothetical == declined
    assert len(hypothetical) == 659


def test_a_frame_of_every_decision_is_summarised_over_its_executed_trades(
    everything: pd.DataFrame, executed: pd.DataFrame
) -> None:
    ours, theirs = everything.quant.summary(), executed.quant.summary()
    assert ours.name == "executed"
    assert ours["hypothetical_trades"] == 0
    for name in A.SUMMARY_METRICS:
        assert ours[name] == theirs[name] or (pd.isna(ours[name]) and pd.isna(theirs[name])), name
    note = ours.attrs["execution"]
    assert note == {
        "basis": "executed",
        "label": "executed trades",
        "executed_rows": len(executed),
        "hypothetical_rows": 659,
        "left_out_rows": 659,
    }
    mixed = everything.quant.summary(execution="all")
    closed = everything[(everything["status"] == "Closed").to_numpy(bool)]
    assert mixed.name == "all"
    assert mixed["trades"] == len(closed)
    assert mixed["hypothetical_trades"] == 402 + 229  # REJECT and RECOMMEND closed trades
    assert (closed["decision"].isin(["REJECT", "RECOMMEND"])).sum() == 631


def test_cinders_drawdown_is_its_executed_one_by_default(everything: pd.DataFrame) -> None:
    cinder = everything[(everything["quant_name"] == "Cinder").to_numpy(bool)]
    executed_fall = cinder.quant.summary()["max_drawdown"]
    assert executed_fall == pytest.approx(-0.135, abs=5e-4)
    assert cinder.quant.drawdown()["drawdown"].min() == executed_fall
    assert cinder.quant.summary(execution="all")["max_drawdown"] == pytest.approx(-0.322, abs=5e-4)
    table = everything.quant.by("quant_name")
    assert table.loc["Cinder", "max_drawdown"] == executed_fall
    assert table.attrs["execution"]["basis"] == "executed"


def test_equity_daily_and_rates_leave_the_hypothetical_trades_out(
    everything: pd.DataFrame, executed: pd.DataFrame
) -> None:
    curve = everything.quant.equity_curve()
    pd.testing.assert_frame_equal(curve, executed.quant.equity_curve())
    assert curve.attrs["execution"]["basis"] == "executed"
    pd.testing.assert_series_equal(everything.quant.daily_returns(), executed.quant.daily_returns())
    assert everything.quant.win_rate() == executed.quant.win_rate()
    assert everything.quant.roi() == executed.quant.roi()
    shadow = everything.quant.equity_curve(execution="hypothetical")
    assert len(shadow) == 631
    assert shadow.attrs["execution"]["label"].startswith("hypothetical")


def test_by_decision_shows_hypothetical_groups_only_when_asked(everything: pd.DataFrame) -> None:
    default = everything.quant.by("decision")
    assert sorted(map(str, default.index)) == ["APPROVE", "DELAY"]
    every = everything.quant.by("decision", execution="all")
    assert every.loc["REJECT", "hypothetical_trades"] == every.loc["REJECT", "trades"] == 402
    assert every.loc["RECOMMEND", "hypothetical_trades"] == 229
    assert every.loc["APPROVE", "hypothetical_trades"] == 0


def test_a_frame_of_hypothetical_trades_alone_is_labelled_hypothetical(
    module_client: Client,
) -> None:
    rejected = L.load_trades(3, trading_status="rejected", client=module_client)
    s = rejected.quant.summary()
    assert s.name == "hypothetical"
    assert s.attrs["execution"]["basis"] == "hypothetical"
    assert s["trades"] == s["hypothetical_trades"] > 0
    assert s["trades"] == rejected.attrs["quantscope"]["summary"]["realized"]["trades"]
    assert rejected.quant.summary(execution="executed")["trades"] == 0
    assert rejected.quant.equity_curve().attrs["execution"]["label"] == (
        "hypothetical trades, never executed"
    )


def test_an_unknown_execution_names_the_choices(executed: pd.DataFrame) -> None:
    with pytest.raises(ValueError, match="execution='executd' is not a basis; use 'executed'"):
        executed.quant.summary(execution="executd")  # type: ignore[arg-type]
