"""/api/v1/event-rules and /api/v1/integrations/{id}/event-rules through the Chalice test client:
the lifecycle in order, positions and moves, every error path (400 naming the field, 401, 403,
404, 409), the cap, concurrent edits that lose no rule, and the dry run."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from chalicelib import clock
from chalicelib.apikey import service as apikeys
from chalicelib.catalog import service as catalog
from chalicelib.eventrule import service as rule_service
from chalicelib.eventrule.rules import MAX_RULES, Actions
from chalicelib.integration import admin
from chalicelib.settings import get_settings
from tests.conftest import NOW, Org, make_org
from tests.kit import factories as make
from tests.kit.api import call

ORG_LIST = "/api/v1/event-rules"
FIELDS = {
    "id",
    "position",
    "integration_id",
    "description",
    "conditions",
    "actions",
    "continue",
    "version",
    "created_at",
    "updated_at",
}
STAMP = "2026-11-22T12:00:00Z"
DISK = {"field": "title", "op": "contains", "value": "disk"}


@pytest.fixture(autouse=True)
def frozen() -> None:
    clock.freeze(NOW)  # the aws_env fixture unfreezes


def fields_of(document: dict[str, Any]) -> list[str]:
    assert document["success"] is False
    return [f["field"] for f in document["error"]["details"]["fields"]]


def add(client: Any, org: Org, base: str = ORG_LIST, **fields: Any) -> dict[str, Any]:
    body = {"conditions": [DISK], "actions": {"suppress": True}, **fields}
    status, document = call(client, "POST", base, org.owner_key, body)
    assert status == 201, document
    return dict(document["data"])


def ids(client: Any, org: Org, base: str = ORG_LIST) -> list[str]:
    status, document = call(client, "GET", base + "?limit=100", org.owner_key)
    assert status == 200, document
    items = document["data"]["items"]
    assert [item["position"] for item in items] == list(range(len(items)))
    return [item["id"] for item in items]


def integration_base(org: Org) -> tuple[str, str]:
    integration = admin.create_integration(
        organization_id=org.organization_id,
        integration_type="alertmanager",
        name="prom",
        now=NOW,
        settings=get_settings(),
    ).integration
    return integration.integration_id, f"/api/v1/integrations/{integration.integration_id}/event-rules"


# --- lifecycle -------------------------------------------------------------------------------------


def test_lifecycle(client: Any, org: Org) -> None:
    service = make.service(org, "Storage")
    created = add(
        client,
        org,
        description="Disk storms go to storage",
        conditions=[
            DISK,
            {"field": "labels.env", "op": "matches", "value": "^prod"},
            {"field": "severity", "op": "exists"},
        ],
        actions={"route_to_service": service.service_key, "severity": "SEV2", "note": "see runbook"},
        **{"continue": True},
    )
    assert set(created) == FIELDS and created["id"].startswith("evr_")
    assert created == {
        **created,
        "position": 0,
        "integration_id": None,
        "description": "Disk storms go to storage",
        "conditions": [
            {"field": "title", "op": "contains", "value": "disk"},
            {"field": "labels.env", "op": "matches", "value": "^prod"},
            {"field": "severity", "op": "exists", "value": None},
        ],
        "actions": {
            "suppress": False,
            "drop": False,
            "severity": "SEV2",
            "route_to_service": service.service_id,  # given as the svc_ key, answered as the SER id
            "route_to_service_key": service.service_key,
            "note": "see runbook",
        },
        "continue": True,
        "version": 1,
        "created_at": STAMP,
        "updated_at": None,
    }
    item = f"{ORG_LIST}/{created['id']}"
    status, got = call(client, "GET", item, org.owner_key)
    assert (status, got["data"]) == (200, created)

    status, listed = call(client, "GET", ORG_LIST, org.owner_key)
    assert status == 200
    assert listed["data"] == {"items": [created], "total": 1, "has_more": False, "next_offset": None}

    status, patched = call(
        client, "PATCH", item, org.owner_key, {"description": None, "continue": False, "actions": {"drop": True}}
    )
    assert status == 200, patched
    assert patched["data"]["description"] is None and patched["data"]["continue"] is False
    assert patched["data"]["actions"] == {
        "suppress": False,
        "drop": True,
        "severity": None,
        "route_to_service": None,
        "route_to_service_key": None,
        "note": None,
    }
    assert (patched["data"]["version"], patched["data"]["updated_at"]) == (2, STAMP)
    assert patched["data"]["conditions"] == created["conditions"]  # left out: unchanged

    status, deleted = call(client, "DELETE", item, org.owner_key)
    assert (status, deleted["data"]) == (200, {"id": created["id"], "deleted": True})
    assert call(client, "GET", item, org.owner_key)[0] == 404
    assert call(client, "DELETE", item, org.owner_key)[0] == 404
    assert ids(client, org) == []


def test_an_empty_condition_list_is_a_catch_all(client: Any, org: Org) -> None:
    created = add(client, org, conditions=[], actions={"note": "every alert"})
    assert created["conditions"] == []
    status, decision = call(client, "POST", ORG_LIST + "/test", org.owner_key, {"title": "anything"})
    assert (status, decision["data"]["matched_rule_ids"]) == (200, [created["id"]])


def test_positions_insert_and_move(client: Any, org: Org) -> None:
    a = add(client, org)["id"]
    b = add(client, org)["id"]  # appended
    c = add(client, org, position=0)["id"]  # runs first
    d = add(client, org, position=3)["id"]  # position == length appends
    e = add(client, org, position=2)["id"]
    assert ids(client, org) == [c, a, e, b, d]

    status, moved = call(client, "PATCH", f"{ORG_LIST}/{d}", org.owner_key, {"position": 0})
    assert (status, moved["data"]["position"]) == (200, 0)
    assert ids(client, org) == [d, c, a, e, b]
    status, moved = call(client, "PATCH", f"{ORG_LIST}/{d}", org.owner_key, {"position": 4})
    assert (status, moved["data"]["position"]) == (200, 4)
    assert ids(client, org) == [c, a, e, b, d]
    status, got = call(client, "GET", f"{ORG_LIST}/{e}", org.owner_key)
    assert (status, got["data"]["position"]) == (200, 2)

    for position in (5, 100):
        status, document = call(client, "PATCH", f"{ORG_LIST}/{d}", org.owner_key, {"position": position})
        assert (status, fields_of(document)) == (400, ["position"])
    status, document = call(
        client, "POST", ORG_LIST, org.owner_key, {"conditions": [], "actions": {"suppress": True}, "position": 6}
    )
    assert (status, fields_of(document)) == (400, ["position"])
    assert ids(client, org) == [c, a, e, b, d]  # nothing half-written

    status, page = call(client, "GET", ORG_LIST + "?limit=2&offset=2", org.owner_key)
    assert status == 200
    assert [item["id"] for item in page["data"]["items"]] == [e, b]
    assert [item["position"] for item in page["data"]["items"]] == [2, 3]
    assert (page["data"]["total"], page["data"]["has_more"], page["data"]["next_offset"]) == (5, True, 4)


def test_integration_lists_are_separate(client: Any, org: Org) -> None:
    integration_id, base = integration_base(org)
    org_rule = add(client, org)
    first = add(client, org, base, actions={"severity": "SEV1"})
    assert first["integration_id"] == integration_id and first["position"] == 0
    assert ids(client, org, base) == [first["id"]]
    assert ids(client, org) == [org_rule["id"]]
    # A rule is reached only through its own list.
    assert call(client, "GET", f"{ORG_LIST}/{first['id']}", org.owner_key)[0] == 404
    assert call(client, "GET", f"{base}/{org_rule['id']}", org.owner_key)[0] == 404
    assert call(client, "DELETE", f"{base}/{org_rule['id']}", org.owner_key)[0] == 404
    status, patched = call(client, "PATCH", f"{base}/{first['id']}", org.owner_key, {"actions": {"suppress": True}})
    assert (status, patched["data"]["actions"]["suppress"], patched["data"]["version"]) == (200, True, 2)
    assert call(client, "GET", f"{base}/{first['id']}", org.owner_key)[1]["data"] == patched["data"]
    assert call(client, "DELETE", f"{base}/{first['id']}", org.owner_key)[0] == 200
    assert ids(client, org, base) == [] and ids(client, org) == [org_rule["id"]]


def test_unknown_integration_is_404_on_every_operation(client: Any, org: Org) -> None:
    other = make_org("Other")
    theirs, _ = integration_base(other)
    rule_path = "/evr_" + "0" * 32
    for integration_id in ("nope", theirs):
        base = f"/api/v1/integrations/{integration_id}/event-rules"
        body = {"conditions": [], "actions": {"suppress": True}}
        for method, path, payload in [
            ("GET", base, None),
            ("POST", base, body),
            ("GET", base + rule_path, None),
            ("PATCH", base + rule_path, {"continue": True}),
            ("DELETE", base + rule_path, None),
        ]:
            status, document = call(client, method, path, org.owner_key, payload)
            assert (status, document["error"]["code"]) == (404, "NOT_FOUND"), (method, path)
    status, document = call(client, "POST", ORG_LIST + "/test", org.owner_key, {"title": "x", "integration_id": theirs})
    assert status == 404


def test_rules_of_another_organization_are_not_found(client: Any, org: Org) -> None:
    mine = add(client, org)
    other = make_org("Other")
    item = f"{ORG_LIST}/{mine['id']}"
    assert call(client, "GET", ORG_LIST, other.owner_key)[1]["data"]["items"] == []
    for method, body in (("GET", None), ("PATCH", {"continue": True}), ("DELETE", None)):
        assert call(client, method, item, other.owner_key, body)[0] == 404
    assert ids(client, org) == [mine["id"]]


# --- errors ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "refused"),
    [
        (
            {"conditions": [{"field": "status", "op": "equals", "value": "x"}], "actions": {"suppress": True}},
            "conditions.0.field",
        ),
        ({"conditions": [{"field": "labels.", "op": "exists"}], "actions": {"suppress": True}}, "conditions.0.field"),
        (
            {"conditions": [{"field": "title", "op": "startswith", "value": "x"}], "actions": {"suppress": True}},
            "conditions.0.op",
        ),
        (
            {"conditions": [DISK, {"field": "title", "op": "equals"}], "actions": {"suppress": True}},
            "conditions.1.value",
        ),
        (
            {"conditions": [{"field": "title", "op": "contains", "value": ""}], "actions": {"suppress": True}},
            "conditions.0.value",
        ),
        (
            {"conditions": [{"field": "title", "op": "exists", "value": "x"}], "actions": {"suppress": True}},
            "conditions.0.value",
        ),
        (
            {"conditions": [{"field": "title", "op": "matches", "value": "(a"}], "actions": {"suppress": True}},
            "conditions.0.value",
        ),
        (
            {"conditions": [{"field": "title", "op": "matches", "value": "(a)\\1"}], "actions": {"suppress": True}},
            "conditions.0.value",
        ),
        (
            {"conditions": [{"field": "title", "op": "matches", "value": "x" * 257}], "actions": {"suppress": True}},
            "conditions.0.value",
        ),
        ({"conditions": [DISK] * 17, "actions": {"suppress": True}}, "conditions"),
        ({"conditions": [DISK], "actions": {}}, "actions"),
        ({"conditions": [DISK], "actions": {"suppress": False, "drop": False}}, "actions"),
        ({"conditions": [DISK]}, "actions"),
        ({"conditions": [DISK], "actions": {"drop": True, "note": "x"}}, "actions.drop"),
        ({"conditions": [DISK], "actions": {"severity": "SEV9"}}, "actions.severity"),
        ({"conditions": [DISK], "actions": {"suppress": "yes"}}, "actions.suppress"),
        ({"conditions": [DISK], "actions": {"route_to_service": "SER-99999"}}, "actions.route_to_service"),
        ({"conditions": [DISK], "actions": {"route_to_service": "svc_zzzzzzzzzz"}}, "actions.route_to_service"),
        ({"conditions": [DISK], "actions": {"route_to_service": "storage"}}, "actions.route_to_service"),
        ({"conditions": [DISK], "actions": {"suppress": True}, "continue": "no"}, "continue"),
        ({"conditions": [DISK], "actions": {"suppress": True}, "position": -1}, "position"),
        ({"conditions": [DISK], "actions": {"suppress": True}, "colour": "red"}, "colour"),
    ],
)
def test_create_refuses_with_the_field_named(client: Any, org: Org, body: dict[str, Any], refused: str) -> None:
    status, document = call(client, "POST", ORG_LIST, org.owner_key, body)
    assert status == 400, document
    assert refused in fields_of(document)
    assert ids(client, org) == []


def test_route_to_another_organizations_service_is_refused(client: Any, org: Org) -> None:
    other = make_org("Other")
    theirs = catalog.create_service(organization_id=other.organization_id, name="Theirs", now=NOW)
    for ref in (theirs.service_key, theirs.service_id):
        status, document = call(
            client, "POST", ORG_LIST, org.owner_key, {"conditions": [], "actions": {"route_to_service": ref}}
        )
        assert (status, fields_of(document)) == (400, ["actions.route_to_service"])


def test_patch_errors(client: Any, org: Org) -> None:
    item = f"{ORG_LIST}/{add(client, org)['id']}"
    for body, refused in [
        ({}, None),
        ({"version": 1}, None),
        ({"conditions": None}, "conditions"),
        ({"actions": {}}, "actions"),
        ({"actions": {"drop": True, "suppress": True}}, "actions.drop"),
        ({"conditions": [{"field": "title", "op": "matches", "value": "[z-a]"}]}, "conditions.0.value"),
        ({"continue": None}, "continue"),
    ]:
        status, document = call(client, "PATCH", item, org.owner_key, body)
        assert status == 400, (body, document)
        if refused:
            assert refused in fields_of(document), body
    status, got = call(client, "GET", item, org.owner_key)
    assert got["data"]["version"] == 1  # no refused PATCH wrote anything
    assert call(client, "PATCH", f"{ORG_LIST}/evr_{'0' * 32}", org.owner_key, {"continue": True})[0] == 404
    assert call(client, "PATCH", f"{ORG_LIST}/not-a-rule", org.owner_key, {"continue": True})[0] == 404


def test_patch_with_a_stale_version_is_409(client: Any, org: Org) -> None:
    item = f"{ORG_LIST}/{add(client, org)['id']}"
    assert call(client, "PATCH", item, org.owner_key, {"version": 1, "description": "first"})[0] == 200
    status, document = call(client, "PATCH", item, org.owner_key, {"version": 1, "description": "second"})
    assert (status, document["error"]["code"]) == (409, "CONFLICT")
    assert document["error"]["details"] == {"expected_version": 1, "current_version": 2}
    assert call(client, "GET", item, org.owner_key)[1]["data"]["description"] == "first"


def test_the_list_is_capped(client: Any, org: Org) -> None:
    for _ in range(MAX_RULES):
        rule_service.create_rule(organization_id=org.organization_id, now=NOW, conditions=[], actions=Actions(note="n"))
    status, document = call(client, "POST", ORG_LIST, org.owner_key, {"conditions": [], "actions": {"suppress": True}})
    assert (status, document["error"]["code"]) == (409, "CONFLICT")
    assert len(ids(client, org)) == MAX_RULES
    # The cap is per list: an integration's list has its own.
    _, base = integration_base(org)
    add(client, org, base)


def test_scopes(client: Any, org: Org) -> None:
    _, reader = apikeys.create_api_key(
        organization_id=org.organization_id,
        name="r",
        kind="service_account",
        scopes=["integrations:read"],
        now=NOW,
        settings=get_settings(),
    )
    _, writer = apikeys.create_api_key(
        organization_id=org.organization_id,
        name="w",
        kind="service_account",
        scopes=["integrations:write"],
        now=NOW,
        settings=get_settings(),
    )
    _, base = integration_base(org)
    body = {"conditions": [], "actions": {"suppress": True}}
    for list_path in (ORG_LIST, base):
        item = f"{list_path}/{add(client, org, list_path)['id']}"
        reads = [("GET", list_path, None), ("GET", item, None)]
        writes = [("POST", list_path, body), ("PATCH", item, {"continue": True}), ("DELETE", item, None)]
        for method, path, payload in reads + writes:
            assert call(client, method, path, None, payload)[0] == 401
            status, document = call(client, method, path, org.readonly_key, payload)
            required = "integrations:read" if (method, path, payload) in reads else "integrations:write"
            assert (status, document["error"]["details"]["required_scope"]) == (403, required)
        for method, path, payload in reads:
            assert call(client, method, path, reader, payload)[0] == 200
        for method, path, payload in writes:
            assert call(client, method, path, reader, payload)[0] == 403
        for method, path, payload in writes:
            assert call(client, method, path, writer, payload)[0] in (200, 201), (method, path)
    # A dry run costs what an event costs: it needs integrations:write (a reader or viewer gets 403).
    status, document = call(client, "POST", ORG_LIST + "/test", reader, {"title": "x"})
    assert (status, document["error"]["details"]["required_scope"]) == (403, "integrations:write")
    assert call(client, "POST", ORG_LIST + "/test", org.readonly_key, {"title": "x"})[0] == 403
    assert call(client, "POST", ORG_LIST + "/test", writer, {"title": "x"})[0] == 200


# --- races ---------------------------------------------------------------------------------------


def test_concurrent_creates_and_edits_lose_no_rule(client: Any, org: Org) -> None:
    """Sixteen racing writers on one list (creates, a move, edits): every rule lands, every edit too."""
    kept = [add(client, org)["id"] for _ in range(2)]

    def create(index: int) -> str:
        placed = rule_service.create_rule(
            organization_id=org.organization_id,
            now=NOW,
            conditions=[("title", "equals", f"t{index}")],
            actions=Actions(note=f"n{index}"),
            position=0 if index % 2 else None,
        )
        return placed.rule.rule_id

    def edit(index: int) -> None:
        rule_service.update_rule(
            organization_id=org.organization_id, rule_id=kept[index % 2], now=NOW, description=f"edit {index}"
        )

    with ThreadPoolExecutor(max_workers=8) as pool:
        created = list(pool.map(create, range(12)))
        list(pool.map(edit, range(4)))
    listed = ids(client, org)
    assert sorted(listed) == sorted(kept + created)
    versions = [call(client, "GET", f"{ORG_LIST}/{rule_id}", org.owner_key)[1]["data"]["version"] for rule_id in kept]
    assert versions == [3, 3]  # two edits each, none lost


# --- the dry run ---------------------------------------------------------------------------------


def test_dry_run_applies_both_lists_in_order(client: Any, org: Org) -> None:
    integration_id, base = integration_base(org)
    service = make.service(org, "DB")
    noisy = add(
        client, org, base, conditions=[{"field": "labels.env", "op": "equals", "value": "dev"}], actions={"drop": True}
    )
    first = add(client, org, base, conditions=[DISK], actions={"severity": "SEV1", "note": "i"}, **{"continue": True})
    org_rule = add(
        client, org, conditions=[], actions={"severity": "SEV4", "route_to_service": service.service_id, "note": "o"}
    )
    sample = {"title": "Disk full", "labels": {"env": "prod"}}

    status, decision = call(
        client, "POST", ORG_LIST + "/test", org.owner_key, {**sample, "integration_id": integration_id}
    )
    assert status == 200
    assert decision["data"] == {
        "dropped": False,
        "suppressed": False,
        "severity": "SEV1",
        "route_to_service": service.service_id,
        "notes": ["i", "o"],
        "matched_rule_ids": [first["id"], org_rule["id"]],
        "warnings": [],
    }
    status, decision = call(client, "POST", ORG_LIST + "/test", org.owner_key, sample)  # the organization's only
    assert (decision["data"]["severity"], decision["data"]["matched_rule_ids"]) == ("SEV4", [org_rule["id"]])
    status, decision = call(
        client,
        "POST",
        ORG_LIST + "/test",
        org.owner_key,
        {"title": "x", "labels": {"env": "DEV"}, "integration_id": integration_id},
    )
    assert decision["data"]["dropped"] is True and decision["data"]["matched_rule_ids"] == [noisy["id"]]
    assert call(client, "POST", ORG_LIST + "/test", org.owner_key, {"title": ""})[0] == 400


def test_decide_reads_both_lists(client: Any, org: Org) -> None:
    from chalicelib.eventrule.decide import decide
    from chalicelib.eventrule.facts import AlertFacts, RuleDecision

    integration_id, base = integration_base(org)
    facts = AlertFacts(
        title="Disk full", source="alertmanager", severity=None, service_id=None, integration_type="alertmanager"
    )
    assert decide(organization_id=org.organization_id, integration_id=integration_id, facts=facts) == RuleDecision()
    i = add(client, org, base, actions={"note": "i"})
    o = add(client, org, actions={"suppress": True})
    both = decide(organization_id=org.organization_id, integration_id=integration_id, facts=facts)
    assert both == RuleDecision(suppressed=True, notes=("i",), matched_rule_ids=(i["id"], o["id"]))
    heartbeat = decide(organization_id=org.organization_id, integration_id=None, facts=facts)
    assert heartbeat == RuleDecision(suppressed=True, matched_rule_ids=(o["id"],))
    other = make_org("Other")
    assert decide(organization_id=other.organization_id, integration_id=integration_id, facts=facts) == RuleDecision()


def test_a_retried_create_with_an_idempotency_key_adds_one_rule(client: Any, org: Org) -> None:
    _, base = integration_base(org)
    body = json.dumps({"conditions": [DISK], "actions": {"suppress": True}, "continue": True})
    for path in (ORG_LIST, base):
        answers = []
        for _ in range(2):
            response = client.http.post(
                path,
                headers={"Authorization": f"Bearer {org.owner_key}", "Idempotency-Key": "retry-1"},
                body=body,
            )
            answers.append((response.status_code, response.headers["Idempotent-Replayed"], json.loads(response.body)))
        assert [(status, replayed) for status, replayed, _ in answers] == [(201, "false"), (201, "true")]
        assert answers[0][2]["data"] == answers[1][2]["data"]
        assert ids(client, org, path) == [answers[0][2]["data"]["id"]]
        other = client.http.post(
            path,
            headers={"Authorization": f"Bearer {org.owner_key}", "Idempotency-Key": "retry-1"},
            body=json.dumps({"conditions": [], "actions": {"drop": True}}),
        )
        assert other.status_code == 409


def test_a_service_id_condition_names_the_service_by_id_or_key(client: Any, org: Org) -> None:
    # Issue 26: one way to name a service; the dry run takes either too.
    search = catalog.create_service(organization_id=org.organization_id, name="Search", now=NOW)
    by_key = {"field": "service_id", "op": "equals", "value": search.service_key}
    add(client, org, conditions=[by_key], actions={"severity": "SEV1"})
    for named in (search.service_key, search.service_id, search.service_id.lower()):
        status, decision = call(client, "POST", ORG_LIST + "/test", org.owner_key, {"title": "x", "service_id": named})
        assert (status, decision["data"]["severity"]) == (200, "SEV1"), named
    status, decision = call(
        client, "POST", ORG_LIST + "/test", org.owner_key, {"title": "x", "service_id": "SER-99999"}
    )
    assert (status, decision["data"]["severity"]) == (200, None)
