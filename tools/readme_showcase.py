"""The README's optimizer showcase, produced by running the code (issue 21).

The README shows the optimizer's most confident recommendation beside what applying it does.
This script computes that table on the seed-7 sandbox (the world ``make demo`` and the
notebooks use) and prints it as the README shows it:

    python tools/readme_showcase.py               # a fresh embedded sandbox world (temporary)
    python tools/readme_showcase.py --url U --key K

``showcase(client)`` returns the table; tests/toolkit/test_report.py holds the README's text to
it, so the README cannot drift from the code.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

import pandas as pd

import quantscope as qsc
from quantscope import backtest as bt
from quantscope._http.client import Client

QUANT = 3  # the optimizer's most confident recommendation is quant 3's (seed 7)
README = Path(__file__).resolve().parents[1] / "README.md"
BEGIN, END = "<!-- showcase: tools/readme_showcase.py -->", "<!-- /showcase -->"


def showcase(client: Client) -> pd.DataFrame:
    """The most confident recommendation of quant ``QUANT``: the service's claim, then its
    replayed effect and its signal on the quant's closed executed trades of its class, each
    change with its 95 % interval (``what_if_intervals``: tokens resampled)."""
    recs = qsc.load_recommendations(QUANT, client=client)
    rec = recs.sort_values(["confidence", "recommendation_id"], ascending=[False, True]).iloc[0]
    trades = qsc.load_trades(QUANT, client=client)
    # The class of each trade's buy, from the evaluation list (1,000 a request), so that only
    # the class's trades cost an eval-details request each.
    buys = qsc.load_evaluations(QUANT, evaluation_type="TOKEN_BUY", client=client)
    classes = pd.Series(
        bt.market_cap_class(buys["market_cap_usd"]), index=buys["evaluation_id"].to_numpy()
    )
    of_class = classes.reindex(trades["evaluation_id"].to_numpy()).to_numpy() == str(
        rec["market_cap_class"]
    )
    closed = (trades["status"] == "Closed").fillna(False).to_numpy(dtype=bool)
    features = bt.trade_features(trades[closed & of_class], client=client)
    rows = features[
        (features["market_cap_class"].astype("string") == str(rec["market_cap_class"]))
        .fillna(False)
        .to_numpy(dtype=bool)
    ]
    criterion, new, old = (
        str(rec["criterion"]),
        float(rec["new_threshold"]),
        float(rec["old_threshold"]),
    )
    replay = bt.what_if(rows, criterion, [new], current=old, bootstrap=False).iloc[0]
    effect = bt.what_if_intervals(rows, criterion, [new], current=old).iloc[0]
    signal = bt.what_if_intervals(rows, criterion, [new], current=old, rule="filter").iloc[0]
    return pd.DataFrame(
        {
            "quant_id": [int(rec["quant_id"])],
            "market_cap_class": [str(rec["market_cap_class"])],
            "criterion": [criterion],
            "old_threshold": [old],
            "new_threshold": [new],
            "before_win_rate": [float(rec["before_win_rate"])],
            "after_win_rate": [float(rec["after_win_rate"])],
            "confidence": [float(rec["confidence"])],
            "trades": [int(replay["trades"] - replay["d_trades"])],
            "tokens": [int(rows["token_id"].nunique())],
            "effect_d_trades": [int(replay["d_trades"])],
            **{
                f"effect_{k}{s}": [float(effect[f"{k}{s}"])]
                for k in ("d_win_rate", "d_total_pnl_usd")
                for s in ("", "_lo", "_hi")
            },
            **{
                f"signal_d_win_rate{s}": [float(signal[f"d_win_rate{s}"])]
                for s in ("", "_lo", "_hi")
            },
        }
    )


def text(table: pd.DataFrame) -> str:
    """The showcase as the README prints it."""
    r = table.iloc[0]

    def pts(v: float) -> str:
        return f"{v * 100:+.1f} pts"

    def usd(v: float) -> str:
        return f"{'-' if v < 0 else '+'}${abs(v):,.2f}"

    return "\n".join(
        [
            f"quant {r['quant_id']} {r['market_cap_class']} {r['criterion']} "
            f"{r['old_threshold']:g} -> {r['new_threshold']:g} "
            f"({r['trades']} closed executed trades, {r['tokens']} tokens)",
            f"  service's claim (signal): win rate {r['before_win_rate']:.3f} -> "
            f"{r['after_win_rate']:.3f}, confidence {r['confidence']:.2f}",
            f"  signal (kept vs dropped, hard filter): win rate {pts(r['signal_d_win_rate'])} "
            f"[{pts(r['signal_d_win_rate_lo'])}, {pts(r['signal_d_win_rate_hi'])}]",
            f"  effect (whole pass rule replayed):     {r['effect_d_trades']:+d} trades, "
            f"win rate {pts(r['effect_d_win_rate'])} "
            f"[{pts(r['effect_d_win_rate_lo'])}, {pts(r['effect_d_win_rate_hi'])}], "
            f"PnL {usd(r['effect_d_total_pnl_usd'])} "
            f"[{usd(r['effect_d_total_pnl_usd_lo'])}, {usd(r['effect_d_total_pnl_usd_hi'])}]",
        ]
    )


def in_readme(readme: str = "") -> str:
    """The showcase text the README holds between its markers."""
    page = readme or README.read_text(encoding="utf-8")
    block = page.split(BEGIN, 1)[1].split(END, 1)[0]
    return block.strip().removeprefix("```").removesuffix("```").strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url")
    parser.add_argument("--key")
    args = parser.parse_args(argv)
    if args.url:
        client = Client(args.url, args.key, progress=False)
    else:
        os.environ["QUANTSCOPE_SANDBOX_DIR"] = tempfile.mkdtemp(prefix="showcase-")
        os.environ["QUANTSCOPE_CACHE_DIR"] = tempfile.mkdtemp(prefix="showcase-cache-")
        client = qsc.connect()
    with client:
        print(text(showcase(client)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
