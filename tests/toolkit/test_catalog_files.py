"""Catalog files that describe themselves (issue 24, "Files outside quantscope").

* A catalog Parquet file read by plain ``pd.read_parquet`` has the loader's dtypes (``Int64``,
  ``boolean``, ``string``, categoricals with the spec's whole set, UTC timestamps); polars and
  DuckDB read the same logical types.
* Categorical columns hold the spec's whole set whatever rows were loaded, so ``pd.concat``
  of two loads stays categorical; a value outside the set is kept and counted.
* A catalog frame's attrs carry what a loader's frame carries.
* Files written before (no pandas metadata, a dictionary of the values present) still read
  as the loader's frame.

One small catalog (quant 1, July 2026) synced once from the session sandbox.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import quantscope as qs
import quantscope.loaders as L
from quantscope._errors import DataQualityWarning
from quantscope._http.client import Client
from quantscope._typed import schemas as _schemas
from quantscope._typed.frames import build_frame
from quantscope.catalog.layout import RESOURCES, from_table, with_keys

QUANT = 1
START, END = "2026-07-01", "2026-07-31T23:59:59"
SYNCED = ["trades", "evaluations", "signals", "playbook", "recommendations"]


@pytest.fixture(scope="module")
def study(module_client: Client, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("files") / "cat"
    qs.sync(path, quant_id=QUANT, resources=SYNCED, start=START, end=END, client=module_client)
    return path


def _files(path: Path, resource: str) -> list[Path]:
    cat = qs.open_catalog(path)
    return [path / p["file"] for p in cat.partitions.values() if p["resource"] == resource]


def _loaded(path: Path, resource: str) -> pd.DataFrame:
    cat = qs.open_catalog(path)
    if resource in ("trades", "evaluations"):
        return getattr(cat, resource)(QUANT, start=START, end=END)  # type: ignore[no-any-return]
    return getattr(cat, resource)(QUANT)  # type: ignore[no-any-return]


@pytest.mark.parametrize("resource", SYNCED)
def test_plain_read_parquet_gives_the_loaders_dtypes(study: Path, resource: str) -> None:
    want = _loaded(study, resource)
    spec = RESOURCES[resource].spec
    for file in _files(study, resource):
        got = pd.read_parquet(file)
        for col in RESOURCES[resource].file_columns():
            assert got[col].dtype == want[col].dtype, (file.name, col, got[col].dtype)
        for col in spec.columns:
            if col.categories and col.name in got:
                assert list(got[col.name].cat.categories) == list(col.categories), col.name
        if resource == "trades":
            assert str(got["opened_at"].dtype) == "datetime64[ms, UTC]"
            assert got["trade_id"].dtype == pd.Int64Dtype()
            assert got["evaluation_passed"].dtype == pd.BooleanDtype()
            assert got["token_symbol"].dtype == pd.StringDtype("pyarrow")
            columns = [c for c in want.columns if c in got.columns]
            pd.testing.assert_frame_equal(
                got[columns], want[columns].iloc[: len(got)], check_exact=True
            )


def test_polars_and_duckdb_read_the_logical_types(study: Path) -> None:
    file = _files(study, "trades")[0]
    schema = pl.read_parquet(file).schema
    assert schema["trade_id"] == pl.Int64
    assert schema["evaluation_passed"] == pl.Boolean
    assert schema["token_symbol"] == pl.String
    assert schema["chain"] == pl.Categorical
    assert schema["opened_at"] == pl.Datetime("ms", "UTC")
    described = duckdb.sql(f"DESCRIBE SELECT * FROM read_parquet('{file}')").fetchall()
    types = {row[0]: row[1] for row in described}
    assert types["trade_id"] == "BIGINT"
    assert types["evaluation_passed"] == "BOOLEAN"
    assert types["token_symbol"] == "VARCHAR"
    assert types["chain"] == "VARCHAR"
    assert types["opened_at"] == "TIMESTAMP WITH TIME ZONE"


def test_categories_are_the_specs_sets_and_loads_concatenate(study: Path) -> None:
    cat = qs.open_catalog(study)
    early = cat.trades(QUANT, start=START, end="2026-07-26")
    late = cat.trades(QUANT, start="2026-07-29", end=END, position_closed=True)
    assert len(early)
    assert len(late)
    joined = pd.concat([early, late], ignore_index=True)
    for name, fixed in (
        ("chain", _schemas.CHAINS),
        ("status", _schemas.TRADE_STATUSES),
        ("result", _schemas.TRADE_RESULTS),
        ("evaluation_type", _schemas.EVALUATION_TYPES),
    ):
        for frame in (early, late, joined):
            assert isinstance(frame[name].dtype, pd.CategoricalDtype), name
            assert list(frame[name].cat.categories) == list(fixed), name
    solana = cat.trades(QUANT, start=START, end=END, chain="SOLANA")
    assert list(solana["chain"].cat.categories) == list(_schemas.CHAINS)


def test_loader_frames_have_the_whole_sets_and_concatenate(module_client: Client) -> None:
    one = L.load_trades(QUANT, start=START, end=END, chain="SOLANA", client=module_client)
    two = L.load_trades(QUANT, start=START, end=END, chain="BASE", client=module_client)
    assert len(one)
    assert len(two)
    joined = pd.concat([one, two], ignore_index=True)
    assert joined["chain"].value_counts().to_dict() == {
        "BASE": len(two),
        "BSC": 0,
        "SOLANA": len(one),
    }
    for name in ("chain", "status", "result", "decision", "evaluation_type"):
        assert isinstance(joined[name].dtype, pd.CategoricalDtype), name
        assert joined[name].dtype == one[name].dtype == two[name].dtype, name


def _record(chain: str) -> dict[str, Any]:
    return {"id": 1, "userQuantId": 1, "tokenId": 2, "token": {"chainName": chain}}


def test_a_value_outside_the_set_is_kept_and_counted() -> None:
    with pytest.warns(DataQualityWarning, match=r"1 value\(s\) lie outside .*chain \(1\)"):
        frame = build_frame([_record("SOLANA"), _record("ARBITRUM")], _schemas.EVALUATIONS)
    assert list(frame["chain"].cat.categories) == [*_schemas.CHAINS, "ARBITRUM"]
    assert frame["chain"].tolist() == ["SOLANA", "ARBITRUM"]
    assert frame.attrs["quantscope"]["checks"]["unknown"] == {"chain": 1}


def test_catalog_frames_keep_the_loaders_provenance(study: Path, module_client: Client) -> None:
    cat = qs.open_catalog(study)
    frame = cat.trades(QUANT, start=START, end=END, chain="SOLANA")
    loaded = L.load_trades(QUANT, start=START, end=END, client=module_client)
    got = frame.attrs["quantscope"]
    want = loaded.attrs["quantscope"]
    record = next(p for p in cat.partitions.values() if p["resource"] == "trades")
    assert got["source"] == want["endpoint"] == "/api/trades"
    assert got["service"] == want["service"] == module_client.settings.service
    assert got["fetched_at"] == record["provenance"]["fetched_at"]
    assert got["params"] == {
        "quant_id": "1",
        "trading_status": "executed",
        "chain": "SOLANA",
        "start": START,
        "end": END,
    }
    assert got["rows"] == {"stored": len(loaded), "returned": len(frame)}
    assert got["requests"] == 0
    assert got["endpoint"] == "catalog:trades"
    assert got["catalog"] == cat.url
    assert got["files"] == 1
    assert set(want) - {"summary", "checks", "stale"} <= set(got)
    playbook = cat.playbook(QUANT).attrs["quantscope"]
    assert playbook["source"] == "/api/degen/config"
    assert playbook["fetched_at"]


def test_files_written_before_still_read_as_the_loaders_frame(study: Path) -> None:
    """A file as quantscope wrote it before: no pandas metadata, a dictionary of the values
    present only. quantscope's reader gives the loader's frame (whole category sets)."""
    resource = RESOURCES["trades"]
    cat = qs.open_catalog(study)
    record = next(p for p in cat.partitions.values() if p["resource"] == "trades")
    table = pq.read_table(study / record["file"])
    columns = []
    for field, column in zip(table.schema, table.columns, strict=True):
        if pa.types.is_dictionary(field.type):
            column = column.cast(pa.string()).dictionary_encode()
        columns.append(column)
    old = pa.table(columns, names=table.column_names)  # no metadata at all
    assert b"pandas" not in (old.schema.metadata or {})
    got = from_table(resource, with_keys(resource, old, record["keys"]))
    want = cat.trades(QUANT, start=START, end=END)
    pd.testing.assert_frame_equal(got, want, check_exact=True)
