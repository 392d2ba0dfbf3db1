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

Each generated item type carries its spec and reads its own columns (``_typed.frames.Item``), so
``_typed.frames.build_frame`` builds the same frame from such structs, dicts or a mix of both as on
the plain JSON; nothing maps types back to specs. The decoder is passed explicitly down the
load (``Client.get_pages(decode=...)``, ``loaders._base.Recipe``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from operator import attrgetter
from typing import Any

import msgspec
import orjson

from quantscope._typed.frames import FrameSpec, Item, _tree

__all__ = ["Item", "page_decoder"]


class _Plan:
    """A decoder for one spec: the item struct and how to read its columns back."""

    def __init__(self, spec: FrameSpec, items: str, keep: tuple[str, ...]) -> None:
        self.spec = spec
        self.items = items
        self.keep = keep
        self.paths = [c.source for c in spec.columns]
        # getters: (dotted path, attribute chain) per distinct source path
        self.getters: list[tuple[str, tuple[str, ...]]] = []
        self.item_type = self._struct(
            f"{spec.name}_item",
            _tree(self.paths),
            "",
            (),
            base=Item,
            namespace={
                "spec": spec,
                "columns": classmethod(lambda _cls, rows: self.columns(rows)),
                "values_at": classmethod(lambda _cls, rows, path: self.values_at(rows, path)),
            },
        )
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
        namespace: dict[str, Any] | None = None,
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
            namespace=namespace,
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
                    parents[key] = _get_each(attrgetter(chain[depth - 1]), values)
                values = parents[key]
            out[path] = _get_each(attrgetter(chain[-1]), values)
        return out

    def values_at(self, items: Sequence[Any], path: str) -> list[Any] | None:
        """One source path's values over the structs (None where missing on the path), or
        None when the spec has no column there.
        """
        chain = next((c for p, c in self.getters if p == path), None)
        if chain is None:
            return None
        values = list(items)
        for attr in chain:
            values = _get_each(attrgetter(attr), values)
        return values


def _get_each(get: Callable[[Any], Any], values: list[Any]) -> list[Any]:
    """``get`` of each value, None for a None (a nested parent that was null or absent): a
    pass in C when there is none (a struct always has its fields: only None lacks them).
    """
    try:
        return list(map(get, values))
    except AttributeError:
        return [None if v is None else get(v) for v in values]


class _Unsupported(Exception):
    pass


@functools.cache
def _plan(spec: FrameSpec, items: str, keep: tuple[str, ...]) -> _Plan | None:
    try:
        return _Plan(spec, items, keep)
    except _Unsupported:
        return None


def page_decoder(
    spec: FrameSpec, items: str, keep: Sequence[str] = ()
) -> Callable[[bytes], Any] | None:
    """``bytes -> body`` decoding pages whose ``items`` list holds ``spec``'s records (None
    when the spec's paths cannot be typed: a path that is both a column and a parent).
    """
    plan = _plan(spec, items, tuple(keep))
    return plan.decode if plan is not None else None
