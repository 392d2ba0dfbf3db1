"""One side of ``bench_refactor`` in a fresh process: loads timed by the child itself.

Run as a script (never imported by the benchmark: it must load whichever quantscope is on its
``PYTHONPATH``, the working tree's or a baseline commit's exported by ``git archive``), it
reads one JSON object from stdin (the key travels there, never on the command line) and prints
one JSON line. It uses only quantscope's public API (``connect``, ``load_*``, ``sync``), so a
move of private modules never breaks it, and it first checks that ``quantscope`` was imported
from ``src`` (the side it stands for), else it exits with status 3.

Modes:

* ``service``: ``inner`` times: ``connect(url, key, cache_dir=<empty>)``, each call of
  ``calls`` once (cold: every page a request), then each ``warm_repeat`` times more (warm: the
  frame cache; 0 requests expected);
* ``catalog``: ``inner`` times: ``connect(catalog=path, cache_dir=<empty>)``, each call once;
* ``sync``: ``sync(path, quant_id=quants, resources=..., confirm=True)`` against the service.
* ``details`` (``bench_refactor.run_coldfetch``): ``inner`` times, on a new copy of the world
  (``world``: the quota is counted in it) served by the embedded sandbox (``connect()`` with
  ``QUANTSCOPE_SANDBOX_DIR``) and an empty cache: quant ``quant``'s trades (untimed), then
  ``estimate`` and ``load_eval_details`` of its closed trades' evaluations (cold: one request
  each), timed, then the same GETs by a bare ``requests.Session`` (the floor: the same
  in-process server, socket and body reads, nothing else), timed.

Each timed call records its wall and CPU seconds (this process's: the sandbox runs in another),
the frame's rows, the sum of its id column (so both sides can be checked to load the same
rows) and its provenance's request count and ``from_cache`` flag.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

ID_COLUMNS = ("trade_id", "evaluation_id")


def _timed(qs: Any, call: list[Any]) -> dict[str, Any]:
    _, function, kwargs = call
    load = getattr(qs, function)
    wall, cpu = time.perf_counter(), time.process_time()
    frame = load(**kwargs)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    ids = next(c for c in ID_COLUMNS if c in frame.columns)
    provenance = frame.attrs.get("quantscope", {})
    return {
        "wall": wall,
        "cpu": cpu,
        "rows": len(frame),
        "id_sum": int(frame[ids].astype("int64").sum()),
        "requests": provenance.get("requests"),
        "from_cache": provenance.get("from_cache"),
    }


def _fastest(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The fastest of one call's runs (by CPU), with the first run's CPU time beside it; its
    requests the most any run sent and ``from_cache`` only when every run was."""
    best = dict(min(runs, key=lambda r: r["cpu"]))
    best["first_cpu"] = runs[0]["cpu"]
    best["requests"] = max(r["requests"] or 0 for r in runs)
    best["from_cache"] = all(r["from_cache"] for r in runs)
    return best


def _details(qs: Any, job: dict[str, Any]) -> dict[str, Any]:
    """One ``details`` run (module docstring): per-request wall and CPU of the load, of its
    estimate and of the bare loop."""
    import os
    import shutil

    import requests

    world = Path(job["cache_dir"]) / "world"
    shutil.copytree(job["world"], world)
    os.environ["QUANTSCOPE_SANDBOX_DIR"] = str(world)
    client = qs.connect(cache_dir=str(Path(job["cache_dir"]) / "cache"), progress=False)
    trades = qs.load_trades(job["quant"], client=client, confirm=True)
    closed = trades[(trades["status"] == "Closed").fillna(False).to_numpy(bool)]
    ids = [int(i) for i in closed["evaluation_id"].dropna().unique()]
    wall, cpu = time.perf_counter(), time.process_time()
    qs.estimate(qs.load_eval_details, ids, client=client)
    est_cpu, est_wall = time.process_time() - cpu, time.perf_counter() - wall
    wall, cpu = time.perf_counter(), time.process_time()
    frame = qs.load_eval_details(ids, client=client, confirm=True)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    bare = requests.Session()
    bare.headers["X-API-Key"] = client.settings.api_key or ""
    url = client.base_url.rstrip("/") + "/api/eval-details"
    bare_wall, bare_cpu = time.perf_counter(), time.process_time()
    for i in ids:
        bare.get(url, params={"evaluationId": str(i)}, timeout=30).content  # noqa: B018
    bare_cpu, bare_wall = time.process_time() - bare_cpu, time.perf_counter() - bare_wall
    bare.close()
    client.close()
    provenance = frame.attrs.get("quantscope", {})
    return {
        "requests": provenance.get("requests"),
        "ids": len(ids),
        "rows": len(frame),
        "id_sum": int(frame["evaluation_id"].astype("int64").sum()),
        "wall": wall,
        "cpu": cpu,
        "estimate_wall": est_wall,
        "estimate_cpu": est_cpu,
        "bare_wall": bare_wall,
        "bare_cpu": bare_cpu,
    }


def main() -> None:
    job = json.loads(sys.stdin.readline())
    import quantscope as qs

    module = Path(qs.__file__).resolve()
    if not module.is_relative_to(Path(job["src"]).resolve()):
        print(f"imported quantscope from {module}, not from {job['src']}", file=sys.stderr)
        sys.exit(3)
    out: dict[str, Any] = {"module": str(module)}
    mode = job["mode"]
    if mode == "sync":
        client = qs.connect(job["url"], job["key"], cache_dir=job["cache_dir"], progress=False)
        report = qs.sync(
            job["catalog"], quant_id=job["quants"], resources=job["resources"], confirm=True
        )
        client.close()
        out["report"] = str(report)
    elif mode == "details":
        out["results"] = [
            _details(qs, {**job, "cache_dir": f"{job['cache_dir']}/{i}"})
            for i in range(job["inner"])
        ]
    elif mode == "catalog":
        runs: dict[str, list[dict[str, Any]]] = {call[0]: [] for call in job["calls"]}
        for i in range(job["inner"]):  # each time a new client on an empty cache directory
            client = qs.connect(
                catalog=job["catalog"], cache_dir=f"{job['cache_dir']}/{i}", progress=False
            )
            for call in job["calls"]:
                runs[call[0]].append(_timed(qs, call))
            client.close()
        out["results"] = {what: _fastest(measured) for what, measured in runs.items()}
    else:
        runs = {f"{call[0]} {kind}": [] for kind in ("cold", "warm") for call in job["calls"]}
        for i in range(job["inner"]):
            client = qs.connect(
                job["url"], job["key"], cache_dir=f"{job['cache_dir']}/{i}", progress=False
            )
            for call in job["calls"]:
                runs[f"{call[0]} cold"].append(_timed(qs, call))
            for call in job["calls"]:
                for _ in range(job["warm_repeat"]):
                    runs[f"{call[0]} warm"].append(_timed(qs, call))
            client.close()
        out["results"] = {what: _fastest(measured) for what, measured in runs.items()}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
