"""GET and PUT /api/degen/config against the running sandbox, and playbook_store's write path.

The playbook is checked against the catalog and against history (eval-details explains every
evaluation with the build-time thresholds the playbook starts from). Writes run on servers of
their own: a module server for changes that must be refused (its playbook is compared byte for
byte before and after), and fresh servers for changes that succeed.
"""

from __future__ import annotations

import contextlib
import copy
import json
import re
import sqlite3
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from _helpers import ApiSession, assert_error

from quantscope.sandbox import models, playbook_store
from quantscope.sandbox.catalog import CATEGORIES, CRITERIA, CRITERIA_BY_KEY
from quantscope.sandbox.datadir import copy_world
from quantscope.sandbox.errors import ApiError
from quantscope.sandbox.serve import SandboxServer
from quantscope.sandbox.store import Store

CLASSES = ["DEGEN_CAP", "LOW_CAP", "MID_CAP"]
CONFIG_TYPES = ["SCANNING", "BUYING"]
UUID_RE = re.compile(models.UUID_PATTERN)


class PlaybookApi(ApiSession):
    """A keyed session on one server, for the playbook."""

    def config(self, quant: int = 1) -> list[dict[str, Any]]:
        response = self.query("/api/degen/config", quantId=quant)
        assert response.status_code == 200, response.text
        body = response.json()
        models.validate_response(models.PlaybookConfig, body)
        return body

    def raw_config(self, quant: int = 1) -> bytes:
        response = self.query("/api/degen/config", quantId=quant)
        assert response.status_code == 200, response.text
        return response.content

    def put_config(self, body: Any) -> requests.Response:
        return self.put("/api/degen/config", json=body)


def _entries(config: list[dict[str, Any]]) -> dict[tuple[str, str, str], dict[str, Any]]:
    """Every config entry by (class, config type, criterion key), with its settings."""
    out = {}
    for element in config:
        for criteria in element["categories"].values():
            for c in criteria:
                for ctype, maps in c["configTypes"].items():
                    out[element["marketCap"], ctype, c["rootKey"]] = {
                        name: values["noTime"] for name, values in maps.items()
                    }
    return out


def _entry(ent: PlaybookApi, key: str, mc: str = "DEGEN_CAP", ctype: str = "BUYING") -> Any:
    return _entries(ent.config())[mc, ctype, key]


@pytest.fixture(scope="module")
def ent(sandbox: Any) -> Iterator[PlaybookApi]:
    made = PlaybookApi(sandbox.url, sandbox.keys["enterprise"])
    yield made
    made.close()


@pytest.fixture(scope="module")
def guarded(own_sandbox: SandboxServer) -> Iterator[PlaybookApi]:
    """A server of the module's own for refused writes (a bug would not touch the session's)."""
    made = PlaybookApi(own_sandbox.url, own_sandbox.keys["enterprise"])
    yield made
    made.close()


# --------------------------------------------------------------------------------------------
# GET
# --------------------------------------------------------------------------------------------


def test_playbook_shape_and_ids(ent: PlaybookApi) -> None:
    config = ent.config(1)
    assert [e["marketCap"] for e in config] == CLASSES
    ids: list[str] = []
    for element in config:
        assert list(element["categories"]) == list(CATEGORIES)
        assert list(element["passMark"]) == CONFIG_TYPES
        assert all(0 <= mark <= 100 for mark in element["passMark"].values())
        keys = []
        for category, criteria in element["categories"].items():
            assert len(criteria) == 3
            for c in criteria:
                spec = CRITERIA_BY_KEY[c["rootKey"]]
                keys.append(c["rootKey"])
                assert (spec.category, spec.name, spec.short, spec.long, spec.is_human) == (
                    category,
                    c["criteriaName"],
                    c["shortDescription"],
                    c["longDescription"],
                    c["isHumanCriteria"],
                )
                assert list(c["configTypes"]) == CONFIG_TYPES
                for ctype, maps in c["configTypes"].items():
                    assert all(list(values) == ["noTime"] for values in maps.values())
                    assert maps["extraInfos"]["noTime"] == spec.extra_info()
                    assert maps["delegates"]["noTime"] == spec.is_human
                    assert maps["configKeys"]["noTime"] == (
                        f"{element['marketCap']}.{ctype}.{spec.key}.noTime"
                    )
                    ids.append(maps["configIdsByInterval"]["noTime"])
        assert keys == [c.key for c in CRITERIA]
    assert len(ids) == 3 * 18 * 2 == len(set(ids))
    assert all(UUID_RE.fullmatch(i) and str(uuid.UUID(i)) == i for i in ids)
    assert len({e["configGroupId"] for e in config}) == 1
    others = {m["configIdsByInterval"] for m in _entries(ent.config(2)).values()}
    assert not others & set(ids)


def test_playbook_is_the_one_history_was_decided_with(ent: PlaybookApi) -> None:
    """Thresholds and weights equal those eval-details shows for an evaluation of that class."""
    entries = _entries(ent.config(1))
    for etype, ctype in (("TOKEN_STATUS", "SCANNING"), ("TOKEN_BUY", "BUYING")):
        results = ent.query(
            "/api/eval-results", quantId=1, evaluationResultType=etype, limit=1
        ).json()["results"]
        evaluation = results[0]
        mc = next(
            name
            for name, lower in (("MID_CAP", 1e7), ("LOW_CAP", 1e6), ("DEGEN_CAP", 0.0))
            if evaluation["marketCap"] >= lower
        )
        details = ent.query("/api/eval-details", evaluationId=evaluation["id"]).json()
        for result in details["evaluationResultDetails"]:
            entry = entries[mc, ctype, result["criteria"]["key"]]
            assert (result["threshold"], result["weight"], result["extraInfo"]) == (
                entry["thresholds"],
                entry["weights"],
                entry["extraInfos"],
            )
            assert (result["passed"] is None) == entry["disableds"]


def test_config_group_and_determinism(ent: PlaybookApi) -> None:
    first = ent.query("/api/degen/config", quantId=3)
    assert first.content == ent.query("/api/degen/config", quantId=3).content
    group = first.json()[0]["configGroupId"]
    same = ent.query("/api/degen/config", quantId=3, configGroupId=group)
    assert same.content == first.content
    assert_error(
        ent.query("/api/degen/config", quantId=2, configGroupId=group),
        404,
        "not_found",
        "configGroupId",
    )


@pytest.mark.parametrize(
    ("params", "status", "code", "param"),
    [
        ({}, 422, "invalid_parameter", "quantId"),
        ({"quantId": "one"}, 422, "invalid_parameter", "quantId"),
        ({"quantId": "1.0"}, 422, "invalid_parameter", "quantId"),
        ({"quantId": ""}, 422, "invalid_parameter", "quantId"),
        ({"quantId": str(2**70)}, 422, "invalid_parameter", "quantId"),
        ({"quantId": "4"}, 404, "not_found", "quantId"),
        ({"quantId": "0"}, 422, "invalid_parameter", "quantId"),
        ({"quantId": "1", "configGroupId": "nope"}, 404, "not_found", "configGroupId"),
    ],
)
def test_bad_get_input(
    ent: PlaybookApi, params: dict[str, str], status: int, code: str, param: str
) -> None:
    assert_error(ent.query("/api/degen/config", **params), status, code, param)


# --------------------------------------------------------------------------------------------
# PUT: changes that succeed
# --------------------------------------------------------------------------------------------


def test_put_then_get_sees_every_change(fresh_sandbox: Any) -> None:
    server = fresh_sandbox()
    ent = PlaybookApi(server.url, server.keys["enterprise"])
    before = _entries(ent.config(1))
    smb = before["LOW_CAP", "BUYING", "smart_money_buys"]
    lock = before["DEGEN_CAP", "SCANNING", "lp_locked"]
    rsi = before["MID_CAP", "BUYING", "rsi_14"]
    lock_info = copy.deepcopy(lock["extraInfos"])
    lock_info["options"][0]["label"] = "Not locked"
    changes = [
        {"configId": smb["configIdsByInterval"], "field": "threshold", "newValue": 7},
        {"configId": smb["configIdsByInterval"], "field": "weight", "newValue": 4.5},
        {"configId": lock["configIdsByInterval"], "field": "required", "newValue": False},
        {"configId": lock["configIdsByInterval"], "field": "threshold", "newValue": 3},
        {"configId": lock["configIdsByInterval"], "field": "extraInfo", "newValue": lock_info},
        {"configId": rsi["configIdsByInterval"], "field": "disabled", "newValue": True},
        {
            "configId": rsi["configIdsByInterval"],
            "field": "extraInfo",
            "newValue": {"operator": "V_LT_T", "range": {"min": 10, "max": 90}},
        },
    ]
    response = ent.put_config({"quantId": 1, "newConfigs": changes})
    assert response.status_code == 200, response.text
    body = models.validate_response(models.PlaybookUpdateResponse, response.json())
    updated = {u.id: u for u in body.updatedConfigs}
    assert list(updated) == [
        smb["configIdsByInterval"],
        lock["configIdsByInterval"],
        rsi["configIdsByInterval"],
    ]
    assert (
        updated[smb["configIdsByInterval"]].threshold,
        updated[smb["configIdsByInterval"]].weight,
    ) == (7, 4.5)
    after = _entries(ent.config(1))
    expected = copy.deepcopy(before)
    expected["LOW_CAP", "BUYING", "smart_money_buys"].update(thresholds=7.0, weights=4.5)
    expected["DEGEN_CAP", "SCANNING", "lp_locked"].update(
        requireds=False, thresholds=3.0, extraInfos=lock_info
    )
    expected["MID_CAP", "BUYING", "rsi_14"].update(
        disableds=True, extraInfos={"operator": "V_LT_T", "range": {"min": 10.0, "max": 90.0}}
    )
    assert after == expected
    for key, entry in (
        (("LOW_CAP", "BUYING", "smart_money_buys"), updated[smb["configIdsByInterval"]]),
        (("MID_CAP", "BUYING", "rsi_14"), updated[rsi["configIdsByInterval"]]),
    ):
        served = after[key]
        assert (entry.threshold, entry.weight, entry.required, entry.disabled) == (
            served["thresholds"],
            served["weights"],
            served["requireds"],
            served["disableds"],
        )
        assert entry.extraInfo.model_dump() == served["extraInfos"]
        assert (entry.configType, entry.criteriaKey) == (key[1], key[2])
    assert ent.config(2) == PlaybookApi(server.url, server.keys["enterprise"]).config(2)


def test_changes_apply_in_order(fresh_sandbox: Any) -> None:
    """A range may be widened and the threshold moved into it in one request, not the reverse."""
    server = fresh_sandbox()
    ent = PlaybookApi(server.url, server.keys["enterprise"])
    entry = _entry(ent, "volume_spike_ratio")
    cid = entry["configIdsByInterval"]
    widen = {
        "configId": cid,
        "field": "extraInfo",
        "newValue": {"operator": "V_GTE_T", "range": {"min": 0, "max": 80}},
    }
    move = {"configId": cid, "field": "threshold", "newValue": 60}
    raw = ent.raw_config()
    assert_error(
        ent.put_config({"quantId": 1, "newConfigs": [move, widen]}),
        422,
        "invalid_body",
        "newConfigs[0].newValue",
    )
    assert ent.raw_config() == raw
    assert ent.put_config({"quantId": 1, "newConfigs": [widen, move]}).status_code == 200
    now = _entry(ent, "volume_spike_ratio")
    assert (now["thresholds"], now["extraInfos"]["range"]) == (60.0, {"min": 0.0, "max": 80.0})


# --------------------------------------------------------------------------------------------
# PUT: changes that are refused, and nothing is written
# --------------------------------------------------------------------------------------------

# (criterion key, field, new value, status, code, param suffix) for one change among valid ones.
_BAD_CHANGES = [
    ("top10_holders_pct", "threshold", 100.5, "range"),
    ("top10_holders_pct", "threshold", -1, "range"),
    ("lp_locked", "threshold", 9, "option id"),
    ("lp_locked", "threshold", 1.5, "option id"),
    ("rsi_14", "threshold", "50", "number"),
    ("rsi_14", "threshold", True, "number"),
    ("rsi_14", "threshold", None, "number"),
    ("rsi_14", "weight", -0.5, ">= 0"),
    ("rsi_14", "weight", "1", "number"),
    ("rsi_14", "required", 1, "true or false"),
    ("rsi_14", "disabled", "true", "true or false"),
    ("rsi_14", "extraInfo", {"operator": "V_NE_T", "range": {"min": 0, "max": 100}}, "operator"),
    ("rsi_14", "extraInfo", {"operator": "V_LTE_T", "range": {"min": 90, "max": 10}}, "min"),
    ("rsi_14", "extraInfo", {"operator": "V_LTE_T", "range": {"min": 0, "max": 50}}, "hold"),
    ("rsi_14", "extraInfo", {"operator": "V_LTE_T"}, "keys"),
    ("rsi_14", "extraInfo", {"operator": "V_LTE_T", "range": {"min": 0}}, "range"),
    ("rsi_14", "extraInfo", {"operator": "V_LTE_T", "range": {"min": 0, "max": "x"}}, "number"),
    (
        "rsi_14",
        "extraInfo",
        {"operator": "V_LTE_T", "range": {"min": 0, "max": 100}, "extra": 1},
        "keys",
    ),
    ("rsi_14", "extraInfo", [1, 2], "object"),
    (
        "lp_locked",
        "extraInfo",
        {"operator": "V_GTE_T", "options": [{"id": 0, "label": "x"}]},
        "ids",
    ),
    (
        "lp_locked",
        "extraInfo",
        {
            "operator": "V_GTE_T",
            "options": [{"id": i, "label": "x"} for i in (0, 1, 2, 4)],
        },
        "ids",
    ),
    (
        "lp_locked",
        "extraInfo",
        {"operator": "V_GTE_T", "options": [{"id": i, "label": ""} for i in range(4)]},
        "labels",
    ),
]


@pytest.mark.parametrize(("key", "field", "value", "hint"), _BAD_CHANGES)
def test_one_invalid_change_writes_nothing(
    guarded: PlaybookApi, key: str, field: str, value: Any, hint: str
) -> None:
    entries = _entries(guarded.config())
    good = entries["DEGEN_CAP", "BUYING", "smart_money_buys"]["configIdsByInterval"]
    bad = entries["DEGEN_CAP", "BUYING", key]["configIdsByInterval"]
    before = guarded.raw_config()
    changes = [
        {"configId": good, "field": "threshold", "newValue": 5},
        {"configId": good, "field": "weight", "newValue": 1},
        {"configId": bad, "field": field, "newValue": value},
        {"configId": good, "field": "required", "newValue": True},
    ]
    response = guarded.put_config({"quantId": 1, "newConfigs": changes})
    assert_error(response, 422, "invalid_body", "newConfigs[2].newValue")
    assert hint in response.json()["error"]["message"]
    assert guarded.raw_config() == before


def test_non_finite_numbers_are_refused(guarded: PlaybookApi) -> None:
    cid = _entries(guarded.config())["DEGEN_CAP", "BUYING", "rsi_14"]["configIdsByInterval"]
    before = guarded.raw_config()
    for value in ("NaN", "Infinity"):
        change = f'{{"configId": "{cid}", "field": "weight", "newValue": {value}}}'
        body = f'{{"quantId": 1, "newConfigs": [{change}]}}'
        response = guarded.put(
            "/api/degen/config",
            data=body,
            headers={"Content-Type": "application/json"},
            timeout=60,
        )
        assert_error(response, 422, "invalid_body", "newConfigs[0].newValue")
    assert guarded.raw_config() == before


def _body_cases(own: str, other: str) -> list[tuple[Any, int, str, str | None]]:
    change = {"configId": own, "field": "threshold", "newValue": 5}
    return [
        ({"quantId": 1, "newConfigs": []}, 422, "invalid_body", "newConfigs"),
        ({"quantId": 1}, 422, "invalid_body", "newConfigs"),
        ({"newConfigs": [change]}, 422, "invalid_body", "quantId"),
        ({"quantId": "1", "newConfigs": [change]}, 422, "invalid_body", "quantId"),
        # 1.0 is an integer in JSON Schema, so the server takes it (issue 14); 1.5 is not
        ({"quantId": 1.5, "newConfigs": [change]}, 422, "invalid_body", "quantId"),
        ({"quantId": 2**70, "newConfigs": [change]}, 422, "invalid_body", "quantId"),
        ({"quantId": 0, "newConfigs": [change]}, 422, "invalid_body", "quantId"),
        ({"quantId": True, "newConfigs": [change]}, 422, "invalid_body", "quantId"),
        ({"quantId": 1, "newConfigs": change}, 422, "invalid_body", "newConfigs"),
        ({"quantId": 1, "newConfigs": [change], "dryRun": True}, 422, "invalid_body", "dryRun"),
        ({"quantId": 1, "newConfigs": [change, 5]}, 422, "invalid_body", "newConfigs[1]"),
        (
            {"quantId": 1, "newConfigs": [change, {**change, "field": "label"}]},
            422,
            "invalid_body",
            "newConfigs[1].field",
        ),
        (
            {"quantId": 1, "newConfigs": [{"configId": own, "field": "weight"}]},
            422,
            "invalid_body",
            "newConfigs[0].newValue",
        ),
        (
            {"quantId": 1, "newConfigs": [{**change, "configId": "abc"}]},
            422,
            "invalid_body",
            "newConfigs[0].configId",
        ),
        (
            {"quantId": 1, "newConfigs": [{**change, "note": "x"}]},
            422,
            "invalid_body",
            "newConfigs[0].note",
        ),
        ([change], 422, "invalid_body", None),
        (
            {"quantId": 1, "newConfigs": [change, {**change, "configId": str(uuid.UUID(int=1))}]},
            404,
            "not_found",
            "newConfigs[1].configId",
        ),
        (
            {"quantId": 1, "newConfigs": [change, {**change, "configId": other}]},
            404,
            "not_found",
            "newConfigs[1].configId",
        ),
        ({"quantId": 9, "newConfigs": [change]}, 404, "not_found", "quantId"),
    ]


def test_bad_bodies_write_nothing(guarded: PlaybookApi) -> None:
    own = _entries(guarded.config(1))["DEGEN_CAP", "BUYING", "rsi_14"]["configIdsByInterval"]
    other = _entries(guarded.config(2))["DEGEN_CAP", "BUYING", "rsi_14"]["configIdsByInterval"]
    before = guarded.raw_config(1), guarded.raw_config(2)
    for body, status, code, param in _body_cases(own, other):
        assert_error(guarded.put_config(body), status, code, param)
    for data in (b"", b"{not json", b"null"):
        response = guarded.put(
            "/api/degen/config",
            data=data,
            headers={"Content-Type": "application/json"},
            timeout=60,
        )
        assert_error(response, 422, "invalid_body", None)
    valid = json.dumps(
        {"quantId": 1, "newConfigs": [{"configId": own, "field": "weight", "newValue": 1}]}
    )
    for headers in ({"Content-Type": "text/plain"}, {}):
        response = guarded.put("/api/degen/config", data=valid, headers=headers, timeout=60)
        assert_error(response, 422, "invalid_body", None)
        assert "Content-Type: application/json" in response.json()["error"]["message"]
    assert (guarded.raw_config(1), guarded.raw_config(2)) == before


# --------------------------------------------------------------------------------------------
# Plans
# --------------------------------------------------------------------------------------------


def test_plans(fresh_sandbox: Any) -> None:
    server = fresh_sandbox()
    basic = PlaybookApi(server.url, server.keys["basic"])
    growth = PlaybookApi(server.url, server.keys["growth"])
    assert_error(basic.query("/api/degen/config", quantId=1), 403, "plan_not_allowed", None)
    before = growth.raw_config()
    cid = _entries(growth.config())["DEGEN_CAP", "BUYING", "rsi_14"]["configIdsByInterval"]
    body = {"quantId": 1, "newConfigs": [{"configId": cid, "field": "threshold", "newValue": 5}]}
    assert_error(growth.put_config(body), 403, "plan_not_allowed", None)
    assert_error(basic.put_config(body), 403, "plan_not_allowed", None)
    assert growth.raw_config() == before


def test_openapi_documents_the_request_body(ent: PlaybookApi) -> None:
    doc = ent.get("/openapi.json").json()
    put = doc["paths"]["/api/degen/config"]["put"]
    schema = put["requestBody"]["content"]["application/json"]["schema"]
    assert schema["required"] == ["quantId", "newConfigs"]
    change = schema["properties"]["newConfigs"]["items"]
    assert change["properties"]["field"]["enum"] == list(playbook_store.FIELDS)
    assert "$ref" not in json.dumps(schema)


# --------------------------------------------------------------------------------------------
# playbook_store's write path, as the optimizer calls it
# --------------------------------------------------------------------------------------------


def test_apply_threshold_inside_a_transaction(
    sandbox_world: Any, tmp_path_factory: pytest.TempPathFactory
) -> None:
    info = copy_world(sandbox_world, tmp_path_factory.mktemp("store"))
    store = Store(info.db_path)
    conn = store.connect()
    cid = conn.execute(
        "SELECT c.id FROM config c JOIN criteria k ON k.id = c.criteria_id "
        "WHERE c.quant_id = 1 AND c.market_cap = 'LOW_CAP' AND c.config_type = 'BUYING' "
        "AND k.key = 'ai_confidence'"
    ).fetchone()[0]
    with store.transaction() as tx:
        before, after = playbook_store.apply_threshold(tx, cid, 61.5)
    assert (before.threshold, after.threshold) == (45.0, 61.5)
    assert after == playbook_store.get_entry(conn, cid)
    for bad, status in ((150.0, 422), (float("nan"), 422)):
        with pytest.raises(ApiError) as caught, store.transaction() as tx:
            playbook_store.apply_threshold(tx, cid, bad)
        assert caught.value.status == status
    with pytest.raises(ApiError) as missing, store.transaction() as tx:
        playbook_store.apply_threshold(tx, str(uuid.UUID(int=7)), 50.0)
    assert (missing.value.status, missing.value.param) == (404, "configId")
    assert playbook_store.get_entry(conn, cid) == after
    original = conn.execute("SELECT threshold FROM config_original WHERE id = ?", (cid,))
    assert original.fetchone()[0] == 45.0  # history's copy is never written
    with contextlib.closing(sqlite3.connect(info.db_path)) as other:
        assert (
            other.execute("SELECT threshold FROM config WHERE id = ?", (cid,)).fetchone()[0] == 61.5
        )
