"""Incident routes through chalice.test.Client: success paths and every error path of the spec."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import NOW, Org, make_org
from tests.kit import factories as make
from tests.kit.api import call


@pytest.fixture
def service_key(org: Org) -> str:
    return make.service(org, "Checkout").service_key


def create(client: Any, org: Org, service_key: str, **fields: Any) -> dict[str, Any]:
    response = call(
        client, "post", "/api/v1/incidents", org.owner_key, {"title": "Down", "service_ids": [service_key], **fields}
    )
    assert response.status_code == 201, response.body
    return response.json["data"]


def error_code(response: Any) -> str:
    return str(response.json["error"]["code"])


def test_create_returns_the_incident_as_at_creation(client: Any, org: Org, service_key: str) -> None:
    data = create(client, org, service_key, description="500s on /pay", severity="SEV1")
    assert data["incident_number"].startswith("INC-")
    assert (data["status"], data["severity"], data["description"]) == ("new", "SEV1", "500s on /pay")
    assert data["acknowledged_at"] is None and data["resolved_at"] is None
    assert set(data) >= {
        "incident_number",
        "title",
        "description",
        "status",
        "severity",
        "assigned_to",
        "team",
        "created_at",
        "acknowledged_at",
        "resolved_at",
    }


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"title": "", "service_ids": ["svc_aaaaaaaaaa"]}, "title"),
        ({"title": "x" * 201, "service_ids": ["svc_aaaaaaaaaa"]}, "title"),
        ({"title": "x", "service_ids": []}, "service_ids"),
        ({"title": "x", "service_ids": [f"svc_{i:010d}" for i in range(51)]}, "service_ids"),
        ({"title": "x", "service_ids": ["SER-1"]}, "service_ids.0"),
        ({"title": "x", "service_ids": ["Checkout"]}, "service_ids.0"),
        ({"title": "x", "service_ids": ["svc_aaaaaaaaaa"], "description": "d" * 10001}, "description"),
        ({"title": "x", "service_ids": ["svc_aaaaaaaaaa"], "status": "resolved"}, "status"),
        ({"service_ids": ["svc_aaaaaaaaaa"]}, "title"),
        ({"title": 5, "service_ids": ["svc_aaaaaaaaaa"]}, "title"),
    ],
)
def test_create_validation_errors(client: Any, org: Org, body: dict[str, Any], field: str) -> None:
    response = call(client, "post", "/api/v1/incidents", org.owner_key, body)
    assert response.status_code == 400
    assert error_code(response) == "VALIDATION_ERROR"
    assert field in [f["field"] for f in response.json["error"]["details"]["fields"]]


def test_create_refuses_unknown_services_and_bad_json(client: Any, org: Org) -> None:
    for unknown in ("svc_zzzzzzzzzz", "SER-99999"):
        response = call(client, "post", "/api/v1/incidents", org.owner_key, {"title": "x", "service_ids": [unknown]})
        assert (response.status_code, error_code(response)) == (400, "VALIDATION_ERROR")
        assert unknown in response.json["error"]["details"]["fields"][0]["message"]
    response = call(client, "post", "/api/v1/incidents", org.owner_key, "{not json")
    assert (response.status_code, error_code(response)) == (400, "VALIDATION_ERROR")
    response = call(client, "post", "/api/v1/incidents", org.owner_key, "[1, 2]")
    assert (response.status_code, error_code(response)) == (400, "VALIDATION_ERROR")


def test_invalid_severity_has_its_own_code(client: Any, org: Org, service_key: str) -> None:
    response = call(
        client,
        "post",
        "/api/v1/incidents",
        org.owner_key,
        {"title": "x", "service_ids": [service_key], "severity": "P1"},
    )
    assert (response.status_code, error_code(response)) == (400, "INVALID_SEVERITY")


def test_auth_and_scope_errors(client: Any, org: Org, service_key: str) -> None:
    assert call(client, "get", "/api/v1/incidents", None).status_code == 401
    assert call(client, "get", "/api/v1/incidents", "tcs_" + "x" * 40).status_code == 401
    response = call(client, "post", "/api/v1/incidents", org.readonly_key, {"title": "x", "service_ids": [service_key]})
    assert (response.status_code, error_code(response)) == (403, "FORBIDDEN")
    assert response.json["error"]["details"]["required_scope"] == "incidents:write"
    assert call(client, "get", "/api/v1/incidents", org.readonly_key).status_code == 200


def test_idempotency_rules(client: Any, org: Org, service_key: str) -> None:
    body = {"title": "Down", "service_ids": [service_key]}
    first = call(client, "post", "/api/v1/incidents", org.owner_key, body, headers={"Idempotency-Key": "abc"})
    again = call(client, "post", "/api/v1/incidents", org.owner_key, body, headers={"Idempotency-Key": "abc"})
    assert first.status_code == again.status_code == 201
    assert first.json["data"] == again.json["data"]
    assert again.headers["Idempotent-Replayed"] == "true"
    different = call(
        client,
        "post",
        "/api/v1/incidents",
        org.owner_key,
        {**body, "title": "Other"},
        headers={"Idempotency-Key": "abc"},
    )
    assert (different.status_code, error_code(different)) == (409, "IDEMPOTENCY_KEY_REUSED")
    listed = call(client, "get", "/api/v1/incidents", org.owner_key)
    assert listed.json["data"]["total"] == 1


def test_idempotency_in_progress_is_409(client: Any, org: Org, service_key: str) -> None:
    from datetime import timedelta

    from chalicelib import clock
    from chalicelib.idempotency.service import payload_fingerprint
    from chalicelib.idempotency.tables import IdempotencyRecord

    body = {"title": "Down", "service_ids": [service_key], "description": None, "severity": None}
    now = clock.now()
    IdempotencyRecord(
        f"{org.organization_id}#createIncident#busy",
        state="in_progress",
        payload_hash=payload_fingerprint(body),
        lease_expires_at=now + timedelta(seconds=60),
        expires_at=now + timedelta(hours=24),
    ).save()
    response = call(
        client,
        "post",
        "/api/v1/incidents",
        org.owner_key,
        {"title": "Down", "service_ids": [service_key]},
        headers={"Idempotency-Key": "busy"},
    )
    assert (response.status_code, error_code(response)) == (409, "IDEMPOTENCY_IN_PROGRESS")


def test_incomplete_sla_settings_are_a_500_internal_error(client: Any, org: Org, service_key: str) -> None:
    response = call(
        client,
        "put",
        "/api/v1/settings/sla",
        org.owner_key,
        {"per_severity": {"SEV4": {"acknowledge_within_minutes": None}}},
    )
    assert response.status_code == 200, response.body
    response = call(
        client,
        "post",
        "/api/v1/incidents",
        org.owner_key,
        {"title": "x", "service_ids": [service_key], "severity": "SEV4"},
    )
    assert (response.status_code, error_code(response)) == (500, "INTERNAL_ERROR")
    assert "SLA" in response.json["error"]["message"]


def test_get_detail_and_404s(client: Any, org: Org, service_key: str) -> None:
    number = create(client, org, service_key)["incident_number"]
    detail = call(client, "get", f"/api/v1/incidents/{number}", org.readonly_key)
    assert detail.status_code == 200
    assert detail.json["data"]["timeline"][0]["event_type"] == "created"
    assert detail.json["data"]["timeline_meta"] == {"limit": 50, "has_more": False}
    for path in ("/api/v1/incidents/INC-2026-9999", "/api/v1/incidents/not-a-number"):
        response = call(client, "get", path, org.owner_key)
        assert (response.status_code, error_code(response)) == (404, "NOT_FOUND")
    other = make_org("Other")
    response = call(client, "get", f"/api/v1/incidents/{number}", other.owner_key)
    assert (response.status_code, error_code(response)) == (404, "NOT_FOUND")
    for method, suffix, body in (
        ("post", "/acknowledge", None),
        ("post", "/status", {"status": "resolved"}),
        ("post", "/events", {"comment": "x"}),
        ("patch", "", {"title": "y"}),
    ):
        response = call(client, method, f"/api/v1/incidents/{number}{suffix}", other.owner_key, body)
        assert response.status_code == 404, (method, suffix)


def test_patch_rules(client: Any, org: Org, service_key: str) -> None:
    from chalicelib.directory import users

    users.create_user(organization_id=org.organization_id, name="Ada", email="ada@acme.test", now=NOW)
    number = create(client, org, service_key)["incident_number"]
    path = f"/api/v1/incidents/{number}"
    for body in ({}, {"status": "resolved"}, {"title": ""}, {"severity": None}, {"unknown": 1}):
        response = call(client, "patch", path, org.owner_key, body)
        assert (response.status_code, error_code(response)) == (400, "VALIDATION_ERROR"), body
    response = call(client, "patch", path, org.owner_key, {"severity": "SEV9"})
    assert (response.status_code, error_code(response)) == (400, "INVALID_SEVERITY")
    response = call(client, "patch", path, org.owner_key, {"assigned_to": "nobody@acme.test"})
    assert (response.status_code, error_code(response)) == (400, "VALIDATION_ERROR")
    response = call(
        client, "patch", path, org.owner_key, {"assigned_to": "ADA@acme.test", "severity": "SEV1", "title": "New title"}
    )
    assert response.status_code == 200
    data = response.json["data"]
    assert data["assigned_to"] == {"name": "Ada", "email": "ada@acme.test"}
    assert (data["severity"], data["title"], data["status"]) == ("SEV1", "New title", "new")
    types = [e["event_type"] for e in call(client, "get", path, org.owner_key).json["data"]["timeline"]]
    assert types[:3] == ["assigned", "severity_changed", "updated"]
    listed = call(client, "get", "/api/v1/incidents?assigned_to=ada@acme.test", org.owner_key)
    assert [i["incident_number"] for i in listed.json["data"]["items"]] == [number]


def test_status_rules(client: Any, org: Org, service_key: str) -> None:
    number = create(client, org, service_key)["incident_number"]
    path = f"/api/v1/incidents/{number}/status"
    response = call(client, "post", path, org.owner_key, {"status": "nonsense"})
    assert (response.status_code, error_code(response)) == (400, "INVALID_STATUS")
    response = call(client, "post", path, org.owner_key, {"status": "closed"})
    assert (response.status_code, error_code(response)) == (400, "TRANSITION_NOT_ALLOWED")
    response = call(client, "post", path, org.owner_key, {"status": "resolved", "comment": "c" * 501})
    assert (response.status_code, error_code(response)) == (400, "VALIDATION_ERROR")
    response = call(client, "post", path, org.owner_key, {"status": "resolved", "comment": "rolled back"})
    assert response.status_code == 200
    assert response.json["data"]["status"] == "resolved" and response.json["data"]["resolved_at"]
    timeline = call(client, "get", f"/api/v1/incidents/{number}", org.owner_key).json["data"]["timeline"]
    assert (timeline[0]["event_type"], timeline[0]["description"]) == ("resolved", "rolled back")
    assert call(client, "get", "/api/v1/incidents", org.owner_key).json["data"]["total"] == 0
    listed = call(client, "get", "/api/v1/incidents?status=resolved", org.owner_key).json["data"]
    assert [i["incident_number"] for i in listed["items"]] == [number]


def test_acknowledge_is_idempotent_and_moves_new_to_investigating(client: Any, org: Org, service_key: str) -> None:
    number = create(client, org, service_key)["incident_number"]
    first = call(client, "post", f"/api/v1/incidents/{number}/acknowledge", org.owner_key)
    second = call(client, "post", f"/api/v1/incidents/{number}/acknowledge", org.owner_key)
    assert first.status_code == second.status_code == 200
    assert first.json["data"]["acknowledged"] is True
    assert first.json["data"]["acknowledged_at"] == second.json["data"]["acknowledged_at"]
    detail = call(client, "get", f"/api/v1/incidents/{number}", org.owner_key).json["data"]
    assert detail["status"] == "investigating"
    assert detail["sla"]["acknowledge_met"] is True


def test_acknowledging_a_resolved_incident_is_409_and_never_meets_the_sla(
    client: Any, org: Org, service_key: str
) -> None:
    number = create(client, org, service_key, severity="SEV1")["incident_number"]
    resolved = call(client, "post", f"/api/v1/incidents/{number}/status", org.owner_key, {"status": "resolved"})
    assert resolved.status_code == 200
    late = call(client, "post", f"/api/v1/incidents/{number}/acknowledge", org.owner_key)
    assert (late.status_code, error_code(late)) == (409, "INCIDENT_RESOLVED")
    assert "resolved" in late.json["error"]["message"] and number in late.json["error"]["message"]
    assert late.json["error"]["details"]["status"] == "resolved"
    detail = call(client, "get", f"/api/v1/incidents/{number}", org.owner_key).json["data"]
    assert detail["acknowledged_at"] is None and detail["status"] == "resolved"
    assert detail["sla"]["acknowledge_met"] is None  # never "met" after the fact
    assert not [entry for entry in detail["timeline"] if entry["event_type"] == "acknowledged"]


def test_comment_rules(client: Any, org: Org, service_key: str) -> None:
    number = create(client, org, service_key)["incident_number"]
    path = f"/api/v1/incidents/{number}/events"
    for body in ({}, {"comment": ""}, {"comment": "ok", "extra": 1}):
        response = call(client, "post", path, org.owner_key, body)
        assert (response.status_code, error_code(response)) == (400, "VALIDATION_ERROR")
    response = call(client, "post", path, org.owner_key, {"comment": "Rolled back deploy 42"})
    assert response.status_code == 200
    assert response.json["data"]["comment"] == "Rolled back deploy 42"
    assert response.json["data"]["incident_number"] == number
    assert call(client, "post", path, org.readonly_key, {"comment": "x"}).status_code == 403


@pytest.mark.parametrize(
    "query",
    [
        "limit=0",
        "limit=101",
        "offset=-1",
        "limit=abc",
        "severity=SEV7",
        "status=bogus",
        "created_after=yesterday",
        "created_after=2026-11-02T00:00:00Z&created_before=2026-11-01T00:00:00Z",
        "sort=asc",
    ],
)
def test_list_query_errors(client: Any, org: Org, query: str) -> None:
    response = call(client, "get", f"/api/v1/incidents?{query}", org.owner_key)
    assert response.status_code == 400, query
    assert error_code(response) in ("VALIDATION_ERROR", "INVALID_SEVERITY", "INVALID_STATUS")


def test_list_pagination_and_filters(client: Any, org: Org, service_key: str) -> None:
    numbers = [create(client, org, service_key, severity=s)["incident_number"] for s in ("SEV1", "SEV2", "SEV1")]
    page = call(client, "get", "/api/v1/incidents?limit=2", org.owner_key).json["data"]
    assert [i["incident_number"] for i in page["items"]] == [numbers[2], numbers[1]]
    assert (page["total"], page["has_more"], page["next_offset"]) == (3, True, 2)
    page = call(client, "get", "/api/v1/incidents?limit=2&offset=2", org.owner_key).json["data"]
    assert ([i["incident_number"] for i in page["items"]], page["has_more"], page["next_offset"]) == (
        [numbers[0]],
        False,
        None,
    )
    sev1 = call(client, "get", "/api/v1/incidents?severity=SEV1&severity=SEV0", org.owner_key).json["data"]
    assert [i["incident_number"] for i in sev1["items"]] == [numbers[2], numbers[0]]
    none = call(client, "get", "/api/v1/incidents?team_name=nobody", org.owner_key).json["data"]
    assert none["total"] == 0


def test_workflow_can_be_replaced_and_is_validated(client: Any, org: Org, service_key: str) -> None:
    current = call(client, "get", "/api/v1/settings/workflow", org.owner_key).json["data"]
    assert current["initial_status"] == "new"
    broken = {"statuses": [{"name": "open", "category": "triggered"}], "moves": {}, "initial_status": "open"}
    response = call(client, "put", "/api/v1/settings/workflow", org.owner_key, broken)
    assert (response.status_code, error_code(response)) == (400, "VALIDATION_ERROR")
    simple = {
        "statuses": [{"name": "open", "category": "triggered"}, {"name": "done", "category": "resolved"}],
        "moves": {"open": ["done"], "done": ["open"]},
        "initial_status": "open",
    }
    assert call(client, "put", "/api/v1/settings/workflow", org.readonly_key, simple).status_code == 403
    response = call(client, "put", "/api/v1/settings/workflow", org.owner_key, simple)
    assert response.status_code == 200, response.body
    data = create(client, org, service_key)
    assert data["status"] == "open"
    moved = call(
        client, "post", f"/api/v1/incidents/{data['incident_number']}/status", org.owner_key, {"status": "done"}
    )
    assert moved.json["data"]["status"] == "done" and moved.json["data"]["resolved_at"]


def test_services_may_be_named_by_id_or_key(client: Any, org: Org, service_key: str) -> None:
    # Issue 26: one way to name a service; the incident lists the keys, as before.
    by_id = create(client, org, "SER-00001")
    assert by_id["service_keys"] == [service_key]
    lower = create(client, org, "ser-00001")
    assert lower["service_keys"] == [service_key]
    response = call(
        client, "post", "/api/v1/incidents", org.owner_key, {"title": "x", "service_ids": ["SER-00001", service_key]}
    )
    assert response.status_code == 201, response.body
    assert response.json["data"]["service_keys"] == [service_key]  # one service named both ways
