"""One cold ``load_evaluations`` in a fresh process, for ``bench_loadpath``'s fresh-process cases.

Run as a script (never imported by the benchmark: it must load whichever quantscope is on its
``PYTHONPATH``, today's tree or an older commit's), it reads one JSON object from stdin
(``url``, ``key``, ``cache_dir``, ``page_size``, ``max_pages``: the key travels on stdin, never
on the command line), builds a ``Client`` on the empty cache directory, times one
``load_evaluations`` (wall clock and this process's CPU time, around the call alone: imports and
the client's construction are not timed) and prints one JSON line: the times, the frame's row
count and a checksum of its ids (so the benchmark can check both trees loaded the same rows),
and the file quantscope was imported from.

Only names that have not moved since the first wave are used (``Client``, from
``quantscope._http.client`` or, in a tree before the layout of issue 23, ``quantscope._client``;
``quantscope.loaders.evaluations.load_evaluations`` with ``page_size``, ``max_pages`` and
``client``), so the same script runs against the code as issue 9 found it.
"""

from __future__ import annotations

import json
import sys
import time


def main() -> None:
    job = json.loads(sys.stdin.readline())
    import quantscope

    try:
        from quantscope._http.client import Client
    except ImportError:  # a tree from before the layout of issue 23
        from quantscope._client import Client  # type: ignore[no-redef]  # the older tree's path
    from quantscope.loaders.evaluations import load_evaluations

    client = Client(job["url"], job["key"], cache_dir=job["cache_dir"], progress=False)
    try:
        wall, cpu = time.perf_counter(), time.process_time()
        frame = load_evaluations(
            page_size=job["page_size"], max_pages=job["max_pages"], client=client
        )
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    finally:
        client.close()
    ids = frame["evaluation_id"].astype("int64")
    print(
        json.dumps(
            {
                "wall": wall,
                "cpu": cpu,
                "rows": len(frame),
                "id_sum": int(ids.sum()),
                "module": quantscope.__file__,
            }
        )
    )


if __name__ == "__main__":
    main()
