"""How the console shows a schedule: final shifts cut into the schedule's local days, gaps included,
and the local date-times people type into forms read in the schedule's zone. Pure, no AWS.

Who is on call when is decided by `chalicelib.oncall.rotation.final_shifts`; this module only lays
those shifts out for reading (a shift over midnight appears on both days) and says where nobody is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, tzinfo

from chalicelib.directory.users import User
from chalicelib.errors import ValidationFailed
from chalicelib.oncall.rotation import FinalShift
from chalicelib.oncall.wallclock import at_local, local_date, to_instant

DAYS_SHOWN = 14
LOCAL_FORMATS = ("%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M")


@dataclass(frozen=True)
class Piece:
    """Part of one local day: someone's shift (user_id set) or a gap where nobody is on call."""

    start: datetime  # local, in the schedule's zone
    end: datetime
    user_id: str | None
    source: str  # "layer", "override" or "gap"
    layer_id: str | None = None
    override_id: str | None = None
    ends_next_day: bool = False  # the piece runs to the day's end (shown as 24:00)

    @property
    def is_gap(self) -> bool:
        return self.user_id is None


@dataclass(frozen=True)
class Day:
    day: date
    pieces: tuple[Piece, ...]
    is_today: bool


def window_start(zone: tzinfo, now: datetime, first_day: date | None = None) -> tuple[date, datetime, datetime]:
    """The first local day shown (today unless given), and the instants the DAYS_SHOWN days span."""
    start_day = first_day or local_date(zone, now)
    return start_day, at_local(zone, start_day, time(0)), at_local(zone, start_day + timedelta(DAYS_SHOWN), time(0))


def days_of(zone: tzinfo, first_day: date, shifts: Sequence[FinalShift], *, today: date) -> list[Day]:
    """DAYS_SHOWN local days from `first_day`, each with its pieces in time order (gaps filled in).

    Day boundaries are local midnights, so a day across a DST change is 23 or 25 hours long."""
    ordered = sorted(shifts, key=lambda shift: shift.start)
    days: list[Day] = []
    for offset in range(DAYS_SHOWN):
        day = first_day + timedelta(offset)
        lo, hi = at_local(zone, day, time(0)), at_local(zone, day + timedelta(1), time(0))
        pieces: list[Piece] = []
        cursor = lo
        for shift in ordered:
            start, end = max(shift.start, lo), min(shift.end, hi)
            if start >= end:
                continue
            if start > cursor:
                pieces.append(_piece(zone, cursor, start, hi, None, "gap"))
            pieces.append(_piece(zone, start, end, hi, shift.user_id, shift.source, shift.layer_id, shift.override_id))
            cursor = max(cursor, end)
        if cursor < hi:
            pieces.append(_piece(zone, cursor, hi, hi, None, "gap"))
        days.append(Day(day, tuple(pieces), day == today))
    return days


def _piece(
    zone: tzinfo,
    start: datetime,
    end: datetime,
    day_end: datetime,
    user_id: str | None,
    source: str,
    layer_id: str | None = None,
    override_id: str | None = None,
) -> Piece:
    return Piece(
        start.astimezone(zone),
        end.astimezone(zone),
        user_id,
        source,
        layer_id,
        override_id,
        ends_next_day=end >= day_end,
    )


def parse_day(value: str, *, field: str) -> date | None:
    """A YYYY-MM-DD query value (blank: None); anything else is a 400 naming the field."""
    if not value:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise ValidationFailed.for_field(field, "must be a date, e.g. 2026-11-22") from None


def local_moment(value: str, zone: tzinfo, *, field: str) -> datetime:
    """A date and time typed in the schedule's zone (a datetime-local input) as a UTC instant.

    A time the clock shows twice is its first occurrence; a time it skips is the end of the jump
    (the same reading as the layers' handoffs, `oncall.wallclock.to_instant`)."""
    text = value.strip()
    if not text:
        raise ValidationFailed.for_field(field, "required")
    for pattern in LOCAL_FORMATS:
        try:
            wall = datetime.strptime(text, pattern)
        except ValueError:
            continue
        return to_instant(zone, wall)
    raise ValidationFailed.for_field(field, "must be a date and time, e.g. 2026-11-22T09:00")


def local_input(moment: datetime, zone: tzinfo) -> str:
    """An instant as a datetime-local input's value in the zone."""
    return moment.astimezone(zone).strftime("%Y-%m-%dT%H:%M")


def names_of(people: Mapping[str, User]) -> dict[str, str]:
    """user_id -> the name to show (name, else email, else the id)."""
    return {user_id: person.name or person.email or user_id for user_id, person in people.items()}
