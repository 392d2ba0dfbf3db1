"""Typed decoding of paged answers: a page's JSON bytes straight to the fields a frame needs.

``page_decoder(spec, items, keep)`` builds, once per spec, msgspec Structs from the spec's
source paths (a nested Struct per dotted parent, leaves typed ``Any``) and returns a function
``bytes -> body`` for ``Client.get_pages(decode=...)``. The body is a dict holding the page's
items (as ``Item`` structs: only the spec's fields are built, every other field of the JSON is
skipped) and the top-level keys named in ``keep`` (the paging total, a summary) when present.

A page whose shape does not fit (not an object, no item list, an item that is not an object, a
nested parent that is neither an object nor null) is decoded by ``orjson`` as every other
answer is, so the loader sees the plain JSON and its usual checks and errors apply; a value of
another type than expected is fine (leaves are ``Any``) and is judged by the converters.

``build_frame`` builds the frame from items that may be such structs, dicts or a mix of both:
the columns are read from the structs and converted by ``_frames`` exactly as
``_frames.build_frame`` converts them, so the frame is the same as on the plain JSON.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from operator import attrgetter
from typing import Any

import msgspec
import orjson
import pandas as pd

from quantscope import _frames
from quantscope._frames import FrameSpec, _tree, column_values, frame_of_columns


class Item(msgspec.Struct, gc=False):
    """Base of the generated item structs (so loaders can tell them from plain JSON)."""


class _Plan:
    """A decoder for one spec: the item struct and how to read its columns back."""

    def __init__(self, spec: FrameSpec, items: str, keep: tuple[str, ...]) -> None:
        self.spec = spec
        self.items = items
        self.keep = keep
        self.paths = [c.source for c in spec.columns]
        # getters: (dotted path, attribute chain) per distinct source path
        self.getters: list[tuple[str, tuple[str, ...]]] = []
        self.item_type = self._struct(f"{spec.name}_item", _tree(self.paths), "", (), base=Item)
        fields: list[Any] = [("items", list.__class_getitem__(self.item_type))]
        rename = {"items": items}
        for i, key in enumerate(keep):
            fields.append((f"k{i}", Any, msgspec.UNSET))
            rename[f"k{i}"] = key
        page = msgspec.defstruct(
            f"{spec.name}_page", fields, rename=rename, forbid_unknown_fields=False, gc=False
        )
        self.decoder = msgspec.json.Decoder(page)

    def _struct(
        self,
        name: str,
        tree: dict[str, Any],
        prefix: str,
        chain: tuple[str, ...],
        base: type | None = None,
    ) -> type:
        fields: list[Any] = []
        rename: dict[str, str] = {}
        for i, (key, sub) in enumerate(tree.items()):
            attr = f"f{i}"
            rename[attr] = key
            path = prefix + key
            if sub:
                if path in self.paths:  # a column and a parent of columns
                    raise _Unsupported(path)
                child = self._struct(f"{name}_{i}", sub, path + ".", (*chain, attr))
                fields.append((attr, child | None, None))
            else:
                fields.append((attr, Any, None))
                self.getters.append((path, (*chain, attr)))
        return msgspec.defstruct(
            name,
            fields,
            bases=(base,) if base is not None else None,
            rename=rename,
            forbid_unknown_fields=False,
            gc=False,
        )

    def decode(self, content: bytes) -> Any:
        try:
            page: Any = self.decoder.decode(content)
        except msgspec.MsgspecError:  # not this shape (or not JSON): as every other answer
            return orjson.loads(content)
        body: dict[str, Any] = {self.items: page.items}
        for i, key in enumerate(self.keep):
            value = getattr(page, f"k{i}")
            if value is not msgspec.UNSET:
                body[key] = value
        return body

    def columns(self, items: Sequence[Any]) -> dict[str, list[Any]]:
        """Each source path's values over the structs (None where missing on the path)."""
        out: dict[str, list[Any]] = {}
        parents: dict[tuple[str, ...], list[Any]] = {(): list(items)}
        for path, chain in self.getters:
            values = parents[()]
            for depth in range(1, len(chain)):
                key = chain[:depth]
                if key not in parents:
                    get = attrgetter(chain[depth - 1])
                    parents[key] = [None if v is None else get(v) for v in values]
                values = parents[key]
            get = attrgetter(chain[-1])
            out[path] = (
                list(map(get, values))
                if len(chain) == 1
                else [None if v is None else get(v) for v in values]
            )
        return out


class _Unsupported(Exception):
    pass


_BY_TYPE: dict[type, _Plan] = {}


@functools.cache
def _plan(spec: FrameSpec, items: str, keep: tuple[str, ...]) -> _Plan | None:
    try:
        plan = _Plan(spec, items, keep)
    except _Unsupported:
        return None
    _BY_TYPE[plan.item_type] = plan
    return plan


def page_decoder(
    spec: FrameSpec, items: str, keep: Sequence[str] = ()
) -> Callable[[bytes], Any] | None:
    """``bytes -> body`` decoding pages whose ``items`` list holds ``spec``'s records (None
    when the spec's paths cannot be typed: a path that is both a column and a parent)."""
    plan = _plan(spec, items, tuple(keep))
    return plan.decode if plan is not None else None


def build_frame(records: Sequence[Any], spec: FrameSpec, *, stacklevel: int = 3) -> pd.DataFrame:
    """``_frames.build_frame`` for records that may also be ``Item`` structs of ``spec``'s
    decoder (alone or mixed with dicts): the same frame as on the plain JSON."""
    rows = records if isinstance(records, list) else list(records)
    first = next((r for r in rows if isinstance(r, Item)), None)
    plan = _BY_TYPE.get(type(first)) if first is not None else None
    if plan is None or plan.spec != spec:
        return _frames.build_frame(rows, spec, stacklevel=stacklevel + 1)
    typed = plan.item_type
    if all(type(r) is typed for r in rows):
        columns = plan.columns(rows)
    else:  # a mix (a page fell back to plain JSON): columns run by run, in order
        columns = {p: [] for p in plan.paths}
        start = 0
        while start < len(rows):
            is_typed = type(rows[start]) is typed
            end = start
            while end < len(rows) and (type(rows[end]) is typed) == is_typed:
                end += 1
            run = rows[start:end]
            part = plan.columns(run) if is_typed else column_values(run, plan.paths)
            for p in plan.paths:
                columns[p].extend(part[p])
            start = end
    return frame_of_columns(columns, len(rows), spec, stacklevel=stacklevel + 1)
