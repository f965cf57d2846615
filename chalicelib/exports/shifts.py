"""The shifts export's rows: each schedule's final shifts in the range, per person, with hours,
off-hours and weekend hours in the person's zone (their own, else the organization's)."""

from __future__ import annotations

from collections.abc import Iterator

from chalicelib import clock
from chalicelib.directory.users import get_users, zone_of
from chalicelib.exports.requests import ExportRequest
from chalicelib.exports.rows import ExportRow
from chalicelib.exports.shift_hours import shift_hours
from chalicelib.oncall.rotation import final_shifts
from chalicelib.oncall.service import list_schedules
from chalicelib.organization.service import organization_time_zone
from chalicelib.zones import zone_info, zone_or_default


def shift_rows(request: ExportRequest, *, after: tuple[str, int] | None) -> Iterator[tuple[str, int, ExportRow]]:
    """(schedule id, the shift's place in its schedule, row), schedules by id, shifts by start;
    only those after `after` (a cursor's schedule id and place). One schedule's shifts at a time."""
    schedules = sorted(list_schedules(organization_id=request.organization_id), key=lambda s: s.schedule_id)
    organization_zone = organization_time_zone(request.organization_id)
    for stored in schedules:
        schedule = stored.schedule
        if after is not None and schedule.schedule_id < after[0]:
            continue
        if "team" in request.filters and schedule.team_id != request.filters["team"]:
            continue  # no row of this schedule could be kept: skip computing them
        shifts = final_shifts(schedule, request.since, request.until)
        users = get_users(organization_id=request.organization_id, user_ids=sorted({s.user_id for s in shifts}))
        for index, shift in enumerate(shifts):
            if after is not None and schedule.schedule_id == after[0] and index <= after[1]:
                continue
            user = users.get(shift.user_id)
            zone = zone_or_default(zone_of(user, organization_zone) if user else organization_zone)
            hours = shift_hours(shift.start, shift.end, zone_info(zone))
            yield (
                schedule.schedule_id,
                index,
                {
                    "schedule_id": schedule.schedule_id,
                    "schedule_name": schedule.name,
                    "team_id": schedule.team_id,
                    "user_id": shift.user_id,
                    "user_name": user.name if user else None,
                    "user_email": user.email if user else None,
                    "source": shift.source,
                    "start": clock.isoformat(shift.start),
                    "end": clock.isoformat(shift.end),
                    "time_zone": zone,
                    "hours": hours.hours,
                    "off_hours": hours.off_hours,
                    "weekend_hours": hours.weekend_hours,
                },
            )
