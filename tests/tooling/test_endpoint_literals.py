"""Every endpoint path of the toolkit is written in one module, the registry's declarations
(``_routes``, re-exported by ``_endpoints``).

The sandbox implements the service and spells its own routes; everything else in
``src/quantscope`` takes a path from the registry, so knowing an endpoint is reading one
declaration (tests/toolkit/test_endpoints.py holds the registry equal to the sandbox's routes).
"""

from __future__ import annotations

from pathlib import Path

import quantscope

PACKAGE = Path(quantscope.__file__).parent
LITERAL = '"/api/'  # a string that starts with an endpoint path


def test_endpoint_paths_are_written_only_in_the_registry() -> None:
    found = [
        f"{path.relative_to(PACKAGE)}:{number}: {line.strip()}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if "sandbox" not in path.relative_to(PACKAGE).parts and path.name != "_routes.py"
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if LITERAL in line or LITERAL.replace('"', "'") in line
    ]
    assert found == []


def test_the_registry_holds_the_paths() -> None:
    assert LITERAL in (PACKAGE / "_routes.py").read_text()
