"""What every loader shares: the client to use, records -> typed frame with provenance, and
the frame cache.

A loader whose frame is costly to build from its answers (many pages, or much reshaping) loads
through ``frame_of_pages`` (or ``frame_of`` for one answer): the first load builds the frame
from the answers and keeps it beside the HTTP cache (``_framecache``); a later identical load
whose answers are all still cached unchanged returns that frame, unpickled (a new object each
time), without decoding the answers or building anything. Provenance is what a load from the
cache says: ``from_cache`` True, ``requests`` 0, ``fetched_at`` when the oldest answer was
fetched.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd

from quantscope._cache import key_scope
from quantscope._client import (
    CacheEntry,
    Client,
    Fetched,
    FetchedPages,
    OffsetPaging,
    PageNumberPaging,
    Provenance,
    get_default_client,
    wire_params,
)
from quantscope._decode import Item, build_frame
from quantscope._errors import InvalidResponseError
from quantscope._framecache import FrameCache, frame_key
from quantscope._frames import FrameSpec
from quantscope._wire import Params


def client_or_default(client: Client | None) -> Client:
    return client if client is not None else get_default_client()


def typed_frame(
    records: Sequence[Mapping[str, Any]],
    spec: FrameSpec,
    provenance: Provenance | None,
    **extra: Any,
) -> pd.DataFrame:
    """``build_frame`` plus ``df.attrs["quantscope"]`` (provenance and loader extras).

    The records may be items decoded by ``_decode.page_decoder(spec, ...)`` (the same frame)."""
    frame = build_frame(records, spec)
    attrs = provenance.as_dict() if provenance is not None else {}
    attrs.update(extra)
    frame.attrs["quantscope"] = attrs
    return frame


def frame_of_pages(
    client: Client | None,
    endpoint: str,
    params: Params | None,
    build: Callable[[FetchedPages], pd.DataFrame],
    *,
    spec: FrameSpec,
    paging: PageNumberPaging | OffsetPaging,
    max_pages: int | None = None,
    desc: str | None = None,
    decode: Callable[[bytes], Any] | None = None,
) -> pd.DataFrame:
    """``build(client.get_pages(endpoint, params, ...))``, or the frame it built before from
    the same pages when they are all still cached unchanged.

    ``decode`` (``_decode.page_decoder``) decodes each page's bytes in place of ``orjson``.

    ``build`` must depend on nothing but the pages (and what ``params`` say): the frame is
    kept under the spec, ``build``'s name and code, the parameters and the paging, not under
    what a closure holds. It sets ``df.attrs["quantscope"]`` (``typed_frame`` does).
    """
    c = client_or_default(client)
    wire = {k: v for k, v in wire_params(params).items() if k not in paging.names()}

    def load(sources: list[CacheEntry | None]) -> pd.DataFrame:
        pages = c.get_pages(
            endpoint,
            params,
            paging=paging,
            max_pages=max_pages,
            desc=desc,
            sources=sources,
            decode=decode,
        )
        return build(pages)

    shape = {"paging": paging, "max_pages": max_pages}
    return _through_frame_cache(c, endpoint, wire, spec, build, shape, load)


def frame_of(
    client: Client | None,
    endpoint: str,
    params: Params | None,
    build: Callable[[Fetched], pd.DataFrame],
    *,
    spec: FrameSpec,
) -> pd.DataFrame:
    """``build(client.get(endpoint, params))``, or the frame it built before from the same
    answer when it is still cached unchanged (as ``frame_of_pages``, for one answer)."""
    c = client_or_default(client)

    def load(sources: list[CacheEntry | None]) -> pd.DataFrame:
        return build(c.get(endpoint, params, sources=sources))

    return _through_frame_cache(c, endpoint, wire_params(params), spec, build, {}, load)


def _through_frame_cache(
    c: Client,
    endpoint: str,
    wire: dict[str, str],
    spec: FrameSpec,
    build: Callable[..., pd.DataFrame],
    shape: Mapping[str, Any],
    load: Callable[[list[CacheEntry | None]], pd.DataFrame],
) -> pd.DataFrame:
    frames = FrameCache.beside(c.settings.cache_path)
    scope = key_scope(c.settings.service_id, c.settings.api_key)
    key = frame_key(
        spec=spec, build=build, scope=scope, endpoint=endpoint, params=wire, shape=shape
    )
    hit = frames.get(key, c.cached_unchanged)
    if hit is not None:
        frame = hit.frame
        attrs = frame.attrs.get("quantscope")
        attrs = dict(attrs) if isinstance(attrs, Mapping) else {}
        attrs.update(
            endpoint=endpoint,
            params=wire,
            fetched_at=min(e.created_at for e in hit.entries),
            from_cache=True,
            pages=len(hit.entries),
            requests=0,
            service=c.settings.service,
            stale=False,
        )
        frame.attrs["quantscope"] = attrs
        return frame
    sources: list[CacheEntry | None] = []
    frame = load(sources)
    entries = [e for e in sources if e is not None]
    if entries and len(entries) == len(sources):  # every answer is in the cache as loaded
        frames.put(key, frame, entries)
    return frame


def field(body: Any, endpoint: str, key: str, kind: type = dict) -> Any:
    """``body[key]`` when the body has the documented shape, else a clear error."""
    value = body.get(key) if isinstance(body, Mapping) else None
    if not isinstance(value, kind):
        raise InvalidResponseError(
            f"{endpoint}: expected '{key}' ({kind.__name__}) in the answer, got {body!r:.200}",
            endpoint=endpoint,
            status_code=200,
        )
    return value


def records(value: Any, endpoint: str) -> list[Mapping[str, Any]]:
    """A list of JSON objects (or of items a typed decoder built from them), or a clear error
    naming the endpoint."""
    if not isinstance(value, list) or not all(isinstance(v, (Item, Mapping)) for v in value):
        raise InvalidResponseError(
            f"{endpoint}: expected a list of objects, got {value!r:.200}",
            endpoint=endpoint,
            status_code=200,
        )
    return value
