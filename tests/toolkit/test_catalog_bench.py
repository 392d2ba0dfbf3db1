"""The catalog benchmark still runs, at a tiny size (facts, never speeds)."""

from __future__ import annotations

from pathlib import Path

from benchmarks import bench_catalog


def test_catalog_benchmark_runs(tmp_path: Path) -> None:
    result = bench_catalog.run(3_000, 1, big=2_000, big_repeat=1, workdir=tmp_path)
    assert set(result.timings) == {
        bench_catalog.FLOOR,
        bench_catalog.OURS,
        bench_catalog.UNCHECKED,
        bench_catalog.GROUP_BY,
        bench_catalog.PRUNED,
    }
    assert result.facts["quant-month read"].startswith("100 trades, 35 columns")
    assert result.facts["DuckDB group-by"].startswith("2,000 trades in 100 groups")
    assert not any(tmp_path.iterdir())  # both catalogs removed
