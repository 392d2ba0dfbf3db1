"""Executed versus hypothetical trades: which rows of a trades frame were really traded.

The service follows every trade its model validation declined with the quant's own exit rule,
so a frame loaded with ``trading_status`` other than ``executed`` also holds **hypothetical**
trades: the shadow outcome of a trade never made (docs/service-contract.md, Trades). A trade is
hypothetical when ``decision`` is ``REJECT`` or ``RECOMMEND``, or when it is a ``DELAY`` whose
wait (``wait_until``) had not ended at the service's clock (an open position's mark time,
``opened_at + duration_s``). Everything else is executed: ``APPROVE``, a ``DELAY`` that was
entered, and rows without a decision (a frame without the column comes from the service's
default filter, executed trades only).

Trade analytics take ``execution=``: ``"executed"``, ``"hypothetical"``, ``"all"``, or None
(the default): the executed trades, or, when the frame holds none, its hypothetical ones. The
basis used is labelled on every result (``Basis.note``, in ``attrs["execution"]``).
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

import numpy as np
import numpy.typing as npt
import pandas as pd

Execution = Literal["executed", "hypothetical", "all"]

# Each basis and how results label it (attrs, plot titles, summary()'s name).
EXECUTION_LABELS: dict[str, str] = {
    "executed": "executed trades",
    "hypothetical": "hypothetical trades, never executed",
    "all": "executed and hypothetical trades",
}
NOT_EXECUTED = ("REJECT", "RECOMMEND")  # decisions never traded (DELAY: until its wait ends)


def executed_mask(trades: pd.DataFrame) -> np.ndarray:
    """Per row, whether the trade was executed (module doc), as a numpy bool array."""
    n = len(trades)
    if "decision" not in trades.columns:
        return np.ones(n, dtype=bool)
    decision = trades["decision"]
    declined: npt.NDArray[np.bool_] = decision.isin(NOT_EXECUTED).to_numpy(
        dtype=bool, na_value=False
    )
    waiting = np.zeros(n, dtype=bool)
    if "wait_until" in trades.columns:
        delayed = (decision == "DELAY") & (trades["status"] == "Open")
        wait = pd.to_datetime(trades["wait_until"], utc=True)
        opened = pd.to_datetime(trades["opened_at"], utc=True)
        mark = opened + pd.to_timedelta(trades["duration_s"], unit="s")
        waiting = (delayed & (wait > mark)).to_numpy(dtype=bool, na_value=False)
    return ~(declined | waiting)


class Basis(NamedTuple):
    """Which trades a result is over: ``name`` (``EXECUTION_LABELS``) and the rows it keeps."""

    name: str
    keep: np.ndarray  # bool per row of the frame
    executed: np.ndarray  # bool per row: executed_mask

    @property
    def label(self) -> str:
        return EXECUTION_LABELS[self.name]

    def note(self) -> dict[str, Any]:
        """The ``attrs["execution"]`` of a result: the basis and what it left out (JSON-safe)."""
        executed = int(np.count_nonzero(self.executed))
        return {
            "basis": self.name,
            "label": self.label,
            "executed_rows": executed,
            "hypothetical_rows": int(self.executed.size) - executed,
            "left_out_rows": int(self.keep.size - np.count_nonzero(self.keep)),
        }


def resolve(trades: pd.DataFrame, execution: str | None) -> Basis:
    """The basis ``execution`` means for this frame (module doc), or ValueError naming choices."""
    if execution is not None and execution not in EXECUTION_LABELS:
        choices = ", ".join(repr(name) for name in EXECUTION_LABELS)
        raise ValueError(
            f"execution={execution!r} is not a basis; use {choices}, "
            "or None for the executed trades (the hypothetical ones when there are none)"
        )
    executed = executed_mask(trades)
    name = execution
    if name is None:
        name = "executed" if executed.any() or executed.size == 0 else "hypothetical"
    keep = {
        "executed": executed,
        "hypothetical": ~executed,
        "all": np.ones(executed.size, dtype=bool),
    }[name]
    return Basis(name, keep, executed)


def label_result(result: pd.DataFrame | pd.Series, basis: Basis) -> None:
    """Put the basis into a result's ``attrs["execution"]`` (a result the caller just built)."""
    result.attrs["execution"] = basis.note()
