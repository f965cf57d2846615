"""Maintenance windows of services: while one is ongoing, alerts for its services are recorded as
suppressed and page nobody. Reads need services:read, writes services:write. (The status pages'
maintenance, announced to customers, is another thing: routes/status_pages.py.)"""

from __future__ import annotations

from collections.abc import Sequence

from chalicelib.api.operation import Call, Idempotent, OperationGroup
from chalicelib.api.resource import Resource
from chalicelib.maintenance import service
from chalicelib.maintenance.models import (
    MaintenanceWindowCreate,
    MaintenanceWindowListQuery,
    MaintenanceWindowPatch,
    MaintenanceWindowRemovedV1,
    MaintenanceWindowV1,
)
from chalicelib.maintenance.repository import MaintenanceWindow

api = OperationGroup(__name__, tag="maintenance-windows")

READ = "services:read"
WRITE = "services:write"


def _windows_v1(call: Call, windows: Sequence[MaintenanceWindow]) -> list[MaintenanceWindowV1]:
    names = service.services_of(organization_id=call.principal.organization_id, windows=list(windows))
    return [MaintenanceWindowV1.of(window, names, call.now) for window in windows]


def _removed_v1(call: Call, removal: service.Removal) -> MaintenanceWindowRemovedV1:
    windows = [removal.window] if removal.window is not None else []
    names = service.services_of(organization_id=call.principal.organization_id, windows=windows)
    return MaintenanceWindowRemovedV1.of(removal, names, call.now)


windows = Resource(
    api, "/api/v1/maintenance-windows", "window_id", MaintenanceWindowV1, _windows_v1, read=READ, write=WRITE
)
windows.create(
    "createMaintenanceWindow",
    "Put services in maintenance from start to end: their alerts are suppressed and page nobody",
    MaintenanceWindowCreate,
    windows.by_key(service.create_window, actor="created_by"),
    errors=(400, 409),
    idempotent=Idempotent(),
)
windows.listing(
    "listMaintenanceWindows",
    "List maintenance windows: ongoing (ending soonest first), then future (starting soonest), "
    "then past (latest ended first)",
    lambda call, query: service.list_windows(
        organization_id=call.principal.organization_id, now=call.now, service_ref=query.service_id, state=query.state
    ),
    query=MaintenanceWindowListQuery,
)
windows.get("getMaintenanceWindow", "Get a maintenance window", service.get_window)
windows.update(
    "updateMaintenanceWindow",
    "Change a future or ongoing maintenance window (at least one field)",
    MaintenanceWindowPatch,
    service.update_window,
    description="description, end and service_ids may change while the window is future or ongoing; start only "
    "before it starts (409 after). A past window cannot change (409). Send the version you read to make the "
    "change conditional: 409 when the window changed since.",
)
windows.act(
    "DELETE",
    "",
    "deleteMaintenanceWindow",
    "Delete a future maintenance window, or end an ongoing one now",
    service.delete_window,
    response=MaintenanceWindowRemovedV1,
    present=_removed_v1,
    errors=(404, 409),
    description="As PagerDuty does: a window that has not started is deleted (outcome deleted); an ongoing one "
    "ends now, so its services page again at once, and stays listed as past (outcome ended; repeating the "
    "DELETE answers the same). A window that ended by itself cannot be deleted (409).",
)
