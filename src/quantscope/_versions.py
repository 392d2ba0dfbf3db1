"""quantscope's own version, and which versions of a dependency its internals were verified on.

``QUANTSCOPE_VERSION`` is the installed distribution's version (``importlib.metadata``), so
modules that record it (bundles, reports, ``--version``) read it here rather than from the
package above them; a source tree that is not installed reads ``pyproject.toml`` beside it.

A private attribute of a dependency is read only on a verified range of its versions; any
other version takes the dependency's public way, with the same answers (docs/architecture.md,
"Private internals"; tests/tooling/test_private_internals.py lists every such use). The
sandbox keeps its own copy of ``within`` (``sandbox/versions.py``): the two halves share no
module.
"""

from __future__ import annotations

import tomllib
from functools import cache
from importlib import metadata
from pathlib import Path

__all__ = [
    "QUANTSCOPE_VERSION",
    "UNKNOWN_VERSION",
    "Span",
    "installed_within",
    "own_version",
    "within",
]

#: what ``own_version`` answers when neither an installed distribution nor a source tree's
#: ``pyproject.toml`` names the version (a PEP 440 local version that sorts below any release)
UNKNOWN_VERSION = "0+unknown"

Span = tuple[tuple[int, int], tuple[int, int]]  # [from, to) as (major, minor)

#: pandas versions whose private helpers ``_typed.frames`` (``dicts_to_array``) and
#: ``_typed.arrowframe`` (``DatetimeArray._simple_new``) were verified on; pandas itself is not
#: capped (a research environment shares it with everything), so any other version takes the public
#: way.
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
    version = _installed(distribution)
    return version is not None and within(version, span)


@cache
def _installed(distribution: str) -> str | None:
    """The installed version of ``distribution`` (None: not installed), read once per process:
    every HTTP cache a client opens asks, and each read scans the package metadata.
    """
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def own_version(pyproject: Path = Path(__file__).parents[2] / "pyproject.toml") -> str:
    """quantscope's version: the installed distribution's, else the source tree's ``pyproject``.

    Running from a checkout on ``PYTHONPATH`` without installing it has no distribution
    metadata; the ``[project]`` table of the ``pyproject.toml`` two levels above the package
    then answers, and ``UNKNOWN_VERSION`` where there is none either.
    """
    try:
        return metadata.version("quantscope")
    except metadata.PackageNotFoundError:
        pass
    try:
        project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
    except (OSError, tomllib.TOMLDecodeError):
        return UNKNOWN_VERSION
    if project.get("name") != "quantscope" or not isinstance(project.get("version"), str):
        return UNKNOWN_VERSION
    return str(project["version"])


QUANTSCOPE_VERSION = own_version()
