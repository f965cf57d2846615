"""Wall-clock time in an IANA zone made exact: local times to instants, and a zone's UTC offsets.

Rotation handoffs and restriction windows are written as local wall-clock times ("09:00 in
Europe/Berlin"). Twice a year a wall clock shows some times twice and skips others, so two rules
decide what such a time means. Both are "the first instant at which a clock in the zone shows
this local time or a later one":

- Repeated (fall back): the FIRST occurrence, PEP 495 `fold=0`. 01:30 on 2026-11-01 in
  America/New_York is 01:30 EDT (05:30Z), not 01:30 EST (06:30Z).
- Skipped (spring forward): the instant the clock jumps over it. 02:30 on 2026-03-08 in
  America/New_York does not exist; it means 03:00 EDT (07:00Z), the end of the gap.

Everything returned is an aware datetime in UTC. Pure: no I/O beyond zoneinfo's own files.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from zoneinfo import ZoneInfo

# One rule for what a zone name is, for schedules, support hours and people alike (re-exported).
from chalicelib.zones import ZONE_KEY_PATTERN as ZONE_KEY_PATTERN
from chalicelib.zones import is_valid_zone as is_valid_zone

HHMM_PATTERN = re.compile(r"^([01]\d|2[0-3]):([0-5]\d)$")
_ONE_SECOND = timedelta(seconds=1)
# Offset probes are this far apart; zones never change offset twice within it.
_PROBE_STEP = timedelta(hours=6)

Span = tuple[datetime, datetime]


def is_hhmm(value: object) -> bool:
    return isinstance(value, str) and HHMM_PATTERN.match(value) is not None


def parse_hhmm(value: str) -> time:
    """'HH:MM' (00:00 to 23:59) as a time; ValueError otherwise."""
    match = HHMM_PATTERN.match(value) if isinstance(value, str) else None
    if match is None:
        raise ValueError(f"not an HH:MM time: {value!r}")
    return time(int(match.group(1)), int(match.group(2)))


def minutes_of(value: str) -> int:
    """Minutes after local midnight of an 'HH:MM' time."""
    moment = parse_hhmm(value)
    return moment.hour * 60 + moment.minute


def zone_for(zone: str | tzinfo) -> tzinfo:
    """A tzinfo for an IANA key (ZoneInfo caches them) or the tzinfo itself."""
    return ZoneInfo(zone) if isinstance(zone, str) else zone


def as_utc(moment: datetime) -> datetime:
    """The instant in UTC. A naive datetime is read as UTC (as chalicelib.incident.sla does)."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def offset_at(zone: tzinfo, instant: datetime) -> timedelta:
    offset = instant.astimezone(zone).utcoffset()
    return offset if offset is not None else timedelta(0)


def local_date(zone: tzinfo, instant: datetime) -> date:
    return instant.astimezone(zone).date()


def first_change(zone: tzinfo, lo: datetime, hi: datetime) -> datetime | None:
    """The instant in (lo, hi] where the zone's offset first differs from its offset at `lo`.

    Assumes at most one change in the range (callers keep ranges shorter than `_PROBE_STEP`
    or know there is one gap). Transitions fall on whole seconds, so bisection to one second
    finds the exact instant.
    """
    base = offset_at(zone, lo)
    if offset_at(zone, hi) == base:
        return None

    def point(seconds: int) -> datetime:
        return min(lo + seconds * _ONE_SECOND, hi)

    low, high = 0, max(1, -((lo - hi) // _ONE_SECOND))  # offset(point(low)) == base != offset(point(high))
    while high - low > 1:
        middle = (low + high) // 2
        if offset_at(zone, point(middle)) == base:
            low = middle
        else:
            high = middle
    # The change lies in (point(high) - 1 s, point(high)]; the one whole second there is it.
    return point(high).replace(microsecond=0)


def to_instant(zone: tzinfo, local: datetime) -> datetime:
    """A naive local wall time as a UTC instant, by the module's two rules (first occurrence; end of gap).

    Monotone: a later local time never maps to an earlier instant.
    """
    wall = local.replace(tzinfo=None, fold=0)
    instant = wall.replace(tzinfo=zone).astimezone(UTC)
    if instant.astimezone(zone).replace(tzinfo=None) == wall:
        return instant
    # Skipped by a forward jump: fold=0 reads it with the offset before the jump, fold=1 with
    # the one after; the jump itself lies between the two readings.
    other = wall.replace(tzinfo=zone, fold=1).astimezone(UTC)
    jump = first_change(zone, min(instant, other), max(instant, other))
    return jump if jump is not None else instant


def at_local(zone: tzinfo, day: date, clock: time) -> datetime:
    """The instant `clock` happens on local date `day` (see `to_instant`)."""
    return to_instant(zone, datetime.combine(day, clock))


def offset_segments(zone: tzinfo, lo: datetime, hi: datetime) -> list[tuple[datetime, datetime, timedelta]]:
    """[lo, hi) cut where the zone's UTC offset changes: (start, end, offset) pieces, in order.

    Within one piece local wall time is `instant + offset`, a plain shift; that makes questions
    like "which instants show 09:00-17:00 on the wall clock" exact across DST changes.
    """
    segments: list[tuple[datetime, datetime, timedelta]] = []
    start, probe = lo, lo
    offset = offset_at(zone, lo)
    while probe < hi:
        ahead = min(probe + _PROBE_STEP, hi)
        if offset_at(zone, ahead) == offset:
            probe = ahead
            continue
        change = first_change(zone, probe, ahead)
        if change is None:  # pragma: no cover - offset_at(ahead) differs, so a change exists
            probe = ahead
            continue
        if start < change:
            segments.append((start, change, offset))
        start, probe, offset = change, change, offset_at(zone, change)
    if start < hi:
        segments.append((start, hi, offset))
    return segments


def wall_time(instant: datetime, offset: timedelta) -> datetime:
    """The naive local wall time of a UTC instant under a known offset."""
    return (as_utc(instant) + offset).replace(tzinfo=None)


def from_wall_time(wall: datetime, offset: timedelta) -> datetime:
    """The inverse of `wall_time` for one offset segment."""
    return (wall - offset).replace(tzinfo=UTC)
