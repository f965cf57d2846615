"""Cover requests from a schedule's page: ask for cover for a span of one's own shifts, take
someone's request (an override, the same write as POST .../swap-requests/{id}/take), withdraw
one's own. The same service functions and rules as the API: a viewer or someone outside the
rotation is refused (403) with the page shown again.
"""

from __future__ import annotations

from datetime import datetime

from chalicelib.console.pages.oncall import MINE, schedule_page, shown_zone, wants_mine
from chalicelib.console.schedule_view import local_moment
from chalicelib.console.visits import app_path
from chalicelib.console.web import Confirmation, ConsolePages, Ctx, Redirect
from chalicelib.errors import ValidationFailed
from chalicelib.oncall import service, swaps
from chalicelib.oncall.swap_models import SwapRequestCreate
from chalicelib.oncall.wallclock import zone_for

console = ConsolePages(
    __name__,
    notices={
        "cover_asked": "Cover requested. The schedule's other members are told; you stay on call until one takes it.",
        "cover_taken": "You took the shift: you are on call for it now (an override). The person who asked is told.",
        "cover_withdrawn": "Cover request withdrawn.",
    },
)
# The ask form's inputs (prefixed: the override form on the same page has a start and an end too).
FORM_INPUTS = {
    "start": ("cover_start", "From"),
    "end": ("cover_end", "Until"),
    "note": ("cover_note", "A word for them"),
}


def _back(ctx: Ctx, schedule_id: str) -> str:
    return (
        app_path(f"/schedules/{schedule_id}" + (f"?in={MINE}" if wants_mine(ctx) else ""), settings=ctx.settings)
        + "#swaps"
    )


def _labelled(error: ValidationFailed) -> ValidationFailed:
    """The problems on the ask form's inputs, named as it labels them, each once."""
    details = error.details if isinstance(error.details, dict) else {}
    fields: list[dict[str, str]] = []
    for found in details.get("fields", []):
        path = str(found.get("field"))
        name, label = FORM_INPUTS.get(path.split(".")[0], (path, path))
        moved = {"field": name, "label": label, "message": str(found.get("message"))}
        if moved not in fields:
            fields.append(moved)
    return ValidationFailed(error.message, details={**details, "fields": fields})


@console.action("/schedules/{schedule_id}/swap-requests", scope="oncall:read", on_error=schedule_page)
def ask_for_cover(ctx: Ctx) -> Redirect:
    """Ask the schedule's other members to cover a span of my shifts (POST .../swap-requests)."""
    organization_id, schedule_id = ctx.organization_id, ctx.path["schedule_id"]
    stored = service.get_schedule(organization_id=organization_id, schedule_id=schedule_id)
    zone = zone_for(shown_zone(ctx, stored.schedule.time_zone))  # the zone the form showed
    moments: dict[str, datetime] = {}
    problems: list[dict[str, str]] = []
    for name in ("start", "end"):
        try:
            moments[name] = local_moment(ctx.value(FORM_INPUTS[name][0]), zone, field=name)
        except ValidationFailed as error:
            problems.extend(error.details["fields"] if isinstance(error.details, dict) else [])
    try:
        if problems:
            raise ValidationFailed.for_fields(problems)
        body = ctx.model(SwapRequestCreate, {**moments, "note": ctx.value("cover_note") or None})
        swaps.request_cover(
            organization_id=organization_id,
            schedule_id=schedule_id,
            requester_id=ctx.signed_in.user_id,
            start=body.start,
            end=body.end,
            note=body.note,
            now=ctx.now,
        )
    except ValidationFailed as error:
        raise _labelled(error) from None
    return Redirect(_back(ctx, schedule_id), notice="cover_asked")


@console.action(
    "/schedules/{schedule_id}/swap-requests/{swap_id}/take",
    scope="oncall:read",
    on_error=schedule_page,
    confirm=Confirmation(
        "Take this shift?",
        "You will be on call for the whole span it asks for (an override on the schedule), and the person who "
        "asked is told.",
        "Take the shift",
    ),
)
def take_cover(ctx: Ctx) -> Redirect:
    """Take a cover request (POST .../swap-requests/{id}/take)."""
    swaps.take_swap_request(
        organization_id=ctx.organization_id,
        schedule_id=ctx.path["schedule_id"],
        swap_id=ctx.path["swap_id"],
        taker_id=ctx.signed_in.user_id,
        now=ctx.now,
    )
    return Redirect(_back(ctx, ctx.path["schedule_id"]), notice="cover_taken")


@console.action(
    "/schedules/{schedule_id}/swap-requests/{swap_id}/withdraw", scope="oncall:read", on_error=schedule_page
)
def withdraw_cover(ctx: Ctx) -> Redirect:
    """Withdraw a cover request nobody took yet (POST .../swap-requests/{id}/withdraw)."""
    swaps.withdraw_swap_request(
        organization_id=ctx.organization_id,
        schedule_id=ctx.path["schedule_id"],
        swap_id=ctx.path["swap_id"],
        actor_id=ctx.signed_in.user_id,
        for_others=ctx.can("oncall:write"),
        now=ctx.now,
    )
    return Redirect(_back(ctx, ctx.path["schedule_id"]), notice="cover_withdrawn")
