"""The calibration harness, small: two worlds (and a reference) of one quant, over HTTP.

The full run (>= 30 worlds, docs/metrics.md) takes most of an hour; this one checks that the
harness runs end to end and that its figures hold with tolerant bounds: the decision number a
researcher acts on (``d_win_rate``, which had no interval before issue 21) covers the truth
about as often as it says. Today's ranking and walk-forward ("today", ~200 s a world) are left to
the full run (``--today-worlds``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import calibration
from quantscope.sandbox.datadir import WorldInfo
from quantscope.sandbox.sim.criteria import NOISE, PLANTED

pytestmark = pytest.mark.slow


def test_small_calibration_run_scores_the_new_answers_against_the_planted_truth(
    sandbox_world: WorldInfo, tmp_path: Path
) -> None:
    criteria = ["smart_money_buys", "buy_sell_ratio", "twitter_followers", "social_sentiment"]
    # The session's seed-7 world is one of them (built already); the others are built there.
    found = calibration.run(
        [7, 8],
        sandbox_world.data_dir,
        tmp_path / "store",
        reference=9,
        today_worlds=0,
        quants=(1,),
        criteria=criteria,
    )
    assert found["worlds"] == 2
    assert found["reference_seed"] == 9
    assert found["planted"] == [
        "ai_confidence",
        "buy_sell_ratio",
        "smart_money_buys",
        "top10_holders_pct",
    ]
    new = found["coverage"]
    assert new["d_win_rate"] is not None
    assert found["new"]["coverage"]["d_win_rate_cells"] > 20
    # The truth of a cell is the other world's value alone here: noisy, so tolerant bounds.
    for name in ("win_rate", "d_win_rate", "d_total_pnl_usd", "d_roi"):
        assert new[name] >= 0.75, (name, new)
    assert 0.0 <= found["false_positive_rate"] <= 1.0
    assert found["new"]["families"] == 2
    assert found["power"] > 0  # smart_money_buys is found in some class
    assert found["time_s"]["load"] > 0
    assert len(found["per_world"]) == 2
    assert found["time_s"]["worlds_loaded_this_run"] == 2
    # The planted truth is the generator's declaration, not a reading of its source.
    assert set(found["planted"]) == set(PLANTED)
    assert set(found["noise"]) == NOISE
    # A planted criterion's out-of-sample score beats a noise one's (classes pooled, in
    # standard errors) in most pairs of a (world, quant); the old by-class raw gains beside.
    assert found["planted_beats_noise"] >= 0.75
    assert found["new"]["planted_beats_noise_by_class_raw_gain"] is not None
    # The worlds are kept (Parquet, by seed and sandbox version): a re-run only researches.
    again = calibration.run(
        [7, 8],
        sandbox_world.data_dir,
        tmp_path / "store",
        reference=9,
        today_worlds=0,
        quants=(1,),
        criteria=criteria,
    )
    assert again["time_s"]["worlds_loaded_this_run"] == 0
    assert again["coverage"] == found["coverage"]
    assert again["planted_beats_noise"] == found["planted_beats_noise"]
    assert not list((tmp_path / "store").rglob("*.pkl"))
