"""What the pages of one paged load say of each other, checked as they arrive (issue 20).

A ``PageLedger`` sees every page of one ``Client.get_pages`` load before it is folded, in the
order pages are loaded (cached ones first), and keeps the identity of every item: its ``id``
(``_Paging.key``; an item without a text or integer one is kept and not judged), or the
whole item for a paging without a key. A page whose items are not all objects is not judged
either (the loaders refuse it by name). The rules (docs/service-contract.md,
"How answers are checked"):

* a page that is not empty and brings no item not already loaded means the service is not
  paging (it ignores ``page``/``offset``, or something in between drops them): the load stops
  at that page, sends nothing more (``repeats`` ends the batch) and raises
  ``InvalidResponseError`` naming it and the page it repeats (``stop_on_repeat``);
* an item seen twice, in one page or in pages that overlap, is kept once (the copy loaded
  first) and counted: ``checks["duplicates"]``;
* pages whose totals differ: ``checks["totals"]``, each distinct total in page order;
* a complete load (not capped by ``max_pages``, nothing left out by the quota) whose distinct
  items are not as many as the first page's total: ``checks["total"]``, ``said`` and
  ``received``;

``findings`` is that ``checks`` dict (empty: nothing found) and ``message`` its one line for
the load's one ``InconsistentAnswerWarning``. The cost is a set of the load's ids: about a
tenth of a microsecond an item.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec
import orjson

from quantscope._errors import InvalidResponseError
from quantscope._http.results import OffsetPaging, PageNumberPaging
from quantscope._typed.frames import Item

__all__ = ["PageLedger"]


@dataclass
class _Note:
    """One admitted page: its items kept and dropped (seen before), its total."""

    kept: int
    dropped: int
    total: int | None


def _whole(item: Any) -> bytes:
    """An item without an id, as canonical bytes (equal items, equal bytes)."""
    try:
        if isinstance(item, Item):
            return msgspec.json.encode(item)
        return orjson.dumps(item, option=orjson.OPT_SORT_KEYS)
    except (TypeError, msgspec.EncodeError):
        return repr(item).encode()


def _identities(items: list[Any], key: str | None) -> list[Hashable | None] | None:
    """Each item's identity: its ``key`` when it has a text or integer one (None: an item
    without one, not judged), or with no ``key`` the whole item. None when the items are not
    all objects (not a list of records: the loader's checks name it).
    """
    kinds = set(map(type, items))
    if not all(issubclass(kind, (Item, Mapping)) for kind in kinds):
        return None
    if key is None:
        return [_whole(item) for item in items]
    kind = kinds.pop() if len(kinds) == 1 else None
    ids: list[Any] | None = None
    if kind is not None and issubclass(kind, Item):
        ids = kind.values_at(items, key)
    if ids is None:
        ids = [i.get(key) if isinstance(i, Mapping) else None for i in items]
    return [ident if type(ident) in (int, str) else None for ident in ids]


def _params(paging: PageNumberPaging | OffsetPaging, index: int) -> str:
    return "&".join(f"{k}={v}" for k, v in paging.params_for(index).items())


class PageLedger:
    """The checks of one paged load (module docstring); one per ``get_pages`` call."""

    def __init__(self, endpoint: str, paging: PageNumberPaging | OffsetPaging) -> None:
        self.endpoint, self.paging = endpoint, paging
        self._first_seen: dict[Hashable, object] = {}  # identity -> the page that brought it
        self._notes: dict[int, _Note] = {}  # id(page) -> its note
        self._repeat: tuple[object, object] | None = None  # (page, the earlier page)

    def admit(self, page: object, body: Any) -> int | None:
        """Record ``body``, the body of ``page`` (a token: the client's answer), and drop from
        its list the items already loaded. Returns how many items it listed as it came (None
        for a body that is not a page: the client's shape check judges it).
        """
        key = self.paging.items
        items = body.get(key) if isinstance(body, Mapping) else None
        if not isinstance(items, list):
            return None
        total = self.paging.total_of(body)
        if not items:
            self._notes[id(page)] = _Note(0, 0, total)
            return 0
        identities = _identities(items, self.paging.key)
        if identities is None:
            self._notes[id(page)] = _Note(len(items), 0, total)
            return len(items)
        first_seen = self._first_seen
        keep: list[bool] = []
        earlier: object | None = None
        for ident in identities:
            seen = first_seen.get(ident) if ident is not None else None
            if ident is None:  # no identity: kept, never a duplicate
                keep.append(True)
            elif seen is None:
                first_seen[ident] = page
                keep.append(True)
            else:  # seen in this page already, or in an earlier one
                keep.append(False)
                if earlier is None and seen is not page:
                    earlier = seen
        kept = sum(keep)
        if not kept and self._repeat is None and earlier is not None:  # nothing new
            self._repeat = (page, earlier)
        if kept < len(items):
            body[key] = [item for item, k in zip(items, keep, strict=True) if k]
        self._notes[id(page)] = _Note(kept, len(items) - kept, total)
        return len(items)

    def repeats(self, page: object) -> bool:
        """Whether ``page`` brought nothing new (the load must stop there)."""
        return self._repeat is not None and self._repeat[0] is page

    def stop_on_repeat(self, pages: Sequence[object | None]) -> None:
        """Raise ``InvalidResponseError`` when one of ``pages`` (the load's, in page order)
        repeats an earlier one (module docstring).
        """
        if self._repeat is None:
            return
        page, earlier = self._repeat
        at = next((i for i, p in enumerate(pages) if p is page), None)
        before = next((i for i, p in enumerate(pages) if p is earlier), None)
        if at is None or before is None:  # not part of what this load keeps
            return
        names = "/".join(self.paging.names())
        raise InvalidResponseError(
            f"{self.endpoint}: page {at + 1} ({_params(self.paging, at)}) repeats page "
            f"{before + 1} ({_params(self.paging, before)}): no item of it is new, so the "
            f"service is not paging (it ignores {names}, or something between quantscope and "
            "it drops them); the load stopped there and sent nothing more. Is QUANTSCOPE_URL "
            "the API's own address?",
            endpoint=self.endpoint,
            status_code=200,
        )

    def findings(
        self,
        pages: Sequence[object | None],
        total: int | None,
        *,
        complete: bool,
        empty_page: int | None = None,
    ) -> dict[str, Any]:
        """The ``checks`` of the pages the load keeps (``pages``, in page order): duplicates,
        totals that differ, a total the distinct items disagree with (a complete load only;
        ``empty_page``: the 1-based page that came back empty before the total was reached).
        """
        notes = [self._notes[id(p)] for p in pages if p is not None and id(p) in self._notes]
        found: dict[str, Any] = {}
        dropped = sum(n.dropped for n in notes)
        if dropped:
            found["duplicates"] = dropped
        totals: list[int] = []
        for note in notes:
            if note.total is not None and note.total not in totals:
                totals.append(note.total)
        if len(totals) > 1:
            found["totals"] = totals
        received = sum(n.kept for n in notes)
        if total is not None and (complete or empty_page is not None) and received != total:
            found["total"] = {"said": total, "received": received}
            if empty_page is not None:
                found["total"]["empty_page"] = empty_page
        return found

    def message(self, found: Mapping[str, Any]) -> str:
        """The one warning line of ``found`` (``findings``)."""
        parts: list[str] = []
        if "duplicates" in found:
            same = f"the same {self.paging.key}" if self.paging.key else "the same item"
            parts.append(
                f"{found['duplicates']} items came twice ({same} in overlapping pages), "
                "each is kept once"
            )
        if "total" in found:
            said, got = found["total"]["said"], found["total"]["received"]
            empty = found["total"].get("empty_page")
            parts.append(
                f"it said {said} items in all, but page {empty} came back empty after {got}: "
                "the load stopped there (the pages are the service's data; its total was not "
                "trusted further)"
                if empty is not None
                else f"it said {said} items in all, but {got} arrived: the frame holds what arrived"
            )
        if "totals" in found:
            shown = ", ".join(str(t) for t in found["totals"])
            parts.append(
                f"the total changed between pages ({shown}): the list changed during the load"
            )
        return (
            f"quantscope: {self.endpoint}: " + "; ".join(parts) + " (attrs['quantscope']['checks'])"
        )
