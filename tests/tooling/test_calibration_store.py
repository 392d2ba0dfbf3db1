"""The calibration harness keeps loaded worlds in Parquet (no pickle), keyed by the seed and
the sandbox's version, and gives them back as they were: dtypes, values and attrs."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from benchmarks.calibration_store import Store, read_frame, version_key, write_frame
from quantscope.sandbox.datadir import expected_meta


def features_like() -> pd.DataFrame:
    frame = pd.DataFrame(
        {
            "trade_id": pd.array([1, 2, None], dtype="Int64"),
            "market_cap_class": pd.Categorical(["DEGEN_CAP", "LOW_CAP", "DEGEN_CAP"]),
            "opened_at": pd.to_datetime(
                ["2026-01-01 10:00", "2026-01-02 11:00", "2026-01-03 12:00"], utc=True
            ).as_unit("ms"),
            "profitable": pd.array([True, None, False], dtype="boolean"),
            "smart_money_buys": [1.0, float("nan"), 3.0],
        }
    )
    frame.attrs["backtest"] = {
        "criteria": ("smart_money_buys",),
        "decided_thresholds": {"1": {"DEGEN_CAP": {"smart_money_buys": 2.0}}},
    }
    return frame


def test_a_frame_comes_back_with_its_dtypes_values_and_attrs(tmp_path: Path) -> None:
    frame = features_like()
    path = tmp_path / "f.parquet"
    write_frame(frame, path)
    assert path.read_bytes()[:4] == b"PAR1"  # Parquet, not a pickle
    got = read_frame(path)
    pd.testing.assert_frame_equal(got, frame)
    assert got.attrs["backtest"]["criteria"] == ["smart_money_buys"]  # JSON: a list
    assert (
        got.attrs["backtest"]["decided_thresholds"] == frame.attrs["backtest"]["decided_thresholds"]
    )
    assert not list(tmp_path.glob(".*tmp"))  # written under a temporary name, renamed


def test_worlds_are_kept_by_seed_and_sandbox_version(tmp_path: Path) -> None:
    store = Store(tmp_path)
    assert store.get_world(5, (1, 2)) is None
    frames = [features_like(), features_like().iloc[:2]]
    store.put_world(5, (1, 2), frames, {"build_s": 1.5, "load_s": 30.0})
    frames_back, timing = store.get_world(5, (1, 2)) or ([], {})
    assert timing == {"build_s": 1.5, "load_s": 30.0}
    pd.testing.assert_frame_equal(frames_back[1], frames[1])
    assert store.get_world(6, (1, 2)) is None
    assert store.get_world(5, (1, 2, 3)) is None
    meta = expected_meta(5, 1)
    key = version_key(5)
    assert meta["schema_version"] in key
    assert meta["world_version"] in key
    assert (tmp_path / "worlds" / key / "quant1.parquet").exists()


def test_attrs_beyond_json_are_refused_rather_than_pickled(tmp_path: Path) -> None:
    frame = features_like()
    frame.attrs["odd"] = object()
    with pytest.raises(TypeError, match="cannot keep object"):
        write_frame(frame, tmp_path / "f.parquet")
