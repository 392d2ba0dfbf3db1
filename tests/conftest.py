"""Shared fixtures: a built sandbox world, servers over copies of it, and keyed HTTP sessions.

* ``sandbox_world``: the seed-7, scale-1 world, built once per session. Never serve it directly:
  servers run over copies, so it stays pristine.
* ``sandbox``: one server for the whole session (read-only tests). Its quota counters are reset
  before every test (``_fresh_quota``), so each test starts with the plan's full daily limit.
* ``fresh_sandbox``: ``fresh_sandbox(clock=None, setup_app=None)`` starts a server over a new
  copy, for tests that write or spend quota; stopped at teardown. ``setup_app(app)`` may mount
  test-only routes before it serves.
* ``own_sandbox``: a server of the test module's own, over a new copy (module scope), for
  modules that spend much quota or write.
* ``api``: ``api(plan="enterprise", server=None)`` is an ``ApiSession`` (``_helpers.http``) with
  that plan's X-API-Key that takes paths: ``api("basic").get("/api/trades", params=...)``.
* ``client``: a quantscope Client on ``sandbox`` (enterprise key) with a cache of the test's
  own. ``module_client``: the same with one cache for the whole module, for modules that load
  a frame once and check it many ways (each page is fetched once per module).
* ``research_client``: like ``module_client``, but its cache starts as a copy of what the
  research modules before it in this worker fetched from ``sandbox``, and hands what it adds
  on to the next one (``_research_cache``). The research modules each load thousands of eval
  details of the same trades: each worker fetches them over HTTP once, not once per module.
* ``client_for``: ``client_for(server, plan="enterprise")`` is a quantscope Client on that
  server with a cache of the test's own; closed at teardown.
* ``serve``: ``serve(handler, **kwargs)`` starts a scripted ``FakeService`` (``_helpers``) on
  loopback, for faults the sandbox cannot produce; stopped at teardown.
* ``widget_data``: the widget tests' quant's trades and eval details (``_helpers.WidgetData``),
  loaded once per session over HTTP (through ``_research_cache``: they are research's too).

``make test`` runs on every core with pytest-xdist (``-n auto``): each worker is a session of
its own (its own world, servers, sandbox and cache directories); ``worker_group`` below says
which tests share a worker.
"""

from __future__ import annotations

import atexit
import importlib
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from _helpers import (
    QUANT,
    ApiSession,
    FakeService,
    Seen,
    WidgetData,
    reset_quota,
    start_fake,
)
from fastapi import FastAPI

import quantscope.loaders as L
from quantscope._http.client import Client
from quantscope.sandbox.app import create_app
from quantscope.sandbox.datadir import WorldInfo, copy_world, ensure_world
from quantscope.sandbox.serve import SandboxServer

# Tests and notebook kernels (nbval runs them with this environment) never touch the user's
# sandbox world or HTTP cache: each pytest session gets fresh ones, so a notebook that writes
# (applies a recommendation) finds the pristine world on every run, and outputs stay stable.
_SESSION_DIR = Path(tempfile.mkdtemp(prefix="quantscope-tests-"))
atexit.register(shutil.rmtree, _SESSION_DIR, ignore_errors=True)
os.environ["QUANTSCOPE_SANDBOX_DIR"] = str(_SESSION_DIR / "sandbox")
os.environ["QUANTSCOPE_CACHE_DIR"] = str(_SESSION_DIR / "cache")
os.environ["QUANTSCOPE_PROGRESS"] = "0"
os.environ["MPLBACKEND"] = "Agg"
# On a fresh machine matplotlib's first import builds its font cache and says so on stderr:
# do it here, so no notebook kernel's first plot prints that (nbval compares stderr too).
importlib.import_module("matplotlib.font_manager")
for _name in ("QUANTSCOPE_URL", "QUANTSCOPE_API_KEY"):  # never a real service from tests
    os.environ.pop(_name, None)


# Modules whose tests share no costly module fixture and together outweigh a worker's share:
# each of their tests is a group of its own, so the workers split them (the benchmarks' smoke
# runs were 17 % of the suite, all in one worker).
SPLIT_BY_TEST = frozenset({"tests/tooling/test_benchmarks_smoke.py"})
# The research modules load the eval details of the same ~3,200 trades (``research_client``):
# one worker runs them all, so they are fetched over HTTP once in the whole run (~20 s each).
RESEARCH = frozenset(
    f"tests/toolkit/test_backtest_{name}.py"
    for name in ("replay_default", "rank_sandbox", "screen_sandbox", "sandbox")
)


def worker_group(nodeid: str) -> str:
    """Under pytest-xdist, the tests that run in one worker, in their order: a test module's
    (its module fixtures are built once), every notebook's cells (one kernel per notebook, all
    on one embedded sandbox world, as in a plain run), every browser test (one Voila, one
    Chromium, last in their worker: tests/browser/conftest.py) and the RESEARCH modules (one
    warm ``research_client`` cache). A module of SPLIT_BY_TEST hands out each test alone."""
    path = nodeid.partition("::")[0]
    if path.startswith("tests/browser/"):
        return "browser"
    if path.endswith(".ipynb"):
        return "notebooks"
    if path in SPLIT_BY_TEST:
        return nodeid.partition("[")[0]
    if path in RESEARCH:
        return "research"
    return path


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Work is handed out by ``worker_group`` (xdist's ``loadgroup`` renames node ids, which
    pytest 9 no longer lets a plugin do)."""
    from xdist.scheduler import LoadScopeScheduling

    class ByGroup(LoadScopeScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            return worker_group(nodeid)

    return ByGroup(config, log)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In an xdist worker, the notebooks first: the longest group starts while the other
    workers take the test modules (the browser tests stay last: tests/browser/conftest.py)."""
    if not hasattr(config, "workerinput"):
        return
    notebooks = [item for item in items if worker_group(item.nodeid) == "notebooks"]
    rest = [item for item in items if worker_group(item.nodeid) != "notebooks"]
    items[:] = notebooks + rest


@pytest.fixture(scope="session")
def sandbox_world(tmp_path_factory: pytest.TempPathFactory) -> WorldInfo:
    return ensure_world(tmp_path_factory.mktemp("world"), seed=7, scale=1)


@pytest.fixture(scope="session")
def sandbox(
    sandbox_world: WorldInfo, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SandboxServer]:
    info = copy_world(sandbox_world, tmp_path_factory.mktemp("sandbox"))
    with SandboxServer(info) as server:
        yield server


@pytest.fixture(scope="module")
def own_sandbox(
    sandbox_world: WorldInfo,
    tmp_path_factory: pytest.TempPathFactory,
    request: pytest.FixtureRequest,
) -> Iterator[SandboxServer]:
    name = request.module.__name__.rpartition(".")[2]
    info = copy_world(sandbox_world, tmp_path_factory.mktemp(name))
    with SandboxServer(info) as server:
        yield server


@pytest.fixture(autouse=True)
def _fresh_quota(request: pytest.FixtureRequest) -> None:
    """Give every test the full daily quota on the shared server (tests must not starve each other).

    Only when the test already uses the shared ``sandbox``: others should not start it.
    """
    if "sandbox" not in request.fixturenames:
        return
    reset_quota(request.getfixturevalue("sandbox"))


FreshSandbox = Callable[..., SandboxServer]


@pytest.fixture
def fresh_sandbox(
    sandbox_world: WorldInfo, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[FreshSandbox]:
    servers: list[SandboxServer] = []

    def start(
        clock: Callable[[], datetime] | None = None,
        setup_app: Callable[[FastAPI], None] | None = None,
    ) -> SandboxServer:
        info = copy_world(sandbox_world, tmp_path_factory.mktemp("fresh"))
        app = None
        if setup_app is not None:
            app = create_app(info, clock=clock)
            setup_app(app)
        server = SandboxServer(info, clock=clock, app=app)
        servers.append(server)
        return server.start()

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def api(sandbox: SandboxServer) -> Iterator[Callable[..., ApiSession]]:
    sessions: list[ApiSession] = []

    def session(plan: str | None = "enterprise", server: SandboxServer | None = None) -> ApiSession:
        """A session for ``plan``'s key (None: no key) on ``server`` (default: ``sandbox``)."""
        target = sandbox if server is None else server
        made = ApiSession(target.url, None if plan is None else target.keys[plan])
        sessions.append(made)
        return made

    yield session
    for made in sessions:
        made.close()


@pytest.fixture
def client_for(tmp_path: Path) -> Iterator[Callable[..., Client]]:
    made: list[Client] = []

    def make(server: SandboxServer, plan: str = "enterprise") -> Client:
        c = Client(server.url, server.keys[plan], cache_dir=str(tmp_path), progress=False)
        made.append(c)
        return c

    yield make
    for c in made:
        c.close()


@pytest.fixture
def client(sandbox: SandboxServer, client_for: Callable[..., Client]) -> Client:
    return client_for(sandbox)


@pytest.fixture(scope="module")
def module_client(
    sandbox: SandboxServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Client]:
    cache = tmp_path_factory.mktemp("module-cache")
    with Client(sandbox.url, sandbox.keys["enterprise"], cache_dir=str(cache), progress=False) as c:
        yield c


@pytest.fixture(scope="session")
def _research_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The HTTP and frame cache the research modules of this worker have filled so far from
    ``sandbox`` (read-only: its answers never go stale). Only ``research_client`` (between
    modules) and ``widget_data`` write it."""
    return tmp_path_factory.mktemp("research") / "cache"


@contextmanager
def _borrowed(server: SandboxServer, shared: Path, cache: Path) -> Iterator[Client]:
    """A client on ``server`` whose cache ``cache`` starts as a copy of ``shared``; at the end
    ``shared`` becomes a copy of it (all it held, and what this client added)."""
    if shared.exists():
        shutil.copytree(shared, cache, dirs_exist_ok=True)
    with Client(server.url, server.keys["enterprise"], cache_dir=str(cache), progress=False) as c:
        yield c
    # Closed client: no open SQLite file. A copy left half-done is only misses for the next.
    shutil.rmtree(shared, ignore_errors=True)
    shutil.copytree(cache, shared)


@pytest.fixture(scope="module")
def research_client(
    sandbox: SandboxServer, _research_cache: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Client]:
    cache = tmp_path_factory.mktemp("research-client") / "cache"
    with _borrowed(sandbox, _research_cache, cache) as c:
        yield c


@pytest.fixture
def serve() -> Iterator[Callable[..., FakeService]]:
    servers: list[ThreadingHTTPServer] = []

    def start(handler: Callable[[Seen], Any], **kwargs: Any) -> FakeService:
        service = FakeService(handler, **kwargs)
        servers.append(start_fake(service))
        return service

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="session")
def widget_data(
    sandbox: SandboxServer, _research_cache: Path, tmp_path_factory: pytest.TempPathFactory
) -> WidgetData:
    """``QUANT``'s executed trades and the details of its closed buys (one eval-details request
    per closed trade), loaded once for the widget test modules."""
    reset_quota(sandbox)  # session fixtures run before the autouse reset
    cache = tmp_path_factory.getbasetemp() / "widgets-cache"
    with _borrowed(sandbox, _research_cache, cache) as c:  # the same details as research's
        trades = L.load_trades(QUANT, client=c)
        closed = trades[(trades["status"] == "Closed").to_numpy(bool)]
        ids = [int(i) for i in closed["evaluation_id"].dropna().unique()]
        return WidgetData(trades, L.load_eval_details(ids, client=c))
