"""The console's status pages: the list, a new page, component statuses, public incidents and their
updates, maintenance windows; per role, with the results read back through the API."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest

from chalicelib import clock
from chalicelib.settings import get_settings
from tests.conftest import NOW, Org
from tests.console.conftest import ROLES, ConsoleClient, action_forms


@dataclass(frozen=True)
class StatusPage:
    page_id: str
    slug: str
    section_id: str
    api_id: str  # component "API"
    web_id: str  # component "Web"
    incident_id: str
    window_id: str

    @property
    def path(self) -> str:
        return f"/app/status-pages/{self.page_id}"


def api(client: Any, org: Org, path: str) -> Any:
    response = client.http.get(path, headers={"Authorization": f"Bearer {org.owner_key}"})
    assert response.status_code == 200, response.body
    return json.loads(response.body)["data"]


@pytest.fixture
def status_page(org: Org) -> StatusPage:
    from chalicelib.statuspage import incidents, pages, scheduled_maintenance, structure
    from chalicelib.statuspage.repository import item_id

    clock.freeze(NOW)
    page = pages.create_page(organization_id=org.organization_id, name="Acme status", slug="acme", now=NOW)
    section = structure.create_section(page_id=page.page_id, name="Core", now=NOW)
    api_part, web_part = (
        structure.create_component(
            page_id=page.page_id, section_id=item_id(section), group_id=None, name=name, status="operational", now=NOW
        )
        for name in ("API", "Web")
    )
    incident = incidents.create_incident(
        organization_id=org.organization_id,
        page_id=page.page_id,
        title="Slow API",
        status="investigating",
        impact="minor",
        body="We are looking into <b>slow</b> responses.",
        component_ids=[item_id(api_part)],
        incident_number=None,
        now=NOW,
        settings=get_settings(),
    )
    window = scheduled_maintenance.create_window(
        page_id=page.page_id,
        title="Database upgrade",
        scheduled_start=NOW + timedelta(days=1),
        scheduled_end=NOW + timedelta(days=1, hours=2),
        component_ids=[],
        now=NOW,
        settings=get_settings(),
    )
    return StatusPage(
        page.page_id,
        "acme",
        item_id(section),
        item_id(api_part),
        item_id(web_part),
        item_id(incident),
        item_id(window),
    )


def component_status(client: Any, org: Org, page: StatusPage, component_id: str) -> str:
    found = api(client, org, f"/api/v1/status-pages/{page.page_id}/components")["items"]
    return str(next(c["status"] for c in found if c["id"] == component_id))


@pytest.mark.parametrize("role", ROLES)
def test_the_status_pages_render_for_every_role(
    role: str, signed_in: Callable[[str], ConsoleClient], status_page: StatusPage
) -> None:
    browser = signed_in(role)
    listing = browser.get("/app/status-pages")
    assert listing.status == 200
    from chalicelib.statuspage.pages import public_url

    url = public_url("acme", settings=get_settings())
    assert url.endswith("/status/acme")
    assert listing.dom().find("a", href=url).text() == url
    page = browser.get(status_page.path)
    assert page.status == 200
    dom = page.dom()
    assert dom.find("a", href=url).text() == url
    assert len(dom.find_all("h1")) == 1 and dom.find("h1").text() == "Acme status"
    text = page.text()
    assert "Slow API" in text and "Database upgrade" in text
    assert "We are looking into <b>slow</b> responses." in text  # shown as text, not markup
    if role == "viewer":
        assert action_forms(listing) == [] and action_forms(page) == []
    else:
        assert f"{status_page.path}/components/{status_page.api_id}/status" in action_forms(page)
        assert f"{status_page.path}/maintenance/{status_page.window_id}/status" in action_forms(page)


def test_an_empty_list_and_an_empty_page_read_well(as_owner: ConsoleClient) -> None:
    assert "No status pages yet." in as_owner.get("/app/status-pages").text()
    created = as_owner.post("/app/status-pages", {"name": "Ours", "slug": "ours"})
    assert created.status == 303
    page = as_owner.follow(created)
    assert "Status page created." in page.text()
    assert "No components yet." in page.text() and "No public incidents." in page.text()
    assert "No maintenance scheduled." in page.text()


def test_an_unknown_page_is_404(as_owner: ConsoleClient, org: Org) -> None:
    assert as_owner.get("/app/status-pages/page_000000000000000000000000").status == 404
    assert as_owner.get("/app/status-pages/nonsense").status == 404


def test_another_organizations_page_is_404(
    signed_in: Callable[[str], ConsoleClient], status_page: StatusPage, aws_env: None
) -> None:
    from chalicelib.statuspage import pages
    from tests.conftest import make_org

    other = pages.create_page(organization_id=make_org("Other").organization_id, name="Theirs", slug="theirs", now=NOW)
    owner = signed_in("owner")
    assert owner.get(f"/app/status-pages/{other.page_id}").status == 404
    owner.get(status_page.path)
    assert owner.post(f"/app/status-pages/{other.page_id}/sections", {"name": "Mine now"}).status == 404


def test_a_taken_slug_is_409_and_a_bad_one_400_with_the_form_kept(
    as_owner: ConsoleClient, status_page: StatusPage
) -> None:
    as_owner.get("/app/status-pages")
    taken = as_owner.post("/app/status-pages", {"name": "Again", "slug": "acme"})
    assert taken.status == 409
    assert taken.dom().find("input", name="name").attrs.get("value") == "Again"
    bad = as_owner.post("/app/status-pages", {"name": "Bad", "slug": "Not A Slug"})
    assert bad.status == 400 and bad.dom().find("input", name="slug").attrs.get("aria-invalid") == "true"


def test_a_responder_sets_a_component_status(
    signed_in: Callable[[str], ConsoleClient], client: Any, org: Org, status_page: StatusPage
) -> None:
    browser = signed_in("responder")
    browser.get(status_page.path)
    path = f"{status_page.path}/components/{status_page.api_id}/status"
    answer = browser.post(path, {"status": "major_outage"})
    assert answer.status == 303
    assert "Component status set." in browser.follow(answer).text()
    assert component_status(client, org, status_page, status_page.api_id) == "major_outage"
    refused = browser.post(path, {"status": "on_fire"})
    assert refused.status == 400
    missing = browser.post(f"{status_page.path}/components/cmp_000000000000000000000000/status", {"status": "unknown"})
    assert missing.status == 404


def test_sections_and_components_are_added(
    as_owner: ConsoleClient, client: Any, org: Org, status_page: StatusPage
) -> None:
    as_owner.get(status_page.path)
    assert as_owner.post(f"{status_page.path}/sections", {"form": "section", "name": "Extras"}).status == 303
    added = as_owner.post(
        f"{status_page.path}/components",
        {"form": "component", "section_id": status_page.section_id, "name": "Email", "status": "degraded_performance"},
    )
    assert added.status == 303
    found = api(client, org, f"/api/v1/status-pages/{status_page.page_id}/components")["items"]
    assert ("Email", "degraded_performance") in [(c["name"], c["status"]) for c in found]
    assert "Extras" in [
        s["name"] for s in api(client, org, f"/api/v1/status-pages/{status_page.page_id}/sections")["items"]
    ]
    blank = as_owner.post(f"{status_page.path}/components", {"form": "component", "section_id": "sec_x", "name": ""})
    assert blank.status == 400
    assert blank.dom().find("input", id="f-component-name").attrs.get("aria-invalid") == "true"


def test_a_public_incident_is_posted_and_updated(
    signed_in: Callable[[str], ConsoleClient], client: Any, org: Org, status_page: StatusPage
) -> None:
    browser = signed_in("responder")
    browser.get(status_page.path)
    opened = browser.post(
        f"{status_page.path}/incidents",
        [
            ("form", "incident"),
            ("title", "Web errors"),
            ("status", "identified"),
            ("impact", "major"),
            ("body", "Some pages fail."),
            ("component_ids", status_page.web_id),
            ("component_ids", status_page.api_id),
            ("incident_number", ""),
        ],
    )
    assert opened.status == 303, opened.body[:2000]
    found = api(client, org, f"/api/v1/status-pages/{status_page.page_id}/incidents")["items"]
    web = next(i for i in found if i["title"] == "Web errors")
    assert (web["status"], web["impact"], web["component_ids"]) == (
        "identified",
        "major",
        [status_page.web_id, status_page.api_id],
    )
    browser.get(status_page.path)
    update = browser.post(
        f"{status_page.path}/incidents/{status_page.incident_id}/updates",
        {"form": f"update-{status_page.incident_id}", "status": "resolved", "impact": "", "body": "Fixed."},
    )
    assert update.status == 303
    slow = api(client, org, f"/api/v1/status-pages/{status_page.page_id}/incidents/{status_page.incident_id}")
    assert (slow["status"], slow["impact"], slow["updates"][0]["body"]) == ("resolved", "minor", "Fixed.")
    assert slow["resolved_at"] is not None


def test_bad_incident_input_is_400_on_the_page_with_the_form_kept(
    as_owner: ConsoleClient, client: Any, org: Org, status_page: StatusPage
) -> None:
    as_owner.get(status_page.path)
    fields = {"form": "incident", "title": "Kept title", "status": "investigating", "impact": "minor", "body": ""}
    answer = as_owner.post(f"{status_page.path}/incidents", fields)
    assert answer.status == 400
    dom = answer.dom()
    assert dom.find("input", id="f-incident-title").attrs.get("value") == "Kept title"
    assert dom.find("textarea", id="f-incident-body").attrs.get("aria-invalid") == "true"
    unknown = as_owner.post(
        f"{status_page.path}/incidents", {**fields, "body": "x", "incident_number": "INC-2026-9999"}
    )
    assert unknown.status == 400 and "no such incident" in unknown.text()
    foreign = as_owner.post(f"{status_page.path}/incidents", {**fields, "body": "x", "component_ids": "cmp_nope"})
    assert foreign.status == 400
    assert len(api(client, org, f"/api/v1/status-pages/{status_page.page_id}/incidents")["items"]) == 1


def test_maintenance_is_scheduled_in_utc_and_moved(
    signed_in: Callable[[str], ConsoleClient], client: Any, org: Org, status_page: StatusPage
) -> None:
    browser = signed_in("responder")
    browser.get(status_page.path)
    answer = browser.post(
        f"{status_page.path}/maintenance",
        [
            ("form", "maintenance"),
            ("title", "Network work"),
            ("scheduled_start", "2026-11-25T01:00"),
            ("scheduled_end", "2026-11-25T03:30"),
            ("component_ids", status_page.web_id),
        ],
    )
    assert answer.status == 303, answer.body[:2000]
    windows = api(client, org, f"/api/v1/status-pages/{status_page.page_id}/maintenance")["items"]
    network = next(w for w in windows if w["title"] == "Network work")
    assert (network["scheduled_start"], network["scheduled_end"]) == ("2026-11-25T01:00:00Z", "2026-11-25T03:30:00Z")
    assert (network["status"], network["component_ids"]) == ("scheduled", [status_page.web_id])
    moved = browser.post(f"{status_page.path}/maintenance/{status_page.window_id}/status", {"status": "cancelled"})
    assert moved.status == 303
    path = f"/api/v1/status-pages/{status_page.page_id}/maintenance/{status_page.window_id}"
    assert api(client, org, path)["status"] == "cancelled"
    page = browser.get(status_page.path)
    assert f"{status_page.path}/maintenance/{status_page.window_id}/status" not in action_forms(page)
    final = browser.post(f"{status_page.path}/maintenance/{status_page.window_id}/status", {"status": "in_progress"})
    assert final.status == 400 and "cannot move from cancelled" in final.text()


def test_maintenance_that_ends_before_it_starts_is_400(as_owner: ConsoleClient, status_page: StatusPage) -> None:
    as_owner.get(status_page.path)
    fields = {"form": "maintenance", "title": "Backwards", "scheduled_start": "2026-11-25T03:00"}
    answer = as_owner.post(f"{status_page.path}/maintenance", {**fields, "scheduled_end": "2026-11-25T01:00"})
    assert answer.status == 400
    assert answer.dom().find("input", id="f-maintenance-end").attrs.get("aria-invalid") == "true"
    garbled = as_owner.post(f"{status_page.path}/maintenance", {**fields, "scheduled_end": "tomorrow"})
    assert garbled.status == 400 and "RFC 3339" in garbled.text()


def test_a_viewers_forged_posts_are_403_and_change_nothing(
    signed_in: Callable[[str], ConsoleClient], client: Any, org: Org, status_page: StatusPage
) -> None:
    viewer = signed_in("viewer")
    viewer.get(status_page.path)
    base = status_page.path
    for path, fields in (
        ("/app/status-pages", {"name": "Forged", "slug": "forged"}),
        (f"{base}/sections", {"name": "Forged"}),
        (f"{base}/components", {"section_id": status_page.section_id, "name": "Forged", "status": "operational"}),
        (f"{base}/components/{status_page.api_id}/status", {"status": "major_outage"}),
        (f"{base}/incidents", {"title": "Forged", "status": "investigating", "impact": "minor", "body": "x"}),
        (f"{base}/incidents/{status_page.incident_id}/updates", {"status": "resolved", "body": "x"}),
        (
            f"{base}/maintenance",
            {"title": "Forged", "scheduled_start": "2026-11-25T01:00", "scheduled_end": "2026-11-25T02:00"},
        ),
        (f"{base}/maintenance/{status_page.window_id}/status", {"status": "cancelled"}),
    ):
        assert viewer.post(path, fields).status == 403, path
    assert component_status(client, org, status_page, status_page.api_id) == "operational"
    assert len(api(client, org, "/api/v1/status-pages")["items"]) == 1
    assert len(api(client, org, f"/api/v1/status-pages/{status_page.page_id}/components")["items"]) == 2
    assert len(api(client, org, f"/api/v1/status-pages/{status_page.page_id}/sections")["items"]) == 1
    incident = api(client, org, f"/api/v1/status-pages/{status_page.page_id}/incidents/{status_page.incident_id}")
    assert (incident["status"], len(incident["updates"])) == ("investigating", 1)
    windows = api(client, org, f"/api/v1/status-pages/{status_page.page_id}/maintenance")["items"]
    assert [(w["title"], w["status"]) for w in windows] == [("Database upgrade", "scheduled")]


def test_a_missing_or_wrong_csrf_token_is_refused(
    as_owner: ConsoleClient, client: Any, org: Org, status_page: StatusPage
) -> None:
    as_owner.get(status_page.path)
    path = f"{status_page.path}/components/{status_page.api_id}/status"
    assert as_owner.post(path, {"status": "major_outage"}, csrf="-").status == 403
    assert as_owner.post(path, {"status": "major_outage"}, csrf="bad").status == 403
    assert component_status(client, org, status_page, status_page.api_id) == "operational"
