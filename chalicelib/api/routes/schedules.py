"""On-call schedules: CRUD, overrides, final shifts, and the calendar feed (public, token in the URL)."""

from __future__ import annotations

import logging

from chalice.app import Response

from chalicelib.api.capability_tokens import CALENDAR_FEED_TOKEN, CalendarFeed
from chalicelib.api.error_render import ErrorFamily
from chalicelib.api.operation import Call, OperationGroup, per_address, query_lists
from chalicelib.escalation import service as policies
from chalicelib.oncall import feed, service
from chalicelib.oncall.coverage import coverage_window
from chalicelib.oncall.coverage_read import load_gaps
from chalicelib.oncall.models import (
    DeletedV1,
    IcalUrlV1,
    OverrideCreate,
    OverrideV1,
    ScheduleCreate,
    ScheduleListQuery,
    SchedulePatch,
    ScheduleV1,
    ShiftsQuery,
    ShiftsV1,
)
from chalicelib.oncall.service import StoredSchedule
from chalicelib.pagination import Page, paginate

logger = logging.getLogger("tocsin.schedules")
api = OperationGroup(__name__, tag="schedules")

BASE = "/api/v1/schedules"
ITEM = BASE + "/{schedule_id}"
_SCHEDULE_RULES = (
    "Layers are listed lowest first and a later layer wins wherever it has a shift; overrides win over every "
    "layer. Handoffs are wall-clock times in the schedule's zone (a daily 09:00 handoff stays 09:00 across DST). "
    "Rotations: hourly, daily, weekly (on the weekday of the layer's start) or custom (rotation_hours). "
    "Layer members must be active users of the organization; team_id must name one of its teams. "
    "People are told when they go on call or come off call, handoff_notice_lead_minutes ahead. "
    "Answers carry coverage_gaps: the spans of the next 14 days in which the schedule pages nobody."
)


def present(call: Call, found: list[StoredSchedule]) -> list[ScheduleV1]:
    """The schedules with their coverage gaps over the next 14 days (one read of the people on call)."""
    loaded = load_gaps(
        organization_id=call.principal.organization_id,
        schedules=[stored.schedule for stored in found],
        window=coverage_window(call.now),
    )
    return [ScheduleV1.of(stored, loaded.gaps[stored.schedule_id]) for stored in found]


def present_one(call: Call, stored: StoredSchedule) -> ScheduleV1:
    return present(call, [stored])[0]


@api.operation(
    "GET",
    BASE,
    operation_id="listSchedules",
    summary="List on-call schedules, newest first",
    scope="oncall:read",
    query=ScheduleListQuery,
    response=Page[ScheduleV1],
    errors=(400,),
)
def list_schedules(call: Call) -> Page[ScheduleV1]:
    query: ScheduleListQuery = call.query
    found = service.list_schedules(organization_id=call.principal.organization_id, team_id=query.team_id)
    page = paginate(found, limit=query.limit, offset=query.offset)
    return Page[ScheduleV1](
        items=present(call, page.items), total=page.total, has_more=page.has_more, next_offset=page.next_offset
    )


@api.operation(
    "POST",
    BASE,
    operation_id="createSchedule",
    summary="Create an on-call schedule",
    scope="oncall:write",
    body=ScheduleCreate,
    response=ScheduleV1,
    status=201,
    errors=(400,),
    description=_SCHEDULE_RULES,
)
def create_schedule(call: Call) -> ScheduleV1:
    body: ScheduleCreate = call.body
    stored = service.create_schedule(
        organization_id=call.principal.organization_id,
        name=body.name,
        time_zone=body.time_zone,
        layers=[layer.to_domain() for layer in body.layers],
        team_id=body.team_id,
        handoff_notice_lead_minutes=body.handoff_notice_lead_minutes,
        now=call.now,
    )
    return present_one(call, stored)


@api.operation(
    "GET",
    ITEM,
    operation_id="getSchedule",
    summary="Get an on-call schedule",
    scope="oncall:read",
    response=ScheduleV1,
    errors=(404,),
)
def get_schedule(call: Call) -> ScheduleV1:
    return present_one(
        call, service.get_schedule(organization_id=call.principal.organization_id, schedule_id=call.path["schedule_id"])
    )


@api.operation(
    "PATCH",
    ITEM,
    operation_id="updateSchedule",
    summary="Update a schedule (at least one field; layers replaces every layer)",
    scope="oncall:write",
    body=SchedulePatch,
    response=ScheduleV1,
    errors=(400, 404, 409),
    description=_SCHEDULE_RULES + " Send the version you read to make the change conditional: 409 when the "
    "schedule changed since.",
)
def update_schedule(call: Call) -> ScheduleV1:
    body: SchedulePatch = call.body
    stored = service.update_schedule(
        organization_id=call.principal.organization_id,
        schedule_id=call.path["schedule_id"],
        now=call.now,
        expected_version=body.version,
        **body.domain_changes(),
    )
    return present_one(call, stored)


@api.operation(
    "DELETE",
    ITEM,
    operation_id="deleteSchedule",
    summary="Delete a schedule (409 while an escalation policy targets it)",
    scope="oncall:write",
    response=DeletedV1,
    errors=(404, 409),
)
def delete_schedule(call: Call) -> DeletedV1:
    schedule_id, organization_id = call.path["schedule_id"], call.principal.organization_id
    used_by = policies.policies_of_schedule(organization_id=organization_id, schedule_id=schedule_id)
    service.delete_schedule(
        organization_id=organization_id,
        schedule_id=schedule_id,
        used_by_policies=[p.policy_id for p in used_by],
        policy_names=[p.policy.name for p in used_by],
    )
    return DeletedV1(id=schedule_id, deleted=True)


@api.operation(
    "POST",
    ITEM + "/overrides",
    operation_id="createScheduleOverride",
    summary="Put a user on call for an interval, over every layer",
    scope="oncall:write",
    body=OverrideCreate,
    response=OverrideV1,
    status=201,
    errors=(400, 404),
    description="The user must be an active user of the organization. A later override wins where two "
    "overlap. Overrides that ended more than 30 days ago are dropped.",
)
def create_override(call: Call) -> OverrideV1:
    body: OverrideCreate = call.body
    _, override = service.add_override(
        organization_id=call.principal.organization_id,
        schedule_id=call.path["schedule_id"],
        user_id=body.user_id,
        start=body.start,
        end=body.end,
        now=call.now,
    )
    return OverrideV1.of(override)


@api.operation(
    "DELETE",
    ITEM + "/overrides/{override_id}",
    operation_id="deleteScheduleOverride",
    summary="Remove an override; the layers decide that interval again",
    scope="oncall:write",
    response=ScheduleV1,
    errors=(404,),
)
def delete_override(call: Call) -> ScheduleV1:
    stored = service.remove_override(
        organization_id=call.principal.organization_id,
        schedule_id=call.path["schedule_id"],
        override_id=call.path["override_id"],
        now=call.now,
    )
    return present_one(call, stored)


@api.operation(
    "GET",
    ITEM + "/shifts",
    operation_id="listScheduleShifts",
    summary="Final shifts: who is on call when, and through which layer or override",
    scope="oncall:read",
    query=ShiftsQuery,
    response=ShiftsV1,
    errors=(400, 404),
    description="The window [since, until) defaults to the next 7 days from now and is at most 93 days long.",
)
def list_shifts(call: Call) -> ShiftsV1:
    query: ShiftsQuery = call.query
    since = query.since or call.now
    until = query.until or since + service.DEFAULT_SHIFTS_WINDOW
    result = service.schedule_shifts(
        organization_id=call.principal.organization_id,
        schedule_id=call.path["schedule_id"],
        since=since,
        until=until,
    )
    return ShiftsV1.of(result)


@api.operation(
    "GET",
    ITEM + "/ical-url",
    operation_id="getScheduleIcalUrl",
    summary="The schedule's calendar feed URL (iCalendar), to subscribe to from a calendar app",
    scope="oncall:read",
    response=IcalUrlV1,
    errors=(404,),
    description="The URL carries a secret token instead of a bearer credential; rotate it with POST.",
)
def get_ical_url(call: Call) -> IcalUrlV1:
    return IcalUrlV1.of(
        feed.ical_url(organization_id=call.principal.organization_id, schedule_id=call.path["schedule_id"])
    )


@api.operation(
    "POST",
    ITEM + "/ical-url",
    operation_id="rotateScheduleIcalUrl",
    summary="Issue a new calendar feed URL; the old one stops working",
    scope="oncall:write",
    response=IcalUrlV1,
    errors=(404,),
)
def rotate_ical_url(call: Call) -> IcalUrlV1:
    return IcalUrlV1.of(
        feed.rotate_ical_token(
            organization_id=call.principal.organization_id, schedule_id=call.path["schedule_id"], now=call.now
        )
    )


# --- the public feed ---------------------------------------------------------------------------


def _person(call: Call) -> str | None:
    """The `person` query parameter: a user id whose shifts alone the feed keeps."""
    values = query_lists(call.request).get("person") or [""]
    return values[0] or None


@api.raw(
    "GET",
    "/calendars/{token}",
    operation_id="getScheduleCalendar",
    credential=CALENDAR_FEED_TOKEN,
    bucket=per_address("anonymous"),  # counted before the token is looked up: guessing costs too
    family=ErrorFamily.WEBHOOK,  # the same bare {success: false, error} body
    unexpected="The calendar could not be built; retry later.",
    summary="A schedule's calendar feed: GET /calendars/<token>.ics (text/calendar, RFC 5545)",
    content_type="text/calendar",
    description="No bearer credential: calendar apps cannot send one; the token in the URL (from "
    "GET /api/v1/schedules/{schedule_id}/ical-url) is the credential. The path is the token followed by "
    "`.ics`. The answer is `text/calendar`: the schedule's final shifts from 14 days ago to 93 days ahead, "
    "times in UTC. `?person=<user_id>` keeps only that person's shifts (each member's own calendar). "
    "404 NOT_FOUND for an unknown (or rotated) token; 429 RATE_LIMITED per client address.",
    errors=(404, 429),
)
def calendar_feed(call: Call) -> Response:
    calendar: CalendarFeed = call.credential
    return Response(
        body=feed.render_feed(calendar.schedule, token=calendar.token, now=call.now, person=_person(call)),
        status_code=200,
        headers={
            "Content-Type": "text/calendar; charset=utf-8",
            "Content-Disposition": 'inline; filename="on-call.ics"',
            "Cache-Control": "private, max-age=300",
        },
    )
