"""Settings resolution (argument, env, default), the retry schedule, and the embedded sandbox."""

from __future__ import annotations

from pathlib import Path

import pytest

import quantscope._http.embedded as embedded_mod
from quantscope._config import RetryPolicy, resolve_settings
from quantscope._errors import ConfigurationError, SandboxUnavailableError
from quantscope._http.client import Client, connect, get_default_client, set_default_client

KEY = "qs-test-key-0123456789abcdef"


def test_arguments_win_over_environment(tmp_path: Path) -> None:
    env = {
        "QUANTSCOPE_URL": "https://env.example",
        "QUANTSCOPE_API_KEY": "env-key",
        "QUANTSCOPE_CACHE_DIR": "/env/cache",
        "QUANTSCOPE_PROGRESS": "0",
        "QUANTSCOPE_QUOTA_SHARE": "0.9",
    }
    s = resolve_settings(
        "https://arg.example/", KEY, cache_dir=tmp_path, progress=True, quota_share=0.5, env=env
    )
    assert (s.url, s.api_key, s.cache_dir, s.progress, s.quota_share) == (
        "https://arg.example",
        KEY,
        tmp_path,
        True,
        0.5,
    )
    assert set(s.sources.values()) == {"argument"}


def test_the_quota_share_comes_from_the_environment_and_must_be_a_fraction() -> None:
    env = {"QUANTSCOPE_QUOTA_SHARE": "0.1"}
    assert resolve_settings(env=env).quota_share == 0.1
    assert resolve_settings(env={}).quota_share == 0.25
    for bad in ("0", "1.5", "half"):
        with pytest.raises(ConfigurationError, match="QUANTSCOPE_QUOTA_SHARE must be a fraction"):
            resolve_settings(env={"QUANTSCOPE_QUOTA_SHARE": bad})


def test_environment_wins_over_defaults() -> None:
    env = {
        "QUANTSCOPE_URL": " https://env.example/base/ ",
        "QUANTSCOPE_API_KEY": "env-key",
        "QUANTSCOPE_CACHE_DIR": "/env/cache",
        "QUANTSCOPE_PROGRESS": "false",
    }
    s = resolve_settings(env=env)
    assert s.url == "https://env.example/base"
    assert s.api_key == "env-key"
    assert s.cache_dir == Path("/env/cache")
    assert s.progress is False
    assert s.sources["QUANTSCOPE_URL"] == "env QUANTSCOPE_URL"
    assert s.service_id == "https://env.example/base"


def test_defaults_without_anything() -> None:
    s = resolve_settings(env={})
    assert s.url is None
    assert s.api_key is None
    assert s.progress is True
    assert s.offline is False
    assert s.quota_reserve == 0
    assert s.cache_dir.name == "quantscope"
    assert s.cache_path == s.cache_dir / "http_cache.sqlite"


@pytest.mark.parametrize(
    ("text", "expected"),
    [("0", False), ("no", False), ("1", True), ("TRUE", True), ("on", True), ("off", False)],
)
def test_progress_flag_from_env(text: str, expected: bool) -> None:
    assert resolve_settings(env={"QUANTSCOPE_PROGRESS": text}).progress is expected


def test_bad_progress_flag_names_the_variable() -> None:
    with pytest.raises(ConfigurationError, match="QUANTSCOPE_PROGRESS must be 0/1/true/false"):
        resolve_settings(env={"QUANTSCOPE_PROGRESS": "maybe"})


def test_url_without_key_is_refused_with_instructions() -> None:
    with pytest.raises(ConfigurationError, match="set QUANTSCOPE_API_KEY"):
        resolve_settings(env={"QUANTSCOPE_URL": "https://x.example"})


def test_key_without_url_is_refused_so_a_real_key_never_reaches_the_sandbox() -> None:
    with pytest.raises(ConfigurationError, match="no service URL") as info:
        resolve_settings(env={"QUANTSCOPE_API_KEY": KEY})
    assert KEY not in str(info.value)


@pytest.mark.parametrize("url", ["ftp://x", "localhost:8000", "https://x.example/?a=1"])
def test_malformed_url_is_refused(url: str) -> None:
    with pytest.raises(ConfigurationError, match="service URL"):
        resolve_settings(url, KEY, env={})


def test_repr_never_shows_the_key(tmp_path: Path) -> None:
    s = resolve_settings("https://x.example", KEY, cache_dir=tmp_path, env={})
    assert KEY not in repr(s)
    assert KEY not in str(s)
    assert s.has_api_key


def test_numeric_settings_are_checked() -> None:
    with pytest.raises(ConfigurationError, match="quota_reserve"):
        resolve_settings(quota_reserve=-1, env={})
    with pytest.raises(ConfigurationError, match="timeout_s"):
        resolve_settings(timeout_s=0, env={})
    with pytest.raises(ConfigurationError, match="max_retries"):
        RetryPolicy(max_retries=-1)


def test_backoff_doubles_is_capped_and_honours_retry_after() -> None:
    policy = RetryPolicy(backoff_base_s=0.5, backoff_max_s=3.0)
    assert [policy.backoff(a) for a in range(5)] == [0.5, 1.0, 2.0, 3.0, 3.0]
    assert policy.backoff(0, retry_after=7.0) == 7.0
    assert policy.backoff(2, retry_after=1.0) == 2.0


def test_no_default_client_tells_the_user_to_connect() -> None:
    set_default_client(None)
    with pytest.raises(ConfigurationError, match=r"call qsc\.connect\(\) first"):
        get_default_client()


def test_missing_sandbox_extra_names_the_install_command(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    real = embedded_mod.importlib.util.find_spec
    monkeypatch.setattr(
        embedded_mod.importlib.util,
        "find_spec",
        lambda name, *a: None if name == "uvicorn" else real(name, *a),
    )
    for name in ("QUANTSCOPE_URL", "QUANTSCOPE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(SandboxUnavailableError, match=r'pip install "quantscope\[sandbox\]"'):
        Client(cache_dir=str(tmp_path))


def test_connect_without_url_starts_the_embedded_sandbox_once(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    sandbox_world: object,
) -> None:
    from quantscope.sandbox.datadir import copy_world

    world = copy_world(sandbox_world, tmp_path / "world")  # type: ignore[arg-type]
    monkeypatch.setenv("QUANTSCOPE_SANDBOX_DIR", str(world.data_dir))
    for name in ("QUANTSCOPE_URL", "QUANTSCOPE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(embedded_mod, "_EMBEDDED", None)
    try:
        client = connect(cache_dir=str(tmp_path / "cache"), progress=False)
        again = connect(cache_dir=str(tmp_path / "cache"), progress=False)
        lines = capsys.readouterr().out.splitlines()
        assert lines == [
            "quantscope: no service URL configured; started the embedded sandbox "
            "(seed 7, enterprise plan)",
            "quantscope: no service URL configured; using the embedded sandbox "
            "(seed 7, enterprise plan)",
        ]
        assert get_default_client() is again
        assert client.settings.api_key == world.keys["enterprise"]
        assert client.base_url == again.base_url
        assert client.settings.service_id == "embedded-sandbox:seed=7:scale=1"
        assert world.keys["enterprise"] not in repr(client)
        online = client.get("/api/trades/stats", {"quantId": 1})
        assert online.provenance.service == "embedded sandbox (seed 7, scale 1, enterprise plan)"
        # Offline there is no server and no port, yet the cache finds what the online client
        # stored: entries are keyed on the world, not on the server's address.
        offline = connect(cache_dir=str(tmp_path / "cache"), offline=True)
        assert capsys.readouterr().out == (
            "quantscope: no service URL configured; offline, from the cache of the embedded "
            "sandbox (seed 7, enterprise plan)\n"
        )
        cached = offline.get("/api/trades/stats", {"quantId": 1})
        assert cached.provenance.from_cache
        assert cached.data == online.data
        for made in (client, again, offline):
            made.close()
    finally:
        embedded_mod.stop_embedded_sandbox()
        set_default_client(None)


def test_the_catalog_comes_from_the_environment_unless_a_service_is_named() -> None:
    """A notebook that calls ``qsc.connect()`` re-runs on a catalog (a bundle's) unchanged."""
    s = resolve_settings(env={"QUANTSCOPE_CATALOG": "study/"})
    assert (s.catalog, s.url, s.api_key, s.service) == ("study/", "catalog:study/", None, "catalog")
    named = resolve_settings("http://example.test", "k", env={"QUANTSCOPE_CATALOG": "study/"})
    assert named.catalog is None
    assert named.url == "http://example.test"
    with pytest.raises(ConfigurationError, match="both QUANTSCOPE_URL and QUANTSCOPE_CATALOG"):
        resolve_settings(env={"QUANTSCOPE_CATALOG": "study/", "QUANTSCOPE_URL": "http://x.test"})
