"""On call now, schedules (layers, two weeks of final shifts) and schedule overrides.

Each page reads through the same service functions as the API's on-call and schedule routes, and
each action calls the service function its API operation calls, with the same scope.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo
from typing import Any

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
from chalicelib.directory.rules import can_respond
from chalicelib.directory.teams import get_teams
from chalicelib.directory.users import get_users, list_users
from chalicelib.errors import ValidationFailed
from chalicelib.escalation import service as policy_service
from chalicelib.escalation.coverage import PolicyGap
from chalicelib.escalation.coverage_read import policies_gaps
from chalicelib.oncall import service, swaps
from chalicelib.oncall.coverage import coverage_window
from chalicelib.oncall.coverage_read import load_gaps
from chalicelib.oncall.feed import calendar_url
from chalicelib.oncall.models import OverrideCreate
from chalicelib.oncall.rotation import FinalShift, on_call_at
from chalicelib.oncall.schedule import Schedule
from chalicelib.oncall.swap_rules import SwapRequest, members_of
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
        context={"view": view, "team": ctx.arg("team"), **coverage_warnings(ctx)},
    )


@dataclass(frozen=True)
class Uncovered:
    """A schedule or policy with gaps in the next 14 days, for the on-call page."""

    kind: str  # schedule | policy
    subject_id: str
    name: str
    gaps: list[PolicyGap]


def coverage_warnings(ctx: Ctx) -> dict[str, Any]:
    """Every schedule and policy of the organization that pages nobody some time in the next 14
    days: two Queries and three BatchGets, whatever the history."""
    organization_id, window = ctx.organization_id, coverage_window(ctx.now)
    found_schedules = service.list_schedules(organization_id=organization_id)
    found_policies = policy_service.list_policies(organization_id=organization_id)
    loaded = load_gaps(organization_id=organization_id, schedules=[s.schedule for s in found_schedules], window=window)
    by_policy = policies_gaps(
        organization_id=organization_id, policies=[p.policy for p in found_policies], window=window
    )
    uncovered = [
        Uncovered(
            "schedule", s.schedule_id, s.schedule.name, [PolicyGap(a, b, ()) for a, b in loaded.gaps[s.schedule_id]]
        )
        for s in found_schedules
        if loaded.gaps[s.schedule_id]
    ] + [
        Uncovered("policy", p.policy_id, p.policy.name, by_policy[p.policy_id])
        for p in found_policies
        if by_policy[p.policy_id]
    ]
    return {"uncovered": uncovered, "uncovered_policies": {u.subject_id for u in uncovered if u.kind == "policy"}}


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
    loaded = load_gaps(
        organization_id=ctx.organization_id, schedules=[s.schedule for s in found], window=coverage_window(ctx.now)
    )
    return Page(
        "console/oncall/schedules.html",
        "Schedules",
        section="schedules",
        context={
            "schedules": found,
            "now_on": now_on,
            "names": names_of(people),
            "team_names": {team_id: team.name for team_id, team in teams.items()},
            "gap_counts": {schedule_id: len(gaps) for schedule_id, gaps in loaded.gaps.items()},
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
    requests = swaps.list_swap_requests(organization_id=organization_id, schedule_id=schedule_id, now=ctx.now)
    asked = {r.requester_id for r in requests} | {r.taken_by for r in requests if r.taken_by}
    wanted = members | asked | {override.user_id for override in upcoming}
    people = {**get_users(organization_id=organization_id, user_ids=sorted(wanted)), **shifts.users}
    choices = list_users(organization_id=organization_id, is_active=True) if ctx.can("oncall:write") else []
    loaded = load_gaps(organization_id=organization_id, schedules=[schedule], window=coverage_window(ctx.now))
    return Page(
        "console/oncall/schedule.html",
        schedule.name,
        section="schedules",
        context={
            **swap_context(ctx, schedule, requests, shifts.shifts, zone),
            "gaps": [PolicyGap(start, end, ()) for start, end in loaded.gaps[schedule_id]],
            "feed_url": calendar_url(stored.ical_token, settings=ctx.settings),
            "feed_people": sorted((names_of(people).get(m, m), m) for m in members),
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


@dataclass(frozen=True)
class SwapView:
    request: SwapRequest
    status: str
    can_take: bool
    can_withdraw: bool


def swap_context(
    ctx: Ctx, schedule: Schedule, requests: list[SwapRequest], shifts: list[FinalShift], zone: tzinfo
) -> dict[str, Any]:
    """The schedule's cover requests with what the viewer may do to each, and the ask form
    (prefilled with the viewer's next shift shown, when they can respond and have one)."""
    me = ctx.user.user_id if ctx.user else ""
    responds = ctx.user is not None and can_respond(ctx.user.role, ctx.user.is_active)
    rotation = set(members_of(schedule))
    views = [
        SwapView(
            request,
            request.status_at(ctx.now),
            request.is_open(ctx.now) and responds and me in rotation and me != request.requester_id,
            request.is_open(ctx.now) and (me == request.requester_id or ctx.can("oncall:write")),
        )
        for request in requests
    ]
    mine = next((shift for shift in shifts if shift.user_id == me and shift.end > ctx.now), None)
    if ctx.request.method == "POST" and "cover_end" in ctx.form:
        ask = {name: ctx.value(f"cover_{name}") for name in ("start", "end", "note")}
    elif mine is not None:
        start = max(mine.start, ctx.now.replace(second=0, microsecond=0))
        ask = {"start": local_input(start, zone), "end": local_input(mine.end, zone), "note": ""}
    else:
        ask = {}
    return {"swaps": views, "ask": ask if responds else {}, "in_rotation": me in rotation}


def _override_form(ctx: Ctx, zone: tzinfo) -> dict[str, str]:
    """The override form's values: what was sent (to correct it), else now to an hour from now."""
    if ctx.request.method == "POST" and "user_id" in ctx.form:
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
    return Redirect(app_path(back, settings=ctx.settings), notice="override_added")


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
    return Redirect(app_path(f"/schedules/{schedule_id}", settings=ctx.settings), notice="override_removed")
