"""A sandbox process for ``bench_evaldetail``: whichever quantscope is on its ``PYTHONPATH``.

``python _evaldetail_child.py DATA_DIR`` serves the world in ``DATA_DIR`` with its quota gate
lifted (``create_app(metered=False)``), prints its URL on a line, then answers each line read
on stdin with this process's CPU seconds; end of stdin stops it. Only names that have not moved
since the first wave are used, so an older commit's tree runs it too.
"""

from __future__ import annotations

import sys
import time

from quantscope.sandbox.app import create_app
from quantscope.sandbox.datadir import ensure_world
from quantscope.sandbox.serve import SandboxServer


def main(data_dir: str) -> None:
    info = ensure_world(data_dir)
    with SandboxServer(info, app=create_app(info, metered=False)) as server:
        print(server.url, flush=True)
        for _ in sys.stdin:
            print(time.process_time(), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
