"""Give a sandbox server's keys their full daily quota again.

The autouse fixture ``_fresh_quota`` does this before every test on the shared server; module
and session fixtures run before it, so those that spend many requests call it themselves.
"""

from __future__ import annotations

import sqlite3

from quantscope.sandbox.serve import SandboxServer


def reset_quota(server: SandboxServer) -> None:
    """Forget every request counted today on ``server``."""
    with sqlite3.connect(server.info.db_path) as conn:
        conn.execute("DELETE FROM quota")
