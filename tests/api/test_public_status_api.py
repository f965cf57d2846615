"""The public status endpoints: shapes, caching headers, CORS, cursors, 404s and no leaks."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from chalicelib import clock
from chalicelib.settings import get_settings
from chalicelib.statuspage import incidents, pages, public, scheduled_maintenance, structure
from chalicelib.statuspage.repository import item_id
from tests.conftest import NOW, reconfigure
from tests.kit import factories as make

STATUS = "/status/acme"


@pytest.fixture
def site(client, org):
    clock.freeze(NOW)
    oid = org.organization_id
    page = pages.create_page(organization_id=oid, name="Acme", slug="acme", now=NOW)
    section = structure.create_section(page_id=page.page_id, name="Core", now=NOW)
    group = structure.create_group(page_id=page.page_id, section_id=item_id(section), name="APIs", now=NOW)
    checkout = structure.create_component(
        page_id=page.page_id,
        section_id=item_id(section),
        group_id=item_id(group),
        name="Checkout",
        status="degraded_performance",
        now=NOW,
    )
    billing = structure.create_component(
        page_id=page.page_id, section_id=item_id(section), group_id=None, name="Billing", status="operational", now=NOW
    )
    incident = incidents.create_incident(
        organization_id=oid,
        page_id=page.page_id,
        title="Slow checkout",
        status="identified",
        impact="minor",
        body="Found it.",
        component_ids=[item_id(checkout)],
        incident_number=None,
        now=NOW,
        settings=get_settings(),
    )
    window = scheduled_maintenance.create_window(
        page_id=page.page_id,
        title="Upgrade",
        scheduled_start=NOW - timedelta(minutes=1),
        scheduled_end=NOW + timedelta(hours=1),
        component_ids=[item_id(billing)],
        now=NOW,
        settings=get_settings(),
    )
    return page, section, group, checkout, billing, incident, window


def get(client, path, **headers):
    return client.http.get(path, headers=headers)


def document(response):
    assert response.headers["Content-Type"] == "application/json"
    return json.loads(response.body)


def test_summary(client, site):
    response = get(client, f"{STATUS}/summary.json")
    assert response.status_code == 200
    assert document(response) == {
        "page": {"name": "Acme", "url": "http://127.0.0.1:8000/status/acme"},
        "status": "degraded_performance",
        "updated_at": "2026-11-22T12:00:00Z",
        "active_incident_count": 1,
        "active_maintenance_count": 1,
    }
    assert response.headers["Cache-Control"] == "public, max-age=30"
    assert response.headers["Access-Control-Allow-Origin"] == "*"
    assert response.headers["ETag"].startswith('"') and "X-RateLimit-Remaining" in response.headers


def test_components_with_maintenance(client, site):
    _, section, group, checkout, billing, *_ = site
    assert document(get(client, f"{STATUS}/components.json")) == {
        "sections": [
            {
                "section_id": item_id(section),
                "name": "Core",
                "components": [
                    {
                        "component_id": item_id(billing),
                        "name": "Billing",
                        "status": "under_maintenance",
                        "updated_at": "2026-11-22T12:00:00Z",
                    }
                ],
                "groups": [
                    {
                        "group_id": item_id(group),
                        "name": "APIs",
                        "components": [
                            {
                                "component_id": item_id(checkout),
                                "name": "Checkout",
                                "status": "degraded_performance",
                                "updated_at": "2026-11-22T12:00:00Z",
                            }
                        ],
                    }
                ],
            }
        ]
    }


def test_incidents_and_maintenance(client, site):
    *_, checkout, billing, incident, window = site
    listed = document(get(client, f"{STATUS}/incidents.json"))
    assert listed == {
        "incidents": [
            {
                "incident_id": item_id(incident),
                "title": "Slow checkout",
                "status": "identified",
                "impact": "minor",
                "started_at": "2026-11-22T12:00:00Z",
                "resolved_at": None,
                "updated_at": "2026-11-22T12:00:00Z",
                "updates": [{"status": "identified", "body": "Found it.", "published_at": "2026-11-22T12:00:00Z"}],
                "affected_components": [{"component_id": item_id(checkout), "name": "Checkout"}],
            }
        ],
        "next_cursor": None,
    }
    windows = document(get(client, f"{STATUS}/maintenance.json"))
    assert windows["next_cursor"] is None
    [only] = windows["maintenance"]
    assert only == {
        "maintenance_id": item_id(window),
        "title": "Upgrade",
        "status": "in_progress",
        "scheduled_start": "2026-11-22T11:59:00Z",
        "scheduled_end": "2026-11-22T13:00:00Z",
        "updated_at": "2026-11-22T12:00:00Z",
        "affected_components": [{"component_id": item_id(billing), "name": "Billing"}],
    }


def test_nothing_internal_leaks(client, site, org):
    page, *_ = site
    from chalicelib.incident.service import NewIncident, create_incident

    service = make.service(org, "Checkout")
    internal = create_incident(
        organization_id=org.organization_id,
        request=NewIncident("Latency", [service.service_key]),
        now=NOW,
        actor="ada@example.com",
        settings=get_settings(),
    )
    incidents.create_incident(
        organization_id=org.organization_id,
        page_id=page.page_id,
        title="Linked",
        status="investigating",
        impact="none",
        body="Linked.",
        component_ids=[],
        incident_number=internal.incident_number,
        now=NOW,
        settings=get_settings(),
    )
    for name in ("summary", "components", "incidents", "maintenance"):
        body = get(client, f"{STATUS}/{name}.json").body.decode()
        for secret in (internal.incident_number, org.organization_id, page.page_id, "@", "incident_number"):
            assert secret not in body, (name, secret)


def test_etag_and_304(client, site):
    page, *_ = site
    first = get(client, f"{STATUS}/summary.json")
    etag = first.headers["ETag"]
    again = get(client, f"{STATUS}/summary.json", **{"If-None-Match": etag})
    assert (again.status_code, again.body, again.headers["ETag"]) == (304, b"", etag)
    assert get(client, f"{STATUS}/summary.json", **{"If-None-Match": f'"other", W/{etag}'}).status_code == 304
    assert get(client, f"{STATUS}/summary.json", **{"If-None-Match": '"stale"'}).status_code == 200
    pages.update_page(organization_id=page.organization_id, page_id=page.page_id, now=NOW, name="Acme Corp")
    changed = get(client, f"{STATUS}/summary.json", **{"If-None-Match": etag})
    assert changed.status_code == 200 and changed.headers["ETag"] != etag


def test_unknown_slug_is_404(client, site):
    for name in ("summary", "components", "incidents", "maintenance"):
        response = get(client, f"/status/nope/{name}.json")
        assert response.status_code == 404
        assert document(response)["error"]["code"] == "NOT_FOUND"
        assert response.headers["Access-Control-Allow-Origin"] == "*"
        assert response.headers["Cache-Control"] == "no-store"
    page = get(client, "/status/nope<b>")
    assert (page.status_code, page.headers["Content-Type"]) == (404, "text/html; charset=utf-8")
    assert b"not found" in page.body.lower()
    assert b"<b>" not in page.body and b"nope&lt;b&gt;" in page.body  # the slug is echoed, escaped
    assert "default-src 'none'" in page.headers["Content-Security-Policy"]
    assert get(client, "/status/NOT_A_SLUG/summary.json").status_code == 404


def test_bad_cursor_and_unknown_parameters_are_400(client, site):
    for path in (
        f"{STATUS}/incidents.json?cursor=garbage",
        f"{STATUS}/maintenance.json?cursor=",
        f"{STATUS}/incidents.json?limit=5",
        f"{STATUS}/summary.json?cursor=x",
    ):
        response = get(client, path)
        assert response.status_code == 400, path
        assert document(response)["error"]["code"] == "VALIDATION_ERROR"


def test_cursor_paging_across_pages(client, site):
    page, *_ = site
    for index in range(public.PAGE_SIZE + 1):
        incidents.create_incident(
            organization_id=page.organization_id,
            page_id=page.page_id,
            title=f"Old {index}",
            status="resolved",
            impact="none",
            body="Done.",
            component_ids=[],
            incident_number=None,
            now=NOW + timedelta(seconds=index + 1),
            settings=get_settings(),
        )
    first = document(get(client, f"{STATUS}/incidents.json"))
    assert len(first["incidents"]) == public.PAGE_SIZE and first["incidents"][0]["title"] == "Old 20"
    second = document(get(client, f"{STATUS}/incidents.json?cursor={first['next_cursor']}"))
    assert [i["title"] for i in second["incidents"]] == ["Old 0", "Slow checkout"]
    assert second["next_cursor"] is None
    # A cursor of this page's incidents means nothing to its maintenance listing.
    assert get(client, f"{STATUS}/maintenance.json?cursor={first['next_cursor']}").status_code == 400


def test_html_page(client, site):
    response = get(client, STATUS)
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "text/html; charset=utf-8"
    assert response.headers["Cache-Control"] == "public, max-age=30"
    assert "default-src 'none'" in response.headers["Content-Security-Policy"]
    html = response.body.decode()
    assert "Acme" in html and "Slow checkout" in html and "Upgrade" in html
    assert get(client, STATUS, **{"If-None-Match": response.headers["ETag"]}).status_code == 304


def test_public_reads_are_rate_limited_per_address(client, site):
    reconfigure(RATE_LIMIT_PUBLIC_STATUS="2")  # their own bucket, not the anonymous one
    statuses = [get(client, f"{STATUS}/summary.json").status_code for _ in range(3)]
    assert statuses == [200, 200, 429]
    limited = get(client, f"{STATUS}/summary.json")
    assert document(limited)["error"]["code"] == "RATE_LIMITED"
    assert int(limited.headers["Retry-After"]) >= 1
    assert limited.headers["Access-Control-Allow-Origin"] == "*"
