"""The playbook pass rule, vectorised (docs/service-contract.md, "The pass rule").

The world generator decides every evaluation with it, eval-details explains each criterion with
it, and the toolkit's replay must reproduce it exactly: keep the three in step through this one
implementation and the contract's prose.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from quantscope.sandbox.catalog import CRITERIA, OPERATORS


@dataclass(frozen=True)
class RuleSet:
    """One playbook slice (quant x market-cap class x config type), criteria in catalog order."""

    thresholds: np.ndarray  # float64 (n_criteria,)
    weights: np.ndarray  # float64
    required: np.ndarray  # bool
    disabled: np.ndarray  # bool
    operators: tuple[str, ...]
    pass_mark: float


@dataclass(frozen=True)
class Decision:
    """The rule applied to a matrix of values (rows = evaluations, columns = criteria)."""

    criterion_passed: np.ndarray  # bool (n, k); meaningless where disabled
    scores: np.ndarray  # float64 (n, k): weight when passed, else 0; 0 where disabled
    internal_score: np.ndarray  # float64 (n,), 0-100, rounded to 2 decimals
    required_ok: np.ndarray  # bool (n,): every enabled required criterion passed
    passed: np.ndarray  # bool (n,)


@lru_cache(maxsize=1024)
def _columns_by_operator(operators: tuple[str, ...]) -> dict[str, np.ndarray]:
    """The criterion positions of each operator (a slice's operators change only when edited)."""
    columns: dict[str, list[int]] = {}
    for j, name in enumerate(operators):
        columns.setdefault(name, []).append(j)
    return {name: np.array(js, dtype=np.intp) for name, js in columns.items()}


def decide(rules: RuleSet, values: np.ndarray) -> Decision:
    """Apply ``rules`` to ``values`` (n x k, catalog order)."""
    values = np.atleast_2d(np.asarray(values, dtype=np.float64))
    k = len(CRITERIA)
    if values.shape[1] != k:
        raise ValueError(f"expected {k} criterion columns, got {values.shape[1]}")
    passed_c = np.empty(values.shape, dtype=bool)
    # one comparison per operator over its columns (a slice has 2-4 operators for 18
    # criteria): elementwise the same verdicts as a comparison per column, in fewer calls
    for op_name, columns in _columns_by_operator(rules.operators).items():
        passed_c[:, columns] = OPERATORS[op_name](values[:, columns], rules.thresholds[columns])
    enabled = ~rules.disabled
    scores = np.where(passed_c & enabled, rules.weights, 0.0)
    total_weight = float(rules.weights[enabled].sum())
    if total_weight > 0:
        internal = np.round(100.0 * scores.sum(axis=1) / total_weight, 2)
    else:
        internal = np.zeros(values.shape[0])
    must = enabled & rules.required
    required_ok = np.all(passed_c | ~must, axis=1)
    passed = required_ok & (internal >= rules.pass_mark)
    return Decision(passed_c, scores, internal, required_ok, passed)
