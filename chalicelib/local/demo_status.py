"""The demo status page (browser tests rely on these exact names). Seeding twice changes nothing:
an existing page with the demo slug is kept as it is.

A new page gets 90 days of history, so its uptime bars have something to show: the components
exist from 90 days ago, two past outages were posted and resolved (their component statuses
recorded as they changed), and today's incident degrades Checkout API. It also gets incident
templates and followers (chalicelib/local/demo_follow.py)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from typing import Any

from chalicelib.errors import Conflict
from chalicelib.local.demo_follow import FOLLOWERS, seed_followers
from chalicelib.settings import get_settings
from chalicelib.statuspage import incidents, pages, scheduled_maintenance, structure
from chalicelib.statuspage.repository import item_id, page_id_for_slug

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
HISTORY_DAYS = 90


@dataclass(frozen=True)
class PastOutage:
    days_ago: int
    starts: time
    minutes: int
    component: str
    status: str
    title: str
    impact: str
    first_update: str
    resolution: str


PAST_OUTAGES = (
    PastOutage(
        37,
        time(14, 5),
        100,
        "Billing API",
        "major_outage",
        "Payment provider outage",
        "major",
        "Invoices cannot be paid: our payment provider is not answering.",
        "The provider recovered and every queued payment went through.",
    ),
    PastOutage(
        12,
        time(9, 30),
        180,
        "Dashboard",
        "partial_outage",
        "Dashboards slow for some customers",
        "minor",
        "Some dashboards take minutes to load.",
        "A failed cache node was replaced; dashboards load normally again.",
    ),
)


def seed_status_page(*, organization_id: str, now: datetime) -> dict[str, Any]:
    """Create the demo page unless its slug exists; return demo.json's `status_page` entry."""
    if page_id_for_slug(SLUG) is None:
        try:
            _create(organization_id, now)
        except Conflict:
            pass  # another seeding run claimed the slug first
    url = pages.public_url(SLUG, settings=get_settings())
    return {
        "slug": SLUG,
        "url": url,
        "uptime_url": f"{url}/uptime.json",
        "feeds": {"atom": f"{url}/history.atom", "rss": f"{url}/history.rss"},
        "followers": FOLLOWERS,
    }


def _create(organization_id: str, now: datetime) -> None:
    since = now - timedelta(days=HISTORY_DAYS)
    page = pages.create_page(organization_id=organization_id, name=PAGE_NAME, slug=SLUG, now=since)
    section_id = item_id(structure.create_section(page_id=page.page_id, name=SECTION, now=since))
    group_id = item_id(structure.create_group(page_id=page.page_id, section_id=section_id, name=GROUP, now=since))
    ids = {}
    for name, _ in GROUPED_COMPONENTS:
        component = structure.create_component(
            page_id=page.page_id, section_id=section_id, group_id=group_id, name=name, status="operational", now=since
        )
        ids[name] = item_id(component)
    name, status = SECTION_COMPONENT
    dashboard = structure.create_component(
        page_id=page.page_id, section_id=section_id, group_id=None, name=name, status=status, now=since
    )
    ids[name] = item_id(dashboard)
    for outage in PAST_OUTAGES:
        _past_outage(organization_id, page.page_id, ids[outage.component], outage, now)
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
        # Today's incident is what degrades Checkout API (its history shows when).
        component_statuses={ids[n]: s for n, s in GROUPED_COMPONENTS if s != "operational"},
        now=now - timedelta(minutes=20),
        settings=get_settings(),
    )
    incidents.add_update(
        page_id=page.page_id,
        incident_id=item_id(incident),
        status=second_status,
        body=second_body,
        now=now,
        settings=get_settings(),
    )
    start = datetime.combine(now.astimezone(UTC).date() + timedelta(days=1), time(2, 0), tzinfo=UTC)
    scheduled_maintenance.create_window(
        page_id=page.page_id,
        title=MAINTENANCE_TITLE,
        scheduled_start=start,
        scheduled_end=start + timedelta(hours=1),
        component_ids=[ids["Billing API"]],
        now=now,
        settings=get_settings(),
    )
    seed_followers(page_id=page.page_id, slug=SLUG, component_ids=ids, now=now)


def _past_outage(organization_id: str, page_id: str, component_id: str, outage: PastOutage, now: datetime) -> None:
    began = datetime.combine(now.astimezone(UTC).date() - timedelta(days=outage.days_ago), outage.starts, tzinfo=UTC)
    incident = incidents.create_incident(
        organization_id=organization_id,
        page_id=page_id,
        title=outage.title,
        status="investigating",
        impact=outage.impact,
        body=outage.first_update,
        component_ids=[component_id],
        component_statuses={component_id: outage.status},
        now=began,
        settings=get_settings(),
    )
    incidents.add_update(
        page_id=page_id,
        incident_id=item_id(incident),
        status="resolved",
        body=outage.resolution,
        component_statuses={component_id: "operational"},
        now=began + timedelta(minutes=outage.minutes),
        settings=get_settings(),
    )
