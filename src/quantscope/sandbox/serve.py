"""Run the sandbox under uvicorn: in a background thread (tests, notebooks) or in the foreground.

``SandboxServer`` binds its listening socket itself before uvicorn starts, so ``port=0`` yields
a free port with no window in which another process could take it, and ``.url`` is known before
the first request. fastapi and uvicorn (the ``[sandbox]`` extra) are imported only when a
server starts, so this module can be imported to check for the extra.
"""

from __future__ import annotations

import importlib.util
import socket
import sys
import threading
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, TextIO

from quantscope.sandbox.auth import new_quota_day
from quantscope.sandbox.datadir import WorldInfo, ensure_world

if TYPE_CHECKING:
    import uvicorn
    from fastapi import FastAPI

SANDBOX_EXTRA_HINT = 'the sandbox needs its extra: install with `pip install "quantscope[sandbox]"`'


def check_sandbox_extra() -> None:
    """Raise ImportError naming the install command when fastapi or uvicorn is missing."""
    missing = [name for name in ("fastapi", "uvicorn") if importlib.util.find_spec(name) is None]
    if missing:
        raise ImportError(f"{' and '.join(missing)} not installed; {SANDBOX_EXTRA_HINT}")


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (port 0: a free port chosen by the OS)."""
    family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    sock = socket.socket(family, kind, proto)
    try:
        if sys.platform != "win32":  # on Windows SO_REUSEADDR lets two servers share a port
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return sock


def socket_url(sock: socket.socket) -> str:
    """The ``http://host:port`` URL of a bound socket (IPv6 hosts in brackets)."""
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def _uvicorn_config(app: FastAPI, *, quiet: bool) -> uvicorn.Config:
    import uvicorn

    from quantscope.sandbox.httpguard import protocol_for

    return uvicorn.Config(
        app,
        # h11 with read deadlines and a connection cap (httpguard.py); not httptools, whose
        # framing checks differ, nor limit_concurrency, which answers 503 to every new request
        # (/health too) once idle connections reach the limit; plain h11 on an unverified uvicorn
        http=protocol_for(uvicorn.__version__),
        timeout_keep_alive=5,  # uvicorn's default, stated: idle after a response
        lifespan="off",
        ws="none",  # no websocket endpoints; avoids importing websockets and its warnings
        timeout_graceful_shutdown=5,
        # quiet: leave the process's logging alone, only warnings from uvicorn, no access log
        **(
            {"log_config": None, "log_level": "warning", "access_log": False}
            if quiet
            else {"log_level": "info"}
        ),
    )


class SandboxServer:
    """The sandbox in a daemon thread on loopback; a context manager.

    Args:
        info: the world to serve.
        host, port: where to listen; port 0 picks a free port (anew at each start).
        clock: real-time clock for quota days (tests inject one).
        app: serve this application instead of ``create_app(info, clock=clock)``.
        startup_timeout: seconds to wait for uvicorn to serve before giving up.
    """

    def __init__(
        self,
        info: WorldInfo,
        host: str = "127.0.0.1",
        port: int = 0,
        clock: Callable[[], datetime] | None = None,
        *,
        app: FastAPI | None = None,
        startup_timeout: float = 30.0,
    ) -> None:
        self.info = info
        self.host = host
        self.port = port
        self.clock = clock
        self.startup_timeout = startup_timeout
        self._app = app
        self._url: str | None = None
        self._server: uvicorn.Server | None = None
        self._served: FastAPI | None = None
        self._thread: threading.Thread | None = None
        self._failure: BaseException | None = None

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` of the running server."""
        if self._url is None:
            raise RuntimeError("the sandbox server is not running; call start() first")
        return self._url

    @property
    def keys(self) -> dict[str, str]:
        """The world's API keys by plan."""
        return dict(self.info.keys)

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> SandboxServer:
        """Start serving and wait (at most ``startup_timeout``) until requests are accepted."""
        if self._thread is not None:
            raise RuntimeError(f"the sandbox server is already running at {self._url}")
        check_sandbox_extra()
        import uvicorn

        from quantscope.sandbox.app import create_app

        app = self._app if self._app is not None else create_app(self.info, clock=self.clock)
        sock = bind_socket(self.host, self.port)
        server = uvicorn.Server(_uvicorn_config(app, quiet=True))
        self._failure = None
        url = socket_url(sock)
        thread = threading.Thread(
            target=self._run, args=(server, sock), name=f"quantscope-sandbox {url}", daemon=True
        )
        self._server, self._thread, self._url, self._served = server, thread, url, app
        thread.start()
        deadline = time.monotonic() + self.startup_timeout
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                reason = (
                    f"failed: {self._failure!r}"
                    if self._failure is not None
                    else f"did not start within {self.startup_timeout} s"
                )
                self.stop()
                sock.close()
                raise RuntimeError(f"the sandbox server for {self.info.db_path} {reason}")
            time.sleep(0.005)
        return self

    def _run(self, server: uvicorn.Server, sock: socket.socket) -> None:
        try:
            server.run(sockets=[sock])
        except BaseException as exc:  # reported by start(); a thread must not die silently
            self._failure = exc
        finally:
            sock.close()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop serving, finish open requests (bounded), join the thread, and close the
        world's database connections. Idempotent.
        """
        server, thread, app = self._server, self._thread, self._served
        if server is None or thread is None:
            return
        server.should_exit = True
        thread.join(timeout)
        if thread.is_alive():
            server.force_exit = True
            thread.join(5.0)
        self._server = self._thread = self._url = self._served = None
        if thread.is_alive():
            raise RuntimeError("the sandbox server thread did not stop")
        if app is not None:
            close_app(app)

    def new_quota_day(self) -> int:
        """A fresh day's quota for every key of the served world (``auth.new_quota_day``);
        how many counted requests were forgotten.
        """
        return new_quota_day(self.info.db_path)

    def __enter__(self) -> SandboxServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = self._url or "stopped"
        return f"SandboxServer({self.info.db_path.name}, {state})"


def serve_forever(
    host: str = "127.0.0.1",
    port: int = 8000,
    data_dir: Path | str | None = None,
    seed: int = 7,
    scale: int = 1,
    *,
    out: TextIO | None = None,
) -> None:
    """Serve a world in the foreground until interrupted; print the base URL first.

    The URL goes alone on the first line of ``out`` (stdout) so scripts can read it; notes
    for humans go to stderr.
    """
    check_sandbox_extra()
    import uvicorn

    from quantscope.sandbox.app import create_app

    out = sys.stdout if out is None else out
    sock = bind_socket(host, port)  # first, so a busy port fails before any world is built
    try:
        info = ensure_world(data_dir, seed=seed, scale=scale)
        app = create_app(info)
        print(socket_url(sock), file=out, flush=True)
        print(
            f"quantscope sandbox: world seed {seed} scale {scale} from {info.data_dir}; "
            "keys: `quantscope sandbox keys`; Ctrl-C stops",
            file=sys.stderr,
            flush=True,
        )
        try:
            uvicorn.Server(_uvicorn_config(app, quiet=False)).run(sockets=[sock])
        finally:
            close_app(app)
    finally:
        sock.close()


def close_app(app: FastAPI) -> None:
    """Close the SQLite connections of a sandbox application that no longer serves (its
    ``Store``, when it has one: a test may serve an app of its own).
    """
    store = getattr(app.state, "store", None)
    if store is not None:
        store.close()
