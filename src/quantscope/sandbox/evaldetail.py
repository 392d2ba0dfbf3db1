"""One evaluation explained: its criterion results, and the facts the narrative texts use.

Criterion values are not stored: they are recomputed from the world's seed with
``criteria.criterion_values`` at the evaluation's candle hour, exactly as the world generator saw
them. Thresholds, weights, flags and operators come from ``config_original``, the build-time
playbook that decided all history (the live ``config`` may since have been edited), and the pass
mark from ``pass_marks``. The verdicts are ``rules.decide``'s: the contract's pass rule, so a
replay of the served details reproduces the evaluation's ``passed``.

Public helpers (other routers use them):

* ``criterion_results(conn, seed, eval_row)``: the ``evaluationResultDetails`` list of
  eval-details (and ``evaluationDetails`` of the alpha-signal detail);
* ``eval_facts(conn, seed, eval_row)`` / ``eval_facts_many(conn, seed, rows)``: what
  ``narrative.ai_analysis``, ``ai_prompt`` and ``alert`` take.

``eval_row`` is a full row of ``evaluations`` (``SELECT * FROM evaluations ...``, a
``sqlite3.Row`` or any mapping with its column names).
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections import OrderedDict, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from quantscope.sandbox import rendered
from quantscope.sandbox.catalog import (
    CATEGORY_IDS,
    CONFIG_TYPE_OF_EVAL,
    CRITERIA,
    OPERATOR_DIRECTION,
    value_text,
)
from quantscope.sandbox.sim import criteria, market, narrative, tokens
from quantscope.sandbox.sim.narrative import EvalFacts
from quantscope.sandbox.sim.rules import RuleSet, decide
from quantscope.sandbox.timefmt import iso_ms

EvalRow = sqlite3.Row | Mapping[str, Any]

# Criterion-result ids: eval id x 100 + criterion id (unique, and decodable by a reader).
RESULT_ID_FACTOR = 100


@dataclass(frozen=True)
class PlaybookSlice:
    """The build-time playbook of one (quant, market-cap class, config type).

    ``rules`` feeds the pass rule; ``extra_infos`` are the entries' Extra info objects; both
    in catalog order (criterion id 1..18).
    """

    rules: RuleSet
    extra_infos: tuple[dict[str, Any], ...]

    @cached_property
    def scale(self) -> ScoreScale:
        """Where each criterion's ``criteriaScore`` is measured from (computed once)."""
        return ScoreScale.of(self.extra_infos)

    @cached_property
    def settings(self) -> tuple[tuple[float, float, bool], ...]:
        """(threshold, weight, disabled) of each criterion as Python values (computed once)."""
        rules = self.rules
        columns = (rules.thresholds.tolist(), rules.weights.tolist(), rules.disabled.tolist())
        return tuple(zip(*columns, strict=True))


SliceKey = tuple[int, str, str]  # (quant id, market-cap class, config type)


_PLAYBOOKS: dict[tuple[str, int], dict[SliceKey, PlaybookSlice]] = {}
_PLAYBOOKS_LOCK = threading.Lock()


def load_playbook(
    conn: sqlite3.Connection, keys: Iterable[SliceKey] | None = None
) -> dict[SliceKey, PlaybookSlice]:
    """The build-time playbook slices named by ``keys`` (every slice when None).

    ``config_original`` is written once, when the world is built, so it is read once per
    database file (by path and inode: a rebuilt world is a new file) and kept.
    """
    path = str(conn.execute("PRAGMA database_list").fetchone()[2])
    ident = (path, os.stat(path).st_ino if path else id(conn))
    with _PLAYBOOKS_LOCK:
        slices = _PLAYBOOKS.get(ident)
    if slices is None:
        slices = _read_playbook(conn)
        with _PLAYBOOKS_LOCK:
            _PLAYBOOKS[ident] = slices
    return dict(slices) if keys is None else {key: slices[key] for key in keys}


def _read_playbook(conn: sqlite3.Connection) -> dict[SliceKey, PlaybookSlice]:
    rows = conn.execute(
        "SELECT o.quant_id, o.market_cap, o.config_type, o.threshold, o.weight, o.required, "
        "o.disabled, o.extra_info, p.pass_mark "
        "FROM config_original o JOIN criteria c ON c.id = o.criteria_id "
        "JOIN pass_marks p ON p.quant_id = o.quant_id AND p.market_cap = o.market_cap "
        "AND p.config_type = o.config_type "
        "ORDER BY o.quant_id, o.market_cap, o.config_type, c.position"
    ).fetchall()
    grouped: dict[SliceKey, list[sqlite3.Row]] = defaultdict(list)
    for row in rows:
        grouped[row["quant_id"], row["market_cap"], row["config_type"]].append(row)
    slices = {}
    for key, entries in grouped.items():
        if len(entries) != len(CRITERIA):
            raise RuntimeError(f"playbook slice {key} has {len(entries)} criteria")
        infos = tuple(json.loads(e["extra_info"]) for e in entries)
        slices[key] = PlaybookSlice(
            rules=RuleSet(
                thresholds=np.array([e["threshold"] for e in entries], dtype=np.float64),
                weights=np.array([e["weight"] for e in entries], dtype=np.float64),
                required=np.array([bool(e["required"]) for e in entries]),
                disabled=np.array([bool(e["disabled"]) for e in entries]),
                operators=tuple(str(i["operator"]) for i in infos),
                pass_mark=float(entries[0]["pass_mark"]),
            ),
            extra_infos=infos,
        )
    return slices


def slice_key(eval_row: EvalRow) -> SliceKey:
    """The playbook slice that decided an evaluation."""
    return (
        int(eval_row["quant_id"]),
        str(eval_row["mc_class"]),
        CONFIG_TYPE_OF_EVAL[str(eval_row["type"])],
    )


class _ValueCache:
    """Criterion values by (seed, quant, token): every evaluated hour of a pair at once.

    ``criteria.criterion_values`` has a fixed cost per call that outweighs its cost per hour, so a
    page that touches a pair computes all the pair's evaluation hours in one call
    and later pages, details and signals find them here. Values are a pure function of the key
    and the hour, so the cache never goes stale.

    The cache is bounded by memory (``max_bytes``, least recently used out first), not by a
    count of pairs: a pair's values take ~26 kB (180 hours x 18 criteria), so the default
    budget holds every pair of a world up to scale ~100 (a scale-10 world has 2,700 pairs,
    ~75 MB). A count bound smaller than the world made a full scan in time order (each 12 h
    scan cycle touches every pair) evict each pair just before its next use.
    """

    def __init__(self, max_bytes: int = 512 * 2**20) -> None:
        self.max_bytes = max_bytes
        self._bytes = 0
        self._pairs: OrderedDict[tuple[int, int, int], tuple[np.ndarray, np.ndarray]] = (
            OrderedDict()
        )
        self._lock = threading.Lock()
        self.computed = 0  # pairs computed (a miss each): benchmarks and tests read it

    def __len__(self) -> int:
        return len(self._pairs)

    def clear(self) -> None:
        with self._lock:
            self._pairs.clear()
            self._bytes = 0

    def get(
        self, conn: sqlite3.Connection, seed: int, quant_id: int, token_id: int, hours: list[int]
    ) -> np.ndarray:
        """The values (len(hours) x 18) of one pair at ``hours``."""
        key = (seed, quant_id, token_id)
        wanted = np.asarray(hours, dtype=np.int64)
        with self._lock:
            entry = self._pairs.get(key)
            if entry is not None:
                self._pairs.move_to_end(key)
        if entry is not None:
            at = np.searchsorted(entry[0], wanted)
            if bool(np.all(at < len(entry[0]))) and bool(np.all(entry[0][at] == wanted)):
                return entry[1][at]
        known = [] if entry is None else entry[0].tolist()
        stored = conn.execute(
            "SELECT DISTINCT hour FROM evaluations WHERE token_id = ? AND quant_id = ?",
            (token_id, quant_id),
        ).fetchall()
        all_hours = np.array(sorted({*known, *hours, *(int(r[0]) for r in stored)}), np.int64)
        path = market.token_path(seed, token_id)
        meta = tokens.token_meta(seed, token_id, path)
        values = criteria.criterion_values(seed, quant_id, path, meta, all_hours)
        entry = (all_hours, values)
        with self._lock:
            self.computed += 1
            old = self._pairs.pop(key, None)
            if old is not None:
                self._bytes -= old[0].nbytes + old[1].nbytes
            self._pairs[key] = entry
            self._bytes += all_hours.nbytes + values.nbytes
            while self._bytes > self.max_bytes and len(self._pairs) > 1:
                _, (h, v) = self._pairs.popitem(last=False)
                self._bytes -= h.nbytes + v.nbytes
        return values[np.searchsorted(all_hours, wanted)]


_VALUES = _ValueCache()


def values_of(conn: sqlite3.Connection, seed: int, rows: Sequence[EvalRow]) -> np.ndarray:
    """The criterion values (len(rows) x 18, catalog order) of evaluations, from the seed."""
    groups: dict[tuple[int, int], list[int]] = defaultdict(list)
    for i, row in enumerate(rows):
        groups[int(row["quant_id"]), int(row["token_id"])].append(i)
    out = np.empty((len(rows), len(CRITERIA)))
    for (quant_id, token_id), indexes in groups.items():
        hours = [int(rows[i]["hour"]) for i in indexes]
        out[indexes] = _VALUES.get(conn, seed, quant_id, token_id, hours)
    return out


def criteria_score(extra_info: Mapping[str, Any], value: float) -> float:
    """Where ``value`` stands in the criterion's range (or options), 0-100, 100 best."""
    options = extra_info.get("options")
    if options:
        low, high = 0.0, float(max(len(options) - 1, 1))
    elif extra_info.get("range") is not None:
        low, high = float(extra_info["range"]["min"]), float(extra_info["range"]["max"])
    else:
        return 100.0 if value > 0 else 0.0
    share = 0.0 if high <= low else min(max((value - low) / (high - low), 0.0), 1.0)
    if OPERATOR_DIRECTION[str(extra_info["operator"])] < 0:
        share = 1.0 - share
    return round(100.0 * share, 2)


@dataclass(frozen=True)
class ScoreScale:
    """``criteria_score`` of every criterion of a slice at once: the same floats, in one pass.

    ``low`` and ``span`` (high - low) of each ranged criterion (options count as a range
    from 0), ``flip`` where smaller values are better; ``binary`` marks a criterion with
    neither (100 when its value is positive); ``flat`` a range with no width (share 0).
    """

    low: np.ndarray
    span: np.ndarray
    flip: np.ndarray
    binary: np.ndarray
    flat: np.ndarray

    @classmethod
    def of(cls, extra_infos: Sequence[Mapping[str, Any]]) -> ScoreScale:
        low, high, binary = [], [], []
        for info in extra_infos:
            options = info.get("options")
            if options:
                bounds = (0.0, float(max(len(options) - 1, 1)))
            elif info.get("range") is not None:
                bounds = (float(info["range"]["min"]), float(info["range"]["max"]))
            else:
                bounds = (0.0, 1.0)
            low.append(bounds[0])
            high.append(bounds[1])
            binary.append(not options and info.get("range") is None)
        lows, highs = np.array(low), np.array(high)
        flat = highs <= lows
        return cls(
            low=lows,
            span=np.where(flat, 1.0, highs - lows),
            flip=np.array([OPERATOR_DIRECTION[str(i["operator"])] < 0 for i in extra_infos]),
            binary=np.array(binary),
            flat=flat,
        )

    def scores(self, values: np.ndarray) -> list[float]:
        """``criteria_score(extra_infos[j], values[j])`` for every j (values: one row).

        Step for step the scalar's arithmetic: the share, then Python's ``max(share, 0.0)``
        and ``min(share, 1.0)`` (which keep the share itself, NaN and -0.0 included, unless
        the bound is strictly beyond it), the flip, and numpy's rounding (``round`` of a
        numpy float is ``np.round``).
        """
        share = (values - self.low) / self.span
        share = np.where(share < 0.0, 0.0, share)
        share = np.where(share > 1.0, 1.0, share)
        share = np.where(self.flat, 0.0, share)
        share = np.where(self.flip, 1.0 - share, share)
        scored = np.round(100.0 * share, 2)
        scored = np.where(self.binary, np.where(values > 0, 100.0, 0.0), scored)
        out: list[float] = scored.tolist()
        return out


# The catalog parts of a criterion result, the same for every evaluation (shared, read-only).
_CRITERION_PARTS = tuple(
    (
        {"key": c.key, "name": c.name, "shortDescription": c.short, "longDescription": c.long},
        {"id": CATEGORY_IDS[c.category], "name": c.category},
    )
    for c in CRITERIA
)


def build_results(
    eval_row: EvalRow,
    values: np.ndarray,
    playbook: PlaybookSlice,
    verdicts: np.ndarray | None = None,
) -> list[dict[str, Any]]:
    """The criterion results of one evaluation from its values and playbook slice.

    ``verdicts`` (``decide(...).criterion_passed`` of this row) when the caller has them,
    so the pass rule runs once a request; decided here otherwise. The ``criteria``,
    ``category`` and ``extraInfo`` objects are shared between answers: read, never mutate.
    """
    if verdicts is None:
        verdicts = decide(playbook.rules, values).criterion_passed[0]
    created = iso_ms(int(eval_row["created_ms"]))
    base_id = int(eval_row["id"]) * RESULT_ID_FACTOR
    passes = verdicts.tolist()
    scores = playbook.scale.scores(values)
    texts = [value_text(v) for v in values.tolist()]
    results = []
    for j, c in enumerate(CRITERIA):
        threshold, weight, disabled = playbook.settings[j]
        passed = None if disabled else passes[j]
        criteria_part, category_part = _CRITERION_PARTS[j]
        results.append(
            {
                "id": base_id + c.id,
                "passed": passed,
                "value": texts[j],
                "threshold": threshold,
                "weight": weight,
                "score": None if passed is None else weight if passed else 0.0,
                "criteriaScore": None if disabled else scores[j],
                "criteriaId": c.id,
                "createdAt": created,
                "extraInfo": playbook.extra_infos[j],
                "criteria": criteria_part,
                "category": category_part,
            }
        )
    return results


def criterion_results(
    conn: sqlite3.Connection, seed: int, eval_row: EvalRow
) -> list[dict[str, Any]]:
    """The criterion results of one evaluation, shaped as eval-details' ``evaluationResultDetails``.

    Args:
        conn: a connection to the world database.
        seed: the world's seed (``WorldInfo.seed``).
        eval_row: a full row of ``evaluations``.

    Returns:
        One dict per criterion, in catalog order (disabled criteria included, with ``passed``,
        ``score`` and ``criteriaScore`` null).
    """
    key = slice_key(eval_row)
    playbook = load_playbook(conn, [key])[key]
    values = values_of(conn, seed, [eval_row])[0]
    return build_results(eval_row, values, playbook)


def eval_facts_many(
    conn: sqlite3.Connection, seed: int, rows: Sequence[EvalRow]
) -> list[EvalFacts]:
    """The narrative facts of each evaluation (one query for tokens, one for quants)."""
    if not rows:
        return []
    playbook = load_playbook(conn, {slice_key(r) for r in rows})
    token_ids = sorted({int(r["token_id"]) for r in rows})
    tokens = {
        int(t["id"]): t
        for t in conn.execute(
            "SELECT id, name, symbol FROM tokens WHERE id IN (SELECT value FROM json_each(?))",
            (json.dumps(token_ids),),
        )
    }
    quant_names = {
        int(q["id"]): str(q["name"]) for q in conn.execute("SELECT id, name FROM quants")
    }
    values = values_of(conn, seed, rows)
    verdicts = np.empty(values.shape, dtype=bool)
    by_slice: dict[SliceKey, list[int]] = defaultdict(list)
    for i, row in enumerate(rows):
        by_slice[slice_key(row)].append(i)
    for key, indexes in by_slice.items():
        verdicts[indexes] = decide(playbook[key].rules, values[indexes]).criterion_passed
    return [
        _facts(
            row,
            tokens[int(row["token_id"])],
            quant_names[int(row["quant_id"])],
            values[i],
            playbook[slice_key(row)].rules,
            verdicts[i],
        )
        for i, row in enumerate(rows)
    ]


def _facts(
    row: EvalRow,
    token: EvalRow,
    quant_name: str,
    values: np.ndarray,
    rules: RuleSet,
    verdicts: np.ndarray,
) -> EvalFacts:
    """The narrative facts of one evaluation whose values and verdicts are known."""
    return EvalFacts(
        evaluation_id=int(row["id"]),
        eval_type=str(row["type"]),
        quant_name=quant_name,
        token_name=str(token["name"]),
        symbol=str(token["symbol"]),
        chain=str(row["chain"]),
        created_ms=int(row["created_ms"]),
        price=float(row["price"]),
        market_cap=float(row["market_cap"]),
        mc_class=str(row["mc_class"]),
        liquidity=float(row["liquidity"]),
        volume_24h=float(row["volume_24h"]),
        holders=int(row["holders"]),
        passed=bool(row["passed"]),
        scored=bool(row["scored"]),
        internal_score=float(row["internal_score"]),
        ai_score=float(row["ai_score"]),
        values=values,
        rules=rules,
        criterion_passed=verdicts,
    )


def eval_facts(conn: sqlite3.Connection, seed: int, eval_row: EvalRow) -> EvalFacts:
    """The narrative facts of one evaluation (for ``narrative.alert`` and friends)."""
    return eval_facts_many(conn, seed, [eval_row])[0]


# --------------------------------------------------------------------------------------------
# Rendering: an eval-results item and the eval-details body
# --------------------------------------------------------------------------------------------

PLAYBOOK_STEP_MS = 2_000  # the playbook's verdict is written 2 s after createdAt
AI_LATENCY_MS = (3_000, 12_000)  # the AI step's answer takes 3-12 s more
SNAPSHOT_SOURCES = ("dex_pools", "price_aggregator")


def _updated_ms(created_ms: int, scored: bool, u: float) -> int:
    """updatedAt: when the evaluation was complete (after the AI step when it ran)."""
    if not scored:
        return created_ms + PLAYBOOK_STEP_MS
    low, high = AI_LATENCY_MS
    return created_ms + PLAYBOOK_STEP_MS + low + int(u * (high - low))


def _snapshots(row: EvalRow, u: np.ndarray) -> list[dict[str, Any]]:
    """What each data source reported just before the evaluation.

    ``dex_pools`` reads the pool itself: the evaluation's own figures. ``price_aggregator``
    quotes a few seconds older data, off by up to ±0.5 % (price) and ±2 % (liquidity, volume).
    """
    created = int(row["created_ms"])
    drift = 1.0 + 0.01 * (float(u[0]) - 0.5)
    sources = (
        (SNAPSHOT_SOURCES[0], created - 1_500, 1.0, 1.0, 1.0),
        (
            SNAPSHOT_SOURCES[1],
            created - 4_000 - int(float(u[1]) * 6_000),
            drift,
            1.0 + 0.04 * (float(u[2]) - 0.5),
            1.0 + 0.04 * (float(u[3]) - 0.5),
        ),
    )
    return [
        {
            "source": source,
            "fetchedAt": iso_ms(fetched),
            "priceUsd": float(row["price"]) * price,
            "marketCapUsd": float(row["market_cap"]) * price,
            "liquidityUsd": float(row["liquidity"]) * liquidity,
            "volume24hUsd": float(row["volume_24h"]) * volume,
            "holders": int(row["holders"]),
        }
        for source, fetched, price, liquidity, volume in sources
    ]


def result_items(conn: sqlite3.Connection, seed: int, ids: Sequence[int]) -> list[Any]:
    """The eval-results items of evaluations ``ids``, in that order, as JSON fragments
    (``rendered.ITEMS``: each evaluation's item is rendered once while the world is served).
    """

    def render(missing: list[int]) -> list[dict[str, Any]]:
        rows = conn.execute(
            "SELECT e.*, k.symbol, k.address, k.image, k.name FROM evaluations e "
            "JOIN tokens k ON k.id = e.token_id WHERE e.id IN (SELECT value FROM json_each(?))",
            (json.dumps(missing),),
        ).fetchall()
        by_id = {int(r["id"]): r for r in rows}
        return result_dicts(conn, seed, [by_id[i] for i in missing])

    return rendered.ITEMS.fragments(rendered.world_of(conn), "eval-results", ids, render)


def result_dicts(
    conn: sqlite3.Connection, seed: int, rows: Sequence[EvalRow]
) -> list[dict[str, Any]]:
    """eval-results items of evaluation rows joined with their token's symbol/address/image."""
    if not rows:
        return []
    facts = eval_facts_many(conn, seed, rows)
    ids = np.array([int(r["id"]) for r in rows], dtype=np.uint64)
    u = market.noise_uniform(
        (seed, 11), (ids[:, None] * np.uint64(8) + np.arange(5, dtype=np.uint64))
    )
    items = []
    for i, (row, f) in enumerate(zip(rows, facts, strict=True)):
        created = int(row["created_ms"])
        scored = bool(row["scored"])
        items.append(
            {
                "id": int(row["id"]),
                "tokenId": int(row["token_id"]),
                "userQuantId": int(row["quant_id"]),
                "createdAt": iso_ms(created),
                "updatedAt": iso_ms(_updated_ms(created, scored, float(u[i, 4]))),
                "evaluationResultType": row["type"],
                "marketCap": float(row["market_cap"]),
                "passed": bool(row["passed"]),
                "avgScore": float(row["avg_score"]),
                "aiScore": float(row["ai_score"]),
                "internalScore": float(row["internal_score"]),
                "aiAnalysis": narrative.ai_analysis(f),
                "aiPrompt": narrative.ai_prompt(f),
                "token": {
                    "id": int(row["token_id"]),
                    "symbol": row["symbol"],
                    "address": row["address"],
                    "chainName": row["chain"],
                    "DataFetcherResponseSnapshots": _snapshots(row, u[i]),
                    "detectionPrice": float(row["price"]),
                    "image": row["image"],
                },
                "performance": {
                    "tokenId": int(row["token_id"]),
                    "entryPriceUsd": float(row["price"]),
                    "roi": float(row["perf_roi"]),
                },
            }
        )
    return items


def detail(conn: sqlite3.Connection, seed: int, eval_row: EvalRow) -> dict[str, Any]:
    """The eval-details body of one evaluation (a full ``evaluations`` row).

    Its values are computed (or found) once and the pass rule applied once: the narrative's
    facts and the criterion results share them (``eval_facts`` + ``criterion_results`` would
    each do both).
    """
    token = conn.execute("SELECT * FROM tokens WHERE id = ?", (eval_row["token_id"],)).fetchone()
    quant_name = conn.execute(
        "SELECT name FROM quants WHERE id = ?", (eval_row["quant_id"],)
    ).fetchone()
    key = slice_key(eval_row)
    playbook = load_playbook(conn, [key])[key]
    values = values_of(conn, seed, [eval_row])[0]
    verdicts = decide(playbook.rules, values).criterion_passed[0]
    facts = _facts(eval_row, token, str(quant_name[0]), values, playbook.rules, verdicts)
    path = market.token_path(seed, int(eval_row["token_id"]))
    hour = int(eval_row["hour"])
    day_before = float(path.open[max(hour - 24, 0)])
    return {
        "token": {
            "id": int(token["id"]),
            "image": token["image"],
            "name": token["name"],
            "symbol": token["symbol"],
            "address": token["address"],
            "priceSnapshot": float(eval_row["price"]),
            "priceChange24h": (float(path.open[hour]) / day_before - 1.0) * 100.0,
            "mc": float(eval_row["market_cap"]),
            "liquidity": float(eval_row["liquidity"]),
            "volume24h": float(eval_row["volume_24h"]),
            "status": token["status"],
            "createdAt": iso_ms(int(token["created_ms"])),
            "chainName": token["chain"],
        },
        "userQuant": {"id": int(eval_row["quant_id"]), "name": facts.quant_name},
        "evaluationResult": {
            "id": int(eval_row["id"]),
            "passed": bool(eval_row["passed"]),
            "evaluationResultType": eval_row["type"],
            "avgScore": float(eval_row["avg_score"]),
            "internalScore": float(eval_row["internal_score"]),
            "aiScore": float(eval_row["ai_score"]),
            "aiAnalysis": narrative.ai_analysis(facts),
            "createdAt": iso_ms(int(eval_row["created_ms"])),
        },
        "evaluationResultDetails": build_results(eval_row, values, playbook, verdicts),
    }
