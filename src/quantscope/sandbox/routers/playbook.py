"""Trading playbook: GET and PUT /api/degen/config (spec "Trading playbook").

The playbook is read from and written to the live ``config`` table through playbook_store, which
also holds the validation rules. A PUT validates every change before it writes any, inside one
transaction.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Query

from quantscope.sandbox import playbook_store
from quantscope.sandbox.deps import Caller, JSONRoute, StoreDep, require
from quantscope.sandbox.errors import invalid_body, not_found
from quantscope.sandbox.models._common import UUID_PATTERN
from quantscope.sandbox.models.playbook import (
    PlaybookConfig,
    PlaybookUpdateRequest,
    PlaybookUpdateResponse,
)
from quantscope.sandbox.params import MAX_ID, Id
from quantscope.sandbox.playbook_store import short_repr

router = APIRouter(route_class=JSONRoute, tags=["playbook"])

_UUID = re.compile(UUID_PATTERN)


def _inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """A model's JSON schema with its ``$defs`` inlined, for an operation's request body."""
    defs = schema.pop("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                return walk(dict(defs[ref.removeprefix("#/$defs/")]))
            return {key: walk(value) for key, value in node.items()}
        if isinstance(node, list):
            return [walk(item) for item in node]
        return node

    result: dict[str, Any] = walk(schema)
    return result


_REQUEST_SCHEMA = _inline_refs(PlaybookUpdateRequest.model_json_schema())
# what _parse_request enforces beyond the model: a quant id is 1 to 2^63-1 (as every id)
_REQUEST_SCHEMA["properties"]["quantId"].update(minimum=1, maximum=MAX_ID)


def _config_group(store: StoreDep, quant_id: int) -> str:
    """The quant's config group id; 404 naming ``quantId`` when the quant is unknown."""
    row = (
        store.connect()
        .execute("SELECT config_group_id FROM quants WHERE id = ?", (quant_id,))
        .fetchone()
    )
    if row is None:
        raise not_found(f"no quant {quant_id}", "quantId")
    return str(row[0])


@router.get("/api/degen/config", response_model=PlaybookConfig)
def get_config(
    caller: Annotated[Caller, Depends(require("playbook_read"))],
    store: StoreDep,
    quantId: Annotated[Id, Query(description="The quant whose playbook to read.")],
    configGroupId: Annotated[
        str | None,
        Query(
            description="Optional; must be the quant's config group id (else 404).",
            max_length=64,  # a UUID; a longer value is no group either (422, as the schema says)
        ),
    ] = None,
) -> Any:
    """A quant's live playbook: one element per market-cap class (DEGEN_CAP, LOW_CAP, MID_CAP).

    Each element carries the class's pass marks by config type (`passMark`), the quant's
    `configGroupId` and the 18 criteria by category, with their SCANNING and BUYING settings.
    """
    group = _config_group(store, quantId)
    if configGroupId is not None and configGroupId != group:
        raise not_found(
            f"quant {quantId} has no config group {configGroupId!r} (its group is {group})",
            "configGroupId",
        )
    return playbook_store.read_playbook(store.connect(), quantId, group)


@router.put(
    "/api/degen/config",
    response_model=PlaybookUpdateResponse,
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": _REQUEST_SCHEMA}},
        }
    },
)
def put_config(
    caller: Annotated[Caller, Depends(require("playbook_write"))],
    store: StoreDep,
    body: Annotated[Any, Body()],
) -> Any:
    """Change a quant's playbook entries: all changes are validated, then written together.

    `field` is `threshold`, `weight`, `required`, `disabled` or `extraInfo`; changes apply in
    order, each checked against the entry as the earlier ones left it. One invalid change
    rejects the request (422 naming e.g. `newConfigs[2].newValue`) and nothing is written; an
    unknown `configId`, or one of another quant, is 404.
    """
    quant_id, changes = _parse_request(body)
    _config_group(store, quant_id)
    with store.transaction() as conn:
        updated = playbook_store.apply_changes(conn, quant_id, changes)
    return {"success": True, "updatedConfigs": [e.as_updated_config() for e in updated]}


def _parse_request(body: Any) -> tuple[int, list[playbook_store.Change]]:
    """The quant id and changes of a PUT /api/degen/config body (PlaybookUpdateRequest).

    Checks the body's shape only; ``apply_changes`` checks each value against its entry.

    Raises:
        ApiError: 422 ``invalid_body`` naming the offending field (``newConfigs[1].field``).
    """
    if isinstance(body, bytes | str):  # FastAPI hands over raw text without a JSON content type
        raise invalid_body(None, "send the body as JSON with Content-Type: application/json")
    if not isinstance(body, dict):
        raise invalid_body(None, f"the body must be a JSON object, got {short_repr(body)}")
    _no_unknown_keys(body, ("quantId", "newConfigs"), "")
    quant_id = body.get("quantId")
    if type(quant_id) is float and quant_id.is_integer() and abs(quant_id) < 2.0**63:
        quant_id = int(quant_id)  # JSON Schema: 2.0 is an integer
    if "quantId" not in body:
        raise invalid_body("quantId", "quantId is required")
    if type(quant_id) is not int or not 1 <= quant_id <= MAX_ID:
        raise invalid_body(
            "quantId",
            f"quantId must be an integer from 1 to {MAX_ID}, got {short_repr(quant_id)}",
        )
    items = body.get("newConfigs")
    if not isinstance(items, list) or not items:
        raise invalid_body(
            "newConfigs",
            f"newConfigs must be a non-empty list of changes, got {short_repr(items)}",
        )
    changes = []
    for i, item in enumerate(items):
        param = f"newConfigs[{i}]"
        if not isinstance(item, dict):
            raise invalid_body(param, f"{param} must be an object, got {short_repr(item)}")
        _no_unknown_keys(item, ("configId", "field", "newValue"), f"{param}.")
        for key in ("configId", "field", "newValue"):
            if key not in item:
                raise invalid_body(f"{param}.{key}", f"{param}.{key} is required")
        config_id = item["configId"]
        if not isinstance(config_id, str) or not _UUID.fullmatch(config_id):
            raise invalid_body(
                f"{param}.configId",
                f"{param}.configId must be a config id (UUID text from configIdsByInterval), "
                f"got {short_repr(config_id)}",
            )
        if item["field"] not in playbook_store.FIELDS:
            raise invalid_body(
                f"{param}.field",
                f"{param}.field must be one of {', '.join(playbook_store.FIELDS)}, "
                f"got {short_repr(item['field'])}",
            )
        changes.append(playbook_store.Change(config_id, item["field"], item["newValue"], param))
    return quant_id, changes


def _no_unknown_keys(obj: dict[str, Any], known: tuple[str, ...], prefix: str) -> None:
    for key in obj:
        if key not in known:
            raise invalid_body(
                f"{prefix}{key}",
                f"unknown field {prefix}{key}; the fields are {', '.join(known)}",
            )
