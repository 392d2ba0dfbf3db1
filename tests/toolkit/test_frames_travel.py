"""Frames travel: every frame quantscope returns writes to Parquet and Feather and reads back
equal, dtypes, categories, UTC datetimes, nullable ints, booleans, strings and attrs included.

Walks every loader on the sandbox (over HTTP) and every derived frame: trade features, what-if
tables and grids, rankings, walk-forward, replay, comparisons, cross-checks, summaries and the
accessor's outputs. pandas writes ``df.attrs`` as JSON into the files' metadata (twice in a
Parquet file: pyarrow's ``pandas`` key, ``attributes``, and pandas' own ``PANDAS_ATTRS``) and
reads it back, so attrs must hold only JSON values: text keys, no datetimes, no NumPy scalars.
JSON has no tuple: a tuple comes back as a list, which every reader of the attrs accepts.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq
import pytest
from _helpers import QUANT, reset_quota

import quantscope.loaders as L
from quantscope import analytics as an
from quantscope import backtest as bt
from quantscope._changes import extra_info
from quantscope._http.client import Client
from quantscope.sandbox.serve import SandboxServer

FORMATS = ("parquet", "feather")
TRADES = 120  # closed trades whose buy evaluations' details are loaded (one request each)
CRITERIA = ("smart_money_buys", "buy_sell_ratio")

Frames = dict[str, pd.DataFrame | pd.Series]


def loaded(c: Client) -> Frames:
    """Every loader's frames (and the Series of the one-record answers)."""
    trades = L.load_trades(QUANT, client=c)
    closed = trades[trades["status"] == "Closed"]
    ids = [int(i) for i in closed["evaluation_id"].dropna().unique()[:30]]
    trade = L.load_trade(int(trades["trade_id"].iloc[0]), client=c)
    signal = L.load_signal(int(trades["token_id"].iloc[0]), client=c)
    dashboard = L.load_dashboard(QUANT, client=c)
    window = {"start": trades["opened_at"].min(), "end": trades["opened_at"].max()}
    return {
        "trades": trades,
        "trades_all": L.load_trades(QUANT, trading_status="all", client=c),
        "trade": trade.trade,
        "trade_transactions": trade.transactions,
        "trade_stats": L.load_trade_stats(QUANT, client=c),
        "evaluations": L.load_evaluations(QUANT, page_size=500, max_pages=2, client=c),
        "eval_details": L.load_eval_details(ids, client=c),
        "eval_history": L.load_eval_history(ids[0], client=c),
        "eval_timeseries": L.load_eval_timeseries(QUANT, **window, client=c),
        "eval_count": L.load_eval_count(QUANT, **window, client=c),
        "ohlcv": L.load_ohlcv(int(trades["token_id"].iloc[0]), client=c),
        "signals": L.load_signals(client=c),
        "signal_stats": L.load_signal_stats(client=c),
        **{f"signal_{k}": v for k, v in signal._asdict().items()},
        "playbook": L.load_playbook(QUANT, client=c),
        "recommendations": L.load_recommendations(QUANT, client=c),
        **{f"dashboard_{k}": v for k, v in dashboard._asdict().items()},
    }


def derived(frames: Frames, c: Client) -> Frames:
    """Every derived frame: analytics, the accessor, the backtest."""
    trades, details = frames["trades"], frames["eval_details"]
    evaluations, signals = frames["evaluations"], frames["signals"]
    assert isinstance(trades, pd.DataFrame)
    assert isinstance(details, pd.DataFrame)
    assert isinstance(evaluations, pd.DataFrame)
    assert isinstance(signals, pd.DataFrame)
    closed = trades[trades["status"] == "Closed"].head(TRADES)
    features = bt.trade_features(closed, client=c)
    playbook = frames["playbook"]
    assert isinstance(playbook, pd.DataFrame)
    first, second = CRITERIA
    grid = bt.what_if_grid(features, CRITERIA, (5, 5), bootstrap=False)
    return {
        "summary": an.summary(trades),
        "by_chain": an.by(trades, "chain"),
        "by_week": an.by(trades, freq="W"),
        "equity_curve": an.equity_curve(trades),
        "drawdown": an.drawdown(trades),
        "daily_pnl": an.daily_pnl(trades),
        "daily_returns": an.daily_returns(trades),
        "pass_rates": an.pass_rates(evaluations, "evaluation_type"),
        "pass_rates_daily": an.pass_rates(evaluations, freq="D"),
        "trade_outcomes": an.trade_outcomes(trades),
        "criterion_values": an.criterion_values(details, trades),
        "values_by_outcome": an.values_by_outcome(details, trades),
        "stage_counts": an.stage_counts(signals),
        "accessor_summary": trades.quant.summary(),
        "accessor_by": trades.quant.by("result"),
        "accessor_equity": trades.quant.equity_curve(),
        "accessor_pass_rates": evaluations.quant.pass_rates("chain"),
        "accessor_stage_counts": signals.quant.stage_counts(),
        "wide_details": bt.wide_details(details),
        "features": features,
        "replay": bt.replay(playbook, details),
        "what_if": bt.what_if(features, first, 8),
        "what_if_filter": bt.what_if(features, second, 8, rule="filter"),
        "what_if_grid": grid,
        "pivot_grid": bt.pivot_grid(grid),
        "rank_criteria": bt.rank_criteria(features, list(CRITERIA), flips=20),
        "walk_forward": bt.walk_forward(features, first, 8, folds=2, min_trades=10),
        "compare_playbooks": bt.compare_playbooks(playbook, playbook, features),
        "crosscheck": bt.crosscheck(frames["recommendations"], features),  # type: ignore[arg-type]
    }


@pytest.fixture(scope="module")
def frames(sandbox: SandboxServer, module_client: Client) -> Frames:
    reset_quota(sandbox)
    found = loaded(module_client)
    return {**found, **derived(found, module_client)}


def json_problems(value: Any, where: str = "attrs") -> Iterator[str]:
    """Where ``value`` holds something JSON would not give back as it is (a non-text key, a
    datetime, a NumPy scalar, any object)."""
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                yield f"{where}: key {key!r} is not text"
            yield from json_problems(item, f"{where}[{key!r}]")
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            yield from json_problems(item, f"{where}[{i}]")
    elif not (value is None or type(value) in (str, int, float, bool)):
        yield f"{where}: {type(value).__name__} {value!r}"


def same_json(a: Any, b: Any) -> bool:
    """Equal as JSON (a tuple equals the list it becomes, NaN equals NaN)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b


def as_frame(obj: pd.DataFrame | pd.Series) -> pd.DataFrame:
    """A frame as it is; a Series as a column, or, for a Series of mixed values (``summary``:
    counts, ratios, a Timedelta), as one row of typed columns, as ``by()`` gives them."""
    if isinstance(obj, pd.DataFrame):
        return obj
    frame = obj.to_frame().T.infer_objects() if obj.dtype == object else obj.to_frame()
    frame.attrs = obj.attrs
    return frame


WRITE: dict[str, Callable[[pd.DataFrame, Path], None]] = {
    "parquet": lambda df, path: df.to_parquet(path),
    "feather": lambda df, path: df.to_feather(path),
}
READ: dict[str, Callable[[Path], pd.DataFrame]] = {
    "parquet": pd.read_parquet,
    "feather": pd.read_feather,
}


def test_every_loader_and_derived_frame_is_walked(frames: Frames) -> None:
    assert sorted(frames) == sorted(NAMES)
    assert all(len(f) > 0 for k, f in frames.items() if k != "dashboard_applied"), [
        k for k, f in frames.items() if len(f) == 0
    ]


NAMES = [
    *[
        "trades",
        "trades_all",
        "trade",
        "trade_transactions",
        "trade_stats",
        "evaluations",
        "eval_details",
    ],
    *[
        "eval_history",
        "eval_timeseries",
        "eval_count",
        "ohlcv",
        "signals",
        "signal_stats",
        "signal_signal",
    ],
    *["signal_criteria", "playbook", "recommendations", "dashboard_performance"],
    *[
        "dashboard_recent",
        "dashboard_applied",
        "dashboard_weekly",
        "summary",
        "by_chain",
        "by_week",
    ],
    *["equity_curve", "drawdown", "daily_pnl", "daily_returns", "pass_rates", "pass_rates_daily"],
    *[
        "trade_outcomes",
        "criterion_values",
        "values_by_outcome",
        "stage_counts",
        "accessor_summary",
    ],
    *["accessor_by", "accessor_equity", "accessor_pass_rates", "accessor_stage_counts"],
    *[
        "wide_details",
        "features",
        "replay",
        "what_if",
        "what_if_filter",
        "what_if_grid",
        "pivot_grid",
    ],
    *["rank_criteria", "walk_forward", "compare_playbooks", "crosscheck"],
]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", NAMES)
def test_frame_reads_back_equal(frames: Frames, name: str, fmt: str, tmp_path: Path) -> None:
    obj = frames[name]
    assert not list(json_problems(obj.attrs))
    json.dumps(obj.attrs)  # what pandas and pyarrow do with them
    frame = as_frame(obj)
    path = tmp_path / f"{name}.{fmt}"
    WRITE[fmt](frame, path)  # warnings are errors: pyarrow's dropped-attrs warning fails it
    back = READ[fmt](path)
    back = with_empty_categories(back, frame)
    pd.testing.assert_frame_equal(back, frame)
    assert same_json(back.attrs, frame.attrs)


def with_empty_categories(back: pd.DataFrame, frame: pd.DataFrame) -> pd.DataFrame:
    """``back`` with the categorical columns that have no category at all (an empty frame, a
    column missing everywhere) typed as in ``frame``: Arrow keeps a dictionary's value type,
    but pyarrow makes an empty one's categories ``object`` (pandas 3.1, pyarrow 26); and a
    frame of no row writes no record batch, so its dictionaries (the spec's whole category
    sets) are not in the file at all. Only those are retyped; any other difference fails."""
    for col in frame.columns:
        dtype = frame[col].dtype
        nothing = len(dtype.categories) == 0 if isinstance(dtype, pd.CategoricalDtype) else False
        if isinstance(dtype, pd.CategoricalDtype) and (nothing or len(frame) == 0):
            assert isinstance(back[col].dtype, pd.CategoricalDtype)
            assert len(back[col].dtype.categories) == 0
            back[col] = back[col].astype(dtype)
    return back


def test_attrs_are_in_the_file_metadata_as_json(frames: Frames, tmp_path: Path) -> None:
    trades = frames["trades"]
    assert isinstance(trades, pd.DataFrame)
    path = tmp_path / "trades.parquet"
    trades.to_parquet(path)
    meta = pq.read_schema(path).metadata
    pandas_meta = json.loads(meta[b"pandas"])["attributes"]  # pyarrow's copy
    assert json.loads(meta[b"PANDAS_ATTRS"]) == pandas_meta  # pandas' own copy
    prov = pandas_meta["quantscope"]
    assert prov["endpoint"] == "/api/trades"
    assert prov["params"] == {
        "quantId": str(QUANT),
        "tradingStatus": "executed",
    }
    when = pd.Timestamp(prov["fetched_at"])
    assert when.tz is not None
    assert when.utcoffset() == pd.Timedelta(0)


def test_decided_thresholds_travel_and_still_decide(frames: Frames, tmp_path: Path) -> None:
    features = frames["features"]
    assert isinstance(features, pd.DataFrame)
    decided = features.attrs["backtest"]["decided_thresholds"]
    assert list(decided) == [str(QUANT)]
    thresholds = [v for c in decided.values() for t in c.values() for v in t.values()]
    assert thresholds
    assert all(isinstance(v, float) for v in thresholds)
    path = tmp_path / "features.parquet"
    features.to_parquet(path)
    back = pd.read_parquet(path)
    criterion = CRITERIA[0]
    for rule in ("replay", "filter"):
        pd.testing.assert_frame_equal(
            bt.what_if(back, criterion, 8, rule=rule, bootstrap=False),
            bt.what_if(features, criterion, 8, rule=rule, bootstrap=False),
        )
    # With the playbooks left out, the current threshold comes from the decided ones.
    bare = back.copy()
    bare.attrs = {"backtest": {k: v for k, v in back.attrs["backtest"].items() if k != "playbooks"}}
    table = bt.what_if(bare, criterion, 8, rule="filter", bootstrap=False)
    assert table.attrs["what_if"]["current"][criterion] is not None


def test_extra_info_is_json_text_that_reads_back_as_served(frames: Frames) -> None:
    playbook, details = frames["playbook"], frames["eval_details"]
    assert isinstance(playbook, pd.DataFrame)
    assert isinstance(details, pd.DataFrame)
    for frame in (playbook, details):
        assert frame["extra_info"].dtype == "string"
    infos = [extra_info(row) for _, row in playbook.iterrows()]
    assert all(isinstance(i, dict) and "operator" in i for i in infos)
    # The served operator and range are the columns parsed from the same nested object.
    for info, (_, row) in zip(infos, playbook.iterrows(), strict=True):
        assert info["operator"] == row["operator"]
        if "range" in info:
            assert info["range"]["min"] == row["range_min"]
    assert any("options" in i for i in infos)
