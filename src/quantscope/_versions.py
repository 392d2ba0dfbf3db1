"""Which versions of a dependency the toolkit's uses of its internals were verified on.

A private attribute of a dependency is read only on a verified range of its versions; any
other version takes the dependency's public way, with the same answers (docs/architecture.md,
"Private internals"; tests/tooling/test_private_internals.py lists every such use). The
sandbox keeps its own copy of ``within`` (``sandbox/versions.py``): the two halves share no
module.
"""

from __future__ import annotations

from importlib import metadata

__all__ = ["Span", "installed_within", "within"]

Span = tuple[tuple[int, int], tuple[int, int]]  # [from, to) as (major, minor)

#: pandas versions whose private helpers ``_frames`` (``dicts_to_array``) and ``_arrowframe``
#: (``DatetimeArray._simple_new``) were verified on; pandas itself is not capped (a research
#: environment shares it with everything), so any other version takes the public way.
VERIFIED_PANDAS: Span = ((2, 2), (3, 2))


def within(version: str, span: Span) -> bool:
    """Whether ``version`` (``"1.3.3"``) lies in ``span``; False for one that does not parse."""
    try:
        found = tuple(int(part) for part in version.split(".")[:2])
    except ValueError:
        return False
    low, high = span
    return len(found) == 2 and low <= found < high


def installed_within(distribution: str, span: Span) -> bool:
    """Whether the installed ``distribution`` is a version in ``span``."""
    try:
        return within(metadata.version(distribution), span)
    except metadata.PackageNotFoundError:
        return False
