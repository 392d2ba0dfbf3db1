"""Strategy optimisation: the dashboard, recommendations, analysis runs and applying one.

The dashboard lists at most ``LIST_CAP`` (20) recommendations of each kind, the newest
(docs/service-contract.md, "Strategy optimisation"). A list at the cap may be cut short, and
nothing in the answer says so: the frame then carries ``attrs["quantscope"]["capped"]``, with
how many the last ``run_analysis`` of that quant on the same client generated when this
process saw it (``_RUNS``). When that run generated more than the cap, the list is known to
be cut short and an ``IncompleteDataWarning`` says by how many; when the count is not known,
``generated`` is None and only attrs say the list may be longer (a full list of exactly 20 is
as likely: a warning on every load of it would teach people to ignore the warning).
"""

from __future__ import annotations

import functools
import weakref
from typing import Any, NamedTuple

import pandas as pd

from quantscope import _endpoints as E
from quantscope._changes import Change
from quantscope._http.client import Client, Fetched
from quantscope._http.results import with_provenance
from quantscope._http.writelock import playbook_lock
from quantscope._ids import IdArg, one_id
from quantscope._typed import schemas as _schemas
from quantscope._typed.frames import row_series
from quantscope.loaders._base import (
    Frames,
    Recipe,
    client_or_default,
    field,
    record_frame,
    records,
    typed_frame,
    typed_series,
    warn_incomplete,
)
from quantscope.loaders._planned import LoadPlan, parts_plan, planned, planned_write
from quantscope.loaders.playbook import compare_read, refuse_stale

DASHBOARD = E.DASHBOARD.path
ANALYZE = E.ANALYZE.path
APPLY = E.APPLY.path

#: The most recommendations of each kind the dashboard lists (the newest).
LIST_CAP = 20
_LISTS = {"recentRecommendations": "unapplied", "appliedRecommendations": "applied"}

# Per client, per quant (None: all): (recommendations generated, whether they were applied)
# by the last run_analysis this process made; what a capped list is measured against.
_RUNS: weakref.WeakKeyDictionary[Client, dict[int | None, tuple[int, bool]]] = (
    weakref.WeakKeyDictionary()
)


def _note_capped(
    frame: pd.DataFrame, name: str, shown: int, quant_id: int | None, c: Client
) -> None:
    """Record in ``frame``'s attrs that it holds the dashboard's list ``name`` (``shown``
    rows of it) at the cap.
    """
    if shown < LIST_CAP:
        return
    kind = _LISTS[name]
    run = _RUNS.get(c, {}).get(quant_id)
    generated = run[0] if run is not None and run[1] == (kind == "applied") else None
    if generated is not None and generated <= LIST_CAP:
        return  # the run made no more than the list holds
    who = f"quant {quant_id}" if quant_id is not None else "all quants"
    if generated is None:
        tail = "there may be more (run_analysis says how many it generates)"
    else:
        tail = (
            f"the last run_analysis({'' if quant_id is None else quant_id}) generated "
            f"{generated}, so at least {generated - LIST_CAP} are not in this frame"
        )
    message = (
        f"{DASHBOARD}: the service lists only the newest {LIST_CAP} {kind} recommendations "
        f"of {who}; {tail} (attrs['quantscope']['capped'])"
    )
    held = frame.attrs.get("quantscope", {}).get("capped") or []
    note = {"list": name, "shown": shown, "cap": LIST_CAP, "generated": generated}
    with_provenance(frame, None, capped=[*held, {**note, "message": message}])


class Dashboard(NamedTuple):
    """The optimizer's dashboard: performance, recommendations and weekly trends."""

    performance: pd.Series
    recent: pd.DataFrame
    applied: pd.DataFrame
    weekly: pd.DataFrame


@planned
def load_dashboard(
    quant_id: IdArg | None = None, *, client: Client | None = None
) -> LoadPlan[Dashboard]:
    """Overall performance (win rate a fraction), recent and applied recommendations, and the
    weekly trend of closed trades.
    """
    recipe = Recipe(
        DASHBOARD,
        _schemas.PERFORMANCE,
        build=_dashboard_frames,
        parts=(_schemas.RECOMMENDATIONS, _schemas.RECOMMENDATIONS, _schemas.WEEKLY_TRENDS),
    )
    params = E.query(E.DASHBOARD, locals())
    quant = params[E.DASHBOARD.param("quant_id").wire]
    finish = functools.partial(_dashboard, recipe, quant)
    return parts_plan(recipe, params, finish, client=client)


def _dashboard(recipe: Recipe, quant: int | None, frames: Frames, c: Client) -> Dashboard:
    """The loaded dashboard, its lists noted and warned about when at the cap (warnings at
    the loader's caller: ``_dashboard`` < ``LoadPlan.run`` < loader < caller).
    """
    performance, recent, applied, weekly = frames
    lists = dict(zip(_LISTS, (recent, applied), strict=True))
    for name, frame in lists.items():
        _note_capped(frame, name, len(frame), quant, c)
        warn_incomplete(frame, stacklevel=5)
    return Dashboard(
        row_series(performance, recipe.spec, recipe.spec.name), recent, applied, weekly
    )


def _dashboard_frames(recipe: Recipe, fetched: Fetched) -> tuple[pd.DataFrame, ...]:
    """The dashboard's parts: performance (one record), the recent and applied lists, the
    weekly trends.
    """
    data = field(fetched.data, DASHBOARD, "data")
    prov = fetched.provenance
    trends = data.get("historicalTrends") or {}
    lists = [
        typed_frame(records(data.get(name) or [], DASHBOARD), _schemas.RECOMMENDATIONS, prov)
        for name in _LISTS
    ]
    weekly = typed_frame(
        records(trends.get("weekly") or [], DASHBOARD), _schemas.WEEKLY_TRENDS, prov
    )
    performance = record_frame(data.get("overallPerformance") or {}, recipe.spec, prov)
    return (performance, *lists, weekly)


@planned
def load_recommendations(
    quant_id: IdArg | None = None, *, applied: bool | None = None, client: Client | None = None
) -> LoadPlan[pd.DataFrame]:
    """The optimizer's recommendations (unapplied, applied, or both), newest first."""
    lists = {
        None: ("recentRecommendations", "appliedRecommendations"),
        False: ("recentRecommendations",),
        True: ("appliedRecommendations",),
    }[applied]
    recipe = Recipe(DASHBOARD, _schemas.RECOMMENDATIONS, keep=lists, build=_recommendations)
    params = E.query(E.DASHBOARD, locals())
    quant = params[E.DASHBOARD.param("quant_id").wire]
    finish = functools.partial(_capped_recommendations, lists, quant)
    return parts_plan(recipe, params, finish, client=client)


def _capped_recommendations(
    lists: tuple[str, ...], quant: int | None, frames: Frames, c: Client
) -> pd.DataFrame:
    """The loaded recommendations, noted and warned about when a list is at the cap."""
    (frame,) = frames
    applied_rows = int(frame["applied"].fillna(False).to_numpy(bool).sum())
    for name in lists:
        shown = applied_rows if _LISTS[name] == "applied" else len(frame) - applied_rows
        _note_capped(frame, name, shown, quant, c)
    return warn_incomplete(frame, stacklevel=5)


def _recommendations(recipe: Recipe, fetched: Fetched) -> pd.DataFrame:
    data = field(fetched.data, DASHBOARD, "data")
    rows: list[Any] = []
    for name in recipe.keep:
        rows += records(data.get(name) or [], DASHBOARD)
    return typed_frame(rows, recipe.spec, fetched.provenance)


@planned_write(ANALYZE)
def run_analysis(
    quant_id: IdArg | None = None,
    *,
    apply: bool = False,
    min_completed_trades: int | None = None,
    client: Client | None = None,
) -> pd.Series:
    """Run the optimizer (new recommendations replace the unapplied ones); with ``apply`` the
    service applies them all at once. Returns trades analysed and recommendations made.
    """
    wire = {"apply": "true" if apply else "false"}  # the service reads the text
    body = E.body(E.ANALYZE, {**locals(), **wire})
    c = client_or_default(client)
    fetched = c.post(ANALYZE, body)
    data = field(fetched.data, ANALYZE, "data")
    result = typed_series(data, _schemas.ANALYSIS, fetched.provenance)
    generated = result.get("recommendations_generated")
    if generated is not None and not pd.isna(generated):
        runs = _RUNS.setdefault(c, {})
        if quant_id is None:
            runs.clear()  # a run over every quant supersedes each quant's recommendations
        runs[body.get(E.ANALYZE.param("quant_id").wire)] = (int(generated), apply)
    return result


def _apply_check(
    recommendation: IdArg | pd.Series, force: bool, client: Client | None
) -> LoadPlan[pd.DataFrame] | None:
    """``apply_recommendation``'s ``compare_read``: a row says what the user saw (its
    ``old_threshold``), an id does not (the service checks it).
    """
    if not isinstance(recommendation, pd.Series):
        return None
    return compare_read(one_id(recommendation["quant_id"], "quant_id"), True, force, client)


@planned_write(APPLY, check=_apply_check)
def apply_recommendation(
    recommendation: IdArg | pd.Series, *, force: bool = False, client: Client | None = None
) -> pd.Series:
    """Apply one recommendation: the playbook threshold becomes its new threshold. Returns
    the applied recommendation's fields as served (``_typed.schemas.APPLIED``).

    Given a ``load_recommendations`` row, the entry is read from the service first (one more
    request) and a ``StaleWriteError`` says when it no longer holds the row's
    ``old_threshold`` (nothing is sent; ``force=True`` skips the check). Given an id, the
    service's own check applies: it refuses (409 ``stale_recommendation``) a recommendation
    whose entry changed since it was made, and so it does after ``force=True``.

    A row's check and the apply hold the playbook's lock (``_http.writelock``): no other write
    through quantscope on this machine lands between them.
    """
    c = client_or_default(client)
    if not isinstance(recommendation, pd.Series):
        return _apply(c, recommendation)
    with playbook_lock(c, one_id(recommendation["quant_id"], "quant_id")):
        seen = [Change.of_recommendation(recommendation)]
        refuse_stale(_apply_check(recommendation, force, c), seen)
        return _apply(c, recommendation["recommendation_id"])


def _apply(c: Client, recommendation_id: IdArg) -> pd.Series:
    fetched = c.post(APPLY, params=E.query(E.APPLY, locals()))
    data = field(fetched.data, APPLY, "data")
    return typed_series(data, _schemas.APPLIED, fetched.provenance)
