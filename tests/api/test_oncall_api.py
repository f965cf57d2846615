"""GET /api/v1/on-call/current: the spec's OnCallV1 shape, coverage, the team filter, auth."""

from __future__ import annotations

from datetime import timedelta

import pytest

from chalicelib import clock
from chalicelib.apikey import service as apikeys
from chalicelib.settings import get_settings
from tests.api.test_directory_services import error_of
from tests.conftest import NOW
from tests.kit.api import call

PATH = "/api/v1/on-call/current"
ENGINEER_FIELDS = {"name", "email", "slack_user_id", "role", "schedule_name", "shift_starts_at", "shift_ends_at"}
SERVICE_FIELDS = {
    "service_key",
    "service_name",
    "service_description",
    "team_name",
    "team_description",
    "on_call_engineers",
    "has_coverage",
    "primary_on_call",
    "schedule_names",
}


@pytest.fixture
def world(client, org):
    """Two layers (a weekly Alice/Bob rotation under a 09:00-17:00 Berlin business-hours layer for
    Carol), a policy with the schedule at level 1 and Dave at level 2, on the Payments API; the
    Search service has no policy. Everything goes through the API."""
    clock.freeze(NOW)  # Sunday 2026-11-22 12:00Z, 13:00 in Berlin
    key = org.owner_key
    people = {}
    for name, slack in (("alice", "UALICE"), ("bob", None), ("carol", "UCAROL"), ("dave", None)):
        status, made = call(
            client,
            "POST",
            "/api/v1/users",
            key,
            {"name": name.title(), "email": f"{name}@example.com", "slack_user_id": slack},
        )
        assert status == 201
        people[name] = made["data"]["id"]
    _, team = call(client, "POST", "/api/v1/teams", key, {"name": "Payments", "description": "Money movers"})
    _, other_team = call(client, "POST", "/api/v1/teams", key, {"name": "Search"})
    layers = [
        {
            "name": "Weekly",
            "members": [people["alice"], people["bob"]],
            "rotation": "weekly",
            "handoff_time": "09:00",
            "start": "2026-11-16T08:00:00Z",
        },
        {
            "name": "Business hours",
            "members": [people["carol"]],
            "rotation": "daily",
            "handoff_time": "09:00",
            "start": "2026-11-16T08:00:00Z",
            "restrictions": [{"kind": "daily", "start": "09:00", "end": "17:00"}],
        },
    ]
    status, schedule = call(
        client,
        "POST",
        "/api/v1/schedules",
        key,
        {"name": "Payments primary", "time_zone": "Europe/Berlin", "team_id": team["data"]["id"], "layers": layers},
    )
    assert status == 201
    policy = {
        "name": "Payments",
        "levels": [
            {"targets": [{"kind": "schedule", "id": schedule["data"]["id"]}], "delay_minutes": 5},
            {"targets": [{"kind": "user", "id": people["dave"]}], "delay_minutes": 15},
        ],
    }
    status, made_policy = call(client, "POST", "/api/v1/escalation-policies", key, policy)
    assert status == 201
    status, payments = call(
        client,
        "POST",
        "/api/v1/services",
        key,
        {
            "name": "Payments API",
            "description": "Cards",
            "team_id": team["data"]["id"],
            "escalation_policy_id": made_policy["data"]["id"],
        },
    )
    assert status == 201
    clock.freeze(NOW + timedelta(seconds=1))
    status, search = call(
        client, "POST", "/api/v1/services", key, {"name": "Search", "team_id": other_team["data"]["id"]}
    )
    assert status == 201
    clock.freeze(NOW)
    return key, people, payments["data"], search["data"], schedule["data"]


def test_current_on_call_shape(client, world):
    key, _, payments, search, _ = world
    status, document = call(client, "GET", PATH, key)
    assert status == 200
    data = document["data"]
    assert set(data) == {"timestamp", "summary", "services"}
    assert data["timestamp"] == "2026-11-22T12:00:00Z"
    assert data["summary"] == {
        "total_services": 2,
        "services_with_coverage": 1,
        "services_without_coverage": 1,
        "coverage_percentage": 50,
    }
    newest, oldest = data["services"]
    assert all(set(entry) == SERVICE_FIELDS for entry in data["services"])
    assert newest == {
        "service_key": search["service_key"],
        "service_name": "Search",
        "service_description": None,
        "team_name": "Search",
        "team_description": None,
        "on_call_engineers": [],
        "has_coverage": False,
        "primary_on_call": None,
        "schedule_names": [],
    }
    carol = {
        "name": "Carol",
        "email": "carol@example.com",
        "slack_user_id": "UCAROL",
        "role": "primary",
        "schedule_name": "Payments primary",
        "shift_starts_at": "2026-11-22T08:00:00Z",
        "shift_ends_at": "2026-11-22T16:00:00Z",
    }
    dave = {
        "name": "Dave",
        "email": "dave@example.com",
        "slack_user_id": None,
        "role": "secondary",
        "schedule_name": None,
        "shift_starts_at": None,
        "shift_ends_at": None,
    }
    assert oldest == {
        "service_key": payments["service_key"],
        "service_name": "Payments API",
        "service_description": "Cards",
        "team_name": "Payments",
        "team_description": "Money movers",
        "on_call_engineers": [carol, dave],
        "has_coverage": True,
        "primary_on_call": carol,
        "schedule_names": ["Payments primary"],
    }
    assert set(carol) == ENGINEER_FIELDS


def test_lower_layer_after_hours_and_overrides(client, world):
    key, people, _, _, schedule = world
    clock.freeze(NOW + timedelta(hours=8))  # 21:00 in Berlin: only the weekly layer has a shift
    _, document = call(client, "GET", PATH + "?team_name=payments", key)
    [entry] = document["data"]["services"]
    assert entry["primary_on_call"] == {
        "name": "Alice",
        "email": "alice@example.com",
        "slack_user_id": "UALICE",
        "role": "primary",
        "schedule_name": "Payments primary",
        "shift_starts_at": "2026-11-22T16:00:00Z",
        "shift_ends_at": "2026-11-23T08:00:00Z",
    }
    override = {"user_id": people["bob"], "start": "2026-11-22T19:00:00Z", "end": "2026-11-22T21:00:00Z"}
    assert call(client, "POST", f"/api/v1/schedules/{schedule['id']}/overrides", key, override)[0] == 201
    _, document = call(client, "GET", PATH + "?team_name=payments", key)
    primary = document["data"]["services"][0]["primary_on_call"]
    assert (primary["name"], primary["shift_starts_at"], primary["shift_ends_at"]) == (
        "Bob",
        "2026-11-22T19:00:00Z",
        "2026-11-22T21:00:00Z",
    )


def test_team_filter_is_case_insensitive(client, world):
    key, _, payments, search, _ = world
    for name in ("Payments", "PAYMENTS", "payments"):
        _, document = call(client, "GET", f"{PATH}?team_name={name}", key)
        assert [s["service_key"] for s in document["data"]["services"]] == [payments["service_key"]]
        assert document["data"]["summary"]["coverage_percentage"] == 100
    _, document = call(client, "GET", f"{PATH}?team_name=sEaRcH", key)
    assert [s["service_key"] for s in document["data"]["services"]] == [search["service_key"]]
    assert document["data"]["summary"]["coverage_percentage"] == 0
    _, document = call(client, "GET", f"{PATH}?team_name=Nobody", key)
    assert document["data"]["services"] == [] and document["data"]["summary"]["total_services"] == 0


def test_errors_and_scopes(client, world, org):
    key, _, _, _, _ = world
    status, document = call(client, "GET", f"{PATH}?team=x", key)
    assert (status, error_of(document)["code"]) == (400, "VALIDATION_ERROR")
    assert call(client, "GET", PATH, None)[0] == 401
    status, document = call(client, "GET", PATH, org.readonly_key)
    assert (status, error_of(document)["details"]["required_scope"]) == (403, "oncall:read")
    _, reader = apikeys.create_api_key(
        organization_id=org.organization_id,
        name="reader",
        kind="service_account",
        scopes=["oncall:read"],
        now=NOW,
        settings=get_settings(),
    )
    assert call(client, "GET", PATH, reader)[0] == 200
