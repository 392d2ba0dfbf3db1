"""One racing writer process of ``test_write_races.py``: threads that write one playbook entry.

Run as ``python _cas_writer.py URL QUANT CONFIG_ID INDEX THREADS CACHE_DIR LOG_PATH`` with the
key in ``QUANTSCOPE_API_KEY`` (INDEX: this process's, so every writer has values of its own).
Each line read from stdin is a round, ``{"round": r, "seen": v}``: every thread writes the
entry's threshold from ``v`` (what all writers of the round saw) to a value of its own through
``audit.write_changes`` (its own client; the threads share the audit log at LOG_PATH) after a
barrier, and the process answers one JSON line: the outcome of each thread (``sent`` with the
value written, ``stale``, or ``error`` with its text). EOF ends it.
"""

from __future__ import annotations

import json
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import quantscope as qs
from quantscope import audit
from quantscope._http.client import Client


def main(argv: list[str]) -> int:
    url, quant, config_id, index, threads, cache, log_path = argv
    n = int(threads)
    log = audit.AuditLog(log_path)
    clients = [Client(url, cache_dir=str(Path(cache) / str(i)), progress=False) for i in range(n)]
    try:
        with ThreadPoolExecutor(n) as pool:
            for line in sys.stdin:
                order = json.loads(line)
                start = threading.Barrier(n)

                def write(i: int, order: dict[str, Any] = order, start: Any = start) -> Any:
                    writer = int(index) * n + i + 1  # < 1000: the value stays in range
                    value = round(order["round"] % 40 + writer / 1000, 3)
                    change = audit.Change(config_id, "threshold", order["seen"], value)
                    start.wait()
                    try:
                        audit.write_changes(int(quant), [change], client=clients[i], log=log)
                    except qs.StaleWriteError:
                        return ["stale"]
                    except qs.QuantscopeError as exc:
                        return ["error", str(exc)]
                    return ["sent", value]

                print(json.dumps(list(pool.map(write, range(n)))), flush=True)
    finally:
        for c in clients:
            c.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
