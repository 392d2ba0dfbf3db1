"""The reliability suite's two long jobs, started when the session begins, joined by their tests.

The fuzz (``_fuzz.py``, about three minutes of schemathesis against a server process) and the
soak (``_soak.py``, a minute of four clients against another) each run in a thread of their own
from the first reliability test on, while the fault tests run in the foreground: the fuzz
leaves part of a core idle and the soak mostly waits. Their tests (``JOINERS``) are moved after
the suite's other tests and assert on the jobs' results, so a failure still names what failed.
A job starts only if its test was selected; jobs still running when the session ends are
cancelled (their server and schemathesis processes killed).
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest
from reliability._fuzz import FuzzJob, FuzzResult
from reliability._soak import SoakJob, SoakResult

from quantscope.sandbox.datadir import WorldInfo

HERE = Path(__file__).parent
# the tests that wait for a job, in the order they run (the shorter job first)
JOINERS = (
    "test_a_minute_of_mixed_load_gives_no_error_and_bounded_memory",
    "test_twenty_thousand_fuzzed_requests_find_nothing",
)


# the browser page, once the jobs are joined (nothing else runs then: its time is printed)
QUIET = ("test_the_first_panels_page_shows_the_panels_and_their_effects",)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Move the joining tests after this directory's other tests, and the browser page after them
    (the rest keeps its order)."""
    ours = [i for i, item in enumerate(items) if HERE in Path(item.path).parents]
    joiners = [items[i] for i in ours if items[i].name in JOINERS]
    quiet = [items[i] for i in ours if items[i].name in QUIET]
    if not joiners and not quiet:
        return
    for item in (*joiners, *quiet):
        items.remove(item)
    last = max((i for i, item in enumerate(items) if HERE in Path(item.path).parents), default=-1)
    joiners.sort(key=lambda item: JOINERS.index(item.name))
    items[last + 1 : last + 1] = [*joiners, *quiet]


class Jobs:
    """The background jobs of this session: a future for each one started."""

    def __init__(self) -> None:
        self.fuzz: Future[FuzzResult] | None = None
        self.soak: Future[SoakResult] | None = None


@pytest.fixture(scope="session", autouse=True)
def background_jobs(
    request: pytest.FixtureRequest,
    sandbox_world: WorldInfo,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Jobs]:
    selected = {item.name for item in request.session.items}
    jobs = Jobs()
    fuzz = FuzzJob(sandbox_world, tmp_path_factory.mktemp("fuzz"))
    soak = SoakJob(sandbox_world, tmp_path_factory.mktemp("soak"))
    with ThreadPoolExecutor(2, thread_name_prefix="reliability-job") as pool:
        if JOINERS[0] in selected:
            jobs.soak = pool.submit(soak)
        if JOINERS[1] in selected:
            jobs.fuzz = pool.submit(fuzz)
        try:
            yield jobs
        finally:
            soak.cancel()
            fuzz.cancel()


@pytest.fixture
def fuzz_job(background_jobs: Jobs) -> Future[FuzzResult]:
    assert background_jobs.fuzz is not None, "the fuzz was not started (its test not selected?)"
    return background_jobs.fuzz


@pytest.fixture
def soak_job(background_jobs: Jobs) -> Future[SoakResult]:
    assert background_jobs.soak is not None, "the soak was not started (its test not selected?)"
    return background_jobs.soak
