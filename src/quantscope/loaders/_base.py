"""What every loader shares: the client to use, and records -> typed frame with provenance."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from quantscope._client import Client, Provenance, get_default_client
from quantscope._errors import InvalidResponseError
from quantscope._frames import FrameSpec, build_frame


def client_or_default(client: Client | None) -> Client:
    return client if client is not None else get_default_client()


def typed_frame(
    records: Sequence[Mapping[str, Any]],
    spec: FrameSpec,
    provenance: Provenance | None,
    **extra: Any,
) -> pd.DataFrame:
    """``build_frame`` plus ``df.attrs["quantscope"]`` (provenance and loader extras)."""
    frame = build_frame(records, spec)
    attrs = provenance.as_dict() if provenance is not None else {}
    attrs.update(extra)
    frame.attrs["quantscope"] = attrs
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
    """A list of JSON objects, or a clear error naming the endpoint."""
    if not isinstance(value, list) or not all(isinstance(v, Mapping) for v in value):
        raise InvalidResponseError(
            f"{endpoint}: expected a list of objects, got {value!r:.200}",
            endpoint=endpoint,
            status_code=200,
        )
    return value
