"""The sandbox as a process of its own, for the fuzz, the restart, crash and soak tests.

``ServerProcess(data_dir).start()`` runs ``quantscope sandbox serve --port 0`` over a data
directory that already holds a built world (``copy_world``), reads the URL it prints first and
waits for ``/health``. ``unmetered=True`` serves the same world with the quota gate lifted
(``create_app(metered=False)``, the test-only switch) and its answers counted by status
(``counts()``), through ``_unmetered_server.py``, since neither the CLI nor the environment can
lift it. A server process also ends when its stdin closes, so none outlives the tests.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import requests

SOURCE = Path(__file__).parents[2] / "src"
UNMETERED = Path(__file__).with_name("_unmetered_server.py")


class ServerProcess:
    """The sandbox server as a child process over ``data_dir``; ``pid`` while running."""

    def __init__(
        self, data_dir: Path, *, unmetered: bool = False, log_path: Path | None = None
    ) -> None:
        self.data_dir = data_dir
        self.unmetered = unmetered
        self.log_path = log_path  # the server's stderr goes there (else nowhere)
        self.proc: subprocess.Popen[str] | None = None
        self.url = ""

    @property
    def pid(self) -> int:
        assert self.proc is not None, "not running"
        return self.proc.pid

    def start(self) -> ServerProcess:
        path = os.pathsep.join([str(SOURCE), os.environ.get("PYTHONPATH", "")])
        if self.unmetered:
            argv = [sys.executable, str(UNMETERED), str(self.data_dir)]
        else:
            argv = [
                sys.executable,
                "-c",
                "from quantscope.cli.main import main; raise SystemExit(main())",
                "sandbox",
                "serve",
                "--port",
                "0",
                "--data-dir",
                str(self.data_dir),
            ]
        log = open(self.log_path, "a") if self.log_path else subprocess.DEVNULL  # noqa: SIM115
        try:
            self.proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
                env={**os.environ, "PYTHONPATH": path},
            )
        finally:
            if not isinstance(log, int):
                log.close()
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()
        assert self.url.startswith("http://127.0.0.1:"), self.url
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with contextlib.suppress(requests.ConnectionError):
                if requests.get(self.url + "/health", timeout=5).status_code == 200:
                    return self
            time.sleep(0.05)
        raise RuntimeError("the sandbox process did not answer /health")

    def rss_bytes(self) -> int:
        """The server's resident memory (Linux /proc)."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        raise RuntimeError("no VmRSS")

    def cpu_seconds(self) -> float:
        """The server's CPU time so far, user + system (Linux /proc)."""
        stat = Path(f"/proc/{self.pid}/stat").read_text()
        fields = stat[stat.rindex(")") + 2 :].split()  # after "pid (comm) "
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def counts(self) -> dict[int, int]:
        """The responses an ``unmetered`` server sent so far, by status (its own count)."""
        assert self.unmetered, "not an unmetered server running"
        assert self.proc is not None, "not an unmetered server running"
        assert self.proc.stdin is not None
        assert self.proc.stdout is not None
        self.proc.stdin.write("counts\n")
        self.proc.stdin.flush()
        return {int(status): n for status, n in json.loads(self.proc.stdout.readline()).items()}

    def stop(self, sig: int = signal.SIGTERM) -> None:
        """Send ``sig`` and reap the process. Idempotent."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(30)
        if self.proc is not None:
            for pipe in (self.proc.stdin, self.proc.stdout):
                if pipe is not None:
                    with contextlib.suppress(OSError):  # a closed pipe: the process is gone
                        pipe.close()
        self.proc = None
