"""Compare-and-swap writes against the sandbox: every write re-reads the entries it changes
and refuses (nothing written, nothing logged) when one no longer holds the value the caller
saw; ``force=True`` overrides; undo never restores over a change it did not make."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
from _helpers import QUANT, other_client, quota_left, service_playbook, smart_money, value_of

import quantscope as qs
import quantscope.loaders as L
from quantscope import audit
from quantscope._http.client import Client
from quantscope.sandbox.serve import SandboxServer


def test_a_stale_write_is_refused_naming_both_values_and_force_overrides(
    fresh_sandbox: Callable[..., SandboxServer],
    client_for: Callable[..., Client],
    tmp_path: Path,
) -> None:
    server = fresh_sandbox()
    client = client_for(server)
    log = audit.AuditLog(tmp_path / "log.jsonl")
    seen = L.load_playbook(QUANT, client=client)  # cached: the view the user works from
    row = smart_money(seen)
    config_id, old = str(row["config_id"]), float(row["threshold"])
    with other_client(server, tmp_path) as other:  # someone else moves it meanwhile
        L.update_playbook(QUANT, [{"config_id": config_id, "value": old + 1.09}], client=other)
    original = service_playbook(server)
    change = audit.Change.of(row, "threshold", old + 2)

    with pytest.raises(qs.StaleWriteError) as refused:
        audit.write_changes(QUANT, [change], client=client, log=log)
    assert str(refused.value) == (
        f"stale write refused, nothing was written: smart_money_buys (DEGEN_CAP BUYING) "
        f"threshold is now {old + 1.09:.6g}, you saw {old:.6g}. Reload before writing, or "
        "pass force=True to overwrite."
    )
    assert isinstance(refused.value, qs.WriteRefusedError)
    ((stale_change, current),) = refused.value.stale
    assert stale_change == change
    assert current == old + 1.09
    assert refused.value.playbook is not None  # the playbook as the check read it
    assert float(value_of(refused.value.playbook, config_id)) == old + 1.09
    pd.testing.assert_frame_equal(service_playbook(server), original, check_like=True)
    assert log.entries() == []

    # force: written, and the log holds the value it replaced, not the one the user saw
    written = audit.write_changes(QUANT, [change], client=client, log=log, force=True)
    (entry,) = written.entries
    assert written.verified
    assert (entry.old_value, entry.new_value) == (old + 1.09, old + 2)
    assert float(value_of(service_playbook(server), config_id)) == old + 2


def test_a_write_costs_the_check_the_put_and_the_read_back(
    fresh_sandbox: Callable[..., SandboxServer],
    client_for: Callable[..., Client],
    tmp_path: Path,
) -> None:
    server = fresh_sandbox()
    client = client_for(server)
    row = smart_money(L.load_playbook(QUANT, client=client))
    left = quota_left(server, "enterprise")
    written = audit.write_changes(
        QUANT,
        [audit.Change.of(row, "threshold", float(row["threshold"]) + 1)],
        client=client,
        log=audit.AuditLog(tmp_path / "log.jsonl"),
    )
    assert written.verified
    assert quota_left(server, "enterprise") == left - 3  # the check never comes from the cache


def test_update_playbook_checks_what_the_changes_say_was_seen(
    fresh_sandbox: Callable[..., SandboxServer],
    client_for: Callable[..., Client],
    tmp_path: Path,
) -> None:
    server = fresh_sandbox()
    client = client_for(server)
    row = smart_money(L.load_playbook(QUANT, client=client))
    config_id, old = str(row["config_id"]), float(row["threshold"])
    with other_client(server, tmp_path) as other:
        L.update_playbook(QUANT, [{"config_id": config_id, "value": old + 1}], client=other)

    # a Change carries what was seen; so does a dict's old_value
    with pytest.raises(qs.StaleWriteError, match=rf"is now {old + 1:g}, you saw {old:g}"):
        L.update_playbook(QUANT, [audit.Change.of(row, "threshold", 9)], client=client)
    with pytest.raises(qs.StaleWriteError, match=r"threshold is now"):
        L.update_playbook(
            QUANT, [{"config_id": config_id, "value": 9, "old_value": old}], client=client
        )
    assert float(value_of(service_playbook(server), config_id)) == old + 1

    # what the user saw is what the service holds: written (one check, one PUT)
    left = quota_left(server, "enterprise")
    updated = L.update_playbook(
        QUANT, [{"config_id": config_id, "value": 9, "old_value": old + 1}], client=client
    )
    assert updated["threshold"].tolist() == [9.0]
    assert quota_left(server, "enterprise") == left - 2
    # force=True skips the check; a change that says nothing about what was seen is a plain
    # set of the value given (one PUT, as before)
    L.update_playbook(QUANT, [audit.Change.of(row, "threshold", 8)], client=client, force=True)
    assert float(value_of(service_playbook(server), config_id)) == 8
    left = quota_left(server, "enterprise")
    L.update_playbook(QUANT, [{"config_id": config_id, "value": 7}], client=client)
    assert quota_left(server, "enterprise") == left - 1
    assert float(value_of(service_playbook(server), config_id)) == 7


def test_a_recommendation_is_applied_only_over_the_threshold_it_was_made_for(
    fresh_sandbox: Callable[..., SandboxServer],
    client_for: Callable[..., Client],
    tmp_path: Path,
) -> None:
    server = fresh_sandbox()
    client = client_for(server)
    log = audit.AuditLog(tmp_path / "log.jsonl")
    top = L.load_recommendations(QUANT, applied=False, client=client).iloc[0]
    config_id, old = str(top["config_id"]), float(top["old_threshold"])
    with other_client(server, tmp_path) as other:
        L.update_playbook(QUANT, [{"config_id": config_id, "value": old + 0.5}], client=other)

    where = re.escape(f"{top['criterion']} ({top['market_cap_class']} BUYING) threshold")
    with pytest.raises(qs.StaleWriteError, match=rf"{where} is now {old + 0.5:g}, you saw {old:g}"):
        audit.apply_recommendation_verified(QUANT, top, client=client, log=log)
    with pytest.raises(qs.StaleWriteError, match=rf"{where} is now"):
        L.apply_recommendation(top, client=client)  # a row says what the user saw
    assert log.entries() == []
    assert float(value_of(service_playbook(server), config_id)) == old + 0.5
    after = L.load_recommendations(QUANT, client=client)
    assert not after.loc[after["recommendation_id"] == top["recommendation_id"], "applied"].any()

    with other_client(server, tmp_path) as other:  # set back: applicable again
        L.update_playbook(QUANT, [{"config_id": config_id, "value": old}], client=other)
    written = audit.apply_recommendation_verified(QUANT, top, client=client, log=log)
    assert written.verified
    assert float(value_of(service_playbook(server), config_id)) == float(top["new_threshold"])


def test_undo_never_restores_over_a_change_it_did_not_make(
    fresh_sandbox: Callable[..., SandboxServer],
    client_for: Callable[..., Client],
    tmp_path: Path,
) -> None:
    server = fresh_sandbox()
    client = client_for(server)
    log = audit.AuditLog(tmp_path / "log.jsonl")
    row = smart_money(L.load_playbook(QUANT, client=client))
    config_id, old = str(row["config_id"]), float(row["threshold"])
    (mine,) = audit.write_changes(
        QUANT, [audit.Change.of(row, "threshold", old + 1)], client=client, log=log
    ).entries
    with other_client(server, tmp_path) as other:  # another panel, another process
        L.update_playbook(QUANT, [{"config_id": config_id, "value": old + 3}], client=other)

    with pytest.raises(qs.UndoRefusedError) as refused:
        audit.undo(mine, client=client, log=log)
    assert str(refused.value) == (
        f"undo refused, nothing was written: smart_money_buys (DEGEN_CAP BUYING) threshold is "
        f"now {old + 3:g}, not the {old + 1:g} the undone change set: it changed since. Reload "
        "and change it directly, or pass force=True to restore anyway."
    )
    assert isinstance(refused.value, qs.WriteRefusedError)
    assert float(value_of(service_playbook(server), config_id)) == old + 3
    assert len(log.entries()) == 1

    undone = audit.undo(mine, client=client, log=log, force=True)
    (entry,) = undone.entries
    assert (entry.old_value, entry.new_value, entry.undoes) == (old + 3, old, mine.id)
    assert float(value_of(service_playbook(server), config_id)) == old
