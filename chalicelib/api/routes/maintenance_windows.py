"""Maintenance windows of services: while one is ongoing, alerts for its services are recorded as
suppressed and page nobody. Reads need services:read, writes services:write. (The status pages'
maintenance, announced to customers, is another thing: routes/status_pages.py.)"""

from __future__ import annotations

from chalicelib.api.idempotent import IDEMPOTENT
from chalicelib.api.operation import Call, Idempotent, OperationGroup
from chalicelib.maintenance import service
from chalicelib.maintenance.models import (
    MaintenanceWindowCreate,
    MaintenanceWindowListQuery,
    MaintenanceWindowPatch,
    MaintenanceWindowRemovedV1,
    MaintenanceWindowV1,
)
from chalicelib.maintenance.repository import MaintenanceWindow
from chalicelib.pagination import Page, paginate

api = OperationGroup(__name__, tag="maintenance-windows")

BASE = "/api/v1/maintenance-windows"
ITEM = BASE + "/{window_id}"
READ = "services:read"
WRITE = "services:write"


def _window_v1(call: Call, window: MaintenanceWindow) -> MaintenanceWindowV1:
    found = service.services_of(organization_id=call.principal.organization_id, windows=[window])
    return MaintenanceWindowV1.of(window, found, call.now)


@api.operation(
    "POST",
    BASE,
    operation_id="createMaintenanceWindow",
    summary="Put services in maintenance from start to end: their alerts are suppressed and page nobody",
    scope=WRITE,
    body=MaintenanceWindowCreate,
    response=MaintenanceWindowV1,
    status=201,
    errors=(400, 409),
    headers=("Idempotency-Key",),
    description=IDEMPOTENT,
    idempotent=Idempotent(),
)
def create_window(call: Call) -> MaintenanceWindowV1:
    body: MaintenanceWindowCreate = call.body
    window = service.create_window(
        organization_id=call.principal.organization_id,
        service_refs=list(body.service_ids),
        start=body.start,
        end=body.end,
        now=call.now,
        description=body.description,
        created_by=call.principal.actor,
    )
    return _window_v1(call, window)


@api.operation(
    "GET",
    BASE,
    operation_id="listMaintenanceWindows",
    summary="List maintenance windows: ongoing (ending soonest first), then future (starting soonest), "
    "then past (latest ended first)",
    scope=READ,
    query=MaintenanceWindowListQuery,
    response=Page[MaintenanceWindowV1],
    errors=(400,),
)
def list_windows(call: Call) -> Page[MaintenanceWindowV1]:
    query: MaintenanceWindowListQuery = call.query
    organization_id = call.principal.organization_id
    found = service.list_windows(
        organization_id=organization_id, now=call.now, service_ref=query.service_id, state=query.state
    )
    page = paginate(found, limit=query.limit, offset=query.offset)
    names = service.services_of(organization_id=organization_id, windows=page.items)
    return Page[MaintenanceWindowV1](
        items=[MaintenanceWindowV1.of(window, names, call.now) for window in page.items],
        total=page.total,
        has_more=page.has_more,
        next_offset=page.next_offset,
    )


@api.operation(
    "GET",
    ITEM,
    operation_id="getMaintenanceWindow",
    summary="Get a maintenance window",
    scope=READ,
    response=MaintenanceWindowV1,
    errors=(404,),
)
def get_window(call: Call) -> MaintenanceWindowV1:
    window = service.get_window(organization_id=call.principal.organization_id, window_id=call.path["window_id"])
    return _window_v1(call, window)


@api.operation(
    "PATCH",
    ITEM,
    operation_id="updateMaintenanceWindow",
    summary="Change a future or ongoing maintenance window (at least one field)",
    scope=WRITE,
    body=MaintenanceWindowPatch,
    response=MaintenanceWindowV1,
    errors=(400, 404, 409),
    description="description, end and service_ids may change while the window is future or ongoing; start only "
    "before it starts (409 after). A past window cannot change (409). Send the version you read to make the "
    "change conditional: 409 when the window changed since.",
)
def update_window(call: Call) -> MaintenanceWindowV1:
    body: MaintenanceWindowPatch = call.body
    window = service.update_window(
        organization_id=call.principal.organization_id,
        window_id=call.path["window_id"],
        now=call.now,
        expected_version=body.version,
        **body.domain_changes(),
    )
    return _window_v1(call, window)


@api.operation(
    "DELETE",
    ITEM,
    operation_id="deleteMaintenanceWindow",
    summary="Delete a future maintenance window, or end an ongoing one now",
    scope=WRITE,
    response=MaintenanceWindowRemovedV1,
    errors=(404, 409),
    description="As PagerDuty does: a window that has not started is deleted (outcome deleted); an ongoing one "
    "ends now, so its services page again at once, and stays listed as past (outcome ended; repeating the "
    "DELETE answers the same). A window that ended by itself cannot be deleted (409).",
)
def delete_window(call: Call) -> MaintenanceWindowRemovedV1:
    organization_id = call.principal.organization_id
    removal = service.delete_window(organization_id=organization_id, window_id=call.path["window_id"], now=call.now)
    windows = [removal.window] if removal.window is not None else []
    names = service.services_of(organization_id=organization_id, windows=windows)
    return MaintenanceWindowRemovedV1.of(removal, names, call.now)
