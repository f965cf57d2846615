"""Heartbeats: the list with each one's status, create (the ping URL shown once, with a curl
example), pause and resume, a new ping URL, delete.

The same scopes as /api/v1/heartbeats (`integrations:read` to read, `integrations:write` to
change), the same service functions (`heartbeat.service`) and request models. The ping URL is the
credential: it is on the answer to the POST that made it only (console pages are never cached).
"""

from __future__ import annotations

from typing import Any

from chalicelib.catalog.service import get_services, list_services
from chalicelib.console.visits import app_path
from chalicelib.console.web import Confirmation, ConsolePages, Ctx, Page, Redirect
from chalicelib.heartbeat import service as heartbeats
from chalicelib.heartbeat.models import HeartbeatCreate, HeartbeatIssuedV1, HeartbeatPatch, HeartbeatV1
from chalicelib.heartbeat.service import IssuedHeartbeat

console = ConsolePages(
    __name__,
    notices={
        "heartbeat_paused": "Heartbeat paused: its pings are ignored and it never goes down.",
        "heartbeat_resumed": "Heartbeat resumed: it waits for a ping from now.",
        "heartbeat_deleted": "Heartbeat deleted. Its ping URL answers 404 from now on.",
    },
)

READ, WRITE = "integrations:read", "integrations:write"
_UNITS = ((86400, "day"), (3600, "h"), (60, "min"))


def duration(seconds: int) -> str:
    """`86400` -> "1 day", `5400` -> "90 min", `0` -> "none": the largest unit that divides it."""
    if seconds == 0:
        return "none"
    for size, unit in _UNITS:
        if seconds % size == 0:
            count = seconds // size
            return f"{count} {unit}{'s' if unit == 'day' and count > 1 else ''}"
    return f"{seconds} s"


def heartbeats_page(ctx: Ctx) -> Page:
    organization_id = ctx.organization_id
    found = heartbeats.list_heartbeats(organization_id=organization_id)
    services = get_services(organization_id=organization_id, service_keys=[r.service_key for r in found])
    names = {key: service.name for key, service in services.items()}
    writable = ctx.can(WRITE)
    choices = list_services(organization_id=organization_id, is_active=True) if writable else []
    posted = ctx.request.method == "POST" and ctx.value("form") == "create"
    return Page(
        "console/noise/heartbeats.html",
        "Heartbeats",
        section="heartbeats",
        context={
            "heartbeats": [HeartbeatV1.of(record, services) for record in found],
            "service_names": names,
            "service_choices": [(s.service_key, f"{s.name} ({s.service_id})") for s in choices],
            "duration": duration,
            "write_scope": WRITE,
            "typed": {
                "name": ctx.value("name") if posted else "",
                "service": ctx.value("service") if posted else "",
                "interval_seconds": ctx.value("interval_seconds", "3600") if posted else "3600",
                "grace_seconds": ctx.value("grace_seconds", "300") if posted else "300",
                "description": ctx.value("description") if posted else "",
            },
        },
    )


@console.page("/heartbeats")
def show_heartbeats(ctx: Ctx) -> Page:
    """The organization's heartbeats and their status (never their ping URLs)."""
    return heartbeats_page(ctx)


def _issued_page(ctx: Ctx, issued: IssuedHeartbeat, *, regenerated: bool) -> Page:
    services = get_services(organization_id=ctx.organization_id, service_keys=[issued.record.service_key])
    shown = HeartbeatIssuedV1.issued(issued, services)
    return Page(
        "console/noise/heartbeat_issued.html",
        f"New ping URL for {shown.name}" if regenerated else "Heartbeat created",
        section="heartbeats",
        context={"heartbeat": shown, "regenerated": regenerated, "duration": duration},
    )


def _number(value: str) -> int | str:
    """A whole number as typed, or the text itself (the model then says what is wrong with it)."""
    return int(value) if value.isdigit() else value


@console.action("/heartbeats", scope=WRITE, on_error=heartbeats_page)
def create_heartbeat(ctx: Ctx) -> Page:
    """Create a heartbeat and show its ping URL, once."""
    data: dict[str, Any] = {
        "name": ctx.value("name"),
        "service": ctx.value("service"),
        "interval_seconds": _number(ctx.value("interval_seconds")),
        "grace_seconds": _number(ctx.value("grace_seconds", "0") or "0"),
    }
    if ctx.value("description"):
        data["description"] = ctx.value("description")
    body = ctx.model(HeartbeatCreate, data)
    issued = heartbeats.create_heartbeat(
        organization_id=ctx.organization_id,
        now=ctx.now,
        created_by=ctx.signed_in.actor,
        **body.arguments(),
        settings=ctx.settings,
    )
    return _issued_page(ctx, issued, regenerated=False)


def _set_enabled(ctx: Ctx, enabled: bool) -> None:
    body = ctx.model(HeartbeatPatch, {"enabled": enabled})
    heartbeats.update_heartbeat(**ctx.item, now=ctx.now, **body.arguments())


@console.action("/heartbeats/{heartbeat_id}/pause", scope=WRITE, on_error=heartbeats_page)
def pause_heartbeat(ctx: Ctx) -> Redirect:
    """Pause a heartbeat: pings are accepted and ignored, no outage opens."""
    _set_enabled(ctx, False)
    return Redirect(app_path("/heartbeats", settings=ctx.settings), notice="heartbeat_paused")


@console.action("/heartbeats/{heartbeat_id}/resume", scope=WRITE, on_error=heartbeats_page)
def resume_heartbeat(ctx: Ctx) -> Redirect:
    """Resume a heartbeat: a new wait for a ping starts now."""
    _set_enabled(ctx, True)
    return Redirect(app_path("/heartbeats", settings=ctx.settings), notice="heartbeat_resumed")


@console.action(
    "/heartbeats/{heartbeat_id}/regenerate",
    scope=WRITE,
    on_error=heartbeats_page,
    confirm=Confirmation(
        "Make a new ping URL for this heartbeat?",
        "The current URL answers 404 at once: until the monitored job pings the new one, its pings are "
        "refused and the heartbeat goes down when the next ping is due.",
        "Make a new URL",
    ),
)
def regenerate_heartbeat_url(ctx: Ctx) -> Page:
    """A new ping URL for a heartbeat, shown once; the old one stops working at once."""
    issued = heartbeats.regenerate_ping_url(**ctx.item, now=ctx.now, settings=ctx.settings)
    return _issued_page(ctx, issued, regenerated=True)


@console.action(
    "/heartbeats/{heartbeat_id}/delete",
    scope=WRITE,
    on_error=heartbeats_page,
    confirm=Confirmation(
        "Delete this heartbeat?",
        "Its ping URL answers 404 from now on and nothing watches the job any more. An open outage's "
        "incident stays open for people to resolve. It cannot be restored.",
        "Delete heartbeat",
    ),
)
def delete_heartbeat(ctx: Ctx) -> Redirect:
    """Delete a heartbeat; its ping URL answers 404 from now on."""
    heartbeats.delete_heartbeat(**ctx.item)
    return Redirect(app_path("/heartbeats", settings=ctx.settings), notice="heartbeat_deleted")
