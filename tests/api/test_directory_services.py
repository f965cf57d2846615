"""/api/v1/services through the Chalice test client."""

from __future__ import annotations

import re

from tests.conftest import make_org
from tests.kit.api import call

SERVICE_FIELDS = {
    "name",
    "service_key",
    "description",
    "is_active",
    "default_severity",
    "service_id",
    "team_id",
    "team_name",
    "escalation_policy_id",
    "urgency_rule",  # added by the urgency issue (not a spec field)
    "alert_grouping",  # added by the noise-control issue (not a spec field)
}


def error_of(document):
    assert document["success"] is False
    return document["error"]


def test_service_lifecycle(client, org):
    key = org.owner_key
    status, team = call(client, "POST", "/api/v1/teams", key, {"name": "Core"})
    assert status == 201
    status, created = call(
        client,
        "POST",
        "/api/v1/services",
        key,
        {"name": "Payments API", "description": "Cards", "default_severity": "SEV1", "team_id": team["data"]["id"]},
    )
    assert status == 201
    assert created["success"] is True
    service = created["data"]
    assert set(service) == SERVICE_FIELDS
    assert service["urgency_rule"] == {"type": "severity_based", "support_hours": None}
    assert re.fullmatch(r"svc_[a-z0-9]{10}", service["service_key"])
    assert service["service_id"] == "SER-00001"
    assert (service["name"], service["description"], service["default_severity"], service["is_active"]) == (
        "Payments API",
        "Cards",
        "SEV1",
        True,
    )
    assert (service["team_id"], service["team_name"]) == (team["data"]["id"], "Core")

    for ref in (service["service_key"], service["service_id"]):
        status, got = call(client, "GET", f"/api/v1/services/{ref}", key)
        assert status == 200
        assert got["data"] == service

    status, patched = call(
        client,
        "PATCH",
        f"/api/v1/services/{service['service_key']}",
        key,
        {"description": None, "is_active": False, "default_severity": "SEV3", "team_id": None},
    )
    assert status == 200
    assert patched["data"] == {
        **service,
        "description": None,
        "is_active": False,
        "default_severity": "SEV3",
        "team_id": None,
        "team_name": None,
    }


def test_list_services_paginates_newest_first_and_filters(client, org):
    key = org.owner_key
    _, team = call(client, "POST", "/api/v1/teams", key, {"name": "Core"})
    team_id = team["data"]["id"]
    for name in ("One", "Two", "Three"):
        body = {"name": name, "team_id": team_id} if name != "Two" else {"name": name}
        assert call(client, "POST", "/api/v1/services", key, body)[0] == 201
    call(client, "PATCH", "/api/v1/services/SER-00003", key, {"is_active": False})

    status, page = call(client, "GET", "/api/v1/services?limit=2", key)
    assert status == 200
    data = page["data"]
    assert [s["service_id"] for s in data["items"]] == ["SER-00003", "SER-00002"]
    assert (data["total"], data["has_more"], data["next_offset"]) == (3, True, 2)
    assert data["items"][0]["team_name"] == "Core"
    _, page = call(client, "GET", "/api/v1/services?limit=2&offset=2", key)
    assert [s["name"] for s in page["data"]["items"]] == ["One"]
    assert (page["data"]["has_more"], page["data"]["next_offset"]) == (False, None)

    _, active = call(client, "GET", "/api/v1/services?is_active=true", key)
    assert [s["name"] for s in active["data"]["items"]] == ["Two", "One"]
    _, owned = call(client, "GET", f"/api/v1/services?team_id={team_id}", key)
    assert [s["name"] for s in owned["data"]["items"]] == ["Three", "One"]
    _, both = call(client, "GET", f"/api/v1/services?team_id={team_id}&is_active=false", key)
    assert [s["name"] for s in both["data"]["items"]] == ["Three"]


def test_service_validation_errors(client, org):
    key = org.owner_key
    assert call(client, "POST", "/api/v1/services", key, {"name": "Taken"})[0] == 201

    status, document = call(client, "POST", "/api/v1/services", key, {"name": "A", "colour": "red"})
    assert status == 400
    error = error_of(document)
    assert error["code"] == "VALIDATION_ERROR"
    assert {"field": "colour", "message": "unknown field"} in error["details"]["fields"]

    cases = [
        {"name": ""},
        {"name": "x" * 101},
        {"name": "A", "description": "x" * 1001},
        {"description": "no name"},
        {"name": "A", "team_id": "ghost"},
        {"name": "A", "team_id": "not/an/id"},
        {"name": 5},
        {"name": "A", "service_key": "svc_abcdefghij"},
    ]
    for body in cases:
        status, document = call(client, "POST", "/api/v1/services", key, body)
        assert status == 400, body
        assert error_of(document)["code"] == "VALIDATION_ERROR", body
        assert error_of(document)["details"]["fields"], body

    for raw in ("{not json", "[1, 2]", ""):
        status, document = call(client, "POST", "/api/v1/services", key, raw)
        assert status == 400, raw
        assert error_of(document)["code"] == "VALIDATION_ERROR"

    status, document = call(client, "POST", "/api/v1/services", key, {"name": "A", "default_severity": "SEV9"})
    assert (status, error_of(document)["code"]) == (400, "INVALID_SEVERITY")

    status, document = call(client, "POST", "/api/v1/services", key, {"name": " TAKEN "})
    assert status == 409
    assert error_of(document)["details"]["fields"] == [{"field": "name", "message": "already in use"}]

    for query in ("limit=0", "limit=101", "offset=-1", "is_active=perhaps", "colour=red"):
        status, document = call(client, "GET", f"/api/v1/services?{query}", key)
        assert status == 400, query
        assert error_of(document)["code"] == "VALIDATION_ERROR"

    for body in ({}, {"is_active": None}, {"name": None}, {"bogus": 1}, {"default_severity": "sev1"}):
        status, document = call(client, "PATCH", "/api/v1/services/SER-00001", key, body)
        assert status == 400, body
    status, document = call(client, "PATCH", "/api/v1/services/SER-00001", key, "{")
    assert status == 400

    status, _ = call(client, "GET", "/api/v1/services", key)
    assert status == 200


def test_service_not_found_auth_and_isolation(client, org):
    key = org.owner_key
    _, created = call(client, "POST", "/api/v1/services", key, {"name": "Mine"})
    service = created["data"]

    for ref in ("svc_0000000000", "SER-99999", "whatever", "svc_" + "x" * 500):
        status, document = call(client, "GET", f"/api/v1/services/{ref}", key)
        assert (status, error_of(document)["code"]) == (404, "NOT_FOUND"), ref
    status, _ = call(client, "PATCH", "/api/v1/services/SER-99999", key, {"is_active": False})
    assert status == 404

    assert error_of(call(client, "GET", "/api/v1/services")[1])["code"] == "UNAUTHORIZED"
    assert call(client, "GET", "/api/v1/services")[0] == 401
    assert call(client, "POST", "/api/v1/services", "tcs_" + "x" * 40, {"name": "A"})[0] == 401

    for method, path, body in (
        ("GET", "/api/v1/services", None),
        ("GET", f"/api/v1/services/{service['service_key']}", None),
        ("POST", "/api/v1/services", {"name": "B"}),
        ("PATCH", f"/api/v1/services/{service['service_key']}", {"is_active": False}),
    ):
        status, document = call(client, method, path, org.readonly_key, body)
        assert status == 403, (method, path)
        error = error_of(document)
        assert error["code"] == "FORBIDDEN"
        assert error["details"]["required_scope"] == ("services:read" if method == "GET" else "services:write")

    other = make_org("Other")
    for ref in (service["service_key"], service["service_id"]):
        assert call(client, "GET", f"/api/v1/services/{ref}", other.owner_key)[0] == 404
        assert call(client, "PATCH", f"/api/v1/services/{ref}", other.owner_key, {"name": "Stolen"})[0] == 404
    _, listing = call(client, "GET", "/api/v1/services", other.owner_key)
    assert listing["data"]["items"] == []
    # The same name is free in the other organization.
    assert call(client, "POST", "/api/v1/services", other.owner_key, {"name": "Mine"})[0] == 201
    assert call(client, "GET", f"/api/v1/services/{service['service_key']}", key)[1]["data"]["name"] == "Mine"
