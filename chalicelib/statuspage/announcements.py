"""What a page's followers hear: one queue message per public change, published after the write.

- `status_page.incident_updated` (incidents.py): a public incident was created, got an update,
  or was resolved; `change` says which (`created`, `updated`, `resolved`). Outbound webhook
  subscriptions of the organization and the page's own subscribers both follow it.
- `status_page.maintenance_changed`: a maintenance window was `scheduled`, `started`,
  `completed` or `cancelled` (create, PATCH, and the scheduler's moves), or `rescheduled` (a
  PATCH moved the times of an open window). Only the page's subscribers follow it.

Both carry the page (`status_page`: page_id, name, slug, url) and the public object exactly as
the page shows it at that moment, so what a subscriber is told never depends on later edits.
Their `occurred_at` is the change's own time (the `now` the write used), not the moment of
publishing: a follower hears the changes made after it confirmed (chalicelib/subscriber/notices.py).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from chalicelib import clock
from chalicelib.queue.messages import Message, publish
from chalicelib.settings import Settings
from chalicelib.statuspage import public
from chalicelib.statuspage.pages import public_url
from chalicelib.statuspage.repository import Structure, load_structure
from chalicelib.statuspage.tables import StatusPageItem

STATUS_PAGE_INCIDENT_UPDATED_MESSAGE = "status_page.incident_updated"
STATUS_PAGE_MAINTENANCE_CHANGED_MESSAGE = "status_page.maintenance_changed"

# A window's status after a write -> the change its followers hear about.
MAINTENANCE_CHANGES: dict[str, str] = {
    "scheduled": "scheduled",
    "in_progress": "started",
    "completed": "completed",
    "cancelled": "cancelled",
}
RESCHEDULED = "rescheduled"
OPEN_WINDOW_STATUSES = ("scheduled", "in_progress")


def incident_change(previous_status: str | None, status: str) -> str:
    """`created` for a new incident, `resolved` when an update resolves it, else `updated`."""
    if previous_status is None:
        return "created"
    if status == "resolved" and previous_status != "resolved":
        return "resolved"
    return "updated"


def maintenance_change(previous_status: str | None, status: str, *, times_moved: bool = False) -> str | None:
    """The change a write made to a window, or None when it is not news: a new title or new
    components, or a window created already over (a record of the past). New times for an open
    window are news (`rescheduled`): people plan around them."""
    if previous_status == status:
        return RESCHEDULED if times_moved and status in OPEN_WINDOW_STATUSES else None
    if previous_status is None and status == "completed":
        return None
    return MAINTENANCE_CHANGES.get(status)


def page_document(structure: Structure, *, settings: Settings) -> dict[str, Any]:
    page = structure.page
    return {
        "page_id": page.page_id,
        "name": page.name,
        "slug": page.slug,
        "url": public_url(page.slug or "", settings=settings),
    }


def announce_incident(page_id: str, item: StatusPageItem, *, change: str, now: datetime, settings: Settings) -> None:
    structure = load_structure(page_id)
    if structure is None or not structure.page.organization_id:
        return  # the page was deleted a moment ago: nobody to tell
    payload = {
        "status_page": page_document(structure, settings=settings),
        "incident": public.public_incident(public.PageView(structure, [], []), item).model_dump(mode="json"),
        "change": change,
    }
    organization_id = structure.page.organization_id
    publish(Message(STATUS_PAGE_INCIDENT_UPDATED_MESSAGE, organization_id, payload, occurred_at=clock.isoformat(now)))


def announce_maintenance(
    page_id: str,
    item: StatusPageItem,
    *,
    previous_status: str | None,
    now: datetime,
    times_moved: bool = False,
    settings: Settings,
) -> None:
    change = maintenance_change(previous_status, item.status or "", times_moved=times_moved)
    if change is None:
        return
    structure = load_structure(page_id)
    if structure is None or not structure.page.organization_id:
        return
    payload = {
        "status_page": page_document(structure, settings=settings),
        "maintenance": public.public_window(public.PageView(structure, [], []), item).model_dump(mode="json"),
        "change": change,
    }
    organization_id = structure.page.organization_id
    publish(
        Message(STATUS_PAGE_MAINTENANCE_CHANGED_MESSAGE, organization_id, payload, occurred_at=clock.isoformat(now))
    )
