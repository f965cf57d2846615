"""Status pages, managed: the list (and a new page), and one page's components, public incidents
with their updates (from an incident template if picked), and maintenance windows, with a link to
the public page and to its templates and followers (status_templates.py, status_followers.py).

Every write calls the statuspage service function the API's route calls, with the body
validated by the API's own request model, under the same scope (status:write). As in the API,
the page named in the path is first checked to belong to the person's organization (404).
"""

from __future__ import annotations

from typing import Any

from chalicelib.console.form_times import from_form
from chalicelib.console.status_forms import (
    COMPONENT_STATUSES,
    IMPACTS,
    SCOPE,
    draft,
    options,
    page_item,
    page_path,
)
from chalicelib.console.visits import app_path
from chalicelib.console.web import ConsolePages, Ctx, Page, Redirect
from chalicelib.statuspage import incident_templates, incidents, pages, scheduled_maintenance, structure
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
from chalicelib.statuspage.repository import item_id
from chalicelib.statuspage.rules import INCIDENT_STATUSES, MAINTENANCE_MOVES
from chalicelib.subscriber.service import count_subscribers

console = ConsolePages(
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

MAINTENANCE_MOVE_LABELS = {"in_progress": "Start now", "completed": "Complete", "cancelled": "Cancel maintenance"}


# ---------------------------------------------------------------- the list


@console.page("/status-pages")
def list_status_pages(ctx: Ctx) -> Page:
    """The organization's status pages, with their public addresses."""
    found = pages.list_pages(organization_id=ctx.organization_id)
    return Page(
        "console/status_pages/list.html",
        "Status pages",
        section="status",
        context={
            "pages": [(page, public_url(page.slug or "", settings=ctx.settings)) for page in found],
            "draft": draft(ctx),
        },
    )


@console.action("/status-pages", scope=SCOPE, on_error=list_status_pages)
def create_status_page(ctx: Ctx) -> Redirect:
    """Create a status page (its slug is its public address)."""
    body = ctx.model(PageCreate, {"name": ctx.value("name"), "slug": ctx.value("slug")})
    created = pages.create_page(organization_id=ctx.organization_id, now=ctx.now, **dict(body))
    return Redirect(app_path(f"/status-pages/{created.page_id}", settings=ctx.settings), notice="status_page_created")


# ---------------------------------------------------------------- one page


@console.page("/status-pages/{page_id}")
def show_status_page(ctx: Ctx) -> Page:
    """One status page: components, public incidents and maintenance."""
    page = page_item(ctx)
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
    windows = scheduled_maintenance.list_windows(page_id=page.page_id)
    templates = [(item_id(t), t.name or "") for t in incident_templates.list_templates(page_id=page.page_id)]
    return Page(
        "console/status_pages/page.html",
        page.name or "Status page",
        section="status",
        context={
            "page": page,
            "page_id": page.page_id,
            "public_url": public_url(page.slug or "", settings=ctx.settings),
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
            "component_status_options": options(COMPONENT_STATUSES),
            "incident_status_options": options(INCIDENT_STATUSES),
            "impact_options": options(IMPACTS),
            "templates": templates,
            "followers": count_subscribers(organization_id=ctx.organization_id, page_id=page.page_id, now=ctx.now),
            "draft": draft(ctx),
            "posted": ctx.value("form") if ctx.request.method == "POST" else "",
        },
    )


def _templated(ctx: Ctx, texts: tuple[str, ...], choices: tuple[str, ...]) -> dict[str, Any]:
    """The form's fields as the API's request takes them. With a template picked, a blank text is
    left out so the template fills it; without one it stays, so the model's "required" sits next to
    its field. A blank choice (status, impact) is always left out: the template's, else the default."""
    template_id = ctx.value("template_id")
    data: dict[str, Any] = {name: ctx.value(name) for name in texts if ctx.value(name) or not template_id}
    data |= {name: ctx.value(name) for name in choices if ctx.value(name)}
    if template_id:
        data["template_id"] = template_id
    return data


def _template_sets_status(page_id: str, template_id: str | None) -> bool:
    """Whether the picked template has a status (404 for a template the page lacks)."""
    if not template_id:
        return False
    return incident_templates.get_template(page_id=page_id, template_id=template_id).status is not None


@console.action("/status-pages/{page_id}/sections", scope=SCOPE, on_error=show_status_page)
def add_section(ctx: Ctx) -> Redirect:
    """Add a section (components sit in sections)."""
    page = page_item(ctx)
    body = ctx.model(SectionCreate, {"name": ctx.value("name")})
    structure.create_section(page_id=page.page_id, now=ctx.now, **dict(body))
    return Redirect(page_path(page.page_id, settings=ctx.settings), notice="status_section_added")


@console.action("/status-pages/{page_id}/components", scope=SCOPE, on_error=show_status_page)
def add_component(ctx: Ctx) -> Redirect:
    """Add a component to a section."""
    page = page_item(ctx)
    data = {"section_id": ctx.value("section_id"), "name": ctx.value("name"), "status": ctx.value("status")}
    body = ctx.model(ComponentCreate, data)
    structure.create_component(page_id=page.page_id, now=ctx.now, **dict(body))
    return Redirect(page_path(page.page_id, settings=ctx.settings), notice="status_component_added")


@console.action("/status-pages/{page_id}/components/{component_id}/status", scope=SCOPE, on_error=show_status_page)
def set_component_status(ctx: Ctx) -> Redirect:
    """Set a component's status (what the public page shows for it)."""
    page = page_item(ctx)
    body = ctx.model(ComponentPatch, {"status": ctx.value("status")})
    structure.update_component(
        page_id=page.page_id, component_id=ctx.path["component_id"], now=ctx.now, **body.changes()
    )
    return Redirect(page_path(page.page_id, settings=ctx.settings), notice="status_component_set")


@console.action("/status-pages/{page_id}/incidents", scope=SCOPE, on_error=show_status_page)
def open_public_incident(ctx: Ctx) -> Redirect:
    """Post a public incident with its first update."""
    page = page_item(ctx)
    data = _templated(ctx, ("title", "body"), ("status", "impact")) | {"component_ids": ctx.values("component_ids")}
    if ctx.value("incident_number"):
        data["incident_number"] = ctx.value("incident_number")
    body = ctx.model(StatusIncidentCreate, data)
    incidents.create_incident(
        organization_id=ctx.organization_id, page_id=page.page_id, now=ctx.now, **dict(body), settings=ctx.settings
    )
    return Redirect(page_path(page.page_id, settings=ctx.settings), notice="status_incident_opened")


@console.action("/status-pages/{page_id}/incidents/{incident_id}/updates", scope=SCOPE, on_error=show_status_page)
def post_update(ctx: Ctx) -> Redirect:
    """Post an update to a public incident; it sets the incident's status."""
    page = page_item(ctx)
    data = _templated(ctx, ("body",), ("status", "impact"))
    if "status" not in data and not _template_sets_status(page.page_id, data.get("template_id")):
        # A blank status keeps the incident's own, as a blank impact does: a note changes nothing else.
        data["status"] = incidents.get_incident(page_id=page.page_id, incident_id=ctx.path["incident_id"]).status
    body = ctx.model(IncidentUpdateCreate, data)
    incidents.add_update(
        page_id=page.page_id, incident_id=ctx.path["incident_id"], now=ctx.now, settings=ctx.settings, **dict(body)
    )
    return Redirect(page_path(page.page_id, settings=ctx.settings), notice="status_update_posted")


@console.action("/status-pages/{page_id}/maintenance", scope=SCOPE, on_error=show_status_page)
def schedule_maintenance(ctx: Ctx) -> Redirect:
    """Schedule a maintenance window (times in the viewer's zone)."""
    page = page_item(ctx)
    data = {
        "title": ctx.value("title"),
        "scheduled_start": from_form(ctx.value("scheduled_start"), ctx.zone),
        "scheduled_end": from_form(ctx.value("scheduled_end"), ctx.zone),
        "component_ids": ctx.values("component_ids"),
    }
    body = ctx.model(MaintenanceCreate, data)
    scheduled_maintenance.create_window(page_id=page.page_id, now=ctx.now, **dict(body), settings=ctx.settings)
    return Redirect(page_path(page.page_id, settings=ctx.settings), notice="status_maintenance_scheduled")


@console.action("/status-pages/{page_id}/maintenance/{maintenance_id}/status", scope=SCOPE, on_error=show_status_page)
def move_maintenance(ctx: Ctx) -> Redirect:
    """Start, complete or cancel a maintenance window (the allowed moves are the service's)."""
    page = page_item(ctx)
    body = ctx.model(MaintenancePatch, {"status": ctx.value("status")})
    scheduled_maintenance.update_window(
        page_id=page.page_id,
        maintenance_id=ctx.path["maintenance_id"],
        now=ctx.now,
        **body.changes(),
        settings=ctx.settings,
    )
    return Redirect(page_path(page.page_id, settings=ctx.settings), notice="status_maintenance_moved")
