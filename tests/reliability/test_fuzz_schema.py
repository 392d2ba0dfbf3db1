"""Schemathesis over every operation of /openapi.json, 20,000 requests and more, all checks.

The server is the sandbox with its quota gate lifted (``create_app(metered=False)``, a switch
only Python code can pass), so the generated requests reach the handlers instead of measuring
429s; keys and plans are still checked. A counting middleware tallies every request the server
answered by status, so the figures are the wire's, not the fuzzer's: at least ``MIN_REQUESTS``
requests and not one 5xx, and schemathesis' checks (status codes, content types, response
schemas, valid data accepted, invalid data refused, ``Allow`` headers) find nothing.

``_fuzz.py`` runs the plan (seven schemathesis runs against a server process of its own); it
is started by ``conftest.py`` when the session begins, so the fault tests and the soak run
while it fuzzes, and this test, collected last, waits for it.
"""

from __future__ import annotations

from concurrent.futures import Future

import pytest
from reliability._fuzz import FuzzResult

pytestmark = [pytest.mark.slow, pytest.mark.reliability]

MIN_REQUESTS = 20_000


@pytest.mark.timeout(1800)  # seven schemathesis runs; minutes on a shared 2-core machine
def test_twenty_thousand_fuzzed_requests_find_nothing(fuzz_job: Future[FuzzResult]) -> None:
    fuzz = fuzz_job.result()
    counts = fuzz.counts
    total = sum(counts.values())
    server_errors = sum(n for status, n in counts.items() if status >= 500)
    by_status = dict(sorted(counts.items()))
    figures = f"{total} requests in {fuzz.elapsed_s:.0f} s, by status {by_status}"
    print(figures)
    print(
        f"fuzz server CPU {fuzz.server_cpu_s:.0f} s; runs (s):",
        ", ".join(f"{o.run.name} {o.elapsed_s:.0f}" for o in fuzz.outcomes),
    )
    for outcome in fuzz.outcomes:
        run = f"schemathesis run {outcome.run.name} (seed {outcome.run.seed}):\n"
        assert outcome.returncode == 0, run + outcome.stdout[-6000:] + outcome.stderr[-2000:]
        assert "No issues found" in outcome.stdout or " passed" in outcome.stdout, (
            run + outcome.stdout[-3000:]
        )
    assert server_errors == 0, figures
    assert total >= MIN_REQUESTS, figures
