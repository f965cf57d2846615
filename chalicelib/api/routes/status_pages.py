"""Status pages, managed: pages, sections, groups, components, public incidents, maintenance.

Request bodies' fields are named as the service functions' arguments, so handlers pass them on
with `**fields(call)`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from chalicelib.api.operation import Call, Handler, OperationGroup
from chalicelib.oncall.models import DeletedV1
from chalicelib.pagination import Page, PageQuery, paginate
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
from chalicelib.statuspage.tables import GROUP_PREFIX, SECTION_PREFIX

api = OperationGroup(__name__, tag="status-pages")

BASE = "/api/v1/status-pages"
PAGE = BASE + "/{page_id}"
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


def _read(
    path: str, operation_id: str, summary: str, response: Any, *, listing: bool = False
) -> Callable[[Handler], Handler]:
    """A status:read operation; a listing takes limit/offset and answers a page of `response`."""
    return api.operation(
        "GET",
        path,
        operation_id=operation_id,
        summary=summary,
        scope="status:read",
        query=PageQuery if listing else None,
        response=Page[response] if listing else response,
        errors=(400, 404) if listing else (404,),
    )


def _write(
    method: str,
    path: str,
    operation_id: str,
    summary: str,
    *,
    body: type[BaseModel] | None = None,
    response: Any = DeletedV1,
    errors: tuple[int, ...] = (400, 404),
    description: str | None = None,
) -> Callable[[Handler], Handler]:
    """A status:write operation; a POST creates (201)."""
    return api.operation(
        method,
        path,
        operation_id=operation_id,
        summary=summary,
        scope="status:write",
        body=body,
        response=response,
        status=201 if method == "POST" else 200,
        errors=errors,
        description=description,
    )


def fields(call: Call) -> dict[str, Any]:
    """The body's fields: all of them for a create, the ones given for a PATCH."""
    body = call.body
    changes = getattr(body, "changes", None)
    return dict(changes()) if callable(changes) else dict(body)


def _page_id(call: Call) -> str:
    """The page named in the path, after checking it belongs to the caller's organization (404)."""
    return get_page(organization_id=call.principal.organization_id, page_id=call.path["page_id"]).page_id


def _listed(call: Call, items: list[Any]) -> Any:
    query: PageQuery = call.query
    return paginate(items, limit=query.limit, offset=query.offset)


def _deleted(item_id: str) -> DeletedV1:
    return DeletedV1(id=item_id, deleted=True)


@_read(BASE, "listStatusPages", "List status pages, newest first", StatusPageV1, listing=True)
def list_pages(call: Call) -> Any:
    found = pages.list_pages(organization_id=call.principal.organization_id)
    return _listed(call, [StatusPageV1.of(p) for p in found])


@_write(
    "POST",
    BASE,
    "createStatusPage",
    "Create a status page",
    body=PageCreate,
    response=StatusPageV1,
    errors=(400, 409),
    description="The slug is the public URL (/status/{slug}); 409 when another page uses it.",
)
def create_page(call: Call) -> StatusPageV1:
    org = call.principal.organization_id
    return StatusPageV1.of(pages.create_page(organization_id=org, now=call.now, **fields(call)))


@_read(PAGE, "getStatusPage", "Get a status page", StatusPageV1)
def get_status_page(call: Call) -> StatusPageV1:
    return StatusPageV1.of(get_page(organization_id=call.principal.organization_id, page_id=call.path["page_id"]))


@_write(
    "PATCH",
    PAGE,
    "updateStatusPage",
    "Rename a status page or change its slug",
    body=PagePatch,
    response=StatusPageV1,
    errors=(400, 404, 409),
    description="A new slug frees the old one at once; 409 when another page uses it.",
)
def update_page(call: Call) -> StatusPageV1:
    org, page_id = call.principal.organization_id, call.path["page_id"]
    return StatusPageV1.of(pages.update_page(organization_id=org, page_id=page_id, now=call.now, **fields(call)))


@_write("DELETE", PAGE, "deleteStatusPage", "Delete a status page and everything on it", errors=(404, 409))
def delete_page(call: Call) -> DeletedV1:
    pages.delete_page(organization_id=call.principal.organization_id, page_id=call.path["page_id"])
    return _deleted(call.path["page_id"])


@_read(PAGE + "/sections", "listStatusSections", "List sections in page order", SectionV1, listing=True)
def list_sections(call: Call) -> Any:
    return _listed(call, [SectionV1.of(s) for s in structure.list_structure(page_id=_page_id(call)).sections])


@_write("POST", PAGE + "/sections", "createStatusSection", "Add a section", body=SectionCreate, response=SectionV1)
def create_section(call: Call) -> SectionV1:
    return SectionV1.of(structure.create_section(page_id=_page_id(call), now=call.now, **fields(call)))


@_write(
    "PATCH",
    PAGE + "/sections/{section_id}",
    "updateStatusSection",
    "Rename a section",
    body=NamePatch,
    response=SectionV1,
)
def update_section(call: Call) -> SectionV1:
    section_id = call.path["section_id"]
    return SectionV1.of(
        structure.rename(
            page_id=_page_id(call),
            prefix=SECTION_PREFIX,
            item_id_=section_id,
            id_prefix="sec",
            what="Section",
            name=call.body.name,
            now=call.now,
        )
    )


@_write(
    "DELETE",
    PAGE + "/sections/{section_id}",
    "deleteStatusSection",
    "Delete an empty section (409 while it holds groups or components)",
    errors=(404, 409),
)
def delete_section(call: Call) -> DeletedV1:
    structure.delete_section(page_id=_page_id(call), section_id=call.path["section_id"])
    return _deleted(call.path["section_id"])


@_read(PAGE + "/groups", "listStatusGroups", "List component groups", GroupV1, listing=True)
def list_groups(call: Call) -> Any:
    return _listed(call, [GroupV1.of(g) for g in structure.list_structure(page_id=_page_id(call)).groups])


@_write(
    "POST",
    PAGE + "/groups",
    "createStatusGroup",
    "Add a component group to a section",
    body=GroupCreate,
    response=GroupV1,
    description=_REFS.strip(),
)
def create_group(call: Call) -> GroupV1:
    return GroupV1.of(structure.create_group(page_id=_page_id(call), now=call.now, **fields(call)))


@_write(
    "PATCH",
    PAGE + "/groups/{group_id}",
    "updateStatusGroup",
    "Rename a component group",
    body=NamePatch,
    response=GroupV1,
)
def update_group(call: Call) -> GroupV1:
    group_id = call.path["group_id"]
    return GroupV1.of(
        structure.rename(
            page_id=_page_id(call),
            prefix=GROUP_PREFIX,
            item_id_=group_id,
            id_prefix="grp",
            what="Component group",
            name=call.body.name,
            now=call.now,
        )
    )


@_write(
    "DELETE",
    PAGE + "/groups/{group_id}",
    "deleteStatusGroup",
    "Delete an empty component group (409 while it holds components)",
    errors=(404, 409),
)
def delete_group(call: Call) -> DeletedV1:
    structure.delete_group(page_id=_page_id(call), group_id=call.path["group_id"])
    return _deleted(call.path["group_id"])


@_read(PAGE + "/components", "listStatusComponents", "List components", ComponentV1, listing=True)
def list_components(call: Call) -> Any:
    return _listed(call, [ComponentV1.of(c) for c in structure.list_structure(page_id=_page_id(call)).components])


@_write(
    "POST",
    PAGE + "/components",
    "createStatusComponent",
    "Add a component",
    body=ComponentCreate,
    response=ComponentV1,
    description=_REFS.strip(),
)
def create_component(call: Call) -> ComponentV1:
    return ComponentV1.of(structure.create_component(page_id=_page_id(call), now=call.now, **fields(call)))


@_write(
    "PATCH",
    PAGE + "/components/{component_id}",
    "updateStatusComponent",
    "Change a component's name, status, section or group",
    body=ComponentPatch,
    response=ComponentV1,
    description=_REFS.strip(),
)
def update_component(call: Call) -> ComponentV1:
    component_id = call.path["component_id"]
    return ComponentV1.of(
        structure.update_component(page_id=_page_id(call), component_id=component_id, now=call.now, **fields(call))
    )


@_write("DELETE", PAGE + "/components/{component_id}", "deleteStatusComponent", "Delete a component", errors=(404,))
def delete_component(call: Call) -> DeletedV1:
    structure.delete_component(page_id=_page_id(call), component_id=call.path["component_id"])
    return _deleted(call.path["component_id"])


@_read(
    PAGE + "/incidents", "listStatusIncidents", "List public incidents, newest first", StatusIncidentV1, listing=True
)
def list_incidents(call: Call) -> Any:
    return _listed(call, [StatusIncidentV1.of(i) for i in incidents.list_incidents(page_id=_page_id(call))])


@_write(
    "POST",
    PAGE + "/incidents",
    "createStatusIncident",
    "Open a public incident",
    body=StatusIncidentCreate,
    response=StatusIncidentV1,
    description=_INCIDENT_RULES + " incident_number must name an internal incident (400).",
)
def create_incident(call: Call) -> StatusIncidentV1:
    org = call.principal.organization_id
    return StatusIncidentV1.of(
        incidents.create_incident(organization_id=org, page_id=_page_id(call), now=call.now, **fields(call))
    )


@_read(PAGE + "/incidents/{incident_id}", "getStatusIncident", "Get a public incident", StatusIncidentV1)
def get_incident(call: Call) -> StatusIncidentV1:
    return StatusIncidentV1.of(incidents.get_incident(page_id=_page_id(call), incident_id=call.path["incident_id"]))


@_write(
    "POST",
    PAGE + "/incidents/{incident_id}/updates",
    "addStatusIncidentUpdate",
    "Post an update to a public incident (it sets the incident's status)",
    body=IncidentUpdateCreate,
    response=StatusIncidentV1,
    description=_INCIDENT_RULES,
)
def add_update(call: Call) -> StatusIncidentV1:
    incident_id = call.path["incident_id"]
    return StatusIncidentV1.of(
        incidents.add_update(page_id=_page_id(call), incident_id=incident_id, now=call.now, **fields(call))
    )


@_read(
    PAGE + "/maintenance",
    "listStatusMaintenance",
    "List maintenance windows, newest first",
    MaintenanceV1,
    listing=True,
)
def list_windows(call: Call) -> Any:
    return _listed(call, [MaintenanceV1.of(w) for w in scheduled_maintenance.list_windows(page_id=_page_id(call))])


@_write(
    "POST",
    PAGE + "/maintenance",
    "createStatusMaintenance",
    "Schedule a maintenance window",
    body=MaintenanceCreate,
    response=MaintenanceV1,
    description=_MAINTENANCE_RULES,
)
def create_window(call: Call) -> MaintenanceV1:
    return MaintenanceV1.of(scheduled_maintenance.create_window(page_id=_page_id(call), now=call.now, **fields(call)))


@_read(PAGE + "/maintenance/{maintenance_id}", "getStatusMaintenance", "Get a maintenance window", MaintenanceV1)
def get_window(call: Call) -> MaintenanceV1:
    return MaintenanceV1.of(
        scheduled_maintenance.get_window(page_id=_page_id(call), maintenance_id=call.path["maintenance_id"])
    )


@_write(
    "PATCH",
    PAGE + "/maintenance/{maintenance_id}",
    "updateStatusMaintenance",
    "Reschedule, retitle, start, complete or cancel a maintenance window",
    body=MaintenancePatch,
    response=MaintenanceV1,
    description=_MAINTENANCE_RULES,
)
def update_window(call: Call) -> MaintenanceV1:
    window_id = call.path["maintenance_id"]
    return MaintenanceV1.of(
        scheduled_maintenance.update_window(
            page_id=_page_id(call), maintenance_id=window_id, now=call.now, **fields(call)
        )
    )
