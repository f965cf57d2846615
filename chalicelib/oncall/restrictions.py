"""Restriction windows as instants: which moments of [lo, hi) a layer may cover. Pure.

An instant is allowed when the wall clock in the schedule's zone, AT THAT INSTANT, shows a time
(and, for weekly windows, a weekday) inside one of the layer's windows. That is the rule a
person reading the clock on the wall would apply, and it settles DST without special cases:

- spring forward: local times that never happen are simply never shown (a 02:00-02:45 window
  on 2026-03-08 in America/New_York is empty that day; a 01:00-03:30 window is 1.5 h long);
- fall back: local times shown twice are allowed twice (a 01:00-01:30 window on 2026-11-01 in
  America/New_York covers 05:00-05:30Z and 06:00-06:30Z).

The computation cuts [lo, hi) where the zone's offset changes; within one piece the wall clock
is the instant plus a fixed offset, so each window maps to one interval.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import date, datetime, timedelta, tzinfo

from chalicelib.oncall.intervals import Span, union
from chalicelib.oncall.schedule import DAYS_IN_WEEK, Restriction
from chalicelib.oncall.wallclock import as_utc, from_wall_time, minutes_of, offset_segments, wall_time

_DAY = timedelta(days=1)
_WEEK = timedelta(days=DAYS_IN_WEEK)
_MINUTES_PER_DAY = 24 * 60


def local_windows(restriction: Restriction, lo: datetime, hi: datetime) -> Iterator[tuple[datetime, datetime]]:
    """The restriction's naive local windows that overlap the naive local range [lo, hi)."""
    start = minutes_of(restriction.start)
    end = minutes_of(restriction.end)
    if restriction.kind == "weekly":
        start += (restriction.start_day or 0) * _MINUTES_PER_DAY
        end += (restriction.end_day or 0) * _MINUTES_PER_DAY
        period, length_days = _WEEK, DAYS_IN_WEEK
        first = lo.date() - timedelta(days=lo.weekday()) - _WEEK  # a Monday before lo
    else:
        period, length_days = _DAY, 1
        first = lo.date() - _DAY
    if end <= start:  # wraps past midnight (daily) or past Sunday night (weekly)
        end += length_days * _MINUTES_PER_DAY
    day: date = first
    while True:
        base = datetime.combine(day, datetime.min.time())
        window = (base + timedelta(minutes=start), base + timedelta(minutes=end))
        if window[0] >= hi:
            return
        if window[1] > lo:
            yield window
        day += period


def allowed_spans(restrictions: Iterable[Restriction], zone: tzinfo, lo: datetime, hi: datetime) -> list[Span]:
    """The instants of [lo, hi) inside the restrictions, as a sorted merged span list (UTC).

    No restrictions means all of [lo, hi).
    """
    lo, hi = as_utc(lo), as_utc(hi)
    rules = list(restrictions)
    if lo >= hi:
        return []
    if not rules:
        return [(lo, hi)]
    pieces: list[Span] = []
    for segment_start, segment_end, offset in offset_segments(zone, lo, hi):
        wall_lo, wall_hi = wall_time(segment_start, offset), wall_time(segment_end, offset)
        for rule in rules:
            for start, end in local_windows(rule, wall_lo, wall_hi):
                start, end = max(start, wall_lo), min(end, wall_hi)
                if start < end:
                    pieces.append((from_wall_time(start, offset), from_wall_time(end, offset)))
    return union(pieces)
