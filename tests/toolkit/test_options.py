"""The settings a user passes are declared once (``_config.Options``): the signatures of
``connect``, ``Client`` and ``resolve_settings`` are held equal to it, so they cannot drift,
and their ``help()`` shows every setting with its meaning and variable."""

from __future__ import annotations

import inspect
import pydoc
from collections.abc import Callable
from dataclasses import MISSING, fields
from typing import Any

import pytest

import quantscope as qsc
from quantscope._config import Options, resolve_settings

POSITIONAL = ("url", "api_key")


@pytest.mark.parametrize(
    "function", [qsc.connect, qsc.Client.__init__, resolve_settings], ids=lambda f: f.__qualname__
)
def test_each_signature_is_the_declaration(function: Callable[..., Any]) -> None:
    params = [
        p for p in inspect.signature(function).parameters.values() if p.name not in ("self", "env")
    ]
    declared = fields(Options)
    assert [p.name for p in params] == [f.name for f in declared]
    for param, option in zip(params, declared, strict=True):
        assert option.default is not MISSING
        assert (param.default, param.annotation) == (option.default, option.type), param.name
        kind = param.POSITIONAL_OR_KEYWORD if param.name in POSITIONAL else param.KEYWORD_ONLY
        assert param.kind == kind, param.name


@pytest.mark.parametrize("thing", [qsc.connect, qsc.Client, resolve_settings])
def test_help_lists_every_setting_with_its_variable(thing: Any) -> None:
    text = pydoc.render_doc(thing, renderer=pydoc.plaintext)
    for option in fields(Options):
        assert f"{option.name}: {option.metadata['doc'][:30]}" in " ".join(text.split())
        if option.metadata["env"]:
            assert option.metadata["env"] in text


def test_the_declared_defaults_resolve_as_before() -> None:
    settings = resolve_settings(env={})
    assert (settings.offline, settings.progress, settings.timeout_s, settings.quota_reserve) == (
        False,
        True,
        30.0,
        0,
    )
    assert (settings.quota_share, settings.retry, settings.url) == (0.25, qsc.RetryPolicy(), None)
