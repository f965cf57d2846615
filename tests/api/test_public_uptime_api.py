"""GET /status/{slug}/uptime.json and the bars on the human page, through the app."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from chalicelib import clock
from chalicelib.settings import get_settings
from chalicelib.statuspage import incidents, pages, structure
from chalicelib.statuspage.repository import item_id
from tests.conftest import NOW, reconfigure
from tests.e2e.browser import parse
from tests.kit.api import call

STATUS = "/status/acme"
LATER = NOW + timedelta(days=2, hours=6)  # 24 Nov, 18:00


@pytest.fixture
def site(client, org):
    clock.freeze(NOW)
    page = pages.create_page(organization_id=org.organization_id, name="Acme", slug="acme", now=NOW)
    section = structure.create_section(page_id=page.page_id, name="Core", now=NOW)
    api = structure.create_component(
        page_id=page.page_id, section_id=item_id(section), group_id=None, name="API", status="operational", now=NOW
    )
    incidents.create_incident(
        organization_id=org.organization_id,
        page_id=page.page_id,
        title="API down",
        status="investigating",
        impact="critical",
        body="Looking.",
        component_ids=[item_id(api)],
        incident_number=None,
        now=NOW + timedelta(hours=6),
        component_statuses={item_id(api): "major_outage"},
        settings=get_settings(),
    )
    structure.update_component(
        page_id=page.page_id, component_id=item_id(api), now=NOW + timedelta(hours=9), status="partial_outage"
    )
    structure.update_component(
        page_id=page.page_id, component_id=item_id(api), now=NOW + timedelta(hours=12), status="operational"
    )
    clock.freeze(LATER)
    return page, item_id(api)


def get(client, path, **headers):
    return client.http.get(path, headers=headers)


def test_uptime_document(client, site):
    _, api = site
    response = get(client, f"{STATUS}/uptime.json")
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "application/json"
    assert response.headers["Cache-Control"] == "public, max-age=30"
    assert response.headers["Access-Control-Allow-Origin"] == "*"
    found = json.loads(response.body)
    assert (found["days"], found["start_date"], found["end_date"]) == (90, "2026-08-27", "2026-11-24")
    assert found["down_weights"] == {"major_outage": 1.0, "partial_outage": 0.3}
    (component,) = found["components"]
    assert (component["component_id"], component["name"]) == (api, "API")
    days = component["days"]
    assert [d["date"] for d in days[:1] + days[-3:]] == ["2026-08-27", "2026-11-22", "2026-11-23", "2026-11-24"]
    assert days[0] == {"date": "2026-08-27", "uptime_percent": None, "worst_status": None}
    # 22 Nov from noon: 6 h operational, 3 h major outage, 3 h partial (0.3): 12 h measured, 3.9 h down.
    assert days[-3] == {"date": "2026-11-22", "uptime_percent": 67.5, "worst_status": "major_outage"}
    assert days[-2] == {"date": "2026-11-23", "uptime_percent": 100.0, "worst_status": "operational"}
    assert days[-1] == {"date": "2026-11-24", "uptime_percent": 100.0, "worst_status": "operational"}
    # 54 h measured, 3.9 h down.
    assert component["uptime_percent"] == 92.77


def test_etag_304_and_it_follows_the_minute(client, site):
    first = get(client, f"{STATUS}/uptime.json")
    etag = first.headers["ETag"]
    assert get(client, f"{STATUS}/uptime.json", **{"If-None-Match": etag}).status_code == 304
    clock.freeze(LATER + timedelta(seconds=30))  # same minute: same document
    assert get(client, f"{STATUS}/uptime.json", **{"If-None-Match": etag}).status_code == 304
    clock.freeze(LATER + timedelta(days=1))
    assert get(client, f"{STATUS}/uptime.json", **{"If-None-Match": etag}).status_code == 200


def test_errors(client, site):
    missing = get(client, "/status/nope/uptime.json")
    assert missing.status_code == 404 and json.loads(missing.body)["error"]["code"] == "NOT_FOUND"
    assert missing.headers["Cache-Control"] == "no-store"
    bad = get(client, f"{STATUS}/uptime.json?days=30")
    assert bad.status_code == 400 and json.loads(bad.body)["error"]["code"] == "VALIDATION_ERROR"


def test_counts_against_the_public_status_bucket(client, site):
    reconfigure(RATE_LIMIT_PUBLIC_STATUS="2")
    assert [get(client, f"{STATUS}/uptime.json").status_code for _ in range(3)] == [200, 200, 429]
    limited = get(client, f"{STATUS}/uptime.json")
    assert json.loads(limited.body)["error"]["code"] == "RATE_LIMITED" and int(limited.headers["Retry-After"]) >= 1


def test_the_human_page_shows_90_bars_per_component_with_text(client, site):
    response = get(client, STATUS)
    assert response.status_code == 200
    document = parse(response.body.decode())
    (strip,) = document.find_all("ol", cls="bars")
    assert strip.attrs["aria-label"] == "API: uptime per day, last 90 days, oldest first"
    bars = strip.find_all("li")
    assert len(bars) == 90
    assert bars[0].text() == "27 Aug 2026: no data" and bars[0].attrs["title"] == "27 Aug 2026: no data"
    assert bars[-3].text() == "22 Nov 2026: 67.5% uptime, worst: major outage"
    assert bars[-3].classes == {"up-major_outage"}
    assert bars[-1].text() == "24 Nov 2026: 100% uptime, operational"
    uptime = document.find("li", cls="uptime")
    assert "92.77% uptime over 90 days" in uptime.find("p", cls="scale").text()
    assert uptime.find("details").text() == "1 day not fully operational 22 Nov 2026: 67.5% uptime, worst: major outage"
    # The component row itself still reads as before: name and status.
    assert [row.text() for row in document.find_all("li", cls="row")] == ["API Operational"]


def test_an_incident_sets_at_most_49_component_statuses(client, site, org):
    page, _ = site
    body = {
        "title": "Many",
        "status": "investigating",
        "impact": "minor",
        "body": "Many components.",
        "component_statuses": {f"cmp_{index:024x}": "major_outage" for index in range(50)},
    }
    status, answer = call(client, "POST", f"/api/v1/status-pages/{page.page_id}/incidents", org.owner_key, body)
    assert status == 400 and answer["error"]["code"] == "VALIDATION_ERROR"
    assert "component_statuses" in json.dumps(answer["error"]["details"])
