"""/api/v1/status-pages through the Chalice test client: the happy path and every error path."""

from __future__ import annotations

import pytest

from chalicelib import clock
from chalicelib.apikey import service as apikeys
from chalicelib.settings import get_settings
from tests.api.test_directory_services import error_of
from tests.conftest import NOW
from tests.kit import factories as make
from tests.kit.api import call

BASE = "/api/v1/status-pages"
UNKNOWN_PAGE = "page_0000000000000000000000aa"


@pytest.fixture
def keys(client, org):
    clock.freeze(NOW)
    _, reader = apikeys.create_api_key(
        organization_id=org.organization_id,
        name="reader",
        kind="service_account",
        scopes=["status:read"],
        now=NOW,
        settings=get_settings(),
    )
    return org.owner_key, reader


@pytest.fixture
def page(client, keys):
    owner, _ = keys
    status, created = call(client, "POST", BASE, owner, {"name": "Acme", "slug": "acme"})
    assert status == 201, created
    page = created["data"]
    section = call(client, "POST", f"{BASE}/{page['id']}/sections", owner, {"name": "Core"})[1]["data"]
    group = call(client, "POST", f"{BASE}/{page['id']}/groups", owner, {"name": "APIs", "section_id": section["id"]})
    component = call(
        client,
        "POST",
        f"{BASE}/{page['id']}/components",
        owner,
        {"name": "Checkout", "section_id": section["id"], "group_id": group[1]["data"]["id"]},
    )
    assert component[0] == 201, component
    return page, section, group[1]["data"], component[1]["data"]


def test_page_lifecycle(client, keys):
    owner, reader = keys
    status, created = call(client, "POST", BASE, owner, {"name": "Acme", "slug": "acme"})
    assert status == 201
    page = created["data"]
    assert page["id"].startswith("page_")
    assert (page["slug"], page["url"]) == ("acme", "http://127.0.0.1:8000/status/acme")
    item = f"{BASE}/{page['id']}"
    assert call(client, "GET", item, reader)[1]["data"] == page
    listed = call(client, "GET", BASE, reader)[1]["data"]
    assert (listed["items"], listed["total"]) == ([page], 1)
    status, patched = call(client, "PATCH", item, owner, {"name": "Acme Inc", "slug": "acme-inc"})
    assert status == 200
    assert (patched["data"]["name"], patched["data"]["url"]) == ("Acme Inc", "http://127.0.0.1:8000/status/acme-inc")
    status, deleted = call(client, "DELETE", item, owner)
    assert (status, deleted["data"]) == (200, {"id": page["id"], "deleted": True})
    assert call(client, "GET", item, owner)[0] == 404


def test_structure_and_component_status(client, keys, page):
    owner, reader = keys
    created, section, group, component = page
    assert component["id"].startswith("cmp_") and section["id"].startswith("sec_") and group["id"].startswith("grp_")
    assert (component["status"], component["group_id"]) == ("operational", group["id"])
    base = f"{BASE}/{created['id']}"
    later = "2026-11-22T12:05:00Z"
    clock.freeze(clock.parse(later))
    status, changed = call(client, "PATCH", f"{base}/components/{component['id']}", owner, {"status": "major_outage"})
    assert (status, changed["data"]["status"], changed["data"]["updated_at"]) == (200, "major_outage", later)
    status, ungrouped = call(client, "PATCH", f"{base}/components/{component['id']}", owner, {"group_id": None})
    assert (status, ungrouped["data"]["group_id"]) == (200, None)
    for kind, expected in (("sections", section["id"]), ("groups", group["id"]), ("components", component["id"])):
        listed = call(client, "GET", f"{base}/{kind}", reader)[1]["data"]["items"]
        assert [i["id"] for i in listed] == [expected]
    assert (
        call(client, "PATCH", f"{base}/sections/{section['id']}", owner, {"name": "Main"})[1]["data"]["name"] == "Main"
    )
    assert call(client, "PATCH", f"{base}/groups/{group['id']}", owner, {"name": "Edge"})[1]["data"]["name"] == "Edge"
    status, busy = call(client, "DELETE", f"{base}/sections/{section['id']}", owner)
    assert (status, error_of(busy)["code"]) == (409, "CONFLICT")
    assert call(client, "DELETE", f"{base}/components/{component['id']}", owner)[0] == 200
    assert call(client, "DELETE", f"{base}/groups/{group['id']}", owner)[0] == 200
    assert call(client, "DELETE", f"{base}/sections/{section['id']}", owner)[0] == 200
    assert call(client, "DELETE", f"{base}/sections/{section['id']}", owner)[0] == 404


def test_public_incident_through_the_api(client, keys, page):
    owner, reader = keys
    created, _, _, component = page
    base = f"{BASE}/{created['id']}/incidents"
    status, opened = call(
        client,
        "POST",
        base,
        owner,
        {
            "title": "Slow checkout",
            "status": "investigating",
            "impact": "minor",
            "body": "Looking.",
            "component_ids": [component["id"]],
        },
    )
    assert status == 201, opened
    incident = opened["data"]
    assert incident["id"].startswith("inc_")
    assert (incident["resolved_at"], incident["incident_number"], len(incident["updates"])) == (None, None, 1)
    item = f"{base}/{incident['id']}"
    status, resolved = call(client, "POST", f"{item}/updates", owner, {"status": "resolved", "body": "Fixed."})
    assert (status, resolved["data"]["status"], resolved["data"]["resolved_at"]) == (
        201,
        "resolved",
        "2026-11-22T12:00:00Z",
    )
    status, reopened = call(client, "POST", f"{item}/updates", owner, {"status": "monitoring", "body": "Again."})
    assert (reopened["data"]["status"], reopened["data"]["resolved_at"]) == ("monitoring", None)
    assert [u["body"] for u in reopened["data"]["updates"]] == ["Again.", "Fixed.", "Looking."]
    assert call(client, "GET", item, reader)[1]["data"] == reopened["data"]
    assert [i["id"] for i in call(client, "GET", base, reader)[1]["data"]["items"]] == [incident["id"]]


def test_linking_an_internal_incident(client, keys, page, org):
    from chalicelib.incident.service import NewIncident, create_incident

    owner, _ = keys
    service = make.service(org, "Checkout")
    internal = create_incident(
        organization_id=org.organization_id,
        request=NewIncident("Latency", [service.service_key]),
        now=NOW,
        actor="tester",
        settings=get_settings(),
    )
    base = f"{BASE}/{page[0]['id']}/incidents"
    body = {"title": "Slow", "body": "Looking.", "incident_number": internal.incident_number}
    status, linked = call(client, "POST", base, owner, body)
    assert (status, linked["data"]["incident_number"]) == (201, internal.incident_number)
    status, unknown = call(client, "POST", base, owner, {**body, "incident_number": "INC-2026-9999"})
    assert (status, error_of(unknown)["details"]["fields"][0]["field"]) == (400, "incident_number")


def test_maintenance_through_the_api(client, keys, page):
    owner, _ = keys
    created, _, _, component = page
    base = f"{BASE}/{created['id']}/maintenance"
    window = {
        "title": "Upgrade",
        "scheduled_start": "2026-11-23T02:00:00Z",
        "scheduled_end": "2026-11-23T03:00:00Z",
        "component_ids": [component["id"]],
    }
    status, scheduled = call(client, "POST", base, owner, window)
    assert status == 201, scheduled
    assert (scheduled["data"]["status"], scheduled["data"]["id"][:4]) == ("scheduled", "mnt_")
    item = f"{base}/{scheduled['data']['id']}"
    status, moved = call(client, "PATCH", item, owner, {"scheduled_start": "2026-11-23T01:00:00+01:00"})
    assert (status, moved["data"]["scheduled_start"]) == (200, "2026-11-23T00:00:00Z")
    status, cancelled = call(client, "PATCH", item, owner, {"status": "cancelled"})
    assert (status, cancelled["data"]["status"]) == (200, "cancelled")
    for change in ({"scheduled_end": "2026-11-24T00:00:00Z"}, {"status": "in_progress"}, {"component_ids": []}):
        status, refused = call(client, "PATCH", item, owner, change)
        assert (status, error_of(refused)["code"]) == (400, "TRANSITION_NOT_ALLOWED"), change
    assert call(client, "PATCH", item, owner, {"title": "Upgrade (cancelled)"})[0] == 200


def test_errors(client, keys, page):
    owner, reader = keys
    created, section, _, component = page
    base = f"{BASE}/{created['id']}"
    cases = [
        ("POST", BASE, None, {"name": "x", "slug": "x"}, 401, "UNAUTHORIZED"),
        ("POST", BASE, reader, {"name": "x", "slug": "x"}, 403, "FORBIDDEN"),
        ("PATCH", f"{base}/components/{component['id']}", reader, {"status": "unknown"}, 403, "FORBIDDEN"),
        ("POST", BASE, owner, {"name": "x", "slug": "Bad Slug"}, 400, "VALIDATION_ERROR"),
        ("POST", BASE, owner, {"name": "x", "slug": "acme"}, 409, "CONFLICT"),
        ("POST", BASE, owner, {"name": "x", "slug": "x2", "color": "red"}, 400, "VALIDATION_ERROR"),
        ("PATCH", base, owner, {}, 400, "VALIDATION_ERROR"),
        ("GET", f"{BASE}/{UNKNOWN_PAGE}", owner, None, 404, "NOT_FOUND"),
        ("GET", f"{BASE}/not-an-id", owner, None, 404, "NOT_FOUND"),
        ("GET", f"{BASE}?color=red", owner, None, 400, "VALIDATION_ERROR"),
        ("POST", f"{BASE}/{UNKNOWN_PAGE}/sections", owner, {"name": "x"}, 404, "NOT_FOUND"),
        ("PATCH", f"{base}/components/{component['id']}", owner, {"status": "on_fire"}, 400, "VALIDATION_ERROR"),
        ("PATCH", f"{base}/components/cmp_0000000000000000000000aa", owner, {"name": "x"}, 404, "NOT_FOUND"),
        (
            "POST",
            f"{base}/components",
            owner,
            {"name": "x", "section_id": "sec_0000000000000000000000aa"},
            400,
            "VALIDATION_ERROR",
        ),
        ("POST", f"{base}/groups", owner, {"name": "x", "section_id": "nope"}, 400, "VALIDATION_ERROR"),
        ("POST", f"{base}/incidents", owner, {"title": "x", "body": "x", "status": "fixed"}, 400, "VALIDATION_ERROR"),
        (
            "POST",
            f"{base}/incidents",
            owner,
            {"title": "x", "body": "x", "component_ids": ["cmp_0000000000000000000000aa"]},
            400,
            "VALIDATION_ERROR",
        ),
        (
            "POST",
            f"{base}/incidents/inc_0000000000000000000000aa/updates",
            owner,
            {"status": "resolved", "body": "x"},
            404,
            "NOT_FOUND",
        ),
        (
            "POST",
            f"{base}/maintenance",
            owner,
            {"title": "x", "scheduled_start": "2026-11-23T03:00:00Z", "scheduled_end": "2026-11-23T02:00:00Z"},
            400,
            "VALIDATION_ERROR",
        ),
        (
            "POST",
            f"{base}/maintenance",
            owner,
            {"title": "x", "scheduled_start": "2026-11-23T02:00:00", "scheduled_end": "2026-11-23T03:00:00Z"},
            400,
            "VALIDATION_ERROR",
        ),
        ("GET", f"{base}/maintenance/mnt_0000000000000000000000aa", owner, None, 404, "NOT_FOUND"),
        ("DELETE", f"{base}/groups/grp_0000000000000000000000aa", owner, None, 404, "NOT_FOUND"),
    ]
    for method, path, key, body, expected_status, code in cases:
        status, document = call(client, method, path, key, body)
        assert (status, error_of(document)["code"]) == (expected_status, code), (method, path, body, document)
    assert section["id"]  # the section stays usable after every refusal
    assert call(client, "GET", f"{base}/sections", reader)[1]["data"]["total"] == 1


def test_another_organizations_page_is_not_found(client, keys, page):
    from tests.conftest import make_org

    other = make_org("Other")
    created, _, _, component = page
    for method, path, body in (
        ("GET", f"{BASE}/{created['id']}", None),
        ("PATCH", f"{BASE}/{created['id']}/components/{component['id']}", {"status": "major_outage"}),
        ("GET", f"{BASE}/{created['id']}/incidents", None),
    ):
        status, document = call(client, method, path, other.owner_key, body)
        assert (status, error_of(document)["code"]) == (404, "NOT_FOUND")


def test_an_update_sets_component_statuses_with_it(client, keys, page):
    owner, reader = keys
    created, _, _, component = page
    base = f"{BASE}/{created['id']}"
    body = {
        "title": "Down",
        "body": "Down.",
        "component_ids": [component["id"]],
        "component_statuses": {component["id"]: "major_outage"},
    }
    status, opened = call(client, "POST", f"{base}/incidents", owner, body)
    assert status == 201, opened
    assert call(client, "GET", f"{base}/components", reader)[1]["data"]["items"][0]["status"] == "major_outage"
    update = {"status": "resolved", "body": "Up.", "component_statuses": {component["id"]: "operational"}}
    status, _ = call(client, "POST", f"{base}/incidents/{opened['data']['id']}/updates", owner, update)
    assert status == 201
    assert call(client, "GET", f"{base}/components", reader)[1]["data"]["items"][0]["status"] == "operational"
    for refused in ({"cmp_0000000000000000000000aa": "major_outage"}, {component["id"]: "on_fire"}):
        status, document = call(client, "POST", f"{base}/incidents", owner, {**body, "component_statuses": refused})
        assert (status, error_of(document)["code"]) == (400, "VALIDATION_ERROR")
    # The refused requests wrote nothing: still one incident, the component unchanged.
    assert call(client, "GET", f"{base}/incidents", reader)[1]["data"]["total"] == 1
    assert call(client, "GET", f"{base}/components", reader)[1]["data"]["items"][0]["status"] == "operational"
