"""A 60-second mixed soak of the sandbox server: no error, and its memory stays bounded.

Four clients loop for ``SOAK_S`` seconds over a mix of pages, details, playbook writes,
analyses and applications on a server process of its own (quota gate lifted, so the soak
measures the server, not 429s); ``_soak.py`` runs them, started by ``conftest.py`` when the
session begins, so the minute passes while the fuzz and the fault tests run. Every answer must
be 2xx or an expected 404/409 (an application that another client superseded or applied
first), and the server's resident memory at the end may exceed what it was after a warm-up by
at most ``MAX_RSS_GROWTH`` bytes beyond what the server's bounded caches may hold
(``RenderedItems``' cap: a minute of pages can fill it), and grow by at most
``MAX_LATE_GROWTH`` over the second half of the minute (a leak grows with the requests served;
a cache filling up levels off).
"""

from __future__ import annotations

from concurrent.futures import Future

import pytest
from reliability._soak import SOAK_S, SoakResult

from quantscope.sandbox.rendered import RenderedItems

pytestmark = [pytest.mark.slow, pytest.mark.reliability]

MAX_RSS_GROWTH = 64 * 2**20
MAX_LATE_GROWTH = 32 * 2**20
CACHE_CAPS = RenderedItems().max_bytes


def test_a_minute_of_mixed_load_gives_no_error_and_bounded_memory(
    soak_job: Future[SoakResult],
) -> None:
    soak = soak_job.result()
    seen = soak.seen
    growth, late = soak.rss_after - soak.rss_before, soak.rss_after - soak.rss_half
    print(
        f"soak: {sum(seen.values())} requests in {SOAK_S:.0f} s, RSS "
        f"{soak.rss_before / 2**20:.1f} -> {soak.rss_half / 2**20:.1f} (half-way) -> "
        f"{soak.rss_after / 2**20:.1f} MiB, server CPU {soak.server_cpu_s:.0f} s"
    )
    assert not soak.cancelled, "the soak was cancelled before its minute was over"
    assert set(seen) == {"ok"}, seen
    assert growth <= MAX_RSS_GROWTH + CACHE_CAPS, f"RSS grew {growth / 2**20:.1f} MiB"
    assert late <= MAX_LATE_GROWTH, f"RSS grew {late / 2**20:.1f} MiB in the second half"
    assert soak.health == "ok"
