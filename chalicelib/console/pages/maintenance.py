"""Maintenance windows of services (alerts for them are suppressed while one is ongoing): the
windows by state, schedule one, end an ongoing one now, delete a future one.

The same scopes as /api/v1/maintenance-windows (`services:read` to read, `services:write` to
change), the same service functions (`maintenance.service`) and request model. Times on the form
are in the viewer's zone, as the status pages' maintenance form takes them (console/form_times.py).
"""

from __future__ import annotations

import secrets
from typing import Any

from chalicelib.catalog.service import list_services
from chalicelib.console.form_problems import on_the_form
from chalicelib.console.form_times import from_form
from chalicelib.console.visits import app_path
from chalicelib.console.web import Confirmation, ConsolePages, Ctx, Page, Redirect
from chalicelib.errors import ValidationFailed
from chalicelib.idempotency.service import StoredResponse, run_once
from chalicelib.maintenance import service
from chalicelib.maintenance.models import MaintenanceWindowCreate, MaintenanceWindowV1

console = ConsolePages(
    __name__,
    notices={
        "maintenance_created": "Maintenance window scheduled: its services' alerts are suppressed while it is ongoing.",
        "maintenance_ended": "Maintenance window ended. Its services page again from now.",
        "maintenance_deleted": "Maintenance window deleted.",
    },
)

READ, WRITE = "services:read", "services:write"
STATES = (
    ("ongoing", "Ongoing", "Alerts for these services are suppressed now."),
    ("future", "Scheduled", "Not started yet."),
    ("past", "Past", "Ended; kept as history."),
)


def maintenance_page(ctx: Ctx) -> Page:
    organization_id = ctx.organization_id
    windows = service.list_windows(organization_id=organization_id, now=ctx.now)
    names = service.services_of(organization_id=organization_id, windows=windows)
    shown = [MaintenanceWindowV1.of(window, names, ctx.now) for window in windows]
    writable = ctx.can(WRITE)
    services = list_services(organization_id=organization_id, is_active=True) if writable else []
    posted = ctx.request.method == "POST" and ctx.value("form") == "create"
    return Page(
        "console/noise/maintenance.html",
        "Maintenance windows",
        section="maintenance",
        context={
            "groups": [
                (state, label, hint, [window for window in shown if window.state == state])
                for state, label, hint in STATES
            ],
            "service_choices": [(s.service_key, f"{s.name} ({s.service_id})") for s in services],
            "write_scope": WRITE,
            "typed": {
                "service_ids": ctx.values("service_ids") if posted else [],
                "start": ctx.value("start") if posted else "",
                "end": ctx.value("end") if posted else "",
                "description": ctx.value("description") if posted else "",
            },
            "form_key": secrets.token_urlsafe(18),
        },
    )


@console.page("/maintenance")
def show_maintenance(ctx: Ctx) -> Page:
    """The organization's maintenance windows: ongoing, scheduled, past."""
    return maintenance_page(ctx)


def _field(path: str) -> str:
    # resolve_services names each unknown service (`service_ids.2`); the form has one group.
    return "service_ids" if path.startswith("service_ids") else path


@console.action("/maintenance", scope=WRITE, on_error=maintenance_page)
def create_maintenance(ctx: Ctx) -> Redirect:
    """Schedule a maintenance window (times in the viewer's zone), as POST /api/v1/maintenance-windows."""
    data: dict[str, Any] = {
        "service_ids": ctx.values("service_ids"),
        "start": from_form(ctx.value("start"), ctx.zone),
        "end": from_form(ctx.value("end"), ctx.zone),
    }
    if ctx.value("description"):
        data["description"] = ctx.value("description")
    try:
        body = ctx.model(MaintenanceWindowCreate, data)

        def create() -> StoredResponse:
            window = service.create_window(
                organization_id=ctx.organization_id, now=ctx.now, created_by=ctx.signed_in.actor, **body.arguments()
            )
            return StoredResponse(201, {"id": window.window_id})

        key = ctx.value("form_key")
        if key:
            run_once(
                organization_id=ctx.organization_id,
                operation="consoleCreateMaintenanceWindow",
                key=key,
                payload=body.model_dump(mode="json"),
                now=ctx.now,
                action=create,
            )
        else:
            create()
    except ValidationFailed as error:
        raise on_the_form(error, _field) from None
    return Redirect(app_path("/maintenance", settings=ctx.settings), notice="maintenance_created")


@console.action(
    "/maintenance/{window_id}/end",
    scope=WRITE,
    on_error=maintenance_page,
    confirm=Confirmation(
        "End this maintenance window now?",
        "Its services leave maintenance at once: their next alerts open incidents and page people. "
        "The window stays listed as past.",
        "End maintenance now",
    ),
)
def end_maintenance(ctx: Ctx) -> Redirect:
    """End an ongoing maintenance window now (as DELETE on an ongoing window)."""
    removal = service.delete_window(**ctx.item, now=ctx.now)
    return Redirect(app_path("/maintenance", settings=ctx.settings), notice=f"maintenance_{removal.outcome}")


@console.action(
    "/maintenance/{window_id}/delete",
    scope=WRITE,
    on_error=maintenance_page,
    confirm=Confirmation(
        "Delete this maintenance window?",
        "It has not started; deleting it means its services are never put in maintenance by it. It cannot be restored.",
        "Delete window",
    ),
)
def delete_maintenance(ctx: Ctx) -> Redirect:
    """Delete a maintenance window that has not started (an ongoing one ends now instead)."""
    removal = service.delete_window(**ctx.item, now=ctx.now)
    return Redirect(app_path("/maintenance", settings=ctx.settings), notice=f"maintenance_{removal.outcome}")
