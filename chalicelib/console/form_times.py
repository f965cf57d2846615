"""Times typed in console forms. `<input type="datetime-local">` and `<input type="date">` send no
offset, so the forms say their times are in the viewer's zone (their own, else the organization's)
and these read them so; anything else goes to the API's model as typed (and is refused there when
it is not an RFC 3339 date-time). A wall time the zone shows twice is its first occurrence, one it
skips is the end of the jump (chalicelib.oncall.wallclock.to_instant)."""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta

from chalicelib import clock, zones
from chalicelib.oncall.wallclock import at_local, to_instant

_LOCAL_MINUTES = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$")
_LOCAL_SECONDS = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$")
_LAST_MOMENT = timedelta(microseconds=1)


def from_form(value: str, zone: str = zones.DEFAULT_ZONE) -> str:
    """A datetime-local value read in `zone` (RFC 3339 in UTC, with `Z`); any other text unchanged."""
    if not (_LOCAL_MINUTES.match(value) or _LOCAL_SECONDS.match(value)):
        return value
    try:
        wall = datetime.fromisoformat(value)
    except ValueError:
        return value  # "2026-02-30T10:00": the model refuses it with its own words
    return clock.isoformat(to_instant(zones.zone_info(zone), wall)).replace(".000Z", "Z")


def day_start(day: date, zone: str) -> datetime:
    """The first instant of a day on the zone's calendar."""
    return at_local(zones.zone_info(zone), day, time(0))


def day_end(day: date, zone: str) -> datetime:
    """The last instant of a day on the zone's calendar (23 or 25 hours after its start across a DST change)."""
    return day_start(day + timedelta(days=1), zone) - _LAST_MOMENT


def form_value(moment: datetime, zone: str = zones.DEFAULT_ZONE) -> str:
    """A moment as a datetime-local input's value in `zone` (to prefill a form)."""
    return zones.in_zone(moment, zone).strftime("%Y-%m-%dT%H:%M")
