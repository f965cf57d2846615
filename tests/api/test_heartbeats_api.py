"""/api/v1/heartbeats and the ping URL through the Chalice test client: every operation, the ping
URL shown once, each error (400, 401, 403, 404, 409, 429), GET and POST pings, and the outage an
overdue heartbeat opens and its next ping resolves."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from chalicelib import clock
from chalicelib.apikey import service as apikeys
from chalicelib.catalog.service import Service
from chalicelib.heartbeat import overdue
from chalicelib.settings import get_settings
from tests.api.test_webhooks_api import reconfigure
from tests.conftest import NOW, Org, make_org
from tests.kit import factories as make
from tests.kit.api import call

BASE = "/api/v1/heartbeats"
HTTPS = {"X-Forwarded-Proto": "https"}
MINUTE = timedelta(minutes=1)
FIELDS = {
    "id",
    "name",
    "description",
    "service_id",
    "service_key",
    "interval_seconds",
    "grace_seconds",
    "enabled",
    "status",
    "last_ping_at",
    "next_due_at",
    "down_since",
    "incident_number",
    "version",
    "created_at",
    "updated_at",
}
PING_FIELDS = {"success", "id", "status", "last_ping_at", "next_due_at", "message"}
UNKNOWN_ID = "hb_" + "0" * 24


@pytest.fixture(autouse=True)
def frozen() -> Iterator[None]:
    with clock.frozen(NOW):
        yield


@pytest.fixture
def reader(org: Org) -> str:
    """An API key of the organization with integrations:read only."""
    _, key = apikeys.create_api_key(
        organization_id=org.organization_id,
        name="reader",
        kind="service_account",
        scopes=["integrations:read"],
        now=NOW,
        settings=get_settings(),
    )
    return key


@pytest.fixture
def svc(org: Org) -> Service:
    return make.service(org, "Backups")


def ping(client: Any, url: str, method: str = "GET", *, https: bool = True, body: bytes = b"") -> Any:
    path = url.removeprefix("http://127.0.0.1:8000")
    response = client.http.request(method, path, headers=HTTPS if https else {}, body=body)
    response.json = json.loads(response.body)
    return response


def error_code(document: dict[str, Any]) -> str:
    assert document["success"] is False
    return str(document["error"]["code"])


def fields_of(document: dict[str, Any]) -> list[str]:
    return [f["field"] for f in document["error"]["details"]["fields"]]


def create(client: Any, org: Org, svc: Service, **fields: Any) -> dict[str, Any]:
    body = {"name": "nightly backup", "service": svc.service_id, "interval_seconds": 300, "grace_seconds": 60, **fields}
    status, document = call(client, "POST", BASE, org.owner_key, body)
    assert status == 201, document
    return dict(document["data"])


def test_create_shows_the_ping_url_once(client: Any, org: Org, svc: Service) -> None:
    created = create(client, org, svc, description="02:00 every night")
    assert set(created) == FIELDS | {"ping_url"}
    assert created["ping_url"] == f"http://127.0.0.1:8000/heartbeats/{created['id']}." + created["ping_url"][-32:]
    assert (created["service_id"], created["service_key"]) == (svc.service_id, svc.service_key)
    assert (created["status"], created["enabled"], created["version"]) == ("waiting", True, 1)
    assert created["next_due_at"] == "2026-11-22T12:05:00Z" and created["last_ping_at"] is None
    status, got = call(client, "GET", f"{BASE}/{created['id']}", org.owner_key)
    assert status == 200 and set(got["data"]) == FIELDS
    assert got["data"] == {k: v for k, v in created.items() if k != "ping_url"}
    by_key = create(client, org, svc, service=svc.service_key, enabled=False)
    assert (by_key["service_id"], by_key["status"], by_key["next_due_at"]) == (svc.service_id, "paused", None)


def test_list_is_paginated_newest_first(client: Any, org: Org, svc: Service, reader: str) -> None:
    made = []
    for index in range(3):
        with clock.frozen(NOW + index * MINUTE):
            made.append(create(client, org, svc, name=f"hb {index}")["id"])
    status, document = call(client, "GET", f"{BASE}?limit=2", reader)
    assert status == 200
    page = document["data"]
    assert [item["id"] for item in page["items"]] == [made[2], made[1]]
    assert (page["total"], page["has_more"], page["next_offset"]) == (3, True, 2)
    assert all(set(item) == FIELDS for item in page["items"])
    status, document = call(client, "GET", f"{BASE}?limit=2&offset=2", org.owner_key)
    assert [item["id"] for item in document["data"]["items"]] == [made[0]]
    other = make_org("Other")
    status, document = call(client, "GET", BASE, other.owner_key)
    assert document["data"]["items"] == []


def test_update_and_pause(client: Any, org: Org, svc: Service) -> None:
    created = create(client, org, svc)
    item = f"{BASE}/{created['id']}"
    status, document = call(
        client, "PATCH", item, org.owner_key, {"name": "renamed", "interval_seconds": 600, "description": None}
    )
    assert status == 200, document
    data = document["data"]
    assert (data["name"], data["interval_seconds"], data["description"], data["version"]) == ("renamed", 600, None, 2)
    assert data["next_due_at"] == "2026-11-22T12:10:00Z"
    status, document = call(client, "PATCH", item, org.owner_key, {"enabled": False, "version": 2})
    assert status == 200 and document["data"]["status"] == "paused" and document["data"]["next_due_at"] is None
    status, document = call(client, "PATCH", item, org.owner_key, {"name": "stale", "version": 2})
    assert status == 409 and error_code(document) == "CONFLICT"
    assert document["error"]["details"] == {"expected_version": 2, "current_version": 3}


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"interval_seconds": 59}, "interval_seconds"),
        ({"interval_seconds": 7 * 86400 + 1}, "interval_seconds"),
        ({"grace_seconds": -1}, "grace_seconds"),
        ({"name": ""}, "name"),
        ({"enabled": "yes"}, "enabled"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_create_refuses_bad_fields(client: Any, org: Org, svc: Service, body: dict[str, Any], field: str) -> None:
    base = {"name": "nightly", "service": svc.service_id, "interval_seconds": 300}
    status, document = call(client, "POST", BASE, org.owner_key, {**base, **body})
    assert status == 400 and error_code(document) == "VALIDATION_ERROR"
    assert field in fields_of(document)


def test_unknown_service_and_missing_fields_are_400(client: Any, org: Org, svc: Service) -> None:
    for service in ("SER-99999", "svc_0000000000", "Backups"):
        status, document = call(
            client, "POST", BASE, org.owner_key, {"name": "x", "service": service, "interval_seconds": 60}
        )
        assert status == 400 and fields_of(document) == ["service"], document
    status, document = call(client, "POST", BASE, org.owner_key, {"name": "x"})
    assert status == 400 and set(fields_of(document)) == {"service", "interval_seconds"}
    created = create(client, org, svc)
    for body in ({}, {"version": 1}, {"interval_seconds": 30}, {"name": None}):
        status, document = call(client, "PATCH", f"{BASE}/{created['id']}", org.owner_key, body)
        assert status == 400 and error_code(document) == "VALIDATION_ERROR", body


def test_not_found_and_other_organizations(client: Any, org: Org, svc: Service) -> None:
    created = create(client, org, svc)
    other = make_org("Other")
    for path in (f"{BASE}/{UNKNOWN_ID}", f"{BASE}/nonsense", f"{BASE}/{created['id']}"):
        key = other.owner_key if path.endswith(created["id"]) else org.owner_key
        for method, body in (("GET", None), ("PATCH", {"name": "x"}), ("DELETE", None), ("POST", None)):
            target = path + "/regenerate" if method == "POST" else path
            status, document = call(client, method, target, key, body)
            assert status == 404 and error_code(document) == "NOT_FOUND", (method, target)


def test_scopes(client: Any, org: Org, svc: Service, reader: str) -> None:
    created = create(client, org, svc)
    item = f"{BASE}/{created['id']}"
    assert call(client, "GET", item, reader)[0] == 200
    assert call(client, "GET", BASE, reader)[0] == 200
    body = {"name": "x", "service": svc.service_id, "interval_seconds": 60}
    for method, path, payload in (
        ("POST", BASE, body),
        ("PATCH", item, {"name": "x"}),
        ("DELETE", item, None),
        ("POST", item + "/regenerate", None),
    ):
        status, document = call(client, method, path, reader, payload)
        assert status == 403 and error_code(document) == "FORBIDDEN", (method, path)
    for method, path in (("GET", BASE), ("GET", item)):
        status, document = call(client, method, path, org.readonly_key)  # incidents:read only
        assert status == 403
        assert call(client, method, path, None)[0] == 401


def test_regenerate_and_delete(client: Any, org: Org, svc: Service) -> None:
    created = create(client, org, svc)
    item = f"{BASE}/{created['id']}"
    status, document = call(client, "POST", item + "/regenerate", org.owner_key)
    assert status == 200 and document["data"]["ping_url"] != created["ping_url"]
    assert document["data"]["version"] == 2
    assert ping(client, created["ping_url"]).status_code == 404
    assert ping(client, document["data"]["ping_url"]).status_code == 200
    status, document = call(client, "DELETE", item, org.owner_key)
    assert (status, document["data"]) == (200, {"id": created["id"], "deleted": True})
    assert call(client, "GET", item, org.owner_key)[0] == 404


def test_ping_by_get_and_post(client: Any, org: Org, svc: Service) -> None:
    created = create(client, org, svc)
    with clock.frozen(NOW + MINUTE):
        response = ping(client, created["ping_url"])
    assert response.status_code == 200 and response.headers["Content-Type"] == "application/json"
    assert set(response.json) == PING_FIELDS
    assert response.json == {
        "success": True,
        "id": created["id"],
        "status": "up",
        "last_ping_at": "2026-11-22T12:01:00Z",
        "next_due_at": "2026-11-22T12:06:00Z",
        "message": "ping recorded",
    }
    assert response.headers["X-RateLimit-Category"] == "webhook"
    with clock.frozen(NOW + 2 * MINUTE):
        posted = ping(client, created["ping_url"], "POST", body=b"backup finished: 3 GB\n")
    assert posted.status_code == 200 and posted.json["last_ping_at"] == "2026-11-22T12:02:00Z"
    status, document = call(client, "GET", f"{BASE}/{created['id']}", org.owner_key)
    assert status == 200
    assert (document["data"]["status"], document["data"]["last_ping_at"]) == ("up", "2026-11-22T12:02:00Z")
    assert document["data"]["version"] == 1  # pings do not outdate an editor's version


def test_ping_errors(client: Any, org: Org, svc: Service) -> None:
    created = create(client, org, svc)
    wrong_secret = created["ping_url"][:-1] + ("0" if created["ping_url"][-1] != "0" else "1")
    for url in (f"/heartbeats/{UNKNOWN_ID}.{'a' * 32}", "/heartbeats/nonsense", wrong_secret):
        for method in ("GET", "POST"):
            response = ping(client, url, method)
            assert response.status_code == 404, (url, method)
            assert response.json == {
                "success": False,
                "error": {"code": "NOT_FOUND", "message": response.json["error"]["message"]},
            }
    insecure = ping(client, created["ping_url"], https=False)
    assert insecure.status_code == 403 and insecure.json["error"]["code"] == "HTTPS_REQUIRED"


def test_pings_are_rate_limited_per_heartbeat(client: Any, org: Org, svc: Service) -> None:
    reconfigure(RATE_LIMIT_WEBHOOK="2")
    first, second = create(client, org, svc), create(client, org, svc, name="other")
    assert [ping(client, first["ping_url"]).status_code for _ in range(3)] == [200, 200, 429]
    limited = ping(client, first["ping_url"], "POST")
    assert limited.json["error"]["code"] == "RATE_LIMITED" and "Retry-After" in limited.headers
    assert ping(client, second["ping_url"]).status_code == 200  # its own bucket


def test_a_paused_heartbeat_accepts_and_ignores_pings(client: Any, org: Org, svc: Service) -> None:
    created = create(client, org, svc, enabled=False)
    response = ping(client, created["ping_url"], "POST")
    assert response.status_code == 200
    assert (response.json["status"], response.json["last_ping_at"], response.json["next_due_at"]) == (
        "paused",
        None,
        None,
    )
    assert response.json["message"] == "paused: the ping was accepted and ignored"


def test_an_outage_and_its_recovery_through_the_api(client: Any, org: Org, svc: Service) -> None:
    created = create(client, org, svc)
    overdue.check_overdue(now=NOW + 6 * MINUTE, settings=get_settings())
    status, document = call(client, "GET", f"{BASE}/{created['id']}", org.owner_key)
    data = document["data"]
    assert (data["status"], data["down_since"], data["next_due_at"]) == ("down", "2026-11-22T12:06:00Z", None)
    number = data["incident_number"]
    status, incident = call(client, "GET", f"/api/v1/incidents/{number}", org.owner_key)
    assert status == 200 and incident["data"]["status"] != "resolved"
    with clock.frozen(NOW + 9 * MINUTE):
        response = ping(client, created["ping_url"])
    assert (response.json["status"], response.json["message"]) == (
        "up",
        "recovered: the missed ping's outage is resolved",
    )
    status, incident = call(client, "GET", f"/api/v1/incidents/{number}", org.owner_key)
    assert incident["data"]["status"] == "resolved"
    status, document = call(client, "GET", f"{BASE}/{created['id']}", org.owner_key)
    assert (document["data"]["status"], document["data"]["incident_number"]) == ("up", None)


def test_the_operations_are_documented(client: Any) -> None:
    document = json.loads(client.http.get("/api/v1/openapi.json").body)
    paths = document["paths"]
    assert set(paths[BASE]) == {"get", "post"}
    assert set(paths[BASE + "/{heartbeat_id}"]) == {"get", "patch", "delete"}
    assert set(paths[BASE + "/{heartbeat_id}/regenerate"]) == {"post"}
    assert set(paths["/heartbeats/{token}"]) == {"get", "post"}
    for method in ("get", "post"):
        operation = paths["/heartbeats/{token}"][method]
        assert operation.get("security") == []  # no bearer: the token is the credential
        assert set(operation["responses"]) >= {"200", "404", "429"}
    assert "201" in paths[BASE]["post"]["responses"]
    schemas = document["components"]["schemas"]
    assert schemas["HeartbeatCreate"]["properties"]["interval_seconds"]["minimum"] == 60
    assert set(schemas["HeartbeatCreate"]["required"]) == {"name", "service", "interval_seconds"}
