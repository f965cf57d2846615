"""Status pages, managed: the list (and a new page), and one page's components, public incidents
with their updates, and maintenance windows, with a link to the public page.

Every write calls the statuspage service function the API's route calls, with the body
validated by the API's own request model, under the same scope (status:write). As in the API,
the page named in the path is first checked to belong to the person's organization (404).
"""

from __future__ import annotations

from typing import Any

from chalicelib.console.form_times import utc_from_form
from chalicelib.console.web import ConsoleBlueprint, Ctx, Page, Redirect, app_path
from chalicelib.statuspage import incidents, maintenance, pages, structure
from chalicelib.statuspage.models import (
    ComponentCreate,
    ComponentPatch,
    IncidentUpdateCreate,
    MaintenanceCreate,
    MaintenancePatch,
    PageCreate,
    SectionCreate,
    StatusIncidentCreate,
)
from chalicelib.statuspage.pages import public_url
from chalicelib.statuspage.rules import COMPONENT_STATUS_ORDER, INCIDENT_STATUSES, MAINTENANCE_MOVES
from chalicelib.statuspage.store import get_page, item_id
from chalicelib.statuspage.tables import StatusPageItem

console = ConsoleBlueprint(
    __name__,
    notices={
        "status_page_created": "Status page created.",
        "status_section_added": "Section added.",
        "status_component_added": "Component added.",
        "status_component_set": "Component status set.",
        "status_incident_opened": "Public incident posted.",
        "status_update_posted": "Update posted.",
        "status_maintenance_scheduled": "Maintenance scheduled.",
        "status_maintenance_moved": "Maintenance window updated.",
    },
)

SCOPE = "status:write"
IMPACTS = ("none", "minor", "major", "critical")
# Best first on the form: the usual move is back to operational.
COMPONENT_STATUSES = tuple(reversed(COMPONENT_STATUS_ORDER))
MAINTENANCE_MOVE_LABELS = {"in_progress": "Start now", "completed": "Complete", "cancelled": "Cancel maintenance"}


def _options(names: tuple[str, ...]) -> list[tuple[str, str]]:
    return [(name, name.replace("_", " ")) for name in names]


def _draft(ctx: Ctx) -> dict[str, Any]:
    """The values of the form that was sent (shown again after an error), by field name."""
    if ctx.request.method != "POST":
        return {}
    return {name: values[0].strip() for name, values in ctx.form.items() if values} | {
        "component_ids": ctx.values("component_ids")
    }


# ---------------------------------------------------------------- the list


@console.page("/status-pages")
def list_status_pages(ctx: Ctx) -> Page:
    """The organization's status pages, with their public addresses."""
    found = pages.list_pages(organization_id=ctx.organization_id)
    return Page(
        "console/status_pages/list.html",
        "Status pages",
        section="status",
        context={"pages": [(page, public_url(page.slug or "")) for page in found], "draft": _draft(ctx)},
    )


@console.action("/status-pages", scope=SCOPE, on_error=list_status_pages)
def create_status_page(ctx: Ctx) -> Redirect:
    """Create a status page (its slug is its public address)."""
    body = ctx.model(PageCreate, {"name": ctx.value("name"), "slug": ctx.value("slug")})
    created = pages.create_page(organization_id=ctx.organization_id, now=ctx.now, **dict(body))
    return Redirect(app_path(f"/status-pages/{created.page_id}"), notice="status_page_created")


# ---------------------------------------------------------------- one page


def _page_item(ctx: Ctx) -> StatusPageItem:
    return get_page(organization_id=ctx.organization_id, page_id=ctx.path["page_id"])


def _here(page_id: str) -> str:
    return app_path(f"/status-pages/{page_id}")


@console.page("/status-pages/{page_id}")
def show_status_page(ctx: Ctx) -> Page:
    """One status page: components, public incidents and maintenance."""
    page = _page_item(ctx)
    layout = structure.list_structure(page_id=page.page_id)
    names = {item_id(item): item.name or "" for item in [*layout.sections, *layout.groups]}
    components = [
        {
            "id": item_id(component),
            "name": component.name or "",
            "status": component.status,
            "where": " / ".join(
                n for n in (names.get(component.section_id or ""), names.get(component.group_id or "")) if n
            ),
        }
        for component in layout.components
    ]
    windows = maintenance.list_windows(page_id=page.page_id)
    return Page(
        "console/status_pages/page.html",
        page.name or "Status page",
        section="status",
        context={
            "page": page,
            "page_id": page.page_id,
            "public_url": public_url(page.slug or ""),
            "sections": [(item_id(section), section.name or "") for section in layout.sections],
            "components": components,
            "component_names": {c["id"]: c["name"] for c in components},
            "component_choices": [(c["id"], c["name"]) for c in components],
            "incidents": [
                {"item": item, "id": item_id(item), "updates": list(reversed(item.updates or []))}
                for item in incidents.list_incidents(page_id=page.page_id)
            ],
            "windows": [
                {
                    "item": window,
                    "id": item_id(window),
                    "moves": [
                        (m, label)
                        for m, label in MAINTENANCE_MOVE_LABELS.items()
                        if m in MAINTENANCE_MOVES[window.status]
                    ],
                }
                for window in windows
            ],
            "component_status_options": _options(COMPONENT_STATUSES),
            "incident_status_options": _options(INCIDENT_STATUSES),
            "impact_options": _options(IMPACTS),
            "draft": _draft(ctx),
            "posted": ctx.value("form") if ctx.request.method == "POST" else "",
        },
    )


@console.action("/status-pages/{page_id}/sections", scope=SCOPE, on_error=show_status_page)
def add_section(ctx: Ctx) -> Redirect:
    """Add a section (components sit in sections)."""
    page = _page_item(ctx)
    body = ctx.model(SectionCreate, {"name": ctx.value("name")})
    structure.create_section(page_id=page.page_id, now=ctx.now, **dict(body))
    return Redirect(_here(page.page_id), notice="status_section_added")


@console.action("/status-pages/{page_id}/components", scope=SCOPE, on_error=show_status_page)
def add_component(ctx: Ctx) -> Redirect:
    """Add a component to a section."""
    page = _page_item(ctx)
    data = {"section_id": ctx.value("section_id"), "name": ctx.value("name"), "status": ctx.value("status")}
    body = ctx.model(ComponentCreate, data)
    structure.create_component(page_id=page.page_id, now=ctx.now, **dict(body))
    return Redirect(_here(page.page_id), notice="status_component_added")


@console.action("/status-pages/{page_id}/components/{component_id}/status", scope=SCOPE, on_error=show_status_page)
def set_component_status(ctx: Ctx) -> Redirect:
    """Set a component's status (what the public page shows for it)."""
    page = _page_item(ctx)
    body = ctx.model(ComponentPatch, {"status": ctx.value("status")})
    structure.update_component(
        page_id=page.page_id, component_id=ctx.path["component_id"], now=ctx.now, **body.changes()
    )
    return Redirect(_here(page.page_id), notice="status_component_set")


@console.action("/status-pages/{page_id}/incidents", scope=SCOPE, on_error=show_status_page)
def open_public_incident(ctx: Ctx) -> Redirect:
    """Post a public incident with its first update."""
    page = _page_item(ctx)
    data: dict[str, Any] = {
        "title": ctx.value("title"),
        "status": ctx.value("status"),
        "impact": ctx.value("impact"),
        "body": ctx.value("body"),
        "component_ids": ctx.values("component_ids"),
    }
    if ctx.value("incident_number"):
        data["incident_number"] = ctx.value("incident_number")
    body = ctx.model(StatusIncidentCreate, data)
    incidents.create_incident(organization_id=ctx.organization_id, page_id=page.page_id, now=ctx.now, **dict(body))
    return Redirect(_here(page.page_id), notice="status_incident_opened")


@console.action("/status-pages/{page_id}/incidents/{incident_id}/updates", scope=SCOPE, on_error=show_status_page)
def post_update(ctx: Ctx) -> Redirect:
    """Post an update to a public incident; it sets the incident's status."""
    page = _page_item(ctx)
    data = {"status": ctx.value("status"), "body": ctx.value("body")}
    if ctx.value("impact"):
        data["impact"] = ctx.value("impact")
    body = ctx.model(IncidentUpdateCreate, data)
    incidents.add_update(page_id=page.page_id, incident_id=ctx.path["incident_id"], now=ctx.now, **dict(body))
    return Redirect(_here(page.page_id), notice="status_update_posted")


@console.action("/status-pages/{page_id}/maintenance", scope=SCOPE, on_error=show_status_page)
def schedule_maintenance(ctx: Ctx) -> Redirect:
    """Schedule a maintenance window (times in UTC)."""
    page = _page_item(ctx)
    data = {
        "title": ctx.value("title"),
        "scheduled_start": utc_from_form(ctx.value("scheduled_start")),
        "scheduled_end": utc_from_form(ctx.value("scheduled_end")),
        "component_ids": ctx.values("component_ids"),
    }
    body = ctx.model(MaintenanceCreate, data)
    maintenance.create_window(page_id=page.page_id, now=ctx.now, **dict(body))
    return Redirect(_here(page.page_id), notice="status_maintenance_scheduled")


@console.action("/status-pages/{page_id}/maintenance/{maintenance_id}/status", scope=SCOPE, on_error=show_status_page)
def move_maintenance(ctx: Ctx) -> Redirect:
    """Start, complete or cancel a maintenance window (the allowed moves are the service's)."""
    page = _page_item(ctx)
    body = ctx.model(MaintenancePatch, {"status": ctx.value("status")})
    maintenance.update_window(
        page_id=page.page_id, maintenance_id=ctx.path["maintenance_id"], now=ctx.now, **body.changes()
    )
    return Redirect(_here(page.page_id), notice="status_maintenance_moved")
