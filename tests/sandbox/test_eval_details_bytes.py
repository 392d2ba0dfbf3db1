"""GET /api/eval-details answers the same bytes however it computes them, and computes once.

The route recomputes each evaluation's criterion values from the seed and applies the pass rule
(``evaldetail.detail``); making it cheaper must not change one byte of any answer. The digest
below was recorded over HTTP on the session world (seed 7, scale 1) with the code before the
speed-up (``main`` at b9c80f1): the bodies of every 199th evaluation (246 answers: every type,
quant, class, scored and unscored), each prefixed by its id. The whole world's answers are
compared the same way in tests/reliability/test_eval_details_every_id.py.
"""

from __future__ import annotations

import contextlib
import hashlib
import sqlite3
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from _helpers import ApiSession
from hypothesis import given, settings
from hypothesis import strategies as st

from quantscope.sandbox import evaldetail
from quantscope.sandbox.catalog import round_value, value_text
from quantscope.sandbox.datadir import WorldInfo
from quantscope.sandbox.serve import SandboxServer

STRIDE = 199
SAMPLE_SHA256 = "a2a74af2fb8d37ab2093ce93c891236873bcfbb8e731a4b50547e6f4c78d2c32"


def _sample(world: WorldInfo) -> list[sqlite3.Row]:
    with contextlib.closing(sqlite3.connect(world.db_path)) as conn:
        conn.row_factory = sqlite3.Row
        return conn.execute(
            "SELECT id, type, quant_id, mc_class, scored FROM evaluations "
            "WHERE id % ? = 1 ORDER BY id",
            (STRIDE,),
        ).fetchall()


def test_sampled_answers_are_the_recorded_bytes(
    sandbox: SandboxServer, sandbox_world: WorldInfo, api: Callable[..., ApiSession]
) -> None:
    rows = _sample(sandbox_world)
    assert len(rows) == 246
    # the sample covers every kind of evaluation the route explains
    assert {r["type"] for r in rows} == {"TOKEN_STATUS", "TOKEN_BUY", "TOKEN_SELL"}
    assert {r["quant_id"] for r in rows} == {1, 2, 3}
    assert len({r["mc_class"] for r in rows}) >= 3
    assert {r["scored"] for r in rows} == {0, 1}
    session = api("enterprise")
    digest = hashlib.sha256()
    for row in rows:
        response = session.query("/api/eval-details", evaluationId=row["id"])
        assert response.status_code == 200, response.text
        digest.update(f"{row['id']}\n".encode() + response.content + b"\n")
    assert digest.hexdigest() == SAMPLE_SHA256


def test_one_answer_applies_the_pass_rule_once(
    sandbox: SandboxServer,
    sandbox_world: WorldInfo,
    api: Callable[..., ApiSession],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The pass rule decides each answer once: the criterion results and the narrative's facts
    share one decision (before, ``build_results`` and ``eval_facts_many`` each decided)."""
    calls: list[int] = []
    decide = evaldetail.decide

    def counted(rules: Any, values: Any) -> Any:
        calls.append(len(values))
        return decide(rules, values)

    monkeypatch.setattr(evaldetail, "decide", counted)
    session = api("enterprise")
    ids = [int(r["id"]) for r in _sample(sandbox_world)[:20]]
    for evaluation_id in ids:
        session.ok("/api/eval-details", evaluationId=evaluation_id)
    assert len(calls) == len(ids)


# --------------------------------------------------------------------------------------------
# The rewritten formulas against their definitions
# --------------------------------------------------------------------------------------------


def _reference_text(value: float) -> str:
    """value_text as defined: numpy's positional text of the 6-significant-digit float."""
    return str(np.format_float_positional(round_value(value), trim="-"))


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=True, allow_infinity=True, allow_subnormal=True))
def test_value_text_is_numpys_positional_text(value: float) -> None:
    assert value_text(value) == _reference_text(value)


def test_value_text_at_every_magnitude() -> None:
    rng = np.random.default_rng(22)
    values = np.concatenate(
        [
            rng.standard_normal(20_000) * 10.0 ** rng.integers(-320, 308, 20_000),
            rng.standard_normal(20_000) * 10.0 ** rng.integers(-8, 12, 20_000),
            [0.0, -0.0, 1e6, 999_999.5, 1e-5, 1e-307, 2.5e-308, 5e-324, 1.7976931348623157e308],
        ]
    )
    assert [value_text(v) for v in values] == [_reference_text(v) for v in values]


def test_score_scale_is_criteria_score_of_each_criterion(sandbox_world: WorldInfo) -> None:
    """Every slice of the world, at values across and beyond each range, at its bounds, NaN."""
    with contextlib.closing(sqlite3.connect(sandbox_world.db_path)) as conn:
        conn.row_factory = sqlite3.Row
        slices = evaldetail.load_playbook(conn)
    rng = np.random.default_rng(7)
    for playbook in slices.values():
        scale = playbook.scale
        edges = [scale.low, scale.low + scale.span, scale.low - 1e-9, np.full(18, np.nan)]
        rows = [*edges, *(scale.low + scale.span * rng.uniform(-0.3, 1.3, (40, 18)))]
        for row in rows:
            expected = [
                evaldetail.criteria_score(info, v)
                for info, v in zip(playbook.extra_infos, row, strict=True)
            ]
            got = scale.scores(np.asarray(row))
            np.testing.assert_array_equal(got, expected, strict=True)  # exactly; NaN as NaN
            assert np.signbit(got).tolist() == np.signbit(expected).tolist()
