"""Trades joined to the criterion values that bought them: one wide row per trade.

Threshold research needs, for every trade, the value each criterion had when the quant decided
to buy, next to how the trade ended. The trades list names the ``TOKEN_BUY`` evaluation that
bought each trade (``evaluation_id``); ``load_eval_details`` gives that evaluation's criterion
results (one request each, cached forever since details never change, quota-aware, with a
progress bar). ``wide_details`` pivots them to one column per criterion; ``trade_features``
joins the trades on.

A wide frame (features, simulated entries, wide details) always has ``evaluation_id``,
``quant_id``, ``evaluation_type``, ``market_cap_usd``, ``market_cap_class`` and one float64
column per criterion (named by its key; options criteria hold the option id), and records in
``attrs["backtest"]`` the criteria (in playbook order), their operators, and the thresholds
each (quant, class) was decided under, as the details served them (``decided_thresholds``:
{quant id text: {class: {criterion: threshold}}}, JSON-safe so that the frame writes to
Parquet and Feather with its attrs; ``decided_by_slice`` reads it, and the older
{(quant id, class): {criterion: threshold}} shape of hand-made frames). ``trade_features`` also
keeps the quants' playbooks there (``playbooks``, JSON-safe columns): the what-if functions
replay them by default, so that ``what_if(features, criterion)`` answers what applying a
threshold would do without another argument and without I/O of its own.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from quantscope._errors import MissingColumnsError, PermissionDeniedError
from quantscope._http.client import Client
from quantscope.backtest._rules import (
    PlaybookArg,
    market_cap_class,
    playbook_columns,
    playbooks_from_columns,
)
from quantscope.loaders import load_eval_details, load_playbook

#: The evaluation-level columns of a wide details frame, before the criterion columns.
EVALUATION_COLUMNS = (
    "evaluation_id",
    "quant_id",
    "token_id",
    "chain",
    "evaluation_type",
    "evaluation_passed",
    "internal_score",
    "market_cap_usd",
    "market_cap_class",
)
#: The trade columns of a features frame, before the criterion columns.
TRADE_COLUMNS = (
    "trade_id",
    "evaluation_id",
    "quant_id",
    "quant_name",
    "token_id",
    "chain",
    "evaluation_type",
    "market_cap_usd",
    "market_cap_class",
    "opened_at",
    "closed_at",
    "status",
    "result",
    "decision",
    "buy_cost_usd",
    "pnl_usd",
    "roi",
    "profitable",
    "simulated",
)
_DETAIL_COLUMNS = ("evaluation_id", "criterion", "value", "operator", "threshold")


def bare(frame: pd.DataFrame) -> pd.DataFrame:
    """The same data without ``attrs`` (no copy).

    pandas deep-copies ``attrs`` on every operation, and a loader's provenance can list
    thousands of requests: working on a bare view keeps each operation cheap.
    """
    return pd.DataFrame(frame, copy=False)


def provenance_summary(frame: pd.DataFrame) -> dict[str, Any]:
    """A loaded frame's provenance without its per-request parameters (kept small)."""
    found = frame.attrs.get("quantscope")
    if not isinstance(found, Mapping):
        return {}
    return {k: v for k, v in found.items() if k != "params"}


def check_criteria(frame: pd.DataFrame, criteria: Sequence[str], method: str) -> None:
    """A clear error naming each criterion the frame lacks, with the closest real ones."""
    missing = [c for c in criteria if c not in frame.columns]
    if not missing:
        return
    known = criteria_of(frame)
    hints = []
    for name in missing:
        close = difflib.get_close_matches(name, known, n=2, cutoff=0.6)
        hints.append(
            f"{name!r}" + (f" (did you mean {' or '.join(map(repr, close))}?)" if close else "")
        )
    raise MissingColumnsError(
        f"{method}: no criterion {', '.join(hints)} in these features; their criteria are "
        f"{', '.join(known) or 'none'}",
        method=method,
        missing=missing,
    )


def criteria_of(frame: pd.DataFrame) -> list[str]:
    """The criterion columns of a wide frame (from its attrs, else every unknown float column)."""
    recorded = frame.attrs.get("backtest", {}).get("criteria")
    if recorded is not None:
        return [c for c in recorded if c in frame.columns]
    known = set(TRADE_COLUMNS) | set(EVALUATION_COLUMNS)
    return [c for c in frame.columns if c not in known and pd.api.types.is_float_dtype(frame[c])]


def backtest_attrs(frame: pd.DataFrame) -> dict[str, Any]:
    """``frame.attrs["backtest"]`` (criteria, operators, decided thresholds), or empty."""
    found = frame.attrs.get("backtest")
    return dict(found) if isinstance(found, Mapping) else {}


def kept_playbooks(frame: pd.DataFrame) -> dict[int, pd.DataFrame] | None:
    """The playbooks a features frame keeps (``trade_features``), as {quant id: frame}."""
    found = backtest_attrs(frame).get("playbooks")
    return playbooks_from_columns(found) if isinstance(found, Mapping) else None


def wide_details(details: pd.DataFrame) -> pd.DataFrame:
    """Eval-details rows (``load_eval_details``) pivoted to one row per evaluation.

    Columns: ``EVALUATION_COLUMNS`` then one float64 column per criterion, in the order the
    service listed them (the playbook's order). A criterion an evaluation lacks is NaN.
    ``attrs["backtest"]`` records ``criteria``, ``operators`` (criterion -> operator) and
    ``decided_thresholds`` ({quant id text: {class: {criterion: threshold}}}, the thresholds
    the evaluations were decided under; the newest evaluation's when they changed over time).
    """
    missing = [c for c in _DETAIL_COLUMNS if c not in details.columns]
    if missing:
        raise ValueError(f"the details frame lacks {missing} (see load_eval_details)")
    provenance = provenance_summary(details)
    details = bare(details)
    eval_codes, eval_ids = pd.factorize(details["evaluation_id"], sort=False)
    crit_codes, crit_names = pd.factorize(details["criterion"].astype(object), sort=False)
    ok = (eval_codes >= 0) & (crit_codes >= 0)
    values = np.full((len(eval_ids), len(crit_names)), np.nan)
    values[eval_codes[ok], crit_codes[ok]] = details["value"].to_numpy(
        dtype=np.float64, na_value=np.nan
    )[ok]
    # drop_duplicates keeps first appearances in order, as factorize numbers them.
    first = details[details["evaluation_id"].notna()].drop_duplicates("evaluation_id")
    present = [c for c in EVALUATION_COLUMNS[:-1] if c in first.columns]
    meta = first[present].reset_index(drop=True)
    meta["market_cap_class"] = market_cap_class(meta.get("market_cap_usd", np.nan))
    names = [str(c) for c in crit_names]
    clash = sorted(set(names) & (set(TRADE_COLUMNS) | set(EVALUATION_COLUMNS)))
    if clash:
        raise ValueError(f"criterion keys {clash} clash with the columns of a wide frame")
    wide = pd.concat([meta, pd.DataFrame(values, columns=names)], axis=1)
    wide.attrs["backtest"] = {
        "criteria": tuple(names),
        "operators": _operators(details),
        "decided_thresholds": _decided_thresholds(details),
    }
    if provenance:
        wide.attrs["quantscope"] = provenance
    return wide


def _operators(details: pd.DataFrame) -> dict[str, str]:
    known = details[["criterion", "operator"]].dropna().drop_duplicates("criterion")
    return {str(c): str(o) for c, o in zip(known["criterion"], known["operator"], strict=True)}


def _decided_thresholds(details: pd.DataFrame) -> dict[str, dict[str, dict[str, float]]]:
    if "quant_id" not in details.columns or "market_cap_usd" not in details.columns:
        return {}
    rows = details[["evaluation_id", "quant_id", "market_cap_usd", "criterion", "threshold"]]
    rows = rows.assign(market_cap_class=market_cap_class(rows["market_cap_usd"]))
    rows = rows.dropna(subset=["quant_id", "market_cap_class", "criterion", "threshold"])
    # Evaluation ids grow with time: the newest decision wins if the playbook changed.
    rows = rows.sort_values("evaluation_id").drop_duplicates(
        ["quant_id", "market_cap_class", "criterion"], keep="last"
    )
    out: dict[str, dict[str, dict[str, float]]] = {}
    for q, cls, crit, thr in rows[
        ["quant_id", "market_cap_class", "criterion", "threshold"]
    ].itertuples(index=False):
        out.setdefault(str(int(q)), {}).setdefault(str(cls), {})[str(crit)] = float(thr)
    return out


def decided_by_slice(decided: Any) -> dict[tuple[int, str], Mapping[str, float]]:
    """``attrs["backtest"]["decided_thresholds"]`` as {(quant id, class): {criterion:
    threshold}}: from the JSON-safe {quant id text: {class: {...}}} that ``wide_details``
    writes (and Parquet/Feather read back), or a hand-made frame's tuple-keyed mapping.
    """
    out: dict[tuple[int, str], Mapping[str, float]] = {}
    if not isinstance(decided, Mapping):
        return out
    for key, value in decided.items():
        if not isinstance(value, Mapping):
            continue
        if isinstance(key, tuple) and len(key) == 2:
            out[(int(key[0]), str(key[1]))] = value
            continue
        for cls, thresholds in value.items():
            if isinstance(thresholds, Mapping):
                out[(int(key), str(cls))] = thresholds
    return out


def trade_features(
    trades: pd.DataFrame,
    *,
    details: pd.DataFrame | None = None,
    playbook: PlaybookArg | None = None,
    include_open: bool = False,
    confirm: bool = False,
    client: Client | None = None,
) -> pd.DataFrame:
    """Each trade with the criterion values of the evaluation that bought it, wide.

    Args:
        trades: a trades frame (``load_trades``; executed trades are what the quant really
            traded, ``trading_status="all"`` adds the shadow outcomes of declined buys).
        details: the buy evaluations' details if already loaded; by default they are loaded
            with ``load_eval_details`` (one request per evaluation not yet in the cache).
        playbook: the quants' playbooks to keep with the features (``load_playbook``, or
            {quant_id: frame}): ``what_if`` and the other research functions replay them by
            default. When this call loads the details it loads the playbooks too (one request
            per quant; a plan that cannot read playbooks leaves them out and says so in
            ``attrs["backtest"]["playbooks_missing"]``); with ``details=`` given, nothing is
            loaded: pass ``playbook=`` to keep one.
        include_open: keep open positions too. By default only closed trades are kept: an
            open position's PnL is a mark, not an outcome, and a threshold judged on marks
            would be judged on noise.
        confirm: spend more than the client's share of the quota left on the details (one
            request per evaluation not cached; without it such a load is refused with its
            cost, ``QuotaShareExceededError``, and sends nothing).
        client: the client to load details with (default: the default client).

    Returns:
        ``TRADE_COLUMNS`` then one float64 column per criterion. ``profitable`` is the
        service's own verdict (``result == "Profit"``, from the exact PnL: the ``pnl_usd``
        display string is rounded to the cent), falling back to ``pnl_usd > 0`` when
        ``result`` is missing. ``quant_id`` and the market cap come from the details. A trade
        whose evaluation has no details keeps NaN values (counted in
        ``attrs["backtest"]["trades_without_details"]``); the playbooks are in
        ``attrs["backtest"]["playbooks"]`` (``kept_playbooks`` reads them back).
    """
    trades = bare(trades)
    rows = trades if include_open else trades[trades["status"] == "Closed"]
    rows = rows[rows["evaluation_id"].notna()].reset_index(drop=True)
    missing = None
    if details is None:
        ids = pd.unique(rows["evaluation_id"].to_numpy(dtype=np.int64))
        details = load_eval_details([int(i) for i in ids], confirm=confirm, client=client)
        if playbook is None:
            playbook, missing = _load_playbooks(details, client)
    wide = wide_details(details)
    meta = backtest_attrs(wide)
    joined = rows.merge(
        wide.drop(columns=["chain", "token_id"], errors="ignore"),
        on="evaluation_id",
        how="left",
        suffixes=("", "_evaluation"),
        validate="many_to_one",
    )
    features = _assemble(joined, list(meta.get("criteria", ())))
    meta["trades_without_details"] = int(features["quant_id"].isna().sum())
    quants = {int(q) for q in features["quant_id"].dropna().unique()}
    if playbook is not None:
        meta["playbooks"] = playbook_columns(playbook, quants)
    elif missing is not None:
        meta["playbooks_missing"] = missing
    features.attrs["backtest"] = meta
    if "quantscope" in wide.attrs:
        features.attrs["quantscope"] = wide.attrs["quantscope"]
    return features


def _load_playbooks(
    details: pd.DataFrame, client: Client | None
) -> tuple[dict[int, pd.DataFrame] | None, str | None]:
    """The playbook of each quant of the details, or None and why (a plan that cannot read
    playbooks).
    """
    quants = sorted({int(q) for q in details["quant_id"].dropna().unique()})
    try:
        return {q: load_playbook(q, client=client) for q in quants}, None
    except PermissionDeniedError as exc:
        return None, str(exc)


def _assemble(joined: pd.DataFrame, criteria: list[str]) -> pd.DataFrame:
    """The joined trades in the documented column order and dtypes."""
    out = pd.DataFrame(index=joined.index)
    for col in TRADE_COLUMNS:
        if col == "profitable":
            out[col] = profitable(joined)
        elif col == "simulated":
            out[col] = pd.array(np.zeros(len(joined), dtype=bool), dtype="boolean")
        elif col in joined.columns:
            out[col] = joined[col]
        else:
            out[col] = pd.Series(pd.NA, index=joined.index, dtype="object")
    out["quant_id"] = out["quant_id"].astype("Int64")
    values = joined.reindex(columns=criteria).astype(np.float64)
    return pd.concat([out, values], axis=1)


def profitable(frame: pd.DataFrame) -> pd.arrays.BooleanArray:
    """``result == "Profit"`` (the service's verdict on the exact PnL), else ``pnl_usd > 0``."""
    pnl = frame["pnl_usd"].to_numpy(dtype=np.float64, na_value=np.nan)
    out = pd.array(pnl > 0, dtype="boolean")
    out[np.isnan(pnl)] = pd.NA
    if "result" in frame.columns:
        result = frame["result"].astype("string")
        known = result.notna().to_numpy()
        out[known] = (result[known] == "Profit").to_numpy(dtype=bool)
    return out
