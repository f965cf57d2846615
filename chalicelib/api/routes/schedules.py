"""On-call schedules: CRUD, overrides, final shifts, and the calendar feed (public, token in the URL)."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from chalice.app import Response

from chalicelib.api.capability_tokens import CALENDAR_FEED_TOKEN, CalendarFeed
from chalicelib.api.error_render import ErrorFamily
from chalicelib.api.operation import Call, OperationGroup, per_address, query_lists
from chalicelib.api.resource import Resource
from chalicelib.escalation import service as policies
from chalicelib.oncall import feed, service
from chalicelib.oncall.coverage import coverage_window
from chalicelib.oncall.coverage_read import load_gaps
from chalicelib.oncall.models import (
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

logger = logging.getLogger("tocsin.schedules")
api = OperationGroup(__name__, tag="schedules")


def present(call: Call, found: Sequence[StoredSchedule]) -> list[ScheduleV1]:
    """The schedules with their coverage gaps over the next 14 days (one read of the people on call)."""
    loaded = load_gaps(
        organization_id=call.principal.organization_id,
        schedules=[stored.schedule for stored in found],
        window=coverage_window(call.now),
    )
    return [ScheduleV1.of(stored, loaded.gaps[stored.schedule_id]) for stored in found]


schedules = Resource(
    api, "/api/v1/schedules", "schedule_id", ScheduleV1, present, read="oncall:read", write="oncall:write"
)
ITEM = schedules.item
_SCHEDULE_RULES = (
    "Layers are listed lowest first and a later layer wins wherever it has a shift; overrides win over every "
    "layer. Handoffs are wall-clock times in the schedule's zone (a daily 09:00 handoff stays 09:00 across DST). "
    "Rotations: hourly, daily, weekly (on the weekday of the layer's start) or custom (rotation_hours). "
    "Layer members must be active users of the organization; team_id must name one of its teams. "
    "People are told when they go on call or come off call, handoff_notice_lead_minutes ahead. "
    "Answers carry coverage_gaps: the spans of the next 14 days in which the schedule pages nobody."
)


def _delete(*, organization_id: str, schedule_id: str) -> None:
    used_by = policies.policies_of_schedule(organization_id=organization_id, schedule_id=schedule_id)
    service.delete_schedule(
        organization_id=organization_id,
        schedule_id=schedule_id,
        used_by_policies=[p.policy_id for p in used_by],
        policy_names=[p.policy.name for p in used_by],
    )


schedules.listing(
    "listSchedules",
    "List on-call schedules, newest first",
    lambda call, query: service.list_schedules(organization_id=call.principal.organization_id, team_id=query.team_id),
    query=ScheduleListQuery,
)
schedules.create(
    "createSchedule",
    "Create an on-call schedule",
    ScheduleCreate,
    schedules.by_key(service.create_schedule),
    description=_SCHEDULE_RULES,
)
schedules.get("getSchedule", "Get an on-call schedule", service.get_schedule)
schedules.update(
    "updateSchedule",
    "Update a schedule (at least one field; layers replaces every layer)",
    SchedulePatch,
    service.update_schedule,
    description=_SCHEDULE_RULES + " Send the version you read to make the change conditional: 409 when the "
    "schedule changed since.",
)
schedules.delete(
    "deleteSchedule", "Delete a schedule (409 while an escalation policy targets it)", _delete, errors=(404, 409)
)


schedules.act(
    "POST",
    "/overrides",
    "createScheduleOverride",
    "Put a user on call for an interval, over every layer",
    service.add_override,
    body=OverrideCreate,
    response=OverrideV1,
    present=lambda _call, added: OverrideV1.of(added[1]),
    status=201,
    errors=(400, 404),
    description="The user must be an active user of the organization. A later override wins where two "
    "overlap. Overrides that ended more than 30 days ago are dropped.",
)
schedules.act(
    "DELETE",
    "/overrides/{override_id}",
    "deleteScheduleOverride",
    "Remove an override; the layers decide that interval again",
    service.remove_override,
)


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


def _ical_url_v1(_call: Call, url: str) -> IcalUrlV1:
    return IcalUrlV1.of(url)


schedules.get(
    "getScheduleIcalUrl",
    "The schedule's calendar feed URL (iCalendar), to subscribe to from a calendar app",
    feed.ical_url,
    with_settings=True,
    suffix="/ical-url",
    response=IcalUrlV1,
    present=_ical_url_v1,
    description="The URL carries a secret token instead of a bearer credential; rotate it with POST.",
)
schedules.act(
    "POST",
    "/ical-url",
    "rotateScheduleIcalUrl",
    "Issue a new calendar feed URL; the old one stops working",
    feed.rotate_ical_token,
    with_settings=True,
    response=IcalUrlV1,
    present=_ical_url_v1,
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
        body=feed.render_feed(
            calendar.schedule, token=calendar.token, now=call.now, person=_person(call), settings=call.settings
        ),
        status_code=200,
        headers={
            "Content-Type": "text/calendar; charset=utf-8",
            "Content-Disposition": 'inline; filename="on-call.ics"',
            "Cache-Control": "private, max-age=300",
        },
    )
