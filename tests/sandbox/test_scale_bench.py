"""benchmarks/bench_scale.py still runs (tiny: scale 1, short rounds, no full loads); facts, not
speeds."""

from __future__ import annotations

import math

import pytest

from benchmarks import bench_scale
from quantscope.sandbox.datadir import WorldInfo


@pytest.mark.slow
def test_scale_benchmark_runs(sandbox_world: WorldInfo) -> None:
    result = bench_scale.run(
        1, scale=1, threads=2, seconds=0.3, loads=False, data_dir=sandbox_world.data_dir
    )
    assert {"trades, last page", "sandbox, evaluations page"} <= set(result.timings)
    assert len(result.ratios) == 4
    assert all(r.value > 0 and math.isfinite(r.value) for r in result.ratios)
    assert result.report().startswith("### scale")
