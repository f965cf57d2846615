"""/api/v1/escalation-policies through the Chalice test client."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from chalicelib import clock
from chalicelib.apikey import service as apikeys
from chalicelib.directory import users
from chalicelib.oncall import Layer
from chalicelib.oncall import service as schedules
from chalicelib.settings import get_settings
from tests.api.test_directory_services import error_of
from tests.conftest import NOW
from tests.kit.api import call

BASE = "/api/v1/escalation-policies"
POLICY_FIELDS = {"id", "name", "levels", "repeat_count", "version", "created_at", "updated_at", "coverage_gaps"}


@pytest.fixture
def setup(client, org):
    clock.freeze(NOW)
    oid = org.organization_id
    lead = users.create_user(organization_id=oid, name="Lead", email="lead@example.com", now=NOW).user_id
    schedule = schedules.create_schedule(
        organization_id=oid,
        name="Primary",
        time_zone="UTC",
        layers=[Layer("lyr_1", "One", (lead,), "daily", "09:00", datetime(2026, 11, 1, tzinfo=UTC))],
        now=NOW,
    )
    _, read_key = apikeys.create_api_key(
        organization_id=oid,
        name="reader",
        kind="service_account",
        scopes=["oncall:read"],
        now=NOW,
        settings=get_settings(),
    )
    body = {
        "name": "Payments",
        "levels": [
            {"targets": [{"kind": "schedule", "id": schedule.schedule_id}], "delay_minutes": 5},
            {"targets": [{"kind": "user", "id": lead}], "delay_minutes": 30},
        ],
        "repeat_count": 1,
    }
    return org.owner_key, read_key, body


def test_policy_lifecycle(client, setup):
    key, _, body = setup
    status, created = call(client, "POST", BASE, key, body)
    assert status == 201, created
    policy = created["data"]
    assert set(policy) == POLICY_FIELDS
    assert policy["id"].startswith("pol_")
    assert policy["levels"] == [
        {"level": 1, "targets": body["levels"][0]["targets"], "delay_minutes": 5},
        {"level": 2, "targets": body["levels"][1]["targets"], "delay_minutes": 30},
    ]
    assert (policy["repeat_count"], policy["version"], policy["created_at"], policy["updated_at"]) == (
        1,
        1,
        "2026-11-22T12:00:00Z",
        None,
    )
    item = f"{BASE}/{policy['id']}"
    assert call(client, "GET", item, key)[1]["data"] == policy
    status, listed = call(client, "GET", f"{BASE}?limit=1", key)
    assert (status, listed["data"]["items"], listed["data"]["total"]) == (200, [policy], 1)

    status, patched = call(client, "PATCH", item, key, {"levels": body["levels"][1:], "version": 1})
    assert status == 200
    assert patched["data"]["levels"] == [{"level": 1, "targets": body["levels"][1]["targets"], "delay_minutes": 30}]
    assert (patched["data"]["version"], patched["data"]["updated_at"]) == (2, "2026-11-22T12:00:00Z")
    status, stale = call(client, "PATCH", item, key, {"name": "Lost", "version": 1})
    assert (status, error_of(stale)["code"]) == (409, "CONFLICT")
    assert call(client, "PATCH", item, key, {"repeat_count": 0})[1]["data"]["version"] == 3

    status, deleted = call(client, "DELETE", item, key)
    assert (status, deleted["data"]) == (200, {"id": policy["id"], "deleted": True})
    for method, payload in (("GET", None), ("PATCH", {"name": "x"}), ("DELETE", None)):
        status, document = call(client, method, item, key, payload)
        assert (status, error_of(document)["code"]) == (404, "NOT_FOUND"), method


def test_bad_policies_are_400(client, setup):
    key, _, body = setup
    level = body["levels"][0]
    cases = [
        ({**body, "levels": []}, "levels"),
        ({**body, "levels": [{**level, "delay_minutes": 0}]}, "levels.0.delay_minutes"),
        ({**body, "levels": [{**level, "delay_minutes": 1441}]}, "levels.0.delay_minutes"),
        ({**body, "levels": [{**level, "targets": []}]}, "levels.0.targets"),
        ({**body, "levels": [{**level, "targets": [{"kind": "team", "id": "x"}]}]}, "levels.0.targets.0.kind"),
        ({**body, "levels": [{**level, "targets": [{"kind": "user", "id": "usr_ghost"}]}]}, "levels.0.targets.0.id"),
        (
            {**body, "levels": [{**level, "targets": [{"kind": "schedule", "id": "sch_ghost"}]}]},
            "levels.0.targets.0.id",
        ),
        ({**body, "repeat_count": 10}, "repeat_count"),
        ({**body, "name": ""}, "name"),
        ({**body, "colour": "red"}, "colour"),
    ]
    for payload, field in cases:
        status, document = call(client, "POST", BASE, key, payload)
        assert status == 400, (field, document)
        assert field in {item["field"] for item in error_of(document)["details"]["fields"]}, (field, document)
    _, created = call(client, "POST", BASE, key, body)
    item = f"{BASE}/{created['data']['id']}"
    for payload in ({}, {"version": 1}, {"levels": None}, {"repeat_count": -1}):
        assert call(client, "PATCH", item, key, payload)[0] == 400, payload
    assert call(client, "GET", f"{BASE}?limit=0", key)[0] == 400


def test_deleting_a_policy_in_use_is_409(client, setup):
    key, _, body = setup
    _, created = call(client, "POST", BASE, key, body)
    policy_id = created["data"]["id"]
    status, service = call(
        client, "POST", "/api/v1/services", key, {"name": "Payments API", "escalation_policy_id": policy_id}
    )
    assert status == 201
    status, document = call(client, "DELETE", f"{BASE}/{policy_id}", key)
    assert (status, error_of(document)["code"]) == (409, "CONFLICT")
    assert error_of(document)["details"] == {"service_keys": [service["data"]["service_key"]]}
    assert error_of(document)["message"] == (
        "The escalation policy is used by a service: Payments API. Point it at another policy first."
    )


def test_credentials_and_scopes(client, setup, org):
    key, read_key, body = setup
    _, created = call(client, "POST", BASE, key, body)
    item = f"{BASE}/{created['data']['id']}"
    reads = [("GET", BASE), ("GET", item)]
    writes = [("POST", BASE), ("PATCH", item), ("DELETE", item)]
    for method, path in reads + writes:
        assert call(client, method, path, None, {})[0] == 401, (method, path)
        status, document = call(client, method, path, org.readonly_key, {})
        expected = "oncall:read" if (method, path) in reads else "oncall:write"
        assert (status, error_of(document)["details"]["required_scope"]) == (403, expected), (method, path)
    for method, path in reads:
        assert call(client, method, path, read_key)[0] == 200
    for method, path in writes:
        assert call(client, method, path, read_key, body)[0] == 403
