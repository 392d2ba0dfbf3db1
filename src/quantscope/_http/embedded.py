"""The one door from the toolkit into ``quantscope.sandbox``: the embedded service, and the CLI's.

With no service URL configured, ``connect()`` serves the bundled simulated world on loopback:
``start_embedded_sandbox`` builds (or finds) the world, starts its server once per process and
points the settings at it; ``stop_embedded_sandbox`` stops it and closes its world (at
interpreter exit too); ``new_quota_day`` gives its keys a fresh day's quota (for a tour).
``serve_sandbox`` and ``sandbox_keys`` are what ``quantscope sandbox serve|keys`` run. Nothing
else in the toolkit imports the sandbox (a test guards it), and only its launcher modules
(``sandbox.datadir``, ``sandbox.serve``) are used here, lazily, so the toolkit imports without
the ``[sandbox]`` extra.
"""

from __future__ import annotations

import atexit
import importlib.util
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from quantscope._config import ENV_API_KEY, ENV_URL, Settings
from quantscope._errors import SandboxUnavailableError

__all__ = [
    "EMBEDDED_PLAN",
    "new_quota_day",
    "sandbox_keys",
    "serve_sandbox",
    "start_embedded_sandbox",
    "stop_embedded_sandbox",
]

EMBEDDED_PLAN = "enterprise"
# Offline with no URL: requests are never sent, so any URL works; the cache keys on the world.
OFFLINE_SANDBOX_URL = "http://embedded-sandbox.invalid"


@dataclass
class _Embedded:
    server: Any
    url: str
    key: str
    seed: int
    scale: int


_EMBEDDED: _Embedded | None = None
_EMBEDDED_LOCK = threading.Lock()


def _import_sandbox() -> tuple[Any, Any]:
    """``ensure_world`` and ``SandboxServer``, or an error naming the extra to install."""
    missing = [name for name in ("fastapi", "uvicorn") if importlib.util.find_spec(name) is None]
    if missing:
        raise SandboxUnavailableError(
            f"no service URL is configured, and the embedded sandbox needs "
            f'{" and ".join(missing)}: pip install "quantscope[sandbox]" (or set '
            f"{ENV_URL} and {ENV_API_KEY} to use the service)"
        )
    from quantscope.sandbox.datadir import ensure_world
    from quantscope.sandbox.serve import SandboxServer

    return ensure_world, SandboxServer


def _sandbox_line(seed: int, how: str) -> str:
    return (
        f"quantscope: no service URL configured; {how} the embedded sandbox "
        f"(seed {seed}, {EMBEDDED_PLAN} plan)"
    )


def start_embedded_sandbox(settings: Settings, *, start_server: bool = True) -> Settings:
    """``settings`` pointed at the embedded sandbox, started once per process.

    Prints one line that names the seed and plan but no port or path, so notebook outputs
    stay byte-stable. The server stops at interpreter exit. With ``start_server=False``
    (offline) only the world's identity and key are resolved, for the cache.
    """
    global _EMBEDDED
    ensure_world, server_cls = _import_sandbox()
    with _EMBEDDED_LOCK:
        how = "using"
        if _EMBEDDED is None or not start_server:
            world = ensure_world()
            seed, scale = int(world.seed), int(world.scale)
            key = world.keys[EMBEDDED_PLAN]
            if not start_server:
                print(_sandbox_line(seed, "offline, from the cache of"), flush=True)
                return _embedded_settings(settings, OFFLINE_SANDBOX_URL, key, seed, scale)
            server = server_cls(world)
            server.start()
            _EMBEDDED = _Embedded(server, str(server.url).rstrip("/"), key, seed, scale)
            how = "started"
        embedded = _EMBEDDED
    print(_sandbox_line(embedded.seed, how), flush=True)
    return _embedded_settings(settings, embedded.url, embedded.key, embedded.seed, embedded.scale)


def stop_embedded_sandbox() -> None:
    """Stop the embedded sandbox of this process, if one runs, and close its world's
    database (it also stops at interpreter exit). A later ``connect()`` starts it anew.
    """
    global _EMBEDDED
    with _EMBEDDED_LOCK:
        embedded, _EMBEDDED = _EMBEDDED, None
    if embedded is not None:
        embedded.server.stop()


atexit.register(stop_embedded_sandbox)


def new_quota_day(url: str) -> bool:
    """Give every key of the embedded sandbox a fresh day's quota (the counts of today are
    forgotten, nothing else in its world changes) when ``url`` is the embedded sandbox this
    process serves; False, and nothing done, for any other service.

    A tour (``quantscope.tour``, the notebooks) starts with it, so it runs on a sandbox
    already used today (``SandboxServer.new_quota_day``).
    """
    with _EMBEDDED_LOCK:
        embedded = _EMBEDDED
    if embedded is None or embedded.url != url.rstrip("/"):
        return False
    embedded.server.new_quota_day()
    return True


def _embedded_settings(settings: Settings, url: str, key: str, seed: int, scale: int) -> Settings:
    return replace(
        settings,
        url=url,
        api_key=key,
        service=f"embedded sandbox (seed {seed}, scale {scale}, {EMBEDDED_PLAN} plan)",
        # The port changes on every start; the world does not: key the cache on the world.
        service_id=f"embedded-sandbox:seed={seed}:scale={scale}",
        sources={**settings.sources, ENV_URL: "embedded sandbox", ENV_API_KEY: "embedded sandbox"},
    )


def serve_sandbox(host: str, port: int, data_dir: str | Path | None, seed: int, scale: int) -> None:
    """Serve a world in the foreground until interrupted, the base URL printed first.

    Raises:
        ImportError: the ``[sandbox]`` extra is missing (the message names the install).
        OSError: ``host:port`` cannot be listened on.
    """
    from quantscope.sandbox.serve import check_sandbox_extra, serve_forever

    check_sandbox_extra()
    serve_forever(host, port, data_dir, seed, scale)


def sandbox_keys(
    data_dir: str | Path | None, seed: int | None = None, scale: int | None = None
) -> tuple[int, int, dict[str, str]]:
    """``(seed, scale, {plan: key})`` of a world, built first when missing.

    Without ``seed``/``scale``: the world the data directory holds (the one served from it),
    or the default world (seed 7, scale 1) when it holds none.

    Raises:
        LookupError: the directory holds several worlds that fit, and none was named.
    """
    import re

    from quantscope.sandbox.datadir import ensure_world, resolve_data_dir

    if seed is None or scale is None:
        held = sorted(
            (int(m[1]), int(m[2]))
            for path in resolve_data_dir(data_dir).glob("world-s*-x*.sqlite")
            if (m := re.fullmatch(r"world-s(\d+)-x(\d+)\.sqlite", path.name))
        )
        fits = [(s, x) for s, x in held if seed in (None, s) and scale in (None, x)]
        if len(fits) > 1:
            named = ", ".join(f"seed {s} scale {x}" for s, x in fits)
            raise LookupError(
                f"the sandbox data dir holds several worlds ({named}): name one with --seed "
                "(and --scale)"
            )
        seed, scale = fits[0] if fits else (7 if seed is None else seed, scale or 1)
    world = ensure_world(data_dir, seed=seed, scale=scale)
    return seed, scale, dict(world.keys)
