"""A battery of malformed answers against every paged loader (issue 20, item 3), counted.

Real sandbox data through a proxy that breaks it (``_helpers.proxy``): pages that repeat, ids
seen twice, overlapping and shifted pages, totals that are wrong or change, pages capped below
the size asked for, promised fields missing or null, values of the wrong type, items that are
not objects, pages without their list, and odd ``Retry-After`` values on a 429 or a 503 before
the real answers. Each case runs against ``load_trades``, ``load_evaluations`` and
``load_eval_history``, on a client of its own, and its outcome is one of:

* ``raised``: a ``QuantscopeError`` (one line that says what happened);
* ``flagged``: a frame, with a quantscope warning and ``attrs["quantscope"]["checks"]``;
* ``unrecorded``: a frame with a quantscope warning but nothing in its attrs (must not happen:
  the frame travels without its warning);
* ``same``: the frame the clean service gives (a retry, or a malformation that changes nothing);
* ``raw``: any other exception (must not happen);
* ``silent``: a frame that differs from the clean one with no quantscope warning (must not
  happen).

The counts are printed and recorded in docs/reliability.md ("Malformed answers").
"""

from __future__ import annotations

import itertools
import warnings
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from _helpers import FAST, FakeService, Seen
from _helpers.proxy import (
    first_page_query,
    forward,
    items_key,
    page_index,
    set_total,
    total_of,
)

from quantscope import loaders as L
from quantscope._errors import QuantscopeError, QuantscopeWarning
from quantscope._http.client import Client
from quantscope.sandbox.serve import SandboxServer

pytestmark = pytest.mark.reliability

QUANT = 2
Load = Callable[[Client], pd.DataFrame]


def _history_id(sandbox: SandboxServer) -> int:
    """An evaluation with a long history (a dozen pages of 20)."""
    with Client(sandbox.url, sandbox.keys["enterprise"], progress=False) as c:
        evals = c.get("/api/eval-results", {"quantId": QUANT, "limit": 50}).data["results"]
        sizes = {
            e["id"]: c.get("/api/eval-history", {"evaluationId": e["id"], "take": 1}).data["total"]
            for e in evals[:10]
        }
    return max(sizes, key=lambda k: sizes[k])


def loaders(sandbox: SandboxServer) -> dict[str, Load]:
    history = _history_id(sandbox)
    return {
        "trades": lambda c: L.load_trades(QUANT, page_size=20, confirm=True, client=c),
        "evaluations": lambda c: L.load_evaluations(
            QUANT, evaluation_type="TOKEN_BUY", page_size=50, confirm=True, client=c
        ),
        "history": lambda c: L.load_eval_history(history, page_size=20, confirm=True, client=c),
    }


# --- the malformations: (seen, body) -> body, or a handler of their own --------------------------


def _each_item(change: Callable[[dict[str, Any]], None], every: int = 7) -> Callable[..., Any]:
    def rewrite(seen: Seen, body: Any) -> Any:
        for n, item in enumerate(body[items_key(body)]):
            if n % every == 1:
                change(item)
        return body

    return rewrite


def _promised(item: dict[str, Any]) -> str:
    """A field every paged spec promises, as the item names it."""
    return "pnl_usd" if "pnl_usd" in item else "aiScore" if "aiScore" in item else "price"


def _drop(item: dict[str, Any]) -> None:
    item.pop(_promised(item), None)


def _null(item: dict[str, Any]) -> None:
    item[_promised(item)] = None


def _text(item: dict[str, Any]) -> None:
    item["createdAt" if "createdAt" in item else "open_date"] = 12345  # a number for a date


def _garbage(item: dict[str, Any]) -> None:
    item[_promised(item)] = "n/a"


def _flag(item: dict[str, Any]) -> None:
    if "passed" in item:
        item["passed"] = "yes"
    else:
        item["latest_evaluation"]["passed"] = "yes"


def _twice(seen: Seen, body: Any) -> Any:
    items = body[items_key(body)]
    body[items_key(body)] = [*items, *items[:2]]
    return body


def _earlier(upstream: str, seen: Seen) -> Any:
    index = page_index(seen)
    query = dict(seen.query)
    if "page" in query:
        query["page"] = str(index)
    else:
        name, size = ("offset", "limit") if "offset" in query else ("skip", "take")
        query[name] = str((index - 1) * int(query[size]))
    return forward(upstream, seen, query).json()


def _overlap(upstream: str) -> Callable[..., Any]:
    def rewrite(seen: Seen, body: Any) -> Any:
        if page_index(seen):
            key = items_key(body)
            body[key] = [*_earlier(upstream, seen)[key][-3:], *body[key]]
        return body

    return rewrite


def _shifted(upstream: str) -> Callable[..., Any]:
    def rewrite(seen: Seen, body: Any) -> Any:
        if page_index(seen):
            key = items_key(body)
            body[key] = [*_earlier(upstream, seen)[key][-3:], *body[key][:-3]]
        return body

    return rewrite


def _capped(seen: Seen, body: Any) -> Any:
    key = items_key(body)
    body[key] = body[key][: max(1, len(body[key]) // 2)]
    return body


def _drift(seen: Seen, body: Any) -> Any:
    return set_total(body, total_of(body) + (2 if page_index(seen) >= 2 else 0))


def _not_objects(seen: Seen, body: Any) -> Any:
    if page_index(seen) == 1:
        body[items_key(body)] = [1, 2, 3]
    return body


def _no_list(seen: Seen, body: Any) -> Any:
    if page_index(seen) == 1:
        body.pop(items_key(body))
    return body


REWRITES: dict[str, Callable[[str], Callable[..., Any]]] = {
    "ids twice": lambda up: _twice,
    "overlapping pages": _overlap,
    "shifted pages": _shifted,
    "total too small": lambda up: lambda s, b: set_total(b, total_of(b) - 5),
    "total too large": lambda up: lambda s, b: set_total(b, total_of(b) + 100),
    "total changes": lambda up: _drift,
    "total not a count": lambda up: lambda s, b: set_total(b, "many"),
    "total negative": lambda up: lambda s, b: set_total(b, -1),
    "pages capped": lambda up: _capped,
    "promised field missing": lambda up: _each_item(_drop),
    "promised field null": lambda up: _each_item(_null),
    "number as text": lambda up: _each_item(_garbage),
    "flag as text": lambda up: _each_item(_flag),
    "date as number": lambda up: _each_item(_text),
    "items not objects": lambda up: _not_objects,
    "page without its list": lambda up: _no_list,
}
RETRY_AFTER = [
    "inf",
    "nan",
    "1e400",
    "99999999999999999999999",
    "-5",
    "Sun, 06 Nov 1994 08:49:37 GMT",
    "Fri, 31 Dec 9999 23:59:59 GMT",
    "soon",
]


def _handler(upstream: str, name: str) -> Callable[[Seen], Any]:
    """The proxy of case ``name``."""
    if name == "pages repeat (paging ignored)":

        def ignored(seen: Seen) -> Any:
            answer = forward(upstream, seen, first_page_query(seen))
            return answer.status_code, {}, answer.content

        return ignored
    if name.startswith("Retry-After"):
        status, value = int(name.split()[1]), name.split(" ", 2)[2]
        calls = itertools.count()

        def odd(seen: Seen) -> Any:
            if next(calls) == 0:  # the first request; no readable reset beside it
                headers = {"Retry-After": value, "X-RateLimit-Reset": "unknown"}
                return status, headers, {"error": {"code": "slow_down"}}
            answer = forward(upstream, seen)
            return answer.status_code, {}, answer.content

        return odd
    rewrite = REWRITES[name](upstream)

    def rewriting(seen: Seen) -> Any:
        answer = forward(upstream, seen)
        if answer.status_code != 200:
            return answer.status_code, {}, answer.content
        return 200, {}, rewrite(seen, answer.json())

    return rewriting


CASES = [
    "pages repeat (paging ignored)",
    *REWRITES,
    *(f"Retry-After {s} {v}" for s in (429, 503) for v in RETRY_AFTER),
]


def _same(a: pd.DataFrame, b: pd.DataFrame) -> bool:
    a, b = a.copy(), b.copy()
    a.attrs, b.attrs = {}, {}
    try:
        pd.testing.assert_frame_equal(a, b)
    except AssertionError:
        return False
    return True


def outcome(load: Load, client: Client, clean: pd.DataFrame) -> str:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            frame = load(client)
        except QuantscopeError:
            return "raised"
        except Exception:  # the count this battery exists for
            return "raw"
    warned = any(issubclass(w.category, QuantscopeWarning) for w in caught)
    if warned:
        return "flagged" if frame.attrs["quantscope"].get("checks") else "unrecorded"
    return "same" if _same(frame, clean) else "silent"


def test_malformed_answers_never_give_a_raw_exception_or_a_silent_wrong_frame(
    serve: Callable[..., FakeService], sandbox: SandboxServer, tmp_path: Path
) -> None:
    counts: Counter[str] = Counter()
    table: dict[str, dict[str, str]] = {}
    for loader, load in loaders(sandbox).items():
        with Client(sandbox.url, sandbox.keys["enterprise"], cache_dir=str(tmp_path / loader)) as c:
            clean = load(c)
        assert len(clean) > 100, loader  # several pages
        for n, case in enumerate(CASES):
            service = serve(_handler(sandbox.url, case), limit=100_000, remaining=100_000)
            key = sandbox.keys["enterprise"]
            cache = tmp_path / f"{loader}-{n}"
            with Client(service.url, key, cache_dir=str(cache), progress=False, retry=FAST) as c:
                got = outcome(load, c, clean)
            counts[got] += 1
            table.setdefault(case, {})[loader] = got
    width = max(map(len, table))
    print(
        f"\n{'case':{width}}  "
        + "  ".join(f"{name:12}" for name in ("trades", "evaluations", "history"))
    )
    for case, row in table.items():
        print(
            f"{case:{width}}  "
            + "  ".join(f"{row[n]:12}" for n in ("trades", "evaluations", "history"))
        )
    print(dict(counts), "of", sum(counts.values()), "loads")
    assert counts["raw"] == counts["silent"] == counts["unrecorded"] == 0, table
    # what the rules promise, beyond "not raw, not silent"
    assert set(table["pages repeat (paging ignored)"].values()) == {"raised"}
    for case in ("ids twice", "overlapping pages", "promised field null", "total changes"):
        assert set(table[case].values()) == {"flagged"}, case
