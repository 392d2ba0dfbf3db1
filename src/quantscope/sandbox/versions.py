"""Which versions of a dependency the sandbox's uses of its internals were verified on.

``httpguard`` (uvicorn's h11 protocol) and ``fastsolve`` (FastAPI's parameter helpers) read a
dependency's private internals only on a verified range of its versions and take the
dependency's public way on any other (docs/architecture.md, "Private internals").
"""

from __future__ import annotations

__all__ = ["Span", "within"]

Span = tuple[tuple[int, int], tuple[int, int]]  # [from, to) as (major, minor)


def within(version: str, span: Span) -> bool:
    """Whether ``version`` (``"0.54.1"``) lies in ``span``; False for one that does not parse."""
    try:
        found = tuple(int(part) for part in version.split(".")[:2])
    except ValueError:
        return False
    low, high = span
    return len(found) == 2 and low <= found < high
