"""On call now, schedules (layers, two weeks of final shifts) and schedule overrides.

Each page reads through the same service functions as the API's on-call and schedule routes, and
each action calls the service function its API operation calls, with the same scope.
"""

from __future__ import annotations

from datetime import datetime, timedelta, tzinfo

from chalicelib.console.schedule_view import (
    DAYS_SHOWN,
    days_of,
    local_input,
    local_moment,
    names_of,
    parse_day,
    window_start,
)
from chalicelib.console.visits import app_path
from chalicelib.console.web import Confirmation, ConsolePages, Ctx, Page, Redirect
from chalicelib.directory.teams import get_teams
from chalicelib.directory.users import get_users, list_users
from chalicelib.errors import ValidationFailed
from chalicelib.oncall import service
from chalicelib.oncall.models import OverrideCreate
from chalicelib.oncall.rotation import on_call_at
from chalicelib.oncall.wallclock import zone_for
from chalicelib.paging import on_call
from chalicelib.paging.models import OnCallQuery

console = ConsolePages(
    __name__,
    notices={
        "override_added": "Override added. The shifts below include it.",
        "override_removed": "Override removed. The layers decide that time again.",
    },
)

MINE = "mine"  # ?in=mine: a schedule's page in the viewer's zone
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


@console.page("/on-call")
def show_on_call(ctx: Ctx) -> Page:
    """Who is on call now for every active service (GET /api/v1/on-call/current)."""
    query = ctx.model(OnCallQuery, {"team_name": ctx.arg("team")} if ctx.arg("team") else {})
    view = on_call.current_on_call(organization_id=ctx.organization_id, now=ctx.now, team_name=query.team_name)
    return Page(
        "console/oncall/on_call.html",
        "On call now",
        section="oncall",
        context={"view": view, "team": ctx.arg("team")},
    )


@console.page("/schedules")
def show_schedules(ctx: Ctx) -> Page:
    """Every schedule, newest first, with who is on call in it now."""
    found = service.list_schedules(organization_id=ctx.organization_id)
    now_on = {stored.schedule.schedule_id: on_call_at(stored.schedule, ctx.now) for stored in found}
    people = get_users(
        organization_id=ctx.organization_id, user_ids=[shift.user_id for shift in now_on.values() if shift]
    )
    team_ids = [stored.schedule.team_id for stored in found if stored.schedule.team_id]
    teams = get_teams(organization_id=ctx.organization_id, team_ids=team_ids) if team_ids else {}
    return Page(
        "console/oncall/schedules.html",
        "Schedules",
        section="schedules",
        context={
            "schedules": found,
            "now_on": now_on,
            "names": names_of(people),
            "team_names": {team_id: team.name for team_id, team in teams.items()},
        },
    )


def wants_mine(ctx: Ctx) -> bool:
    return MINE in (ctx.arg("in"), ctx.value("in"))


def shown_zone(ctx: Ctx, schedule_zone: str) -> str:
    """The zone a schedule's page shows its times in: the schedule's own (its layers and handoffs
    are defined there), or the viewer's when they asked for it (`?in=mine`)."""
    return ctx.zone if wants_mine(ctx) else schedule_zone


def schedule_page(ctx: Ctx) -> Page:
    """A schedule: its layers, two weeks of final shifts from today, its overrides; in the
    schedule's zone, or the viewer's (`?in=mine`)."""
    organization_id, schedule_id = ctx.organization_id, ctx.path["schedule_id"]
    stored = service.get_schedule(organization_id=organization_id, schedule_id=schedule_id)
    schedule = stored.schedule
    zone_name = shown_zone(ctx, schedule.time_zone)
    zone = zone_for(zone_name)
    today = window_start(zone, ctx.now)[0]
    first_day, since, until = window_start(zone, ctx.now, parse_day(ctx.arg("from"), field="from"))
    shifts = service.schedule_shifts(organization_id=organization_id, schedule_id=schedule_id, since=since, until=until)
    upcoming = [override for override in schedule.overrides if override.end > ctx.now]
    members = {member for layer in schedule.layers for member in layer.members}
    wanted = members | {override.user_id for override in upcoming}
    people = {**get_users(organization_id=organization_id, user_ids=sorted(wanted)), **shifts.users}
    choices = list_users(organization_id=organization_id, is_active=True) if ctx.can("oncall:write") else []
    return Page(
        "console/oncall/schedule.html",
        schedule.name,
        section="schedules",
        context={
            "stored": stored,
            "zone": zone,
            "shown_zone": zone_name,
            "in_mine": wants_mine(ctx),
            "mine": MINE,
            "schedule": schedule,
            "days": days_of(zone, first_day, shifts.shifts, today=today),
            "days_shown": DAYS_SHOWN,
            "first_day": first_day,
            "names": names_of(people),
            "layer_names": {layer.layer_id: layer.name for layer in schedule.layers},
            "overrides": sorted(upcoming, key=lambda override: override.start),
            "choices": choices,
            "form": _override_form(ctx, zone),
            "weekdays": WEEKDAYS,
            "earlier": (first_day - timedelta(DAYS_SHOWN)).isoformat(),
            "later": (first_day + timedelta(DAYS_SHOWN)).isoformat(),
        },
    )


def _override_form(ctx: Ctx, zone: tzinfo) -> dict[str, str]:
    """The override form's values: what was sent (to correct it), else now to an hour from now."""
    if ctx.request.method == "POST":
        return {name: ctx.value(name) for name in ("user_id", "start", "end")}
    start = ctx.now.replace(second=0, microsecond=0)
    return {
        "user_id": ctx.user.user_id if ctx.user else "",
        "start": local_input(start, zone),
        "end": local_input(start + timedelta(hours=1), zone),
    }


@console.page("/schedules/{schedule_id}")
def show_schedule(ctx: Ctx) -> Page:
    """A schedule's layers, final shifts and overrides."""
    return schedule_page(ctx)


@console.action("/schedules/{schedule_id}/overrides", scope="oncall:write", on_error=schedule_page)
def add_schedule_override(ctx: Ctx) -> Redirect:
    """Put a person on call for an interval (POST /api/v1/schedules/{id}/overrides)."""
    organization_id, schedule_id = ctx.organization_id, ctx.path["schedule_id"]
    stored = service.get_schedule(organization_id=organization_id, schedule_id=schedule_id)
    zone = zone_for(shown_zone(ctx, stored.schedule.time_zone))  # the zone the form showed
    moments: dict[str, datetime] = {}
    problems: list[dict[str, str]] = []
    for name in ("start", "end"):
        try:
            moments[name] = local_moment(ctx.value(name), zone, field=name)
        except ValidationFailed as error:
            problems.extend(error.details["fields"] if isinstance(error.details, dict) else [])
    if not ctx.value("user_id"):
        problems.insert(0, {"field": "user_id", "message": "required"})
    if problems:
        raise ValidationFailed.for_fields(problems)
    body = ctx.model(OverrideCreate, {"user_id": ctx.value("user_id"), **moments})
    service.add_override(organization_id=organization_id, schedule_id=schedule_id, now=ctx.now, **body.arguments())
    back = f"/schedules/{schedule_id}" + (f"?in={MINE}" if wants_mine(ctx) else "")
    return Redirect(app_path(back), notice="override_added")


@console.action(
    "/schedules/{schedule_id}/overrides/{override_id}/delete",
    scope="oncall:write",
    on_error=schedule_page,
    confirm=Confirmation(
        "Delete this override?",
        "The schedule's own rotation decides who is on call for those hours again.",
        "Delete override",
    ),
)
def remove_schedule_override(ctx: Ctx) -> Redirect:
    """Remove an override (DELETE /api/v1/schedules/{id}/overrides/{override_id})."""
    schedule_id = ctx.path["schedule_id"]
    service.remove_override(
        organization_id=ctx.organization_id, schedule_id=schedule_id, override_id=ctx.path["override_id"], now=ctx.now
    )
    return Redirect(app_path(f"/schedules/{schedule_id}"), notice="override_removed")
