"""Status pages, managed: pages, sections, groups, components, public incidents, maintenance.

Request bodies' fields are named as the service functions' arguments, so the operations pass them
on as they are (`RequestModel.arguments()`). Everything under a page names it in the path: the
page is checked to be the caller's organization's first (404), then the item is found in it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from chalicelib.api.operation import Call, OperationGroup
from chalicelib.api.resource import Find, Resource, each
from chalicelib.statuspage import incidents, pages, scheduled_maintenance, structure
from chalicelib.statuspage.models import (
    ComponentCreate,
    ComponentPatch,
    ComponentV1,
    GroupCreate,
    GroupV1,
    IncidentUpdateCreate,
    MaintenanceCreate,
    MaintenancePatch,
    MaintenanceV1,
    NamePatch,
    PageCreate,
    PagePatch,
    SectionCreate,
    SectionV1,
    StatusIncidentCreate,
    StatusIncidentV1,
    StatusPageV1,
)
from chalicelib.statuspage.repository import get_page

api = OperationGroup(__name__, tag="status-pages")

BASE = "/api/v1/status-pages"
PAGE = BASE + "/{page_id}"
READ, WRITE = "status:read", "status:write"
# What this module's lists and writes declare unless they say otherwise (the page named may not exist).
LIST_ERRORS = WRITE_ERRORS = (400, 404)
_REFS = " Referenced sections, groups and components must belong to the page (400 otherwise)."
_INCIDENT_RULES = (
    "Statuses investigating, identified, monitoring, resolved; any move is allowed, and an update with an "
    "active status reopens a resolved incident. Resolving stamps resolved_at; reopening clears it. "
    "component_statuses sets component statuses in the same transaction." + _REFS + " template_id names an incident "
    "template of the page (404 otherwise; see .../templates): it fills the fields the request leaves out."
)
_MAINTENANCE_RULES = (
    "A scheduler moves windows to in_progress at scheduled_start and to completed at scheduled_end (within "
    "about a minute); affected components show under_maintenance while in progress unless their own status "
    "is worse. Moves: scheduled -> in_progress -> completed, scheduled | in_progress -> cancelled; completed "
    "and cancelled are final (400 TRANSITION_NOT_ALLOWED for any other move or a reschedule)." + _REFS
)


def on_page(call: Call) -> dict[str, Any]:
    """The key of what lies under a page: the page named in the path, after checking it belongs to
    the caller's organization (404), and the item named after it."""
    page = get_page(organization_id=call.principal.organization_id, page_id=call.path["page_id"])
    return {**call.path, "page_id": page.page_id}


def _structure_part(name: str) -> Find:
    """A list of the page's sections, groups or components: one read of the page's structure."""
    return lambda call, _: getattr(structure.list_structure(**on_page(call)), name)


def under_page(path: str, id_param: str, response: type[BaseModel], of: Callable[[Any], Any]) -> Resource:
    return Resource(api, PAGE + path, id_param, response, each(of), read=READ, write=WRITE, key=on_page)


status_pages = Resource(
    api,
    BASE,
    "page_id",
    StatusPageV1,
    lambda call, items: [StatusPageV1.of(item, settings=call.settings) for item in items],
    read=READ,
    write=WRITE,
)
status_pages.listing(
    "listStatusPages",
    "List status pages, newest first",
    lambda call, _: pages.list_pages(organization_id=call.principal.organization_id),
    errors=LIST_ERRORS,
)
status_pages.create(
    "createStatusPage",
    "Create a status page",
    PageCreate,
    status_pages.by_key(pages.create_page),
    errors=(400, 409),
    description="The slug is the public URL (/status/{slug}); 409 when another page uses it.",
)
status_pages.get("getStatusPage", "Get a status page", get_page)
status_pages.update(
    "updateStatusPage",
    "Rename a status page or change its slug",
    PagePatch,
    pages.update_page,
    description="A new slug frees the old one at once; 409 when another page uses it.",
)
status_pages.delete(
    "deleteStatusPage", "Delete a status page and everything on it", pages.delete_page, errors=(404, 409)
)

sections = under_page("/sections", "section_id", SectionV1, SectionV1.of)
sections.listing(
    "listStatusSections",
    "List sections in page order",
    _structure_part("sections"),
    errors=LIST_ERRORS,
)
sections.create(
    "createStatusSection",
    "Add a section",
    SectionCreate,
    sections.by_key(structure.create_section),
    errors=WRITE_ERRORS,
)
sections.update("updateStatusSection", "Rename a section", NamePatch, structure.rename_section, errors=WRITE_ERRORS)
sections.delete(
    "deleteStatusSection",
    "Delete an empty section (409 while it holds groups or components)",
    structure.delete_section,
    errors=(404, 409),
)

groups = under_page("/groups", "group_id", GroupV1, GroupV1.of)
groups.listing(
    "listStatusGroups",
    "List component groups",
    _structure_part("groups"),
    errors=LIST_ERRORS,
)
groups.create(
    "createStatusGroup",
    "Add a component group to a section",
    GroupCreate,
    groups.by_key(structure.create_group),
    errors=WRITE_ERRORS,
    description=_REFS.strip(),
)
groups.update("updateStatusGroup", "Rename a component group", NamePatch, structure.rename_group, errors=WRITE_ERRORS)
groups.delete(
    "deleteStatusGroup",
    "Delete an empty component group (409 while it holds components)",
    structure.delete_group,
    errors=(404, 409),
)

components = under_page("/components", "component_id", ComponentV1, ComponentV1.of)
components.listing(
    "listStatusComponents",
    "List components",
    _structure_part("components"),
    errors=LIST_ERRORS,
)
components.create(
    "createStatusComponent",
    "Add a component",
    ComponentCreate,
    components.by_key(structure.create_component),
    errors=WRITE_ERRORS,
    description=_REFS.strip(),
)
components.update(
    "updateStatusComponent",
    "Change a component's name, status, section or group",
    ComponentPatch,
    structure.update_component,
    errors=WRITE_ERRORS,
    description=_REFS.strip(),
)
components.delete("deleteStatusComponent", "Delete a component", structure.delete_component)

public_incidents = under_page("/incidents", "incident_id", StatusIncidentV1, StatusIncidentV1.of)
public_incidents.listing(
    "listStatusIncidents",
    "List public incidents, newest first",
    lambda call, _: incidents.list_incidents(**on_page(call)),
    errors=LIST_ERRORS,
)
public_incidents.create(
    "createStatusIncident",
    "Open a public incident",
    StatusIncidentCreate,
    lambda call, body: incidents.create_incident(
        organization_id=call.principal.organization_id,
        **on_page(call),
        now=call.now,
        **body.arguments(),
        settings=call.settings,
    ),
    errors=WRITE_ERRORS,
    description=_INCIDENT_RULES + " incident_number must name an internal incident (400).",
)
public_incidents.get("getStatusIncident", "Get a public incident", incidents.get_incident)
public_incidents.act(
    "POST",
    "/updates",
    "addStatusIncidentUpdate",
    "Post an update to a public incident (it sets the incident's status)",
    incidents.add_update,
    body=IncidentUpdateCreate,
    with_settings=True,
    status=201,
    errors=WRITE_ERRORS,
    description=_INCIDENT_RULES,
)

windows = under_page("/maintenance", "maintenance_id", MaintenanceV1, MaintenanceV1.of)
windows.listing(
    "listStatusMaintenance",
    "List maintenance windows, newest first",
    lambda call, _: scheduled_maintenance.list_windows(**on_page(call)),
    errors=LIST_ERRORS,
)
windows.create(
    "createStatusMaintenance",
    "Schedule a maintenance window",
    MaintenanceCreate,
    windows.by_key(scheduled_maintenance.create_window, with_settings=True),
    errors=WRITE_ERRORS,
    description=_MAINTENANCE_RULES,
)
windows.get("getStatusMaintenance", "Get a maintenance window", scheduled_maintenance.get_window)
windows.update(
    "updateStatusMaintenance",
    "Reschedule, retitle, start, complete or cancel a maintenance window",
    MaintenancePatch,
    scheduled_maintenance.update_window,
    errors=WRITE_ERRORS,
    with_settings=True,
    description=_MAINTENANCE_RULES,
)
