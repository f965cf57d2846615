"""A shift's hours, off-hours and weekend hours in a time zone. Pure.

Hours are elapsed time (a night that changes the clock counts what it lasted). In the zone:
weekend hours fall on a Saturday or Sunday; off-hours on a weekday before WORK_STARTS or from
WORK_ENDS; the rest are working hours. So hours = working + off_hours + weekend_hours.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta, tzinfo
from itertools import pairwise

WORK_STARTS = time(9, 0)
WORK_ENDS = time(18, 0)
SATURDAY = 5


@dataclass(frozen=True)
class ShiftHours:
    hours: float
    off_hours: float
    weekend_hours: float


def _boundaries(start: datetime, end: datetime, zone: tzinfo) -> list[datetime]:
    """Every local midnight, WORK_STARTS and WORK_ENDS inside (start, end), in UTC, sorted."""
    found = {start, end}
    day = start.astimezone(zone).date() - timedelta(days=1)
    last = end.astimezone(zone).date() + timedelta(days=1)
    while day <= last:
        for clock in (time(0, 0), WORK_STARTS, WORK_ENDS):
            moment = datetime.combine(day, clock, tzinfo=zone).astimezone(UTC)
            if start < moment < end:
                found.add(moment)
        day += timedelta(days=1)
    return sorted(found)


def _hours(span: timedelta) -> float:
    return span.total_seconds() / 3600


def shift_hours(start: datetime, end: datetime, zone: tzinfo) -> ShiftHours:
    """The hours of [start, end) (aware datetimes), rounded to 2 decimals."""
    if end <= start:
        return ShiftHours(0.0, 0.0, 0.0)
    off = weekend = timedelta()
    points = _boundaries(start.astimezone(UTC), end.astimezone(UTC), zone)
    for lo, hi in pairwise(points):
        local = (lo + (hi - lo) / 2).astimezone(zone)  # a piece lies within one band: its middle names it
        if local.weekday() >= SATURDAY:
            weekend += hi - lo
        elif not WORK_STARTS <= local.time() < WORK_ENDS:
            off += hi - lo
    return ShiftHours(round(_hours(end - start), 2), round(_hours(off), 2), round(_hours(weekend), 2))
