"""CHANGELOG.md has released versions, and the newest of them is the package's version.

The convention (CHANGELOG.md's preamble): ``[Unreleased]`` collects the wave under way;
``pyproject.toml``'s version is the newest released section, so a release renames
``[Unreleased]`` and sets the version in the same commit.
"""

from __future__ import annotations

import datetime
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).parents[2]
HEADING = re.compile(r"^## \[(?P<name>[^\]]+)\](?: - (?P<date>\S+))?\s*$", re.MULTILINE)
VERSION = re.compile(r"^\d+\.\d+\.\d+$")


def headings(text: str) -> list[tuple[str, str | None]]:
    """Each ``## [name] - date`` heading of a changelog: (name, date or None)."""
    return [(m["name"], m["date"]) for m in HEADING.finditer(text)]


def released(text: str) -> list[tuple[tuple[int, ...], datetime.date]]:
    """The released versions under ``[Unreleased]``, newest first: (version, date)."""
    found = headings(text)
    assert found, "no '## [...]' heading"
    assert found[0] == ("Unreleased", None), f"the first heading is {found[0]}"
    versions = []
    for name, date in found[1:]:
        assert VERSION.match(name), f"[{name}] is not a MAJOR.MINOR.PATCH version"
        assert date is not None, f"[{name}] has no date ('## [{name}] - YYYY-MM-DD')"
        versions.append((tuple(int(p) for p in name.split(".")), datetime.date.fromisoformat(date)))
    return versions


def test_the_parser_reads_headings_in_keep_a_changelog_style() -> None:
    text = "# Changelog\n\n## [Unreleased]\n\n### Added\n- x\n\n## [0.2.0] - 2026-11-25\n"
    assert headings(text + "\n## [0.1.0] - 2026-11-22\n") == [
        ("Unreleased", None),
        ("0.2.0", "2026-11-25"),
        ("0.1.0", "2026-11-22"),
    ]
    assert released(text) == [((0, 2, 0), datetime.date(2026, 11, 25))]


def test_released_versions_are_dated_and_newest_first() -> None:
    versions = released((ROOT / "CHANGELOG.md").read_text(encoding="utf-8"))
    assert versions, "no released version under [Unreleased]"
    numbers = [number for number, _ in versions]
    assert numbers == sorted(numbers, reverse=True)
    assert len(set(numbers)) == len(numbers)
    dates = [date for _, date in versions]
    assert dates == sorted(dates, reverse=True)


def test_the_newest_released_version_is_the_package_version() -> None:
    newest, _ = released((ROOT / "CHANGELOG.md").read_text(encoding="utf-8"))[0]
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert ".".join(map(str, newest)) == project["version"]
