"""Urgency through chalice.test.Client: a service's urgency_rule on create, PATCH and GET (good and
bad bodies), and an incident's urgency in every answer that shows it."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from chalicelib import clock
from tests.conftest import NOW, Org
from tests.kit.api import call

SERVICES = "/api/v1/services"
DEFAULT = {"type": "severity_based", "support_hours": None}
OFFICE = {"time_zone": "Europe/Berlin", "days": ["mon", "tue", "wed", "thu", "fri"], "start": "09:00", "end": "17:00"}
# NOW is Sunday 2026-11-22 12:00Z; the next Monday at 10:00 in Berlin (CET) is 09:00Z.
MONDAY_OFFICE = NOW + timedelta(hours=21)


def create_service(client: Any, org: Org, **fields: Any) -> Any:
    return call(client, "post", SERVICES, org.owner_key, {"name": "Checkout", **fields})


def fields_of(response: Any) -> list[str]:
    assert response.status_code == 400, response.body
    assert response.json["error"]["code"] == "VALIDATION_ERROR"
    return [item["field"] for item in response.json["error"]["details"]["fields"]]


@pytest.mark.parametrize(
    ("given", "answered"),
    [
        (None, DEFAULT),
        ({"type": "high"}, {"type": "high", "support_hours": None}),
        ({"type": "low", "support_hours": None}, {"type": "low", "support_hours": None}),
        ({"type": "severity_based", "support_hours": OFFICE}, {"type": "severity_based", "support_hours": OFFICE}),
        # Days come back once each, Monday first; an overnight window is kept as given.
        (
            {
                "type": "high",
                "support_hours": {**OFFICE, "days": ["sun", "mon", "sun"], "start": "22:00", "end": "06:00"},
            },
            {"type": "high", "support_hours": {**OFFICE, "days": ["mon", "sun"], "start": "22:00", "end": "06:00"}},
        ),
    ],
)
def test_create_and_read_a_services_rule(client: Any, org: Org, given: Any, answered: Any) -> None:
    response = create_service(client, org, **({"urgency_rule": given} if given is not None else {}))
    assert response.status_code == 201, response.body
    service = response.json["data"]
    assert service["urgency_rule"] == answered
    got = call(client, "get", f"{SERVICES}/{service['service_id']}", org.owner_key)
    assert got.json["data"]["urgency_rule"] == answered
    listed = call(client, "get", SERVICES, org.owner_key)
    assert [item["urgency_rule"] for item in listed.json["data"]["items"]] == [answered]


def test_patch_replaces_the_rule_and_other_patches_keep_it(client: Any, org: Org) -> None:
    key = create_service(client, org).json["data"]["service_key"]
    rule = {"type": "high", "support_hours": OFFICE}
    patched = call(client, "patch", f"{SERVICES}/{key}", org.owner_key, {"urgency_rule": rule})
    assert patched.status_code == 200, patched.body
    assert patched.json["data"]["urgency_rule"] == rule
    renamed = call(client, "patch", f"{SERVICES}/{key}", org.owner_key, {"name": "Checkout API"})
    assert renamed.json["data"]["urgency_rule"] == rule
    cleared = call(client, "patch", f"{SERVICES}/{key}", org.owner_key, {"urgency_rule": {"type": "low"}})
    assert cleared.json["data"]["urgency_rule"] == {"type": "low", "support_hours": None}


BAD_RULES = [
    # What the document states (the request model refuses it) ...
    ({"type": "urgent"}, "urgency_rule.type"),
    ({}, "urgency_rule.type"),
    ("high", "urgency_rule"),
    ({"type": "high", "colour": "red"}, "urgency_rule.colour"),
    ({"type": "high", "support_hours": {**OFFICE, "start": "9am"}}, "urgency_rule.support_hours.start"),
    ({"type": "high", "support_hours": {**OFFICE, "end": "24:00"}}, "urgency_rule.support_hours.end"),
    ({"type": "high", "support_hours": {**OFFICE, "days": []}}, "urgency_rule.support_hours.days"),
    ({"type": "high", "support_hours": {**OFFICE, "days": ["monday"]}}, "urgency_rule.support_hours.days.0"),
    (
        {"type": "high", "support_hours": {"time_zone": "UTC", "days": ["mon"], "start": "09:00"}},
        "urgency_rule.support_hours.end",
    ),
    # ... and what only the service can tell: a zone the database lacks, an empty or whole-day window.
    (
        {"type": "high", "support_hours": {**OFFICE, "time_zone": "Mars/Olympus"}},
        "urgency_rule.support_hours.time_zone",
    ),
    ({"type": "high", "support_hours": {**OFFICE, "time_zone": "localtime"}}, "urgency_rule.support_hours.time_zone"),
    ({"type": "high", "support_hours": {**OFFICE, "start": "08:00", "end": "08:00"}}, "urgency_rule.support_hours.end"),
]


@pytest.mark.parametrize(("rule", "field"), BAD_RULES)
def test_a_bad_rule_is_a_400_naming_the_field(client: Any, org: Org, rule: Any, field: str) -> None:
    assert field in fields_of(create_service(client, org, urgency_rule=rule))
    assert call(client, "get", SERVICES, org.owner_key).json["data"]["items"] == []  # nothing written

    key = create_service(client, org, name="Search", urgency_rule={"type": "low"}).json["data"]["service_key"]
    assert field in fields_of(call(client, "patch", f"{SERVICES}/{key}", org.owner_key, {"urgency_rule": rule}))
    got = call(client, "get", f"{SERVICES}/{key}", org.owner_key).json["data"]
    assert got["urgency_rule"] == {"type": "low", "support_hours": None}


def test_patch_refuses_a_null_rule(client: Any, org: Org) -> None:
    key = create_service(client, org).json["data"]["service_key"]
    assert fields_of(call(client, "patch", f"{SERVICES}/{key}", org.owner_key, {"urgency_rule": None})) == [
        "urgency_rule"
    ]


def test_the_service_errors_say_what_is_wrong(client: Any, org: Org) -> None:
    response = create_service(
        client, org, urgency_rule={"type": "high", "support_hours": {**OFFICE, "time_zone": "Nowhere", "end": "09:00"}}
    )
    assert response.json["error"]["details"]["fields"] == [
        {
            "field": "urgency_rule.support_hours.time_zone",
            "message": "must be an IANA time zone such as Europe/Berlin or America/New_York",
        },
        {
            "field": "urgency_rule.support_hours.end",
            "message": "must differ from start (an end before start runs overnight)",
        },
    ]


# --- incidents ---------------------------------------------------------------------------------------


def open_incident(client: Any, org: Org, service_key: str, severity: str) -> dict[str, Any]:
    body = {"title": "Down", "service_ids": [service_key], "severity": severity}
    response = call(client, "post", "/api/v1/incidents", org.owner_key, body)
    assert response.status_code == 201, response.body
    return dict(response.json["data"])


def test_an_incidents_urgency_in_every_answer(client: Any, org: Org) -> None:
    rule = {"type": "severity_based", "support_hours": OFFICE}
    with clock.frozen(MONDAY_OFFICE):
        key = create_service(client, org, urgency_rule=rule).json["data"]["service_key"]
        created = open_incident(client, org, key, "SEV3")
        assert created["urgency"] == "low"
        number = created["incident_number"]
        patched = call(client, "patch", f"/api/v1/incidents/{number}", org.owner_key, {"severity": "SEV1"})
        assert patched.status_code == 200, patched.body
        assert patched.json["data"]["urgency"] == "high"
    detail = call(client, "get", f"/api/v1/incidents/{number}", org.owner_key).json["data"]
    assert detail["urgency"] == "high"
    assert detail["timeline"][0]["description"] == "Urgency changed from low to high."
    moved = call(client, "post", f"/api/v1/incidents/{number}/status", org.owner_key, {"status": "investigating"})
    assert moved.json["data"]["urgency"] == "high"
    # Monday evening in Berlin, outside support hours: a severity change makes it low.
    with clock.frozen(MONDAY_OFFICE + timedelta(hours=10)):
        evening = call(client, "patch", f"/api/v1/incidents/{number}", org.owner_key, {"severity": "SEV0"})
    assert evening.json["data"]["urgency"] == "low"


def test_the_incident_list_shows_and_filters_urgency(client: Any, org: Org) -> None:
    loud = create_service(client, org, name="Loud", urgency_rule={"type": "high"}).json["data"]["service_key"]
    quiet = create_service(client, org, name="Quiet", urgency_rule={"type": "low"}).json["data"]["service_key"]
    high = open_incident(client, org, loud, "SEV4")["incident_number"]
    low = open_incident(client, org, quiet, "SEV0")["incident_number"]

    def listed(query: str) -> dict[str, str]:
        response = call(client, "get", f"/api/v1/incidents{query}", org.owner_key)
        assert response.status_code == 200, response.body
        return {item["incident_number"]: item["urgency"] for item in response.json["data"]["items"]}

    assert listed("") == {high: "high", low: "low"}
    assert listed("?urgency=high") == {high: "high"}
    assert listed("?urgency=low&urgency=high") == {high: "high", low: "low"}
    assert listed("?urgency=low,low") == {low: "low"}
    assert fields_of(call(client, "get", "/api/v1/incidents?urgency=medium", org.owner_key)) == ["urgency.0"]


def test_the_document_describes_the_rule_and_the_urgency(document: dict[str, Any]) -> None:
    schemas = document["components"]["schemas"]
    assert schemas["IncidentV1"]["properties"]["urgency"]["enum"] == ["high", "low"]
    assert "urgency" not in schemas["IncidentV1"]["required"]  # the spec's required fields stay as they are
    assert "urgency_rule" in schemas["ServiceV1"]["required"]
    assert "urgency_rule" not in schemas.get("ServiceCreate", {}).get("required", [])
