"""``quantscope.audit`` beside the loaders: the audited apply against the sandbox, the PUT rules
checked before sending, and the old import path ``quantscope.widgets.audit`` that warns."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path

import pytest
from _helpers import QUANT, service_playbook, value_of

import quantscope as qs
import quantscope.loaders as L
from quantscope import audit
from quantscope._changes import check_change
from quantscope._http.client import Client
from quantscope.sandbox.serve import SandboxServer


def test_apply_recommendation_verified_logs_what_the_plain_call_does_not(
    fresh_sandbox: Callable[..., SandboxServer],
    client_for: Callable[..., Client],
    tmp_path: Path,
) -> None:
    assert audit.apply_recommendation_verified is not qs.apply_recommendation
    server = fresh_sandbox()
    client = client_for(server)
    log = audit.AuditLog(tmp_path / "log.jsonl")
    top = L.load_recommendations(QUANT, applied=False, client=client).iloc[0]
    config_id = str(top["config_id"])
    old, new = float(top["old_threshold"]), float(top["new_threshold"])

    written = audit.apply_recommendation_verified(QUANT, top, client=client, log=log)

    assert float(value_of(service_playbook(server), config_id)) == new
    (entry,) = written.entries
    assert written.verified
    assert entry.verified
    assert log.entries() == [entry]
    assert (entry.action, entry.config_id, entry.field) == (
        "recommendation",
        config_id,
        "threshold",
    )
    assert (entry.old_value, entry.new_value) == (old, new)
    assert entry.recommendation_id == int(top["recommendation_id"])
    assert float(value_of(written.playbook, config_id)) == new

    audit.undo(entry, client=client, log=log)
    assert float(value_of(service_playbook(server), config_id)) == old
    with pytest.raises(qs.UndoRefusedError, match="already undone"):
        audit.undo(entry, client=client, log=log)


def test_check_change_names_what_the_service_would_refuse(
    sandbox: SandboxServer, client_for: Callable[..., Client]
) -> None:
    playbook = L.load_playbook(QUANT, client=client_for(sandbox))
    ranged = playbook[playbook["range_max"].notna()].iloc[0]
    low, high = float(ranged["range_min"]), float(ranged["range_max"])
    where = f"{ranged['criterion']} ({ranged['market_cap_class']} {ranged['config_type']})"
    assert check_change(ranged, "threshold", (low + high) / 2) is None
    assert check_change(ranged, "threshold", high + 1) == (
        f"{where} threshold must lie in its range [{low:.6g}, {high:.6g}], got {high + 1:.6g}"
    )
    assert check_change(ranged, "weight", -1) == f"{where} weight must be >= 0, got -1"
    assert check_change(ranged, "required", 1) == f"{where} required must be True or False"


def test_the_old_widgets_audit_path_still_works_and_warns() -> None:
    old = importlib.import_module("quantscope.widgets.audit")
    for name in audit.__all__:
        with pytest.warns(DeprecationWarning, match=rf"use quantscope\.audit\.{name}$"):
            assert getattr(old, name) is getattr(audit, name)
    with pytest.warns(DeprecationWarning, match=r"apply_recommendation_verified$"):
        assert old.apply_recommendation is audit.apply_recommendation_verified
    with pytest.warns(DeprecationWarning, match=r"use quantscope\.UndoRefusedError$"):
        assert old.UndoRefusedError is qs.UndoRefusedError
    with pytest.warns(DeprecationWarning, match=r"use quantscope\.audit\.Change$"):
        from quantscope.widgets.audit import Change  # the usual spelling warns too
    assert Change is audit.Change
    with pytest.raises(AttributeError, match="has no attribute 'nothing'"):
        _ = old.nothing
