"""Shadow outcomes: research on trades that were never executed warns once and says so.

The service follows every buy its model validation declined with the quant's own exit rule, so
a trades frame loaded with ``trading_status="all"`` (or ``"rejected"``, ``"recommended"``)
holds the *shadow* outcome of trades never made (docs/service-contract.md, Trades). A row is
never-executed when its ``decision`` is ``REJECT`` or ``RECOMMEND`` (or a ``DELAY`` still
waiting), as ``analytics._execution.executed_mask`` decides for every analytics function.
Research that counts them answers for a playbook that traded them, which none did.

``checked(name)`` decorates a research entry point: before it runs, the frame argument is
checked; when it holds shadow rows, one ``ShadowOutcomesWarning`` points at the caller's line
and the result's ``attrs["shadow"]`` records ``{"rows": n, "by_decision": {...}, "of": total,
"note": ...}``. Entry points called inside another (``rank_criteria`` calls ``what_if``) stay
quiet: the outermost call warns, once. Simulated entries (``simulated`` True: the
researcher's own estimates, labelled as such) are not shadow rows.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any, ParamSpec, TypeVar

import numpy as np
import pandas as pd

from quantscope._errors import ShadowOutcomesWarning
from quantscope.analytics._execution import executed_mask

P = ParamSpec("P")
R = TypeVar("R")

#: True while an entry point runs: the ones it calls do not warn again.
_ACTIVE: ContextVar[bool] = ContextVar("quantscope_shadow_active", default=False)

NOTE = (
    "never-executed trades (model validation declined them: REJECT, RECOMMEND, or a DELAY "
    "still waiting) counted as if traded: their outcomes are the service's shadow of a trade "
    "never made. Load executed trades (load_trades' default) to research what was traded, or "
    "filter these rows out (decision)."
)


def shadow_rows(frame: pd.DataFrame) -> dict[str, Any] | None:
    """The never-executed rows of a trades or features frame, counted by decision; None when
    there is none (or the frame has no ``decision`` column: executed trades only).
    """
    if not isinstance(frame, pd.DataFrame) or "decision" not in frame.columns or frame.empty:
        return None
    shadow = ~executed_mask(frame)
    if "simulated" in frame.columns:
        shadow &= ~frame["simulated"].to_numpy(dtype=bool, na_value=False)
    if not shadow.any():
        return None
    decisions = frame["decision"].astype("string").fillna("?").to_numpy()[shadow]
    names, counts = np.unique(decisions, return_counts=True)
    return {
        "rows": int(shadow.sum()),
        "of": len(frame),
        "by_decision": {str(n): int(c) for n, c in zip(names, counts, strict=True)},
        "note": NOTE,
    }


def check(frame: pd.DataFrame, where: str, stacklevel: int = 3) -> dict[str, Any] | None:
    """Warn once about ``frame``'s shadow rows and return their record for ``attrs["shadow"]``
    (None when there is none). Entry points inside another are not checked (``checked``).
    """
    found = shadow_rows(frame)
    if found is not None:
        by = ", ".join(f"{c} {n}" for n, c in found["by_decision"].items())
        warnings.warn(
            f"{where}: {found['rows']} of {found['of']} rows are {NOTE} ({by}; "
            f'attrs["shadow"] of the result).',
            ShadowOutcomesWarning,
            stacklevel=stacklevel,
        )
    return found


def checked(argument: str = "features") -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Decorate a research entry point whose ``argument`` is a trades or features frame: its
    shadow rows warn once (``check``) and are recorded in the result's ``attrs["shadow"]``.
    """

    def decorate(func: Callable[P, R]) -> Callable[P, R]:
        signature = inspect.signature(func)

        @functools.wraps(func)
        def run(*args: P.args, **kwargs: P.kwargs) -> R:
            if _ACTIVE.get():  # inside another entry point: it checked (and records) the frame
                return func(*args, **kwargs)
            bound = signature.bind_partial(*args, **kwargs)
            frame = bound.arguments.get(argument)
            found = check(frame, func.__name__, stacklevel=3) if frame is not None else None
            token = _ACTIVE.set(True)
            try:
                result = func(*args, **kwargs)
            finally:
                _ACTIVE.reset(token)
            if found is not None and isinstance(result, pd.DataFrame):
                result.attrs["shadow"] = found
            return result

        return run

    return decorate
