"""A short tour of what the service serves, on the embedded sandbox: ``python -m quantscope.tour``.

``make demo`` runs it. It connects the way a researcher does (``qsc.connect()`` with no URL
starts the sandbox), loads every kind of frame once and prints what is there. Output is
deterministic (fixed seed, frozen world clock) apart from the cache's hit counts.

A tour survives a day of use: ``connect()`` below, which the tour and the research notebooks
call, is ``qsc.connect()`` and, on the embedded sandbox, a fresh quota day (the sandbox's
counts of today forgotten, nothing else changed), said in one line. So CLI runs, reports and
notebooks earlier the same day never leave a notebook short of quota (``QuotaShareExceeded``
at notebook 5 was the symptom). On a real service nothing is reset: its quota is yours.
"""

from __future__ import annotations

import argparse
import tempfile
from typing import Any

import pandas as pd

import quantscope as qsc
from quantscope._http.client import Client
from quantscope._http.embedded import new_quota_day

FRESH_DAY_LINE = (
    "quantscope tour: a fresh quota day on the embedded sandbox (what was spent on it today "
    "is forgotten), so the tour runs whatever ran before it"
)


def connect(url: str | None = None, api_key: str | None = None, **kwargs: Any) -> Client:
    """``qsc.connect(url, api_key, **kwargs)`` for a tour: on the embedded sandbox, its keys
    get a fresh day's quota first and one line says so; on any other service, nothing more.
    """
    client = qsc.connect(url, api_key, **kwargs)
    if not client.settings.offline and new_quota_day(client.base_url):
        print(FRESH_DAY_LINE, flush=True)
    return client


def _section(title: str) -> None:
    print(f"\n== {title} " + "=" * max(0, 72 - len(title)))


def _money(x: float) -> str:
    return f"${x:,.0f}" if x >= 0 else f"-${-x:,.0f}"


def run(cache_dir: str | None = None) -> None:
    """Print the tour (``cache_dir``: where the HTTP cache lives; default the user cache)."""
    client = connect(cache_dir=cache_dir, progress=False)

    _section("Trades by quant (executed, all pages)")
    trades = qsc.load_trades(trading_status="all")
    executed = qsc.load_trades()
    closed = executed[executed["status"] == "Closed"]
    table = closed.groupby("quant_name", observed=True).agg(
        trades=("trade_id", "size"),
        win_rate=("pnl_usd", lambda s: (s > 0).mean()),
        pnl_usd=("pnl_usd", "sum"),
        median_roi=("roi", "median"),
    )
    print(
        table.to_string(
            formatters={
                "win_rate": "{:.1%}".format,
                "pnl_usd": _money,
                "median_roi": "{:+.1%}".format,
            }
        )
    )
    print(f"\nModel validation of {len(trades):,} buy decisions:")
    print(trades["decision"].value_counts().to_string())

    _section("One trade, with its transactions")
    trade, txs = qsc.load_trade(int(closed["trade_id"].iloc[0]))
    row = trade.iloc[0]
    print(
        f"#{row['trade_id']} {row['token_symbol']} on {row['chain']} by {row['quant_name']}: "
        f"{_money(row['buy_cost_usd'])} in, pnl {row['pnl_usd']:+.2f} USD ({row['roi']:+.1%})"
    )
    print(
        txs[["action", "timestamp", "input_value_usd", "output_value_usd"]].to_string(index=False)
    )

    _section("Evaluations over the last week of the world")
    start, end = "2026-09-24T00:00:00Z", "2026-10-01T00:00:00Z"
    count = qsc.load_eval_count(start=start, end=end)
    print(f"{int(count['total']):,} evaluations, {count['pass_rate']:.1%} passed")
    series = qsc.load_eval_timeseries(start=start, end=end)
    print(
        series[["evaluations", "passed", "pass_rate"]].to_string(
            formatters={"pass_rate": "{:.1%}".format}
        )
    )

    _section("Why an evaluation passed: its criteria")
    details = qsc.load_eval_details(int(closed["evaluation_id"].iloc[0]))
    print(
        details[["category", "criterion", "value", "threshold", "operator", "passed"]].to_string(
            index=False
        )
    )

    _section("Candles of that token (daily)")
    candles = qsc.load_ohlcv(int(row["token_id"]), "1d")
    print(candles.tail(5).to_string(float_format=lambda x: f"{x:.6g}"))

    _section("Alpha signals by stage and chain")
    print(qsc.load_signal_stats().to_string())

    _section("Playbook of quant 1 (BUYING, DEGEN_CAP)")
    playbook = qsc.load_playbook(1)
    buying = playbook[
        (playbook["config_type"] == "BUYING") & (playbook["market_cap_class"] == "DEGEN_CAP")
    ]
    print(
        buying[["category", "criterion", "operator", "threshold", "weight", "required"]].to_string(
            index=False
        )
    )

    _section("The optimizer's most confident recommendations")
    recs = qsc.load_recommendations().sort_values(
        ["confidence", "recommendation_id"], ascending=[False, True]
    )
    cols = [
        "quant_id",
        "market_cap_class",
        "criterion",
        "old_threshold",
        "new_threshold",
        "before_win_rate",
        "after_win_rate",
        "confidence",
    ]
    print(recs[cols].head(8).to_string(index=False, float_format=lambda x: f"{x:.3g}"))

    _section("Cache and quota")
    info = client.cache.info()
    print(f"{info}")
    print(
        "Every load above is now on disk: run with --cache-dir DIR and a second tour spends no "
        "quota."
    )


def main(argv: list[str] | None = None) -> int:
    """Run the tour (``python -m quantscope.tour``); the exit status."""
    parser = argparse.ArgumentParser(prog="python -m quantscope.tour", description=__doc__)
    parser.add_argument("--cache-dir", help="HTTP cache directory (default: a fresh temp dir)")
    args = parser.parse_args(argv)
    pd.set_option("display.width", 120)
    if args.cache_dir:
        run(args.cache_dir)
    else:
        with tempfile.TemporaryDirectory(prefix="quantscope-tour-") as tmp:
            run(tmp)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
