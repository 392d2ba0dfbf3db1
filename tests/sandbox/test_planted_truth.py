"""The planted truth is declared in ``sim/criteria.py`` (``PLANTED``, ``NOISE``) and checked
against the generator itself: a different future moves every planted value and no noise one."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from quantscope.sandbox.catalog import CRITERIA
from quantscope.sandbox.sim import criteria, market, tokens


def _values_with_futures(seed: int, token_id: int) -> tuple[np.ndarray, np.ndarray]:
    path = market.token_path(seed, token_id)
    meta = tokens.token_meta(seed, token_id, path)
    hours = np.arange(30, min(len(path.close) - 30, 400), 7, dtype=np.int64)
    assert len(hours) > 20
    # Another future: every candle's close scaled by a factor that varies hour by hour, so the
    # next day's return from any scan hour changes; candles are kept as they were before.
    wiggle = np.exp(0.3 * np.sin(np.arange(len(path.close)) * 0.7))
    other = dataclasses.replace(path, close=path.close * wiggle)
    end = np.minimum(hours + 23, len(path.close) - 1)
    assert not np.allclose(other.close[end] / path.close[end], 1.0)
    a = criteria.criterion_values(seed, 1, path, meta, hours)
    b = criteria.criterion_values(seed, 1, other, meta, hours)
    return a, b


def test_planted_and_noise_are_declared_disjoint_catalog_criteria() -> None:
    keys = {c.key for c in CRITERIA}
    assert set(criteria.PLANTED) <= keys
    assert criteria.NOISE.issubset(keys)
    assert not set(criteria.PLANTED) & criteria.NOISE
    assert all(0.0 < rho < 1.0 for rho in criteria.PLANTED.values())


def test_a_different_future_moves_every_planted_value_and_no_noise_one() -> None:
    col = criteria.COLUMN
    for seed, token_id in [(7, 3), (11, 40)]:
        a, b = _values_with_futures(seed, token_id)
        for key in criteria.PLANTED:
            moved = np.mean(a[:, col[key]] != b[:, col[key]])
            assert moved > 0.3, (key, moved)
        for key in criteria.NOISE:
            np.testing.assert_array_equal(a[:, col[key]], b[:, col[key]], err_msg=key)


def test_the_generator_reads_its_weights_from_the_declaration(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = market.token_path(7, 3)
    meta = tokens.token_meta(7, 3, path)
    hours = np.arange(30, 200, 5, dtype=np.int64)
    before = criteria.criterion_values(7, 1, path, meta, hours)
    monkeypatch.setitem(criteria.PLANTED, "smart_money_buys", 0.0)
    after = criteria.criterion_values(7, 1, path, meta, hours)
    c = criteria.COLUMN["smart_money_buys"]
    assert not np.array_equal(before[:, c], after[:, c])
    others = [i for i in range(before.shape[1]) if i != c]
    np.testing.assert_array_equal(before[:, others], after[:, others])
