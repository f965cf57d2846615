"""Incident templates under /api/v1/status-pages/{page_id}/templates, and `template_id` on a new
public incident and on an update: what a template fills, what the request keeps, and every error."""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from chalicelib import clock
from chalicelib.apikey import service as apikeys
from chalicelib.errors import Conflict
from chalicelib.settings import get_settings
from chalicelib.statuspage import incident_templates
from chalicelib.statuspage.tables import TEMPLATE_COUNTER_KEY, StatusPageItem
from tests.api.test_directory_services import error_of
from tests.conftest import NOW, make_org
from tests.kit.api import call

BASE = "/api/v1/status-pages"
UNKNOWN_TEMPLATE = "tpl_0000000000000000000000aa"


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
    """(page base path, checkout id, billing id)."""
    owner, _ = keys
    page = call(client, "POST", BASE, owner, {"name": "Acme", "slug": "acme"})[1]["data"]
    base = f"{BASE}/{page['id']}"
    section = call(client, "POST", f"{base}/sections", owner, {"name": "Core"})[1]["data"]
    ids = []
    for name in ("Checkout", "Billing"):
        created = call(client, "POST", f"{base}/components", owner, {"name": name, "section_id": section["id"]})
        assert created[0] == 201, created
        ids.append(created[1]["data"]["id"])
    return base, ids[0], ids[1]


def make_template(client, owner, base, **fields):
    body = {"name": "Database down", "title": "Database outage", "body": "We are looking into it.", **fields}
    status, created = call(client, "POST", f"{base}/templates", owner, body)
    assert status == 201, created
    return created["data"]


def test_template_lifecycle(client, keys, page):
    owner, reader = keys
    base, checkout, _ = page
    created = make_template(
        client, owner, base, status="identified", impact="major", component_statuses={checkout: "major_outage"}
    )
    assert created["id"].startswith("tpl_")
    assert {k: created[k] for k in ("name", "title", "body", "status", "impact", "component_statuses")} == {
        "name": "Database down",
        "title": "Database outage",
        "body": "We are looking into it.",
        "status": "identified",
        "impact": "major",
        "component_statuses": {checkout: "major_outage"},
    }
    item = f"{base}/templates/{created['id']}"
    assert call(client, "GET", item, reader)[1]["data"] == created
    clock.freeze(clock.parse("2026-11-22T12:05:00Z"))
    status, patched = call(client, "PATCH", item, owner, {"status": None, "component_statuses": {}, "name": "DB"})
    assert status == 200, patched
    patched = patched["data"]
    assert (patched["name"], patched["status"], patched["impact"], patched["component_statuses"]) == (
        "DB",
        None,
        "major",
        {},
    )
    assert patched["updated_at"] == "2026-11-22T12:05:00Z" and patched["created_at"] == created["created_at"]
    status, deleted = call(client, "DELETE", item, owner)
    assert (status, deleted["data"]) == (200, {"id": created["id"], "deleted": True})
    assert call(client, "GET", item, reader)[0] == 404
    assert call(client, "DELETE", item, owner)[0] == 404


def test_list_by_name_and_paginated(client, keys, page):
    owner, reader = keys
    base, *_ = page
    for name in ("b second", "C third", "a first"):
        make_template(client, owner, base, name=name)
    listed = call(client, "GET", f"{base}/templates", reader)[1]["data"]
    assert ([t["name"] for t in listed["items"]], listed["total"]) == (["a first", "b second", "C third"], 3)
    second = call(client, "GET", f"{base}/templates?limit=1&offset=1", reader)[1]["data"]
    assert [t["name"] for t in second["items"]] == ["b second"]


def test_template_errors(client, keys, page, org):
    owner, reader = keys
    base, *_ = page
    template = make_template(client, owner, base)
    item = f"{base}/templates/{template['id']}"
    cases = [
        ("POST", f"{base}/templates", reader, {"name": "x", "title": "x", "body": "x"}, 403, "FORBIDDEN"),
        ("PATCH", item, reader, {"name": "x"}, 403, "FORBIDDEN"),
        ("DELETE", item, reader, None, 403, "FORBIDDEN"),
        ("POST", f"{base}/templates", owner, {"name": "x", "title": "x"}, 400, "VALIDATION_ERROR"),
        ("POST", f"{base}/templates", owner, {"name": "x", "title": "x", "body": "x", "status": "gone"}, 400, None),
        (
            "POST",
            f"{base}/templates",
            owner,
            {"name": "x", "title": "x", "body": "x", "component_statuses": {"cmp_nope": "major_outage"}},
            400,
            "VALIDATION_ERROR",
        ),
        ("PATCH", item, owner, {}, 400, "VALIDATION_ERROR"),
        ("PATCH", item, owner, {"title": None}, 400, "VALIDATION_ERROR"),
        ("PATCH", item, owner, {"component_statuses": {"cmp_nope": "unknown"}}, 400, "VALIDATION_ERROR"),
        ("GET", f"{base}/templates/{UNKNOWN_TEMPLATE}", owner, None, 404, "NOT_FOUND"),
        ("GET", f"{base}/templates/not-an-id", owner, None, 404, "NOT_FOUND"),
        ("PATCH", f"{base}/templates/{UNKNOWN_TEMPLATE}", owner, {"name": "x"}, 404, "NOT_FOUND"),
        ("GET", f"{BASE}/page_0000000000000000000000aa/templates", owner, None, 404, "NOT_FOUND"),
    ]
    for method, path, key, body, expected, code in cases:
        status, answer = call(client, method, path, key, body)
        assert status == expected, (method, path, body, answer)
        if code:
            assert error_of(answer)["code"] == code, (method, path, body, answer)
    # Another organization sees neither the page nor its templates.
    other = make_org("Other")
    assert call(client, "GET", item, other.owner_key)[0] == 404
    assert call(client, "GET", f"{base}/templates", other.owner_key)[0] == 404
    # Nothing was changed by the refused writes.
    assert call(client, "GET", item, owner)[1]["data"] == template


def test_a_template_fills_a_new_incident(client, keys, page):
    owner, _ = keys
    base, checkout, billing = page
    template = make_template(
        client, owner, base, status="identified", impact="critical", component_statuses={checkout: "major_outage"}
    )
    status, opened = call(
        client, "POST", f"{base}/incidents", owner, {"template_id": template["id"], "component_ids": [checkout]}
    )
    assert status == 201, opened
    incident = opened["data"]
    assert (incident["title"], incident["status"], incident["impact"]) == ("Database outage", "identified", "critical")
    assert [u["body"] for u in incident["updates"]] == ["We are looking into it."]
    components = {c["id"]: c["status"] for c in call(client, "GET", f"{base}/components", owner)[1]["data"]["items"]}
    assert components == {checkout: "major_outage", billing: "operational"}


def test_the_request_wins_field_by_field(client, keys, page):
    owner, _ = keys
    base, checkout, billing = page
    template = make_template(
        client, owner, base, status="identified", impact="critical", component_statuses={checkout: "major_outage"}
    )
    body = {
        "template_id": template["id"],
        "title": "Only billing",
        "status": "investigating",
        "component_statuses": {billing: "partial_outage"},
    }
    incident = call(client, "POST", f"{base}/incidents", owner, body)[1]["data"]
    assert (incident["title"], incident["status"], incident["impact"]) == ("Only billing", "investigating", "critical")
    assert incident["updates"][0]["body"] == "We are looking into it."
    components = {c["id"]: c["status"] for c in call(client, "GET", f"{base}/components", owner)[1]["data"]["items"]}
    assert components == {checkout: "operational", billing: "partial_outage"}


def test_without_status_or_impact_the_defaults_apply(client, keys, page):
    owner, _ = keys
    base, *_ = page
    template = make_template(client, owner, base)
    incident = call(client, "POST", f"{base}/incidents", owner, {"template_id": template["id"]})[1]["data"]
    assert (incident["status"], incident["impact"]) == ("investigating", "minor")


def test_a_deleted_component_in_a_template_is_left_out(client, keys, page):
    owner, _ = keys
    base, checkout, billing = page
    template = make_template(
        client, owner, base, component_statuses={checkout: "major_outage", billing: "degraded_performance"}
    )
    assert call(client, "DELETE", f"{base}/components/{checkout}", owner)[0] == 200
    status, opened = call(client, "POST", f"{base}/incidents", owner, {"template_id": template["id"]})
    assert status == 201, opened
    components = {c["id"]: c["status"] for c in call(client, "GET", f"{base}/components", owner)[1]["data"]["items"]}
    assert components == {billing: "degraded_performance"}


def test_a_template_fills_an_update(client, keys, page):
    owner, _ = keys
    base, checkout, _ = page
    incident = call(client, "POST", f"{base}/incidents", owner, {"title": "Slow", "body": "Looking."})[1]["data"]
    resolved = make_template(
        client,
        owner,
        base,
        name="Fixed",
        body="All fixed.",
        status="resolved",
        component_statuses={checkout: "operational"},
    )
    updates = f"{base}/incidents/{incident['id']}/updates"
    status, updated = call(client, "POST", updates, owner, {"template_id": resolved["id"]})
    assert status == 201, updated
    data = updated["data"]
    assert (data["status"], data["updates"][0]["body"], data["title"]) == ("resolved", "All fixed.", "Slow")
    assert data["resolved_at"] is not None
    # The request's own status and body win.
    status, again = call(client, "POST", updates, owner, {"template_id": resolved["id"], "status": "monitoring"})
    assert (status, again["data"]["status"], again["data"]["updates"][0]["body"]) == (201, "monitoring", "All fixed.")


def test_template_errors_on_incidents_and_updates(client, keys, page):
    owner, _ = keys
    base, *_ = page
    incident = call(client, "POST", f"{base}/incidents", owner, {"title": "Slow", "body": "Looking."})[1]["data"]
    updates = f"{base}/incidents/{incident['id']}/updates"
    no_status = make_template(client, owner, base)
    cases = [
        (f"{base}/incidents", {"template_id": UNKNOWN_TEMPLATE}, 404, "NOT_FOUND"),
        (f"{base}/incidents", {"template_id": "junk"}, 404, "NOT_FOUND"),
        (f"{base}/incidents", {"body": "no title"}, 400, "VALIDATION_ERROR"),
        (f"{base}/incidents", {"title": None, "template_id": no_status["id"]}, 400, "VALIDATION_ERROR"),
        (f"{base}/incidents", {}, 400, "VALIDATION_ERROR"),
        (updates, {"template_id": UNKNOWN_TEMPLATE, "status": "resolved"}, 404, "NOT_FOUND"),
        (updates, {"body": "no status"}, 400, "VALIDATION_ERROR"),
        # The template sets no status and the request gives none.
        (updates, {"template_id": no_status["id"]}, 400, "VALIDATION_ERROR"),
    ]
    for path, body, expected, code in cases:
        status, answer = call(client, "POST", path, owner, body)
        assert (status, error_of(answer)["code"]) == (expected, code), (path, body, answer)
    status, answer = call(client, "POST", updates, owner, {"template_id": no_status["id"]})
    assert error_of(answer)["details"]["fields"] == [
        {"field": "status", "message": "required: neither the request nor its template gives one"}
    ]
    # Nothing was written by the refused requests.
    listed = call(client, "GET", f"{base}/incidents", owner)[1]["data"]["items"]
    assert len(listed) == 1 and len(listed[0]["updates"]) == 1


def _post_with_key(client, owner, path, body, key):
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {owner}", "Idempotency-Key": key}
    response = client.http.post(path, headers=headers, body=json.dumps(body))
    return response.status_code, response.headers.get("Idempotent-Replayed"), json.loads(response.body)


def test_a_retried_create_with_an_idempotency_key_adds_one_template(client, keys, page):
    owner, reader = keys
    base, _, _ = page
    body = {"name": "Database down", "title": "Database outage", "body": "We are looking into it."}
    first = _post_with_key(client, owner, f"{base}/templates", body, "retry-1")
    again = _post_with_key(client, owner, f"{base}/templates", body, "retry-1")
    assert (first[0], first[1], again[0], again[1]) == (201, "false", 201, "true")
    assert again[2]["data"] == first[2]["data"]
    listed = call(client, "GET", f"{base}/templates", reader)[1]["data"]
    assert [t["id"] for t in listed["items"]] == [first[2]["data"]["id"]]
    changed = _post_with_key(client, owner, f"{base}/templates", {**body, "name": "Other"}, "retry-1")
    assert (changed[0], error_of(changed[2])["code"]) == (409, "IDEMPOTENCY_KEY_REUSED")
    # The same key on another page is another request: keys never match across pages.
    other = call(client, "POST", BASE, owner, {"name": "Other", "slug": "other"})[1]["data"]
    elsewhere = _post_with_key(client, owner, f"{BASE}/{other['id']}/templates", body, "retry-1")
    assert (elsewhere[0], elsewhere[1]) == (201, "false")
    assert elsewhere[2]["data"]["id"] != first[2]["data"]["id"]


def test_a_page_holds_at_most_max_templates(client, keys, page, monkeypatch):
    owner, reader = keys
    base, _, _ = page
    monkeypatch.setattr(incident_templates, "MAX_TEMPLATES", 2)
    make_template(client, owner, base)
    second = make_template(client, owner, base, name="Second")
    status, refused = call(client, "POST", f"{base}/templates", owner, {"name": "3", "title": "t", "body": "b"})
    assert (status, error_of(refused)["code"]) == (409, "CONFLICT")
    assert "at most 2" in error_of(refused)["message"]
    assert call(client, "GET", f"{base}/templates", reader)[1]["data"]["total"] == 2
    assert call(client, "DELETE", f"{base}/templates/{second['id']}", owner)[0] == 200
    make_template(client, owner, base, name="Third")


def test_racing_creates_never_pass_the_cap(client, keys, page, monkeypatch):
    # Issue 27 finding 10: the cap was a count read before the write, and 30 racing creates made 101.
    owner, reader = keys
    base, _, _ = page
    page_id = base.rsplit("/", 1)[1]
    monkeypatch.setattr(incident_templates, "MAX_TEMPLATES", 4)
    make_template(client, owner, base, name="Made before")
    # Every racer has read the count (1) before any of them writes.
    monkeypatch.setattr(incident_templates, "_count", lambda _page_id: 1)
    start = threading.Barrier(12)

    def racer(index: int) -> str:
        start.wait()
        try:
            incident_templates.create_template(page_id=page_id, name=f"r{index}", title="t", body="b", now=NOW)
        except Conflict as refused:
            return refused.message
        return "made"

    with ThreadPoolExecutor(max_workers=12) as pool:
        outcomes = list(pool.map(racer, range(12)))
    assert outcomes.count("made") == 3
    assert all("at most 4" in outcome or "retry" in outcome for outcome in outcomes if outcome != "made")
    assert call(client, "GET", f"{base}/templates", reader)[1]["data"]["total"] == 4


def test_a_page_with_templates_from_before_the_counter_counts_them_first(client, keys, page, monkeypatch):
    owner, reader = keys
    base, _, _ = page
    page_id = base.rsplit("/", 1)[1]
    monkeypatch.setattr(incident_templates, "MAX_TEMPLATES", 3)
    for name in ("a", "b"):
        make_template(client, owner, base, name=name)
    # As if both were made by a release without the counter.
    StatusPageItem(page_id, TEMPLATE_COUNTER_KEY).delete(add_version_condition=False)
    make_template(client, owner, base, name="c")
    status, refused = call(client, "POST", f"{base}/templates", owner, {"name": "d", "title": "t", "body": "b"})
    assert (status, error_of(refused)["code"]) == (409, "CONFLICT")
    assert call(client, "GET", f"{base}/templates", reader)[1]["data"]["total"] == 3
