"""``quantscope cache info|clear [ENDPOINT]`` and ``quantscope quota``.

The cache commands open the HTTP cache (and the frame cache beside it) where the client would
(``--cache-dir``, else ``$QUANTSCOPE_CACHE_DIR``, else the user cache dir) without reaching
any service: they work offline and with no key. ``ENDPOINT`` is a path glob as
``client.cache.clear`` takes it (``trades*``, ``/api/eval-details``; without a leading ``/``
it is taken under ``/api/``); entries of every key and service are matched.

``quota`` sends one request (``/api/trades/stats``, never served from the cache: the quota is
only known from a fresh answer's ``X-RateLimit-*`` headers) and prints the plan's daily limit,
what is left and when it resets; that request is counted in what it prints.
"""

from __future__ import annotations

import argparse
import json
import os
from datetime import UTC, datetime
from typing import Any

from quantscope._endpoints import STATS
from quantscope.cli.common import (
    EXAMPLES_FORMATTER,
    Subparsers,
    UsageError,
    Voice,
    add_connection_options,
    add_output_options,
    client_from,
    print_json,
)

QUOTA_PROBE = STATS.path


def _open_cache(args: argparse.Namespace) -> Any:
    """The ``ResponseCache`` at the configured cache directory, with no service behind it."""
    from quantscope._config import ENV_CACHE_DIR, resolve_settings
    from quantscope._http.cache import ResponseCache, build_session
    from quantscope._http.framecache import FrameCache

    # Only the cache directory matters here: no URL or key is needed, or checked.
    env = {k: v for k, v in os.environ.items() if k == ENV_CACHE_DIR}
    settings = resolve_settings(cache_dir=args.cache_dir, env=env)
    session = build_session(settings.cache_path, "cli", "http://cache.invalid")
    frames = FrameCache.beside(settings.cache_path)
    return ResponseCache(session, companions=(frames,)), frames


def _matching(cache: Any, endpoint: str) -> int:
    from quantscope._http.cache import endpoint_matches

    store = cache._session.cache
    return sum(
        1
        for response in store.filter(valid=True, expired=True)
        if endpoint_matches(response.url, endpoint)
    )


def _cache_info(args: argparse.Namespace) -> int:
    cache, frames = _open_cache(args)
    info = cache.info()
    count, size = frames.stats()
    facts: dict[str, Any] = {
        "path": str(info.path),
        "entries": info.entries,
        "size_bytes": info.size_bytes,
        "frames": count,
        "frames_bytes": size,
    }
    if args.endpoint:
        facts["endpoint"] = args.endpoint
        facts["matching_entries"] = _matching(cache, args.endpoint)
    if args.json:
        print(json.dumps(facts))
        return 0
    print(f"HTTP cache   {info.path}")
    print(f"  answers    {info.entries} ({info.size_bytes / 1e6:.1f} MB)")
    print(f"  frames     {count} ({size / 1e6:.1f} MB, {frames.path.name})")
    if args.endpoint:
        print(f"  {args.endpoint}: {facts['matching_entries']} answers")
    return 0


def _cache_clear(args: argparse.Namespace) -> int:
    cache, _ = _open_cache(args)
    removed = cache.clear(args.endpoint)
    if args.json:
        print_json({"removed": removed, "endpoint": args.endpoint, "path": str(cache.path)})
        return 0
    what = f"answers of {args.endpoint}" if args.endpoint else "answers and every stored frame"
    Voice(args).note(f"removed {removed} {what} from {cache.path}")
    return 0


def _quota(args: argparse.Namespace) -> int:
    import requests

    from quantscope._errors import APIConnectionError, error_from_response, format_reset
    from quantscope._http.quota import quota_from_headers
    from quantscope._http.transport import WholeBodyAdapter, deadline
    from quantscope._plans import plan_for_limit
    from quantscope.cli.preflight import remember

    if args.offline:
        raise UsageError("quota needs the service: it is read from a fresh answer's headers")
    with client_from(args) as client:
        url, key = client.base_url, client.settings.api_key
        service = _service_words(client.settings.service, url)
    # Uncached, but on the client's transport: the call's deadline, the key scrubbed from the
    # answer, URL credentials as basic auth, and no redirect followed (the key stays home).
    try:
        with requests.Session() as session, deadline(client.settings.timeout_s):
            for prefix in ("http://", "https://"):
                session.mount(prefix, WholeBodyAdapter())
            response = session.get(
                url + QUOTA_PROBE,
                headers={"X-API-Key": key or ""},
                auth=client.settings.auth,
                timeout=client.settings.timeout_s,
                allow_redirects=False,
            )
    except requests.RequestException as exc:
        raise APIConnectionError(
            f"cannot reach {url}: {type(exc).__name__}; check QUANTSCOPE_URL and the network",
            endpoint=QUOTA_PROBE,
        ) from None
    quota = quota_from_headers(response.headers)
    if response.status_code not in (200, 429) or quota is None:
        raise error_from_response(
            response.status_code, response.content, endpoint=QUOTA_PROBE, secrets=[key or ""]
        )
    remember(client, quota)  # the next command's refusals need no request
    now = datetime.now(UTC)
    facts = {
        "service": service,
        "plan": plan_for_limit(quota.limit),
        "limit": quota.limit,
        "remaining": quota.remaining,
        "reset": quota.reset.astimezone(UTC).isoformat() if quota.reset else None,
        "spent_by_this_query": 1,
    }
    if args.json:
        print(json.dumps(facts))
        return 0
    print(f"service    {service}")
    print(f"plan       {facts['plan'] or 'unknown'} ({quota.limit} requests a day)")
    print(f"remaining  {quota.remaining} (after this query's 1 request)")
    print(f"reset      {format_reset(quota.reset, now)}")
    return 0


def _service_words(service: str, url: str) -> str:
    """``configured URL`` as the host it names (never its credentials)."""
    from urllib.parse import urlsplit

    if service != "configured URL":
        return service
    parts = urlsplit(url)
    host = parts.hostname or url
    return f"{parts.scheme}://{host}{f':{parts.port}' if parts.port else ''}{parts.path}"


def _add_cache(commands: Subparsers) -> None:
    cache = commands.add_parser(
        "cache",
        help="what the HTTP cache and the frame cache hold; clear them",
        description="The on-disk cache of answers (your quota) and the typed frames kept "
        "beside it. No service is reached.\n\nexamples:\n  quantscope cache info\n"
        "  quantscope cache info 'trades*'\n  quantscope cache clear eval-details\n"
        "  quantscope cache clear",
        formatter_class=EXAMPLES_FORMATTER,
    )
    actions = cache.add_subparsers(dest="action", required=True, metavar="ACTION")
    for name, handler, help_text in (
        ("info", _cache_info, "where the cache is, its answers and frames"),
        ("clear", _cache_clear, "remove every answer (and frame), or an endpoint's answers"),
    ):
        sub = actions.add_parser(name, help=help_text, description=help_text)
        sub.add_argument(
            "endpoint", nargs="?", metavar="ENDPOINT", help="a path glob: trades*, eval-details"
        )
        sub.add_argument("--cache-dir", metavar="DIR", help="default: $QUANTSCOPE_CACHE_DIR")
        add_output_options(sub, json_help="one JSON object on stdout")
        sub.set_defaults(handler=handler)


def _add_quota(commands: Subparsers) -> None:
    quota = commands.add_parser(
        "quota",
        help="the daily quota: limit, remaining, reset (spends 1 request)",
        description="Ask the service for the daily quota (one request, counted in the "
        "answer).\n\nexamples:\n  quantscope quota\n  quantscope quota --json",
        formatter_class=EXAMPLES_FORMATTER,
    )
    add_connection_options(quota)
    add_output_options(quota, json_help="one JSON object on stdout")
    quota.set_defaults(handler=_quota)


def COMMANDS(commands: Subparsers) -> None:
    """Add the ``cache`` and ``quota`` groups."""
    _add_cache(commands)
    _add_quota(commands)


__all__ = ["COMMANDS"]
