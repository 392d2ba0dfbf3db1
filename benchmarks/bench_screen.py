"""The search-aware screen at scale: issue 22's "18 criteria x 3 classes with 1,000
token-cluster resamples over 100k trades in under 60 s on this machine's 2 cores".

Cases, on the same synthetic trades (``bench_rank.synthetic_features`` with open and close
times added: ~14,300 tokens of ~7 trades, the first 3 criteria planted):

* ``screen``: ``bt.screen(features, flips=1000, resamples=1000)``: 5 walk-forward blocks x
  2 token sets per class, 21 training thresholds per criterion, the sign-flip max-T test and
  the token bootstrap of every row's signal (the synthetic trades keep no playbook, so there
  is no replayed effect to add);
* ``screen (no resampling)``: the same with ``flips=1`` and ``resamples=1``: what 1,000
  flips and 1,000 resamples add;
* ``what_if_intervals (replay)``: ``bt.what_if_intervals`` of ``buy_sell_ratio`` at 101
  thresholds with 1,000 token-cluster resamples, the pass rule replayed (``bench_replay``'s
  trades and playbooks, ~7 trades a token), over the same number of trades.

The warm-up checks that the planted criteria have the three highest criterion scores and
that no noise criterion is significant.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from benchmarks import bench_replay
from benchmarks._common import BenchResult, Case, measure, print_result, ratio
from benchmarks.bench_rank import PLANTED, synthetic_features
from quantscope import backtest as bt

DEFAULT_TRADES = 100_000
DEFAULT_RESAMPLES = 1000
DEFAULT_REPEAT = 1
TARGET_S = 60.0

SCREEN = "screen"
BARE = "screen (no resampling)"
INTERVALS = "what_if_intervals (replay)"


def timed_features(n: int, seed: int = 7) -> pd.DataFrame:
    """``synthetic_features`` with ``opened_at`` (60 days) and ``closed_at`` (1-72 h later)."""
    frame = synthetic_features(n, seed)
    rng = np.random.default_rng(seed + 1)
    opened = pd.Timestamp("2026-08-01", tz="UTC") + pd.to_timedelta(
        np.sort(rng.uniform(0, 60 * 24, n)), unit="h"
    )
    frame["opened_at"] = opened
    frame["closed_at"] = opened + pd.to_timedelta(rng.uniform(1, 72, n), unit="h")
    return frame


def replay_features(n: int, seed: int = 7) -> pd.DataFrame:
    """``bench_replay``'s trades and playbooks with a token id (~7 trades a token)."""
    frame = bench_replay.synthetic_features(n, seed)
    frame["token_id"] = np.random.default_rng(seed + 2).integers(0, max(n // 7, 1), n)
    return frame


def _check(results: Mapping[str, object]) -> None:
    intervals = results[INTERVALS]
    assert isinstance(intervals, pd.DataFrame)
    assert len(intervals) > 1
    assert intervals.attrs["intervals"]["resamples"] > 0
    found = results[SCREEN]
    assert isinstance(found, pd.DataFrame)
    assert len(found) == 18 * 3
    planted = {f"c{i:02d}" for i in range(PLANTED)}
    sig = found[found["significant"]]
    assert set(sig["criterion"]) <= planted, sig  # no noise criterion declared significant
    top = found.groupby("criterion")["criterion_score"].first().nlargest(PLANTED)
    assert set(top.index) == planted


def run(
    n_trades: int = DEFAULT_TRADES,
    resamples: int = DEFAULT_RESAMPLES,
    repeat: int = DEFAULT_REPEAT,
    *,
    seed: int = 7,
) -> BenchResult:
    """Time the screen of 18 criteria x 3 classes over ``n_trades`` trades."""
    features = timed_features(n_trades, seed)
    replayed = replay_features(n_trades, seed)
    cases: list[Case[None]] = [
        Case(SCREEN, lambda _: bt.screen(features, flips=resamples, resamples=resamples)),
        Case(BARE, lambda _: bt.screen(features, flips=1, resamples=1)),
        Case(
            INTERVALS,
            lambda _: bt.what_if_intervals(
                replayed, bench_replay.CRITERION, 101, resamples=resamples
            ),
        ),
    ]
    timings = measure(cases, repeat, check=_check)
    best = timings[SCREEN].best
    facts = {
        "tokens": int(features["token_id"].nunique()),
        "resampling alone (best wall)": f"{best - timings[BARE].best:.2f} s",
    }
    checks = {f"{SCREEN} best wall < {TARGET_S:g} s ({best:.1f} s)": best < TARGET_S}
    params = {"trades": n_trades, "resamples": resamples, "repeat": repeat}
    return BenchResult(
        "screen", params, timings, [ratio(timings, SCREEN, BARE, None)], facts, checks
    )


def main(argv: Sequence[str] | None = None) -> BenchResult:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_screen")
    parser.add_argument("--trades", type=int, default=DEFAULT_TRADES)
    parser.add_argument("--resamples", type=int, default=DEFAULT_RESAMPLES)
    parser.add_argument("--repeat", type=int, default=DEFAULT_REPEAT)
    args = parser.parse_args(argv)
    result = run(args.trades, args.resamples, args.repeat)
    print_result(result)
    return result


if __name__ == "__main__":
    main()
