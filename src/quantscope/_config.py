"""Settings of a client, resolved once: argument, then ``QUANTSCOPE_*`` environment, then default.

``resolve_settings`` is the only function that reads the environment. The result is a frozen
``Settings`` that the client keeps and users can inspect (``client.settings``); its repr never
shows the API key. ``RetryPolicy`` is the one place that says what is retried and how long to
wait. Settings only: the embedded sandbox that stands in when no URL is set is started by
``_http.embedded``, and the spec's plan table lives in ``_plans``.

``Options`` declares the eleven settings a user passes (name, type, default, environment variable,
meaning) once: ``connect``, ``Client`` and ``resolve_settings`` keep explicit keyword signatures
for IDEs and ``help()``, a test holds each of them equal to the declaration, their ``Args``
sections are written from it (``OPTIONS_HELP``), and they hand the values on with ``passed``.
"""

from __future__ import annotations

import os
import textwrap
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

import platformdirs

from quantscope._advice import Said
from quantscope._endpoints import API_PREFIX
from quantscope._errors import ConfigurationError

__all__ = ["OPTIONS_HELP", "Options", "RetryPolicy", "Settings", "passed", "resolve_settings"]

ENV_URL = "QUANTSCOPE_URL"
ENV_API_KEY = "QUANTSCOPE_API_KEY"
ENV_CACHE_DIR = "QUANTSCOPE_CACHE_DIR"
ENV_PROGRESS = "QUANTSCOPE_PROGRESS"
ENV_QUOTA_SHARE = "QUANTSCOPE_QUOTA_SHARE"
ENV_CATALOG = "QUANTSCOPE_CATALOG"

#: The share of the quota left that one load may spend without ``confirm=True``.
DEFAULT_QUOTA_SHARE = 0.25


_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


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

    Every retry stays within the call's deadline (``Settings.timeout_s``): a wait that would
    end after it is not made, and the last answer (or failure) is reported instead. An
    attempt that ran out of time is therefore never retried.
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
        delay = min(self.backoff_max_s, self.backoff_base_s * 2.0**attempt)
        return max(delay, retry_after or 0.0)


@dataclass(frozen=True)
class Settings:
    """Everything a client was configured with, resolved once; the key is left out of repr.

    ``url`` is None only between resolution and the start of the embedded sandbox; a
    connected client always has one. It never holds credentials: ``user:password@`` in a
    configured URL is taken out into ``auth`` (sent as HTTP basic auth, never stored, never
    shown). ``service`` says where the data comes from, for people;
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
    quota_share: float = DEFAULT_QUOTA_SHARE
    service: str = "configured URL"
    service_id: str = ""
    sources: Mapping[str, str] = field(default_factory=dict, compare=False)
    catalog: str | None = None
    auth: tuple[str, str] | None = field(default=None, repr=False)
    transport: Callable[[Any], Any] | None = field(default=None, repr=False, compare=False)

    @property
    def has_api_key(self) -> bool:
        return bool(self.api_key)

    @property
    def cache_path(self) -> Path:
        """The SQLite file of the HTTP cache."""
        return self.cache_dir / "http_cache.sqlite"


def _about(doc: str, env: str | None = None) -> dict[str, str | None]:
    """An ``Options`` field's metadata: its meaning and the variable it is read from."""
    return {"doc": doc, "env": env}


@dataclass(frozen=True)
class Options:
    """The settings of ``connect``, ``Client`` and ``resolve_settings``, declared once.

    Each field's metadata holds its meaning (``doc``) and the ``QUANTSCOPE_*`` variable read
    when the argument is None (``env``); the order is the signatures' order (``url`` and
    ``api_key`` positional, the rest keyword-only).
    """

    url: str | None = field(
        default=None,
        metadata=_about(
            "the service's base URL (paths ``/api/...`` are appended). None and no "
            "``QUANTSCOPE_URL``: the embedded sandbox, started once per process with its "
            "Enterprise key. ``user:password@`` in it is taken out and sent as HTTP basic auth.",
            ENV_URL,
        ),
    )
    api_key: str | None = field(
        default=None,
        metadata=_about(
            "sent only as the ``X-API-Key`` header. Required with a URL; refused without one, so "
            "a real key is never sent to the local sandbox by mistake.",
            ENV_API_KEY,
        ),
    )
    cache_dir: str | os.PathLike[str] | None = field(
        default=None,
        metadata=_about(
            "directory of the HTTP cache; default ``platformdirs.user_cache_dir``.",
            ENV_CACHE_DIR,
        ),
    )
    offline: bool = field(
        default=False,
        metadata=_about("answer only from the cache; a miss raises ``OfflineCacheMissError``."),
    )
    progress: bool | None = field(
        default=None,
        metadata=_about(
            "progress bars on multi-request loads (default on; ``0`` disables).", ENV_PROGRESS
        ),
    )
    timeout_s: float = field(
        default=30.0,
        metadata=_about(
            "the deadline of each call, in seconds: connect, headers and body of every attempt, "
            "and the waits between retries, together. A call that has not its whole answer by "
            "then raises ``APITimeoutError``; a retry is made only while time is left "
            "(``RetryPolicy``).",
        ),
    )
    quota_reserve: int = field(
        default=0,
        metadata=_about("requests a multi-request load leaves unspent."),
    )
    retry: RetryPolicy | None = field(
        default=None,
        metadata=_about("how transient failures are retried; default ``RetryPolicy()``."),
    )
    quota_share: float | None = field(
        default=None,
        metadata=_about(
            "the share (0-1] of the quota left one load may spend without ``confirm=True``; "
            "default ``DEFAULT_QUOTA_SHARE`` (0.25).",
            ENV_QUOTA_SHARE,
        ),
    )
    catalog: str | os.PathLike[str] | None = field(
        default=None,
        metadata=_about(
            "a Parquet catalog (path or fsspec URL) the loaders answer from, with no service and "
            "no key (``qsc.sync`` builds one); offline for everything else. ``QUANTSCOPE_CATALOG`` "
            "when no url, key or catalog is passed, so that a notebook that calls "
            "``qsc.connect()`` re-runs unchanged on a catalog; set together with "
            "``QUANTSCOPE_URL`` it is refused as ambiguous.",
        ),
    )
    transport: Callable[[Any], Any] | None = field(
        default=None,
        metadata=_about(
            "a handler that answers the client's requests in-process instead of the network "
            "(``quantscope.testing``: it gets each ``requests.PreparedRequest`` for ``url`` and "
            "returns a ``Reply``), for tests of faults. Needs ``url=``; only that origin's "
            "requests reach it; ``QUANTSCOPE_URL``/``QUANTSCOPE_API_KEY`` are then not read.",
        ),
    )


def _options_help() -> str:
    """The ``Args:`` section of a docstring, one entry per ``Options`` field."""
    lines = ["", "    Args:"]
    for option in fields(Options):
        env = option.metadata["env"]
        text = option.metadata["doc"] + (f" Read from ``{env}`` when None." if env else "")
        lines += textwrap.wrap(
            f"{option.name}: {text}",
            width=96,
            initial_indent="        ",
            subsequent_indent="            ",
        )
    return "\n".join(lines) + "\n"


#: ``Args:`` of ``connect``, ``Client`` and ``resolve_settings``, appended to their docstrings.
OPTIONS_HELP = _options_help()


def passed(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """The ``Options`` among a call's arguments (``locals()`` at its start), to hand on."""
    return {option.name: arguments[option.name] for option in fields(Options)}


def _split_credentials(url: str) -> tuple[str, tuple[str, str] | None]:
    """``url`` without ``user:password@``, and the credentials it carried (percent-decoded).

    Credentials in a URL would be stored with every cached answer (its URL) and shown in
    reprs and messages: they are taken out here, once, and sent as HTTP basic auth
    (``Settings.auth``) instead.
    """
    parts = urlsplit(url.strip())
    if "@" not in parts.netloc:
        return url, None
    userinfo, _, hostport = parts.netloc.rpartition("@")
    user, _, password = userinfo.partition(":")
    clean = urlunsplit((parts.scheme, hostport, parts.path, parts.query, parts.fragment))
    return clean, (unquote(user), unquote(password))


def _normalize_url(url: str, source: str) -> str:
    url = url.strip().rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigurationError(
            f"the service URL from {source} must look like https://host[:port][/path], got {url!r}"
        )
    if parts.query or parts.fragment:
        raise ConfigurationError(f"the service URL from {source} must not carry ?query or #")
    _api_suffix(url, source)
    return url


def _parse_share(value: Any, source: str) -> float:
    if value is None:
        return DEFAULT_QUOTA_SHARE
    try:
        share = float(value)
    except ValueError:
        share = float("nan")
    if not 0 < share <= 1:
        raise ConfigurationError(
            f"quota_share from {source} must be a fraction in (0, 1], got {value!r}"
        )
    return share


def _api_suffix(url: str, source: str) -> None:
    """Refuse a base URL ending in ``/api``: every endpoint path starts with ``/api/``."""
    parts = urlsplit(url)
    if parts.path.rstrip("/").lower().endswith("/api"):
        base = url[: len(url) - len(parts.path)] + parts.path.rstrip("/")[: -len("/api")]
        raise ConfigurationError(
            f"the service URL from {source} ends in /api, but endpoints already start with "
            f"{API_PREFIX}: use {base!r} instead"
        )


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
    quota_share: float | None = None,
    env: Mapping[str, str] | None = None,
    catalog: str | os.PathLike[str] | None = None,
    transport: Callable[[Any], Any] | None = None,
) -> Settings:
    """Resolve each setting from the argument, then ``QUANTSCOPE_*``, then the default.

    ``env`` is the environment (default ``os.environ``; tests pass a dict); the other
    arguments are ``Options`` (their ``Args`` below are written from it).
    """
    env = os.environ if env is None else env
    if transport is not None:
        _check_transport(url, catalog)
        # An in-process handler never gets the researcher's service or key from the
        # environment: only what the test passes.
        env = {k: v for k, v in env.items() if k not in (ENV_URL, ENV_API_KEY, ENV_CATALOG)}
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
    raw_share = pick(quota_share, ENV_QUOTA_SHARE)

    if catalog is None and url is None and api_key is None:
        env_catalog = env.get(ENV_CATALOG, "").strip()
        if env_catalog:
            if raw_url is not None:
                raise ConfigurationError(
                    f"both {ENV_URL} and {ENV_CATALOG} are set: unset one (a service, or a "
                    "catalog to answer from with no service)"
                )
            catalog, raw_url = env_catalog, None
    auth = None
    if raw_url is not None:
        raw_url, auth = _split_credentials(str(raw_url))
    norm_url = _normalize_url(str(raw_url), sources[ENV_URL]) if raw_url is not None else None
    if catalog is not None and (url is not None or api_key is not None):
        raise ConfigurationError("connect to a service (url=, api_key=) or a catalog, not both")
    if catalog is not None:
        norm_url, key, auth = None, None, None  # the catalog stands in for any service
    elif norm_url is not None and not key and transport is None:
        raise ConfigurationError(
            Said(
                "a service URL is set ({source}) but no API key: {advice}",
                ("env_key", "api_key"),
                {"source": sources[ENV_URL], "env_key": ENV_API_KEY},
                joiner=" or ",
            )
        )
    if norm_url is None and key:
        raise ConfigurationError(
            Said(
                "an API key is set ({source}) but no service URL: set {env_url}{url} to use "
                "the service, or unset the key to use the embedded sandbox",
                values={"source": sources[ENV_API_KEY], "env_url": ENV_URL},
            )
        )
    if isinstance(raw_progress, str):
        show_progress = _parse_flag(raw_progress, ENV_PROGRESS)
    else:
        show_progress = True if raw_progress is None else bool(raw_progress)
    if quota_reserve < 0:
        raise ConfigurationError(f"quota_reserve must be >= 0, got {quota_reserve}")
    share = _parse_share(raw_share, sources[ENV_QUOTA_SHARE])
    if timeout_s <= 0:
        raise ConfigurationError(f"timeout_s must be > 0, got {timeout_s}")
    resolved_dir = Path(
        raw_cache_dir if raw_cache_dir is not None else platformdirs.user_cache_dir("quantscope")
    ).expanduser()
    where = None if catalog is None else os.fspath(catalog)
    service_id = f"catalog:{where}" if where else norm_url or ""
    if transport is not None:  # its answers are cached apart from the service's at that URL
        service_id = f"in-process:{service_id}"
    return Settings(
        url=norm_url if where is None else f"catalog:{where}",
        api_key=key,
        cache_dir=resolved_dir,
        offline=bool(offline) or where is not None,
        progress=show_progress,
        timeout_s=float(timeout_s),
        quota_reserve=int(quota_reserve),
        retry=retry or RetryPolicy(),
        quota_share=share,
        service=_service(where, norm_url, transport),
        service_id=service_id,
        sources=sources,
        catalog=where,
        auth=auth,
        transport=transport,
    )


def _check_transport(url: str | None, catalog: str | os.PathLike[str] | None) -> None:
    """A transport stands in for the service at ``url``: it needs one, and no catalog."""
    if url is None:
        raise ConfigurationError(
            "a transport answers for the service at a URL: connect(url=..., transport=...) needs "
            "both (e.g. url='http://fake'); the command line has no transport"
        )
    if catalog is not None:
        raise ConfigurationError("connect to a service (url=, transport=) or a catalog, not both")


def _service(catalog: str | None, url: str | None, transport: Any) -> str:
    """Where the data comes from, for people (``Settings.service``)."""
    if catalog:
        return "catalog"
    if transport is not None:
        return "in-process transport"
    return "configured URL" if url else "embedded sandbox"


resolve_settings.__doc__ = f"{resolve_settings.__doc__}{OPTIONS_HELP}"
