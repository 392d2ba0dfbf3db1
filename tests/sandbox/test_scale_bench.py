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
    # the throughput rounds' CPU basis: the servers' CPU seconds per request answered
    assert all(r.cpu_value > 0 and math.isfinite(r.cpu_value) for r in result.ratios)
    served = result.timings["sandbox, trades page"]
    assert all(0 < cpu < 1 for cpu in served.cpu_runs)
    assert result.report().startswith("### scale")
