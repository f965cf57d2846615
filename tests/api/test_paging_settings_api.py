"""GET/PUT /api/v1/settings/paging (the fallback contacts) and the incident detail's `paging`
field, through chalice.test.Client."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chalicelib.settings import get_settings
from tests.api.test_auth_api import session_token
from tests.conftest import NOW, Org, make_org

PATH = "/api/v1/settings/paging"
# The test sessions' HMAC secret is short on purpose (tests/api/test_auth_api.py does the same).
pytestmark = pytest.mark.filterwarnings("ignore::jwt.warnings.InsecureKeyLengthWarning")


def call(client: Any, method: str, path: str, credential: str, body: Any = None) -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {credential}", "Content-Type": "application/json"}
    raw = json.dumps(body) if body is not None else None
    response = getattr(client.http, method)(path, headers=headers, body=raw)
    return response.status_code, json.loads(response.body) if response.body else None


@pytest.fixture
def people(org: Org) -> dict[str, Any]:
    from chalicelib.directory import users

    oid = org.organization_id
    found = {
        name: users.create_user(organization_id=oid, name=name.title(), email=f"{name}@acme.test", now=NOW)
        for name in ("ana", "cy", "gone")
    }
    users.update_user(organization_id=oid, user_id=found["gone"].user_id, now=NOW, is_active=False)
    return found


def fields(document: Any) -> list[str]:
    return [problem["field"] for problem in document["error"]["details"]["fields"]]


def test_no_fallback_contacts_until_set(client: Any, org: Org) -> None:
    status, document = call(client, "get", PATH, org.owner_key)
    assert status == 200 and document["data"] == {"fallback_contacts": []}


def test_set_by_id_or_email_in_order_each_once(client: Any, org: Org, people: dict[str, Any]) -> None:
    cy, ana = people["cy"], people["ana"]
    status, document = call(
        client, "put", PATH, org.owner_key, {"fallback_contacts": [cy.user_id, "ANA@acme.test", cy.email]}
    )
    assert status == 200, document
    expected = [
        {"user_id": cy.user_id, "name": "Cy", "email": "cy@acme.test", "is_active": True},
        {"user_id": ana.user_id, "name": "Ana", "email": "ana@acme.test", "is_active": True},
    ]
    assert document["data"] == {"fallback_contacts": expected}
    assert call(client, "get", PATH, org.owner_key)[1]["data"] == {"fallback_contacts": expected}
    assert call(client, "put", PATH, org.owner_key, {"fallback_contacts": []})[1]["data"] == {"fallback_contacts": []}


def test_a_contact_deactivated_later_is_listed_inactive(client: Any, org: Org, people: dict[str, Any]) -> None:
    from chalicelib.directory import users

    call(client, "put", PATH, org.owner_key, {"fallback_contacts": ["cy@acme.test"]})
    users.update_user(organization_id=org.organization_id, user_id=people["cy"].user_id, now=NOW, is_active=False)
    (contact,) = call(client, "get", PATH, org.owner_key)[1]["data"]["fallback_contacts"]
    assert (contact["email"], contact["is_active"]) == ("cy@acme.test", False)


@pytest.mark.parametrize(
    ("contacts", "field", "words"),
    [
        (["nobody@acme.test"], "fallback_contacts.0", "is not a user of this organization"),
        (["ana@acme.test", "usr_unknown"], "fallback_contacts.1", "is not a user of this organization"),
        (["gone@acme.test"], "fallback_contacts.0", "is deactivated"),
    ],
)
def test_unknown_or_inactive_people_are_refused_naming_the_entry(
    client: Any, org: Org, people: dict[str, Any], contacts: list[str], field: str, words: str
) -> None:
    status, document = call(client, "put", PATH, org.owner_key, {"fallback_contacts": contacts})
    assert status == 400 and document["error"]["code"] == "VALIDATION_ERROR"
    (problem,) = document["error"]["details"]["fields"]
    assert problem["field"] == field and words in problem["message"]
    assert call(client, "get", PATH, org.owner_key)[1]["data"] == {"fallback_contacts": []}  # nothing saved


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "fallback_contacts"),
        ({"fallback_contacts": "ana@acme.test"}, "fallback_contacts"),
        ({"fallback_contacts": [f"u{i}@acme.test" for i in range(11)]}, "fallback_contacts"),
        ({"fallback_contacts": [""]}, "fallback_contacts.0"),
        ({"fallback_contacts": [], "extra": 1}, "extra"),
    ],
)
def test_malformed_bodies(client: Any, org: Org, body: Any, field: str) -> None:
    status, document = call(client, "put", PATH, org.owner_key, body)
    assert status == 400 and field in fields(document)


def test_admin_scope_is_required(client: Any, org: Org, people: dict[str, Any]) -> None:
    viewer = session_token(org, "viewer")
    responder = session_token(org, "responder")
    body = {"fallback_contacts": ["ana@acme.test"]}
    for credential in (viewer, responder, org.readonly_key):
        assert call(client, "put", PATH, credential, body)[0] == 403
        assert call(client, "get", PATH, credential)[0] == 403
    assert call(client, "put", PATH, session_token(org, "admin"), body)[0] == 200


def test_another_organizations_people_cannot_be_set(client: Any, org: Org, people: dict[str, Any]) -> None:
    other = make_org("Other")
    status, document = call(client, "put", PATH, other.owner_key, {"fallback_contacts": [people["ana"].user_id]})
    assert status == 400 and fields(document) == ["fallback_contacts.0"]


def test_the_incident_detail_says_who_is_paged(client: Any, org: Org, people: dict[str, Any]) -> None:
    from chalicelib.catalog import service as services
    from chalicelib.paging import handlers
    from tests.service.test_escalation_runtime import drain

    quiet = services.create_service(organization_id=org.organization_id, name="Quiet", now=NOW)
    call(client, "put", PATH, org.owner_key, {"fallback_contacts": ["cy@acme.test"]})
    status, created = call(
        client, "post", "/api/v1/incidents", org.owner_key, {"title": "Down", "service_ids": [quiet.service_key]}
    )
    assert status == 201, created
    number = created["data"]["incident_number"]
    assert "paging" not in created["data"]  # the detail's field
    detail = call(client, "get", f"/api/v1/incidents/{number}", org.owner_key)[1]["data"]
    assert detail["paging"] == {"status": "pending", "reason": None, "level": None, "fallback_contacts": []}
    handlers.on_incident_created(next(m for m in drain() if m.message_type == "incident.created"), get_settings())
    detail = call(client, "get", f"/api/v1/incidents/{number}", org.owner_key)[1]["data"]
    assert detail["paging"] == {
        "status": "fallback",
        "reason": "Service Quiet has no escalation policy.",
        "level": None,
        "fallback_contacts": ["Cy"],
    }
    (entry,) = [e for e in detail["timeline"] if e["event_type"] == "nobody_to_page"]
    assert entry["title"] == "Nobody to page: paging the fallback contacts Cy"
    assert call(client, "post", f"/api/v1/incidents/{number}/acknowledge", org.owner_key)[0] == 200
    detail = call(client, "get", f"/api/v1/incidents/{number}", org.owner_key)[1]["data"]
    assert detail["paging"]["status"] == "stopped"
