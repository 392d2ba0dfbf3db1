"""A study split across worker processes: one task per quant, reading the catalog where it is.

A team's study over a catalog too big for one machine's memory or time, on any engine that
runs Python functions on workers (``dask.distributed`` here; the functions are plain, so
Ray, a process pool or a batch queue run them the same way):

* **the unit of work is one quant**: ``quant_summary`` opens the catalog (an fsspec URL:
  ``s3://``, ``gs://``, a shared disk), reads that quant's trades (every file checked, as
  every read is) and returns its ``summary()``; ``quant_screen`` reads the quant's trades of
  a window, the criterion values that bought them and its playbook, and returns
  ``bt.screen`` of them. What travels to a worker is the URL, the quant, the window and the
  options; what travels back is a Series of ~36 numbers or a few screen rows. No frame is
  shipped and nothing read from the catalog is unpickled: the worker reads Parquet.
* **the screen is per quant**: each quant is its own family (its ``p_value`` is adjusted
  over its own criteria and classes), as a quant's researcher would screen it alone; the
  rows of all quants are concatenated. ``bt.screen`` of all quants at once would adjust
  over every quant's hypotheses together (a larger family, larger p-values).
* **``run_study(catalog, client=None)``** runs every task in this process, one after the
  other: the single-process reference, the same functions, the same numbers (the test and
  ``benchmarks/bench_dask.py`` compare them). With a ``distributed.Client`` the tasks run on
  its workers (``client.submit``), results in quant order.
* **credentials** come from where the workers run: their environment (``AWS_*``), the
  filesystem's configuration (``fsspec.config``, ``FSSPEC_S3_*``) or an instance role.
  ``storage_options`` travels with each task (it is the task's argument), so give it the
  endpoint, not secrets, on a shared cluster. A catalog read needs no quantscope API key and
  sends none: nothing here reads it.
* **memory**: a task holds one quant's frame (``summary()`` peaks at under 2x it); cap each
  worker with the engine's own limit (``LocalCluster(memory_limit=...)``,
  ``dask worker --memory-limit``) and read the peak with ``worker_peak_rss``.

docs/catalog.md ("A study on a cluster") says what changes on a real cluster.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import pandas as pd

from quantscope.analytics.trades import summary
from quantscope.backtest.features import trade_features
from quantscope.backtest.screen import screen
from quantscope.catalog.read import open_catalog

__all__ = [
    "Study",
    "TaskClient",
    "peak_rss",
    "quant_screen",
    "quant_summary",
    "quants_of",
    "run_study",
    "worker_peak_rss",
]

Options = Mapping[str, Any] | None
CatalogPath = str | os.PathLike[str]


class TaskClient(Protocol):
    """What ``run_study`` needs of an engine's client (``distributed.Client`` has it)."""

    def submit(self, func: Any, *args: Any, **kwargs: Any) -> Any: ...

    def gather(self, futures: Any) -> Any: ...


def quants_of(catalog: CatalogPath, *, storage_options: Options = None) -> list[int]:
    """The quants the catalog holds trades of (from its manifest), ascending."""
    parts = open_catalog(catalog, storage_options=storage_options).partitions
    return sorted({int(p["keys"]["quant_id"]) for p in parts.values() if p["resource"] == "trades"})


def quant_summary(
    catalog: CatalogPath,
    quant_id: int,
    *,
    storage_options: Options = None,
    start: Any = None,
    end: Any = None,
) -> pd.Series:
    """``summary()`` of one quant's trades (between ``start`` and ``end``, by open time,
    default all), read from the catalog: one worker's task.
    """
    cat = open_catalog(catalog, storage_options=storage_options)
    return summary(cat.trades(quant_id, start=start, end=end))


def quant_screen(
    catalog: CatalogPath,
    quant_id: int,
    *,
    storage_options: Options = None,
    start: Any = None,
    end: Any = None,
    screen_options: Mapping[str, Any] | None = None,
) -> pd.DataFrame:
    """``bt.screen`` of one quant's closed trades opened between ``start`` and ``end``, with
    the criterion values of the evaluations that bought them (the catalog's ``eval_details``)
    and the quant's playbook when the catalog keeps one; ``screen_options``: ``bt.screen``'s
    keywords. One worker's task.
    """
    cat = open_catalog(catalog, storage_options=storage_options)
    trades = cat.trades(quant_id, start=start, end=end, position_closed=True)
    ids = trades["evaluation_id"].dropna().astype("int64").unique().tolist()
    has_playbook = any(
        p["resource"] == "playbook" and p["keys"]["quant_id"] == str(quant_id)
        for p in cat.partitions.values()
    )
    playbook = {quant_id: cat.playbook(quant_id)} if has_playbook else None
    features = trade_features(trades, details=cat.eval_details(ids), playbook=playbook)
    return screen(features, **dict(screen_options or {}))


@dataclass
class Study:
    """What ``run_study`` computed: ``summary`` (one row per quant, ``SUMMARY_METRICS``
    columns, index ``quant_id``), ``screen`` (every quant's screen rows, in quant order) and
    ``screen_design`` (each quant's ``attrs["screen"]``: the design, the groups it could not
    use, the criteria no training set could split; a worker's warnings stay in its log).
    """

    summary: pd.DataFrame
    screen: pd.DataFrame
    quants: list[int] = field(default_factory=list)
    screen_design: dict[int, Any] = field(default_factory=dict)


def run_study(
    catalog: CatalogPath,
    quant_ids: Sequence[int] | None = None,
    *,
    client: TaskClient | None = None,
    storage_options: Options = None,
    start: Any = None,
    end: Any = None,
    screen_start: Any = None,
    screen_end: Any = None,
    screen_options: Mapping[str, Any] | None = None,
) -> Study:
    """Every quant's ``summary()`` (trades from ``start`` to ``end``) and screen (trades
    opened from ``screen_start`` to ``screen_end``), one task per quant and question.

    Args:
        catalog: the catalog's URL as the workers reach it (``s3://bucket/study``).
        quant_ids: the quants (default: every quant with trades in the catalog).
        client: a ``distributed.Client`` (or anything with ``submit`` and ``gather``);
            None runs the tasks here, one after the other.
        storage_options: the filesystem's options, sent with each task (the endpoint;
            secrets belong in the workers' environment, module docstring).
        screen_options: ``bt.screen``'s keywords (``resamples``, ``flips``, ``effect``...).
    """
    quants = (
        list(quant_ids)
        if quant_ids is not None
        else quants_of(catalog, storage_options=storage_options)
    )
    url = os.fspath(catalog)
    common = {"storage_options": dict(storage_options) if storage_options else None}
    summary_kw = {**common, "start": start, "end": end}
    screen_kw = {
        **common,
        "start": screen_start,
        "end": screen_end,
        "screen_options": dict(screen_options or {}),
    }
    if client is None:
        summaries = [quant_summary(url, q, **summary_kw) for q in quants]
        screens = [quant_screen(url, q, **screen_kw) for q in quants]
    else:
        summary_futures = [client.submit(quant_summary, url, q, **summary_kw) for q in quants]
        screen_futures = [client.submit(quant_screen, url, q, **screen_kw) for q in quants]
        summaries = list(client.gather(summary_futures))
        screens = list(client.gather(screen_futures))
    table = pd.DataFrame([s.to_dict() for s in summaries], index=pd.Index(quants, name="quant_id"))
    rows = [s for s in screens if len(s)]
    return Study(
        summary=table,
        screen=pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(),
        quants=quants,
        screen_design={q: s.attrs.get("screen") for q, s in zip(quants, screens, strict=True)},
    )


def worker_peak_rss(client: Any) -> dict[str, int]:
    """Each worker process's own peak resident memory in bytes, by address (``peak_rss``)."""
    return {str(k): int(v) for k, v in client.run(peak_rss).items()}


def peak_rss() -> int:
    """This process's peak resident memory in bytes since it started its program.

    Linux: ``VmHWM`` of ``/proc/self/status``, the high-water mark of this program's memory.
    Not ``getrusage``'s ``ru_maxrss``: Linux carries it across ``exec``, so a worker spawned
    by a big process (fork, then exec) reports its parent's size at the fork. Elsewhere
    ``ru_maxrss`` (macOS: bytes; other Unixes: KiB).
    """
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    import resource  # Unix only: where the workers run
    import sys

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak if sys.platform == "darwin" else peak * 1024)
