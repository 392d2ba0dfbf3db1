"""Calibrated uncertainty: intervals and tests that resample whole tokens (issue 21, item 2).

Hand-made clustered data with a known answer: trades of one token share its outcome
propensity, so a method that treats trades as independent is too sure of itself. Each test
states the figure today's trade-level method gives on the same data.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from _helpers import clustered_features

from quantscope import backtest as bt
from quantscope.backtest import _guards
from quantscope.backtest.uncertainty import (
    RESAMPLES,
    SEED,
    ClusterSums,
    _statistics,
    cluster_intervals,
    effective_clusters,
    poisson_weights,
    score_contributions,
    signflip_pvalues,
)


def clustered_world(
    rng: np.random.Generator, tokens: int = 40, per_token: int = 12, spread: float = 0.25
) -> tuple[np.ndarray, np.ndarray]:
    """Token codes and outcomes: each token's win propensity ~ U(0.5 +- spread)."""
    codes = np.repeat(np.arange(tokens), rng.poisson(per_token, tokens) + 1)
    propensity = rng.uniform(0.5 - spread, 0.5 + spread, tokens)
    won = rng.random(len(codes)) < propensity[codes]
    return codes, won


def sums_of(codes: np.ndarray, won: np.ndarray, kept: np.ndarray, k: int) -> ClusterSums:
    def per(x: np.ndarray) -> np.ndarray:
        return np.bincount(codes, weights=x.astype(np.float64), minlength=k)

    ones = np.ones(len(codes))
    zero = np.zeros(k)
    return ClusterSums(
        trades=per(kept)[:, None],
        wins=per(kept & won)[:, None],
        pnl=per(np.where(kept, np.where(won, 1.0, -1.0), 0.0))[:, None],
        cost=per(np.where(kept, 1.0, 0.0))[:, None],
        base_trades=per(ones),
        base_wins=per(won),
        base_pnl=per(np.where(won, 1.0, -1.0)),
        base_cost=per(ones) + zero,
    )


def test_token_bootstrap_covers_the_win_rate_where_wilson_does_not() -> None:
    """200 clustered worlds, truth 0.5: the token bootstrap covers ~95 %, Wilson ~70 %."""
    rng = np.random.default_rng(3)
    inside_new = inside_wilson = 0
    worlds = 200
    for w in range(worlds):
        codes, won = clustered_world(rng)
        k = int(codes.max()) + 1
        table = sums_of(codes, won, np.ones(len(codes), bool), k)
        got = cluster_intervals(table, resamples=400, seed=w)
        inside_new += got["win_rate_lo"][0] <= 0.5 <= got["win_rate_hi"][0]
        lo, hi = _guards.wilson(np.array([won.sum()]), np.array([len(won)]))
        inside_wilson += lo[0] <= 0.5 <= hi[0]
    assert 0.91 <= inside_new / worlds <= 0.99
    assert inside_wilson / worlds < 0.85  # trades treated as independent: too narrow


def test_d_win_rate_has_an_interval_and_a_row_where_nothing_moved_is_not_degenerate() -> None:
    rng = np.random.default_rng(5)
    codes, won = clustered_world(rng)
    k = int(codes.max()) + 1
    values = rng.normal(size=len(codes)) + 0.8 * won
    table = sums_of(codes, won, values > 0.0, k)
    got = cluster_intervals(table, resamples=500, seed=1)
    assert got["d_win_rate_lo"][0] < got["d_win_rate"][0] < got["d_win_rate_hi"][0]
    assert got["d_win_rate_lo"][0] > 0  # a strong planted signal: the change is positive
    still = sums_of(codes, won, np.ones(len(codes), bool), k)  # keeps what is kept now
    same = cluster_intervals(still, resamples=500, seed=1)
    assert same["no_move"][0]
    assert same["moved_clusters"][0] == 0
    assert same["d_win_rate"][0] == 0.0
    # Rule of three over k tokens: a future sample could move up to 3/k of them.
    share = 3 / k
    p = won.mean()
    assert same["d_win_rate_hi"][0] == pytest.approx(share * max(p, 1 - p) / (1 - share))
    assert same["d_win_rate_lo"][0] == -same["d_win_rate_hi"][0]
    assert same["d_total_pnl_usd_hi"][0] > 0 > same["d_total_pnl_usd_lo"][0]


def test_signflip_known_answer_for_three_clusters() -> None:
    # Three clusters, all contributing +1: only the all-plus flip (1 in 8) reaches 3/sqrt(3).
    stat, p_raw, p_adj = signflip_pvalues(np.ones((3, 1)), flips=4000, seed=0)
    assert stat[0] == pytest.approx(np.sqrt(3))
    assert p_raw[0] == pytest.approx(1 / 8, abs=0.02)
    assert p_adj[0] == p_raw[0]  # one hypothesis: nothing to adjust for
    # A hypothesis without evidence (a column of zeros) is never significant.
    stat, p_raw, p_adj = signflip_pvalues(np.zeros((5, 2)), flips=100, seed=0)
    assert np.isnan(stat).all()
    assert (p_raw == 1).all()
    assert (p_adj == 1).all()


@pytest.mark.slow  # 60 / 300 samples: a few seconds
def test_signflip_holds_its_size_on_a_token_trait_where_trade_permutations_do_not() -> None:
    """A token trait unrelated to outcomes, trades clustered by token: at 5 %, whole-token
    flips reject ~5 % of 300 worlds; reshuffling single trades (today's rank) rejects far more."""
    rng = np.random.default_rng(11)
    worlds, flips = 300, 400
    rejected_flip = rejected_trade = 0
    for w in range(worlds):
        codes, won = clustered_world(rng, tokens=30, spread=0.35)
        trait = rng.random(30)[codes] > 0.5  # kept: the tokens whose trait passes
        scores = score_contributions(trait, won, codes, 30)
        _, p_raw, _ = signflip_pvalues(scores, flips=flips, seed=w)
        rejected_flip += p_raw[0] < 0.05
        observed = float(trait @ won.astype(float))  # kept wins: the trade-level statistic
        shuffled = rng.permuted(np.tile(won.astype(float), (flips, 1)), axis=1) @ trait
        rejected_trade += (1 + (shuffled >= observed).sum()) / (flips + 1) < 0.05
    assert rejected_flip / worlds <= 0.085
    assert rejected_trade / worlds >= 0.15


def test_what_if_intervals_equal_what_if_and_bracket_it() -> None:
    frame = clustered_features()
    grid = [-1.0, 0.0, 0.5, 1.0]
    got = bt.what_if_intervals(frame, "signal", grid, rule="filter", current=0.0)
    ref = bt.what_if(frame, "signal", grid, rule="filter", current=0.0)
    for name in ("win_rate", "d_win_rate", "d_total_pnl_usd", "d_roi"):
        assert got[name].to_numpy() == pytest.approx(ref[name].to_numpy(), abs=1e-9)
        assert (got[f"{name}_lo"] <= got[name] + 1e-12).all()
        assert (got[name] <= got[f"{name}_hi"] + 1e-12).all()
    assert got["trades"].tolist() == ref["trades"].tolist()
    # The current threshold (0.0) moves nothing: still an interval about the future.
    now = got[got["threshold"] == 0.0].iloc[0]
    assert now["interval"] == "nothing moved: rule of three"
    assert now["moved_tokens"] == 0
    assert now["d_win_rate_lo"] < 0 < now["d_win_rate_hi"]
    assert (got.loc[got["threshold"] != 0.0, "interval"] == "bootstrap").all()
    info = got.attrs["intervals"]
    assert (info["unit"], info["clusters"], info["resamples"]) == ("token", 40, 1000)
    again = bt.what_if_intervals(frame, "signal", grid, rule="filter", current=0.0)
    pd.testing.assert_frame_equal(got, again)  # seeded


def test_effective_clusters_count_what_a_rate_rests_on() -> None:
    """3 tokens of 40 trades and 30 of 1: 33 tokens trade, but the rate rests on about 8."""
    counts = np.array([40.0] * 3 + [1.0] * 30 + [0.0] * 5)[:, None]
    even = np.full((12, 1), 7.0)
    got = effective_clusters(np.hstack([counts, np.vstack([even, np.zeros((26, 1))])]))
    assert got[0] == pytest.approx(150.0**2 / (3 * 1600 + 30), rel=1e-12)  # 4.66
    assert got[1] == pytest.approx(12.0)
    assert effective_clusters(np.zeros((4, 2))).tolist() == [0.0, 0.0]


def test_a_skewed_win_rate_interval_is_not_shorter_than_the_normal_one() -> None:
    """One token of 200 losing trades among 60 of 2 mostly winning: a resample's rate swings
    on that token's weight, so the resamples are skewed and the lower percentile sits close
    to the estimate. The interval reaches at least z * sd of the resamples on both sides
    (before: the lower distance was 0.34 of it here)."""
    sizes = [200] + [2] * 60
    codes = np.repeat(np.arange(len(sizes)), sizes)
    won = np.random.default_rng(0).random(len(codes)) < 0.8
    won[:200] = False
    k = len(sizes)
    table = sums_of(codes, won, np.ones(len(codes), dtype=bool), k)
    got = cluster_intervals(table)
    draws = np.concatenate(
        [_statistics(table, w)["win_rate"][:, 0] for w in poisson_weights(k, RESAMPLES, SEED)]
    )
    normal = 1.959964 * np.nanstd(draws)
    est = got["win_rate"][0]
    # (clipped to [0, 1]: a rate's interval stays a rate)
    assert est - got["win_rate_lo"][0] >= min(normal, est) * 0.999
    assert got["win_rate_hi"][0] - est >= min(normal, 1.0 - est) * 0.999


@pytest.mark.parametrize(
    ("sizes", "expected_lo"),
    [
        ([1, 1, 1], 0.438503),  # 3 tokens: too many resamples hold no trade (undefined)
        ([1], 0.206549),  # 1 token
        ([4] * 40, 0.912378),  # 40 tokens, every kept trade won: every resample says 1.0
    ],
)
def test_a_win_rate_the_bootstrap_cannot_bound_gets_wilson_over_its_tokens(
    sizes: list[int], expected_lo: float
) -> None:
    """A kept set of a few tokens, or one where every trade won, has no bootstrap interval
    (NaN, or the single point [1, 1]); it gets the Wilson score interval over its effective
    number of tokens instead (Kish; equal sizes here, so the token count): 3 tokens of 3 wins
    are no proof of a 100 % win rate (before: NaN for 1 and 3 tokens, [1, 1] for 40)."""
    codes = np.repeat(np.arange(len(sizes)), sizes)
    won = np.ones(len(codes), dtype=bool)
    table = sums_of(codes, won, np.ones(len(codes), dtype=bool), len(sizes))
    got = cluster_intervals(table)
    assert got["win_rate"][0] == 1.0
    assert got["win_rate_lo"][0] == pytest.approx(expected_lo, abs=1e-6)
    assert got["win_rate_hi"][0] == pytest.approx(1.0)


def test_poisson_weights_are_the_generators_draws_in_its_chunks_every_time() -> None:
    """Kept draws (uncertainty._WEIGHTS) change nothing: the same values as drawing anew."""
    from quantscope.backtest import uncertainty

    for k, resamples in ((5, 1000), (6000, 1000), (40_000, 250)):
        rng = np.random.default_rng(11)
        per_chunk = max(1, uncertainty._CHUNK_ENTRIES // k)
        expected = [
            rng.poisson(1.0, size=(min(per_chunk, resamples - start), k)).astype(np.float64)
            for start in range(0, resamples, per_chunk)
        ]
        for _ in range(2):  # drawn, then kept
            got = list(uncertainty.poisson_weights(k, resamples, 11))
            assert [g.shape for g in got] == [e.shape for e in expected]
            assert all(
                g.dtype == np.float64 and (g == e).all() for g, e in zip(got, expected, strict=True)
            )
            got[0][0, 0] = -1.0  # a caller's chunk is its own: the kept draws are not touched
