"""Settings of a client, resolved once: argument, then ``QUANTSCOPE_*`` environment, then default.

``resolve_settings`` is the only function that reads the environment. The result is a frozen
``Settings`` that the client keeps and users can inspect (``client.settings``); its repr never
shows the API key. ``RetryPolicy`` is the one place that says what is retried and how long to
wait. ``start_embedded_sandbox`` is the toolkit's single entry into the sandbox package: with
no service URL configured, ``connect()`` serves the bundled simulated world on loopback.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import platformdirs

from quantscope._errors import ConfigurationError, SandboxUnavailableError

__all__ = [
    "PLAN_BY_DAILY_LIMIT",
    "RetryPolicy",
    "Settings",
    "plan_for_limit",
    "resolve_settings",
    "start_embedded_sandbox",
]

ENV_URL = "QUANTSCOPE_URL"
ENV_API_KEY = "QUANTSCOPE_API_KEY"
ENV_CACHE_DIR = "QUANTSCOPE_CACHE_DIR"
ENV_PROGRESS = "QUANTSCOPE_PROGRESS"

# The spec's plan table: the daily limit names the plan (used only to word messages).
PLAN_BY_DAILY_LIMIT: dict[int, str] = {100: "basic", 500: "growth", 5000: "enterprise"}
EMBEDDED_PLAN = "enterprise"
# Offline with no URL: requests are never sent, so any URL works; the cache keys on the world.
OFFLINE_SANDBOX_URL = "http://embedded-sandbox.invalid"

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


def plan_for_limit(limit: int | None) -> str | None:
    """The plan whose daily limit is ``limit`` (spec's table), or None when it is not one."""
    return PLAN_BY_DAILY_LIMIT.get(limit) if limit is not None else None


@dataclass(frozen=True)
class RetryPolicy:
    """What is retried, how often and how long to wait; shared by every request of a client.

    GETs are retried on connection errors, timeouts and ``retry_statuses``, up to
    ``max_retries`` times, waiting ``backoff_base_s * 2**attempt`` (capped) or the
    ``Retry-After`` the service asked for, whichever is longer. A ``Retry-After`` longer than
    ``max_wait_s`` is not waited for: the error is raised at once. No jitter: one researcher's
    client does not cause a thundering herd, and a fixed schedule is testable.

    A 429 is retried once, and only when its ``Retry-After`` is at most
    ``rate_limit_wait_s`` (a per-second burst limit); a daily-quota 429 is raised at once.
    Writes (PUT/POST) are retried only when the request provably never left (connection
    refused, connect timeout): after a reset or a read timeout the write may have been applied,
    and ``analyze`` / ``apply`` are not idempotent (a repeat supersedes recommendations or
    answers 409 for a write that succeeded).
    """

    max_retries: int = 3
    backoff_base_s: float = 0.5
    backoff_max_s: float = 8.0
    max_wait_s: float = 60.0
    rate_limit_wait_s: float = 5.0
    retry_statuses: frozenset[int] = frozenset({500, 502, 503, 504})

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ConfigurationError(f"max_retries must be >= 0, got {self.max_retries}")

    def backoff(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number ``attempt`` (0-based)."""
        delay = min(self.backoff_max_s, self.backoff_base_s * 2**attempt)
        return max(delay, retry_after or 0.0)


@dataclass(frozen=True)
class Settings:
    """Everything a client was configured with, resolved once; the key is left out of repr.

    ``url`` is None only between resolution and the start of the embedded sandbox; a
    connected client always has one. ``service`` says where the data comes from, for people;
    ``service_id`` identifies the data source for the cache (stable across the embedded
    sandbox's changing ports).
    """

    url: str | None
    api_key: str | None = field(repr=False)
    cache_dir: Path
    offline: bool
    progress: bool
    timeout_s: float = 30.0
    quota_reserve: int = 0
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    service: str = "configured URL"
    service_id: str = ""
    sources: Mapping[str, str] = field(default_factory=dict, compare=False)

    @property
    def has_api_key(self) -> bool:
        return bool(self.api_key)

    @property
    def cache_path(self) -> Path:
        """The SQLite file of the HTTP cache."""
        return self.cache_dir / "http_cache.sqlite"


def _normalize_url(url: str, source: str) -> str:
    url = url.strip().rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigurationError(
            f"the service URL from {source} must look like https://host[:port][/path], got {url!r}"
        )
    if parts.query or parts.fragment:
        raise ConfigurationError(f"the service URL from {source} must not carry ?query or #")
    return url


def _parse_flag(value: str, name: str) -> bool:
    text = value.strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ConfigurationError(f"{name} must be 0/1/true/false, got {value!r}")


def resolve_settings(
    url: str | None = None,
    api_key: str | None = None,
    *,
    cache_dir: str | os.PathLike[str] | None = None,
    offline: bool = False,
    progress: bool | None = None,
    timeout_s: float = 30.0,
    quota_reserve: int = 0,
    retry: RetryPolicy | None = None,
    env: Mapping[str, str] | None = None,
) -> Settings:
    """Resolve each setting from the argument, then ``QUANTSCOPE_*``, then the default.

    Args:
        url: the service's base URL (paths ``/api/...`` are appended). None and no
            ``QUANTSCOPE_URL``: the embedded sandbox (``url`` stays None here).
        api_key: sent as ``X-API-Key``. Required with a URL; refused without one, so a real
            key is never sent to the local sandbox by mistake.
        cache_dir: directory of the HTTP cache; default ``platformdirs.user_cache_dir``.
        offline: serve only from the cache.
        progress: progress bars on multi-request loads; ``QUANTSCOPE_PROGRESS=0`` disables.
        timeout_s: per-request timeout in seconds.
        quota_reserve: requests a multi-request load leaves unspent.
        retry: the retry policy; default ``RetryPolicy()``.
        env: the environment (default ``os.environ``; tests pass a dict).
    """
    env = os.environ if env is None else env
    sources: dict[str, str] = {}

    def pick(arg: Any, name: str) -> Any:
        if arg is not None:
            sources[name] = "argument"
            return arg
        value = env.get(name)
        if value is not None and value.strip():
            sources[name] = f"env {name}"
            return value.strip()
        sources[name] = "default"
        return None

    raw_url = pick(url, ENV_URL)
    key = pick(api_key, ENV_API_KEY)
    raw_cache_dir = pick(cache_dir, ENV_CACHE_DIR)
    raw_progress = pick(progress, ENV_PROGRESS)

    norm_url = _normalize_url(str(raw_url), sources[ENV_URL]) if raw_url is not None else None
    if norm_url is not None and not key:
        raise ConfigurationError(
            f"a service URL is set ({sources[ENV_URL]}) but no API key: set "
            f"{ENV_API_KEY} or pass api_key= to qs.connect()"
        )
    if norm_url is None and key:
        raise ConfigurationError(
            f"an API key is set ({sources[ENV_API_KEY]}) but no service URL: set {ENV_URL} "
            f"(or pass url=) to use the service, or unset the key to use the embedded sandbox"
        )
    if isinstance(raw_progress, str):
        show_progress = _parse_flag(raw_progress, ENV_PROGRESS)
    else:
        show_progress = True if raw_progress is None else bool(raw_progress)
    if quota_reserve < 0:
        raise ConfigurationError(f"quota_reserve must be >= 0, got {quota_reserve}")
    if timeout_s <= 0:
        raise ConfigurationError(f"timeout_s must be > 0, got {timeout_s}")
    resolved_dir = Path(
        raw_cache_dir if raw_cache_dir is not None else platformdirs.user_cache_dir("quantscope")
    ).expanduser()
    return Settings(
        url=norm_url,
        api_key=key,
        cache_dir=resolved_dir,
        offline=bool(offline),
        progress=show_progress,
        timeout_s=float(timeout_s),
        quota_reserve=int(quota_reserve),
        retry=retry or RetryPolicy(),
        service="configured URL" if norm_url else "embedded sandbox",
        service_id=norm_url or "",
        sources=sources,
    )


# --- the embedded sandbox -----------------------------------------------------------------


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
            atexit.register(server.stop)
            _EMBEDDED = _Embedded(server, str(server.url).rstrip("/"), key, seed, scale)
            how = "started"
        embedded = _EMBEDDED
    print(_sandbox_line(embedded.seed, how), flush=True)
    return _embedded_settings(settings, embedded.url, embedded.key, embedded.seed, embedded.scale)


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
