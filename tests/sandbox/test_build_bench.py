"""benchmarks/bench_build.py still runs (tiny: scales 1 and 2); facts, not speeds."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from benchmarks import bench_build


def _build(scale: int, trades: int) -> bench_build.Build:
    return bench_build.Build(scale, 1.0, 1.0, 0.0, 1, 0, 1, (), trades, 0, 0, 0)


def test_scale_for_aims_above_the_wanted_trades() -> None:
    reference = _build(10, 39_772)
    scale = bench_build.scale_for(1_000_000, reference)
    assert scale == math.ceil(1_000_000 * bench_build.SCALE_MARGIN / 3_977.2) == 257
    assert scale * 3_977.2 >= 1_000_000
    assert bench_build.scale_for(1, reference) == 1


def test_timeline_spreads_the_samples() -> None:
    samples = tuple((float(t), (100 + t) * 2**20) for t in range(100))
    build = bench_build.Build(1, 1.0, 1.0, 0.0, 1, 0, 1, samples, 1, 0, 0, 0)
    text = bench_build.timeline(build, points=5)
    assert text.startswith("0 s: 100, 20 s: 120")
    assert text.endswith("99 s: 199 (MB)")
    assert bench_build.timeline(_build(1, 1)).startswith("(no samples")


@pytest.mark.slow  # two builds in child processes: ~15 s
def test_build_benchmark_runs(tmp_path: Path) -> None:
    result = bench_build.run(scale=2, reference_scale=1, interval=0.1, data_dir=tmp_path)
    assert set(result.timings) == {"build, scale 1", "build, scale 2"}
    assert result.facts["build, scale 1: built"].startswith("3,939 trades, 48,799 evaluations")
    assert result.facts["build, scale 2: built"].startswith("8,177 trades")
    assert all(t.best > 0 and t.best_cpu > 0 for t in result.timings.values())
    assert len(result.checks) == 2  # wall and memory; no trade count asked with --scale
    assert list(tmp_path.iterdir()) == []  # the worlds are deleted
    assert result.report().startswith("### build (issue 14)")
