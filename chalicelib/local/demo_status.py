"""The demo status page (browser tests rely on these exact names). Seeding twice changes nothing:
an existing page with the demo slug is kept as it is."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta
from typing import Any

from chalicelib.errors import Conflict
from chalicelib.statuspage import incidents, maintenance, pages, structure
from chalicelib.statuspage.store import item_id, page_id_for_slug

PAGE_NAME = "Tocsin Demo"
SLUG = "tocsin-demo"
SECTION = "Core services"
GROUP = "APIs"
GROUPED_COMPONENTS = (("Checkout API", "degraded_performance"), ("Billing API", "operational"))
SECTION_COMPONENT = ("Dashboard", "operational")
INCIDENT_TITLE = "Elevated checkout latency"
INCIDENT_UPDATES = (
    ("investigating", "We are investigating slow checkouts."),
    ("identified", "A slow database query has been identified; a fix is rolling out."),
)
MAINTENANCE_TITLE = "Database upgrade"


def seed_status_page(*, organization_id: str, now: datetime) -> dict[str, Any]:
    """Create the demo page unless its slug exists; return demo.json's `status_page` entry."""
    if page_id_for_slug(SLUG) is None:
        try:
            _create(organization_id, now)
        except Conflict:
            pass  # another seeding run claimed the slug first
    return {"slug": SLUG, "url": pages.public_url(SLUG)}


def _create(organization_id: str, now: datetime) -> None:
    page = pages.create_page(organization_id=organization_id, name=PAGE_NAME, slug=SLUG, now=now)
    section_id = item_id(structure.create_section(page_id=page.page_id, name=SECTION, now=now))
    group_id = item_id(structure.create_group(page_id=page.page_id, section_id=section_id, name=GROUP, now=now))
    ids = {}
    for name, status in GROUPED_COMPONENTS:
        component = structure.create_component(
            page_id=page.page_id, section_id=section_id, group_id=group_id, name=name, status=status, now=now
        )
        ids[name] = item_id(component)
    name, status = SECTION_COMPONENT
    structure.create_component(
        page_id=page.page_id, section_id=section_id, group_id=None, name=name, status=status, now=now
    )
    (first_status, first_body), (second_status, second_body) = INCIDENT_UPDATES
    incident = incidents.create_incident(
        organization_id=organization_id,
        page_id=page.page_id,
        title=INCIDENT_TITLE,
        status=first_status,
        impact="minor",
        body=first_body,
        component_ids=[ids["Checkout API"]],
        incident_number=None,
        now=now - timedelta(minutes=20),
    )
    incidents.add_update(
        page_id=page.page_id, incident_id=item_id(incident), status=second_status, body=second_body, now=now
    )
    start = datetime.combine(now.astimezone(UTC).date() + timedelta(days=1), time(2, 0), tzinfo=UTC)
    maintenance.create_window(
        page_id=page.page_id,
        title=MAINTENANCE_TITLE,
        scheduled_start=start,
        scheduled_end=start + timedelta(hours=1),
        component_ids=[ids["Billing API"]],
        now=now,
    )
