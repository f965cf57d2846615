"""Status pages on moto: slug uniqueness, structure, public incidents, public documents and cursors."""

from __future__ import annotations

from datetime import timedelta

import pytest

from chalicelib.errors import Conflict, NotFound, ValidationFailed
from chalicelib.settings import get_settings
from chalicelib.statuspage import incidents, pages, public, scheduled_maintenance, structure
from chalicelib.statuspage.repository import item_id
from chalicelib.statuspage.tables import StatusPageItem
from tests.conftest import NOW, make_org


@pytest.fixture
def page(org):
    return pages.create_page(organization_id=org.organization_id, name="Acme", slug="acme", now=NOW)


def test_a_slug_is_globally_unique_and_freed_by_a_change_or_a_delete(org, page):
    other = make_org("Other")
    with pytest.raises(Conflict):
        pages.create_page(organization_id=other.organization_id, name="Copy", slug="acme", now=NOW)
    moved = pages.update_page(organization_id=org.organization_id, page_id=page.page_id, now=NOW, slug="acme-new")
    assert moved.slug == "acme-new"
    assert public.load_view("acme") is None
    taken = pages.create_page(organization_id=other.organization_id, name="Other", slug="acme", now=NOW)
    with pytest.raises(Conflict):
        pages.update_page(organization_id=org.organization_id, page_id=page.page_id, now=NOW, slug="acme")
    pages.delete_page(organization_id=other.organization_id, page_id=taken.page_id)
    assert (
        pages.update_page(organization_id=org.organization_id, page_id=page.page_id, now=NOW, slug="acme").slug
        == "acme"
    )
    view = public.load_view("acme")
    assert view is not None and view.page_id == page.page_id


def test_pages_are_private_to_their_organization(org, page):
    other = make_org("Other")
    with pytest.raises(NotFound):
        pages.update_page(organization_id=other.organization_id, page_id=page.page_id, now=NOW, name="Mine")
    with pytest.raises(NotFound):
        pages.delete_page(organization_id=other.organization_id, page_id=page.page_id)
    assert pages.list_pages(organization_id=other.organization_id) == []
    assert [p.page_id for p in pages.list_pages(organization_id=org.organization_id)] == [page.page_id]


def test_deleting_a_page_removes_everything_on_it(org, page):
    section = structure.create_section(page_id=page.page_id, name="Core", now=NOW)
    structure.create_component(
        page_id=page.page_id, section_id=item_id(section), group_id=None, name="API", status="operational", now=NOW
    )
    pages.delete_page(organization_id=org.organization_id, page_id=page.page_id)
    assert public.load_view("acme") is None
    assert list(StatusPageItem.query(page.page_id)) == []  # nothing left under the page
    assert list(StatusPageItem.query("SLUG#acme")) == []  # the slug is free
    with pytest.raises(NotFound):
        structure.list_structure(page_id=page.page_id)


def test_structure_references_are_checked(page):
    section = structure.create_section(page_id=page.page_id, name="Core", now=NOW)
    other_section = structure.create_section(page_id=page.page_id, name="Edge", now=NOW)
    group = structure.create_group(page_id=page.page_id, section_id=item_id(section), name="APIs", now=NOW)
    with pytest.raises(ValidationFailed):
        structure.create_group(page_id=page.page_id, section_id="sec_000000000000000000000000", name="x", now=NOW)
    with pytest.raises(ValidationFailed):  # a group of another section
        structure.create_component(
            page_id=page.page_id,
            section_id=item_id(other_section),
            group_id=item_id(group),
            name="x",
            status="operational",
            now=NOW,
        )
    component = structure.create_component(
        page_id=page.page_id,
        section_id=item_id(section),
        group_id=item_id(group),
        name="API",
        status="operational",
        now=NOW,
    )
    later = NOW + timedelta(minutes=5)
    moved = structure.update_component(
        page_id=page.page_id, component_id=item_id(component), now=later, section_id=item_id(other_section)
    )
    assert (moved.section_id, moved.group_id, moved.updated_at) == (item_id(other_section), None, later)
    with pytest.raises(Conflict):
        structure.delete_section(page_id=page.page_id, section_id=item_id(other_section))
    structure.delete_group(page_id=page.page_id, group_id=item_id(group))
    structure.delete_section(page_id=page.page_id, section_id=item_id(section))
    with pytest.raises(NotFound):
        structure.delete_section(page_id=page.page_id, section_id=item_id(section))


def test_public_incident_lifecycle_and_reopen(org, page):
    section = structure.create_section(page_id=page.page_id, name="Core", now=NOW)
    api = structure.create_component(
        page_id=page.page_id, section_id=item_id(section), group_id=None, name="API", status="operational", now=NOW
    )
    created = incidents.create_incident(
        organization_id=org.organization_id,
        page_id=page.page_id,
        title="Slow",
        status="investigating",
        impact="minor",
        body="Looking.",
        component_ids=[item_id(api), item_id(api)],
        incident_number=None,
        now=NOW,
        settings=get_settings(),
    )
    assert created.component_ids == [item_id(api)]
    incident_id = item_id(created)
    t1, t2 = NOW + timedelta(minutes=10), NOW + timedelta(minutes=20)
    resolved = incidents.add_update(
        page_id=page.page_id, incident_id=incident_id, status="resolved", body="Fixed.", now=t1, settings=get_settings()
    )
    assert (resolved.status, resolved.resolved_at, resolved.active_key) == ("resolved", t1, None)
    reopened = incidents.add_update(
        page_id=page.page_id,
        incident_id=incident_id,
        status="identified",
        body="Back.",
        now=t2,
        impact="major",
        settings=get_settings(),
    )
    assert (reopened.status, reopened.resolved_at, reopened.impact) == ("identified", None, "major")
    view = public.load_view("acme")
    assert view is not None
    document = public.incidents(view, None, settings=get_settings())["incidents"][0]
    assert [u["status"] for u in document["updates"]] == ["identified", "resolved", "investigating"]
    assert document["affected_components"] == [{"component_id": item_id(api), "name": "API"}]
    assert "incident_number" not in document
    assert public.summary(view, settings=get_settings())["active_incident_count"] == 1
    with pytest.raises(ValidationFailed):
        incidents.create_incident(
            organization_id=org.organization_id,
            page_id=page.page_id,
            title="x",
            status="investigating",
            impact="none",
            body="x",
            component_ids=[],
            incident_number="INC-2026-9999",
            now=NOW,
            settings=get_settings(),
        )


def test_listings_page_newest_first_with_cursors(page):
    for index in range(public.PAGE_SIZE + 3):
        scheduled_maintenance.create_window(
            page_id=page.page_id,
            title=f"Window {index}",
            scheduled_start=NOW + timedelta(days=1),
            scheduled_end=NOW + timedelta(days=1, hours=1),
            component_ids=[],
            now=NOW + timedelta(seconds=index),
            settings=get_settings(),
        )
    view = public.load_view("acme")
    assert view is not None
    first = public.maintenance(view, None, settings=get_settings())
    assert [w["title"] for w in first["maintenance"]] == [f"Window {i}" for i in range(22, 2, -1)]
    second = public.maintenance(view, first["next_cursor"], settings=get_settings())
    assert [w["title"] for w in second["maintenance"]] == ["Window 2", "Window 1", "Window 0"]
    assert second["next_cursor"] is None
    assert public.incidents(view, None, settings=get_settings()) == {"incidents": [], "next_cursor": None}
    with pytest.raises(ValidationFailed):  # a maintenance cursor is not an incidents cursor
        public.incidents(view, first["next_cursor"], settings=get_settings())


def test_an_exactly_full_page_promises_no_next_one(page):
    for index in range(public.PAGE_SIZE):
        scheduled_maintenance.create_window(
            page_id=page.page_id,
            title=f"W{index}",
            scheduled_start=NOW + timedelta(days=1),
            scheduled_end=NOW + timedelta(days=1, hours=1),
            component_ids=[],
            now=NOW + timedelta(seconds=index),
            settings=get_settings(),
        )
    view = public.load_view("acme")
    assert view is not None
    listing = public.maintenance(view, None, settings=get_settings())
    assert (len(listing["maintenance"]), listing["next_cursor"]) == (public.PAGE_SIZE, None)
