"""Rotation math: (schedule, window) -> shifts, and who is on call at an instant. Pure.

Rotation periods
    A layer's time from `start` is cut into periods at its handoffs. Period 0 runs from the
    layer's `start` to the first handoff strictly after it (a full period when `start` falls on
    a handoff); period k runs from the k-th handoff to the next. Period k belongs to
    `members[k % len(members)]`. Nothing exists before `start` or from `end` on.

Handoffs (the wall clock is the schedule's zone; `HH:MM` is `handoff_time`)
    daily   at HH:MM local every day. Across DST a period is 23 h or 25 h long; 09:00 stays 09:00.
    weekly  at HH:MM local on the weekday of `start` (in the schedule's zone), every week.
    hourly  every 60 minutes of absolute time on the grid through HH:MM on `start`'s local date,
            i.e. at minute MM of every hour (the hour part only anchors the grid) in zones whose
            offset changes by whole hours. The repeated hour at fall back has two handoffs; the
            skipped hour at spring forward has none. (Where a change is not a whole hour, e.g.
            Australia/Lord_Howe's 30 minutes, the grid stays absolute and the minute shifts.)
    custom  every `rotation_hours` of absolute time, counted from the first handoff: the first
            instant at or after `start` at which the local clock shows HH:MM.

Local times the clock skips or repeats (chalicelib.oncall.wallclock): a handoff at a time that
happens twice (fall back) happens at its FIRST occurrence (fold=0); a handoff at a time that does
not exist (spring forward; 02:30 on 2026-03-08 in America/New_York) happens when the clock jumps
over it (03:00 EDT, 07:00Z).

Restrictions clip a layer's periods to the allowed wall-clock windows; the member stays the one
whose period it is (chalicelib.oncall.restrictions). Layers: at each instant the LATEST layer
with a shift wins, gaps fall through to lower layers; overrides win over all layers for exactly
their interval (the later override where two overlap). Results are sorted, never overlap, are
clipped to [since, until) and are in UTC; adjacent pieces with the same user and origin merge.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from typing import Any, Literal

from chalicelib.oncall.fields import format_moment
from chalicelib.oncall.intervals import Span, clip, subtract, union
from chalicelib.oncall.restrictions import allowed_spans
from chalicelib.oncall.schedule import DAYS_IN_WEEK, Layer, Schedule
from chalicelib.oncall.wallclock import as_utc, at_local, local_date, parse_hhmm, zone_for

ShiftSource = Literal["layer", "override"]
_HOUR = timedelta(hours=1)
_DAY = timedelta(days=1)
# on_call_at looks this far around `now` first, then 4x wider, up to the maximum.
FIRST_LOOKAROUND = timedelta(days=8)
MAX_LOOKAROUND = timedelta(days=366)


@dataclass(frozen=True)
class Shift:
    user_id: str
    start: datetime
    end: datetime

    def to_dict(self) -> dict[str, Any]:
        return {"user_id": self.user_id, "start": format_moment(self.start), "end": format_moment(self.end)}


@dataclass(frozen=True)
class FinalShift:
    """Who is on call for [start, end) and why: a layer (layer_id) or an override (override_id)."""

    user_id: str
    start: datetime
    end: datetime
    source: ShiftSource
    layer_id: str | None = None
    override_id: str | None = None

    @property
    def origin(self) -> tuple[str, ShiftSource, str | None, str | None]:
        return (self.user_id, self.source, self.layer_id, self.override_id)

    def to_dict(self) -> dict[str, Any]:
        return {
            "user_id": self.user_id,
            "start": format_moment(self.start),
            "end": format_moment(self.end),
            "source": self.source,
            "layer_id": self.layer_id,
            "override_id": self.override_id,
        }


# --- cadences: the n-th handoff instant and the last handoff at or before an instant -----------


@dataclass(frozen=True)
class _Absolute:
    """Handoffs at anchor + n * period (hourly and custom)."""

    anchor: datetime
    period: timedelta

    def boundary(self, n: int) -> datetime:
        return self.anchor + n * self.period

    def index_at(self, moment: datetime) -> int:
        return (moment - self.anchor) // self.period


@dataclass(frozen=True)
class _Calendar:
    """Handoffs at `clock` local on base + n * step_days (daily and weekly)."""

    zone: tzinfo
    base: date
    step_days: int
    clock: time

    def boundary(self, n: int) -> datetime:
        return at_local(self.zone, self.base + timedelta(days=n * self.step_days), self.clock)

    def index_at(self, moment: datetime) -> int:
        n = (local_date(self.zone, moment) - self.base).days // self.step_days
        while self.boundary(n) > moment:
            n -= 1
        while self.boundary(n + 1) <= moment:
            n += 1
        return n


_Cadence = _Absolute | _Calendar


def _cadence(layer: Layer, zone: tzinfo) -> tuple[_Cadence, int]:
    """The layer's cadence and the index of its first handoff strictly after `start`."""
    start = as_utc(layer.start)
    clock = parse_hhmm(layer.handoff_time)
    base = local_date(zone, start)
    if layer.rotation in ("daily", "weekly"):
        calendar = _Calendar(zone, base, DAYS_IN_WEEK if layer.rotation == "weekly" else 1, clock)
        return calendar, calendar.index_at(start) + 1
    if layer.rotation == "hourly":
        # Any instant showing minute MM anchors the grid; a plain fold=0 reading keeps the minute
        # even when HH:MM falls in that day's gap (at_local would move it to the jump, minute 00).
        grid = datetime.combine(base, clock).replace(tzinfo=zone).astimezone(UTC)
        steps = -((grid - start) // _HOUR)  # ceil((start - grid) / 1 h): first grid point >= start
        cadence = _Absolute(grid + steps * _HOUR, _HOUR)
    else:
        day = base
        while at_local(zone, day, clock) < start:
            day += _DAY
        cadence = _Absolute(at_local(zone, day, clock), timedelta(hours=layer.rotation_hours or 24))
    return cadence, 0 if cadence.anchor > start else 1


def _periods(layer: Layer, zone: tzinfo, lo: datetime, hi: datetime) -> Iterator[tuple[int, datetime, datetime]]:
    """(k, period start, period end) for every rotation period overlapping [lo, hi); lo >= layer start."""
    cadence, first = _cadence(layer, zone)
    if lo < cadence.boundary(first):
        k, period_start = 0, as_utc(layer.start)
    else:
        n = cadence.index_at(lo)
        k, period_start = n - first + 1, cadence.boundary(n)
    while period_start < hi:
        period_end = cadence.boundary(first + k)
        yield k, period_start, period_end
        k, period_start = k + 1, period_end


def layer_shifts(layer: Layer, time_zone: str | tzinfo, since: datetime, until: datetime) -> list[Shift]:
    """The layer's shifts within [since, until): sorted, non-overlapping, restricted, in UTC.

    Consecutive pieces of the same member (one-member layers, a period boundary inside an allowed
    window) are merged into one shift.
    """
    zone = zone_for(time_zone)
    lo = max(as_utc(since), as_utc(layer.start))
    hi = as_utc(until) if layer.end is None else min(as_utc(until), as_utc(layer.end))
    if lo >= hi or not layer.members:
        return []
    allowed = allowed_spans(layer.restrictions, zone, lo, hi)
    shifts: list[Shift] = []
    for k, period_start, period_end in _periods(layer, zone, lo, hi):
        member = layer.members[k % len(layer.members)]
        for start, end in clip((max(period_start, lo), min(period_end, hi)), allowed):
            if shifts and shifts[-1].user_id == member and shifts[-1].end == start:
                shifts[-1] = Shift(member, shifts[-1].start, end)
            else:
                shifts.append(Shift(member, start, end))
    return shifts


def final_shifts(schedule: Schedule, since: datetime, until: datetime) -> list[FinalShift]:
    """Who is on call over [since, until): overrides over the latest layer over earlier layers."""
    lo, hi = as_utc(since), as_utc(until)
    if lo >= hi:
        return []
    zone = zone_for(schedule.time_zone)
    covered: list[Span] = []
    pieces: list[FinalShift] = []
    for override in reversed(schedule.overrides):
        span = (max(as_utc(override.start), lo), min(as_utc(override.end), hi))
        if span[0] >= span[1]:
            continue
        for start, end in subtract(span, covered):
            pieces.append(FinalShift(override.user_id, start, end, "override", override_id=override.override_id))
        covered = union([*covered, span])
    for layer in reversed(schedule.layers):
        shifts = layer_shifts(layer, zone, lo, hi)
        for shift in shifts:
            for start, end in subtract((shift.start, shift.end), covered):
                pieces.append(FinalShift(shift.user_id, start, end, "layer", layer_id=layer.layer_id))
        covered = union([*covered, *((shift.start, shift.end) for shift in shifts)])
    pieces.sort(key=lambda piece: piece.start)
    merged: list[FinalShift] = []
    for piece in pieces:
        if merged and merged[-1].origin == piece.origin and merged[-1].end == piece.start:
            merged[-1] = replace(merged[-1], end=piece.end)
        else:
            merged.append(piece)
    return merged


def on_call_at(schedule: Schedule, now: datetime) -> FinalShift | None:
    """The final shift covering `now` with its full start and end (not clipped to `now`), or None.

    The shift is looked for within `now` +- FIRST_LOOKAROUND, widened (x4) while it reaches the
    edge of the window; a shift longer than MAX_LOOKAROUND on either side of `now` (a one-member
    layer without an end) is reported clipped to now +- MAX_LOOKAROUND.
    """
    moment = as_utc(now)
    radius = FIRST_LOOKAROUND
    while True:
        lo, hi = moment - radius, moment + radius
        current = next((s for s in final_shifts(schedule, lo, hi) if s.start <= moment < s.end), None)
        if current is None or (lo < current.start and current.end < hi) or radius >= MAX_LOOKAROUND:
            return current
        radius = min(radius * 4, MAX_LOOKAROUND)
