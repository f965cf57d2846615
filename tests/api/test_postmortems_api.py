"""/api/v1/postmortems through chalice.test.Client: the whole lifecycle and every error path."""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib import clock
from chalicelib.apikey import service as apikeys
from chalicelib.settings import get_settings
from tests.api.test_incidents_api import create, error_code
from tests.conftest import NOW, Org, make_org
from tests.kit import factories as make
from tests.kit.api import call

BASE = "/api/v1/postmortems"
POSTMORTEM_FIELDS = {
    "id",
    "postmortem_number",
    "incident_number",
    "level",
    "status",
    "summary",
    "root_cause",
    "resolution",
    "impact",
    "impact_html",
    "timeline",
    "timeline_html",
    "action_items",
    "action_items_html",
    "contributing_factors",
    "detection_path",
    "monitoring_gaps",
    "response_timeline",
    "response_timeline_html",
    "five_whys",
    "executive_summary",
    "prevented_recurrence",
    "created_at",
    "updated_at",
    "version",
}
SCRIPT = "<script>alert(1)</script>"
INERT = "&lt;script&gt;alert(1)&lt;/script&gt;"


@pytest.fixture
def incident_number(client: Any, org: Org) -> str:
    clock.freeze(NOW)
    service_key = make.service(org, "Checkout").service_key
    return str(create(client, org, service_key)["incident_number"])


def key_with(org: Org, *scopes: str) -> str:
    _, key = apikeys.create_api_key(
        organization_id=org.organization_id,
        name="scoped",
        kind="service_account",
        scopes=list(scopes),
        now=NOW,
        settings=get_settings(),
    )
    return key


def new_postmortem(client: Any, org: Org, incident_number: str, **fields: Any) -> dict[str, Any]:
    response = call(client, "post", BASE, org.owner_key, {"incident_number": incident_number, **fields})
    assert response.status_code == 201, response.body
    return dict(response.json["data"])


def test_lifecycle_create_read_review_publish(client: Any, org: Org, incident_number: str) -> None:
    body = {
        "level": "full",
        "summary": "Checkout failed for 40 minutes",
        "impact": {
            "duration": "40m",
            "users_affected": "12%",
            "services_affected": ["checkout"],
            "revenue_impact": None,
        },
        "timeline": [{"timestamp": "12:00 UTC", "description": "Deploy 512 started"}],
        "action_items": [{"text": "Canary deploys", "owner_email": "Lead@Example.com", "due_date": "2026-12-01"}],
        "response_timeline": {"time_to_identify": "15m"},
        "five_whys": "1. Why...",
    }
    created = new_postmortem(client, org, incident_number, **body)
    assert set(created) == POSTMORTEM_FIELDS
    assert (created["postmortem_number"], created["incident_number"], created["level"], created["status"]) == (
        "PM-2026-0001",
        incident_number,
        "full",
        "draft",
    )
    assert created["action_items"] == [
        {"text": "Canary deploys", "owner_email": "lead@example.com", "due_date": "2026-12-01", "status": "pending"}
    ]
    assert created["response_timeline"] == {
        "time_to_acknowledge": None,
        "time_to_identify": "15m",
        "time_to_resolve": None,
    }
    assert created["timeline_html"] == (
        '<ol class="postmortem-timeline"><li><time>12:00 UTC</time> Deploy 512 started</li></ol>'
    )
    assert (created["created_at"], created["updated_at"], created["version"]) == ("2026-11-22T12:00:00.000Z", None, 1)

    by_incident = call(client, "get", f"{BASE}?incident_number={incident_number}", org.owner_key)
    assert (by_incident.status_code, by_incident.json["data"]) == (200, created)
    item = f"{BASE}/{created['id']}"
    assert call(client, "get", item, org.owner_key).json["data"] == created

    incident = call(client, "get", f"/api/v1/incidents/{incident_number}", org.owner_key).json["data"]
    [entry] = [e for e in incident["timeline"] if e["event_type"] == "postmortem_created"]
    assert entry["title"] == "Postmortem PM-2026-0001 created"

    reviewed = call(client, "patch", item, org.owner_key, {"status": "in_review", "root_cause": "Bad config"})
    assert reviewed.status_code == 200, reviewed.body
    assert (reviewed.json["data"]["status"], reviewed.json["data"]["root_cause"]) == ("in_review", "Bad config")
    published = call(client, "patch", item, org.owner_key, {"status": "published", "version": 2})
    assert (published.status_code, published.json["data"]["status"], published.json["data"]["version"]) == (
        200,
        "published",
        3,
    )


def test_script_in_every_structured_string_comes_out_inert(client: Any, org: Org, incident_number: str) -> None:
    created = new_postmortem(
        client,
        org,
        incident_number,
        summary=SCRIPT,
        impact={"duration": SCRIPT, "services_affected": [SCRIPT]},
        timeline=[{"timestamp": SCRIPT, "description": SCRIPT}],
        action_items=[{"text": SCRIPT, "due_date": SCRIPT}],
        response_timeline={"time_to_acknowledge": SCRIPT},
    )
    for field in ("impact_html", "timeline_html", "action_items_html", "response_timeline_html"):
        assert "<script" not in created[field], field
        assert INERT in created[field], field
    assert created["summary"] == SCRIPT  # plain text fields are data, not markup: stored as written


def test_legacy_record_reads_back_with_its_html_strings(client: Any, org: Org, incident_number: str) -> None:
    legacy = {
        "incident_number": incident_number,
        "level": "light",
        "status": "published",
        "created_at": "2024-03-01T09:30:00Z",
        "summary": "Imported",
        "impact": "<p>Checkout <b>down</b></p>",
        "timeline": "<ul><li>09:30 paged</li></ul>",
        "action_items": "<ol><li>fix</li></ol>",
        "response_timeline": "<p>ack 5m</p>",
        "response_timeline_html": "<p>Acknowledged in <b>5m</b></p>",
    }
    response = call(client, "post", f"{BASE}/import", org.owner_key, legacy)
    assert response.status_code == 201, response.body
    read = call(client, "get", f"{BASE}?incident_number={incident_number}", org.owner_key).json["data"]
    assert read == response.json["data"]
    assert (read["impact"], read["impact_html"]) == ("<p>Checkout <b>down</b></p>", None)
    assert (read["timeline"], read["timeline_html"]) == ("<ul><li>09:30 paged</li></ul>", None)
    assert (read["action_items"], read["action_items_html"]) == ("<ol><li>fix</li></ol>", None)
    assert (read["response_timeline"], read["response_timeline_html"]) == (
        "<p>ack 5m</p>",
        "<p>Acknowledged in <b>5m</b></p>",
    )
    assert (read["postmortem_number"], read["status"], read["level"], read["created_at"]) == (
        "PM-2024-0001",
        "published",
        "light",
        "2024-03-01T09:30:00.000Z",
    )


def test_import_needs_admin_and_refuses_structured_values(client: Any, org: Org, incident_number: str) -> None:
    writer = key_with(org, "postmortems:write")
    response = call(client, "post", f"{BASE}/import", writer, {"incident_number": incident_number})
    assert (response.status_code, error_code(response)) == (403, "FORBIDDEN")
    response = call(client, "post", f"{BASE}/import", org.owner_key, {"incident_number": incident_number, "impact": {}})
    assert (response.status_code, error_code(response)) == (400, "VALIDATION_ERROR")
    response = call(client, "post", f"{BASE}/import", org.owner_key, {"incident_number": "INC-2026-9999"})
    assert (response.status_code, error_code(response)) == (404, "NOT_FOUND")
    new_postmortem(client, org, incident_number)
    response = call(client, "post", f"{BASE}/import", org.owner_key, {"incident_number": incident_number})
    assert (response.status_code, error_code(response)) == (409, "CONFLICT")


def test_create_errors(client: Any, org: Org, incident_number: str) -> None:
    unknown = call(client, "post", BASE, org.owner_key, {"incident_number": "INC-2026-9999"})
    assert (unknown.status_code, error_code(unknown)) == (404, "NOT_FOUND")
    first = new_postmortem(client, org, incident_number)
    second = call(client, "post", BASE, org.owner_key, {"incident_number": incident_number})
    assert (second.status_code, error_code(second)) == (409, "CONFLICT")
    assert second.json["error"]["details"] == {"incident_number": incident_number, "postmortem_id": first["id"]}


def field_errors(response: Any) -> list[str]:
    assert (response.status_code, error_code(response)) == (400, "VALIDATION_ERROR"), response.body
    return [problem["field"] for problem in response.json["error"]["details"]["fields"]]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "incident_number"),
        ({"incident_number": "42"}, "incident_number"),
        ({"incident_number": "INC-2026-0001", "colour": "red"}, "colour"),
        ({"incident_number": "INC-2026-0001", "level": "huge"}, "level"),
        ({"incident_number": "INC-2026-0001", "impact": {"duration": "1h", "cost": "x"}}, "impact.cost"),
        ({"incident_number": "INC-2026-0001", "impact": "<p>html</p>"}, "impact"),
        ({"incident_number": "INC-2026-0001", "timeline": [{"timestamp": "12:00"}]}, "timeline.0.description"),
        (
            {"incident_number": "INC-2026-0001", "action_items": [{"text": "x", "owner_email": "nope"}]},
            "action_items.0.owner_email",
        ),
        (
            {"incident_number": "INC-2026-0001", "action_items": [{"text": "x", "status": "done"}]},
            "action_items.0.status",
        ),
        ({"incident_number": "INC-2026-0001", "action_items": [{"owner_email": "a@b.co"}]}, "action_items.0.text"),
        (
            {"incident_number": "INC-2026-0001", "response_timeline": {"time_to_fix": "1m"}},
            "response_timeline.time_to_fix",
        ),
        ({"incident_number": "INC-2026-0001", "summary": "x" * 20_001}, "summary"),
    ],
)
def test_create_validation_errors(
    client: Any, org: Org, incident_number: str, body: dict[str, Any], field: str
) -> None:
    assert field in field_errors(call(client, "post", BASE, org.owner_key, body))


def test_malformed_json_is_400(client: Any, org: Org) -> None:
    assert "body" in field_errors(call(client, "post", BASE, org.owner_key, "{not json"))


def test_get_by_incident_errors(client: Any, org: Org, incident_number: str) -> None:
    assert "incident_number" in field_errors(call(client, "get", BASE, org.owner_key))
    assert "incident_number" in field_errors(call(client, "get", f"{BASE}?incident_number=PM-2026-0001", org.owner_key))
    assert "limit" in field_errors(
        call(client, "get", f"{BASE}?incident_number={incident_number}&limit=1", org.owner_key)
    )
    none = call(client, "get", f"{BASE}?incident_number={incident_number}", org.owner_key)
    assert (none.status_code, error_code(none)) == (404, "NOT_FOUND")
    for postmortem_id in ("00000000-0000-0000-0000-000000000000", "not-an-id", "x" * 2000):
        missing = call(client, "get", f"{BASE}/{postmortem_id}", org.owner_key)
        assert (missing.status_code, error_code(missing)) == (404, "NOT_FOUND")


def test_patch_errors(client: Any, org: Org, incident_number: str) -> None:
    item = f"{BASE}/{new_postmortem(client, org, incident_number)['id']}"
    key = org.owner_key
    assert "body" in field_errors(call(client, "patch", item, key, {}))
    assert "body" in field_errors(call(client, "patch", item, key, {"version": 1}))
    assert "colour" in field_errors(call(client, "patch", item, key, {"colour": "red"}))
    assert "level" in field_errors(call(client, "patch", item, key, {"level": None}))
    assert "status" in field_errors(call(client, "patch", item, key, {"status": None}))
    assert "action_items.0.owner_email" in field_errors(
        call(client, "patch", item, key, {"action_items": [{"text": "x", "owner_email": "not-an-email"}]})
    )
    bad_status = call(client, "patch", item, key, {"status": "archived"})
    assert (bad_status.status_code, error_code(bad_status)) == (400, "INVALID_STATUS")
    skip = call(client, "patch", item, key, {"status": "published"})
    assert (skip.status_code, error_code(skip)) == (400, "TRANSITION_NOT_ALLOWED")
    assert skip.json["error"]["details"] == {"from": "draft", "to": "published", "allowed": ["in_review"]}
    stale = call(client, "patch", item, key, {"summary": "x", "version": 7})
    assert (stale.status_code, error_code(stale)) == (409, "CONFLICT")
    unknown = call(client, "patch", f"{BASE}/nope", key, {"summary": "x"})
    assert (unknown.status_code, error_code(unknown)) == (404, "NOT_FOUND")

    assert call(client, "patch", item, key, {"status": "in_review"}).status_code == 200
    assert call(client, "patch", item, key, {"status": "published"}).status_code == 200
    final = call(client, "patch", item, key, {"summary": "rewrite history"})
    assert (final.status_code, error_code(final)) == (409, "CONFLICT")
    back = call(client, "patch", item, key, {"status": "in_review"})
    assert (back.status_code, error_code(back)) == (400, "TRANSITION_NOT_ALLOWED")


def test_patch_null_clears_content_and_rerenders(client: Any, org: Org, incident_number: str) -> None:
    item = f"{BASE}/{new_postmortem(client, org, incident_number, summary='s', impact={'duration': '1h'})['id']}"
    patched = call(client, "patch", item, org.owner_key, {"summary": None, "impact": {"users_affected": SCRIPT}})
    data = patched.json["data"]
    assert data["summary"] is None
    assert data["impact"] == {
        "duration": None,
        "users_affected": SCRIPT,
        "services_affected": None,
        "revenue_impact": None,
    }
    assert data["impact_html"] == f'<dl class="postmortem-impact"><dt>Users affected</dt><dd>{INERT}</dd></dl>'


@pytest.mark.parametrize(
    ("method", "path", "body", "scope"),
    [
        ("post", BASE, {"incident_number": "INC-2026-0001"}, "postmortems:write"),
        ("get", BASE + "?incident_number=INC-2026-0001", None, "postmortems:read"),
        ("get", BASE + "/some-id", None, "postmortems:read"),
        ("patch", BASE + "/some-id", {"summary": "x"}, "postmortems:write"),
        ("post", BASE + "/import", {"incident_number": "INC-2026-0001"}, "admin"),
    ],
)
def test_auth_and_scope_errors(client: Any, org: Org, method: str, path: str, body: Any, scope: str) -> None:
    anonymous = call(client, method, path, None, body)
    assert (anonymous.status_code, error_code(anonymous)) == (401, "UNAUTHORIZED")
    bogus = call(client, method, path, "tk_not_a_key", body)
    assert (bogus.status_code, error_code(bogus)) == (401, "UNAUTHORIZED")
    forbidden = call(client, method, path, org.readonly_key, body)
    assert (forbidden.status_code, error_code(forbidden)) == (403, "FORBIDDEN")
    assert forbidden.json["error"]["details"] == {"required_scope": scope}


def test_read_scope_reads_but_cannot_write(client: Any, org: Org, incident_number: str) -> None:
    created = new_postmortem(client, org, incident_number)
    reader = key_with(org, "postmortems:read")
    assert call(client, "get", f"{BASE}/{created['id']}", reader).status_code == 200
    denied = call(client, "patch", f"{BASE}/{created['id']}", reader, {"summary": "x"})
    assert (denied.status_code, error_code(denied)) == (403, "FORBIDDEN")


def test_postmortems_are_per_organization(client: Any, org: Org, incident_number: str) -> None:
    created = new_postmortem(client, org, incident_number)
    other = make_org("Other")
    assert call(client, "get", f"{BASE}/{created['id']}", other.owner_key).status_code == 404
    assert call(client, "get", f"{BASE}?incident_number={incident_number}", other.owner_key).status_code == 404
    response = call(client, "post", BASE, other.owner_key, {"incident_number": incident_number})
    assert (response.status_code, error_code(response)) == (404, "NOT_FOUND")
