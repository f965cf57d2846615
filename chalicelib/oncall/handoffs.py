"""Handoffs: the instants where a schedule's on-call person changes, and who is told what. Pure.

A boundary is an instant B where the person on call just before B (the final shift covering
B - epsilon) differs from the person on call at B. Final shifts that merely change origin at B
(one layer hands over to another, a layer to an override) with the same person on both sides are
no boundary: that person is on call throughout and is told nothing. At a boundary the person
before B goes "off_call" and the person at B goes "on_call" (either may be nobody: a gap).

For "on_call", `shift_ends_at` is when that person's stretch ends: the end of their shift at B
merged with any shift of theirs that follows without a gap (back-to-back shifts, a layer change);
None when the stretch reaches HORIZON past B (a one-member layer without an end).

Boundaries are looked for within HORIZON of a moment (in windows widening from FIRST_WINDOW, so an
hourly rotation costs an hour's worth of shifts, not 35 days'). When there is none, the caller
looks again later: `next_notice` plans that (chalicelib.oncall.handoff_notices keeps the plan on
the schedule's record).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from chalicelib.oncall.rotation import FinalShift, final_shifts
from chalicelib.oncall.schedule import Schedule
from chalicelib.oncall.wallclock import as_utc

HandoffKind = Literal["on_call", "off_call"]
HORIZON = timedelta(days=35)
FIRST_WINDOW = timedelta(days=1)
LEAD_MINUTES_MAX = 1440
# A window reaches this far past its end so that a boundary exactly at the end is seen from both sides.
_PAST_END = timedelta(minutes=1)
_BEFORE = timedelta(minutes=1)


@dataclass(frozen=True)
class Handoff:
    """`user_id` goes on call or comes off call at `at` (UTC)."""

    user_id: str
    kind: HandoffKind
    at: datetime
    shift_ends_at: datetime | None = None  # on_call only: when this stretch of on-call ends


@dataclass(frozen=True)
class NoticePlan:
    """When to look next (`notice_at`) and the boundary that look is about (None: nothing within
    the horizon; look again at `notice_at` and search on from there)."""

    boundary: datetime | None
    notice_at: datetime


def _boundaries(shifts: list[FinalShift], lo: datetime, hi: datetime) -> list[datetime]:
    """Instants in (lo, hi] where the person on call changes. `shifts` must cover past hi."""
    ending = {shift.end: shift.user_id for shift in shifts}
    starting = {shift.start: shift.user_id for shift in shifts}
    found = (moment for moment in sorted(ending.keys() | starting.keys()) if lo < moment <= hi)
    return [moment for moment in found if ending.get(moment) != starting.get(moment)]


def next_boundary(schedule: Schedule, after: datetime, *, horizon: timedelta = HORIZON) -> datetime | None:
    """The first boundary B with after < B <= after + horizon, or None."""
    lo = as_utc(after)
    window = min(FIRST_WINDOW, horizon)
    while True:
        hi = lo + window
        found = _boundaries(final_shifts(schedule, lo, hi + _PAST_END), lo, hi)
        if found:
            return found[0]
        if window >= horizon:
            return None
        window = min(window * 4, horizon)


def next_notice(schedule: Schedule, after: datetime, lead_minutes: int, *, horizon: timedelta = HORIZON) -> NoticePlan:
    """The notice for the first boundary after `after`, `lead_minutes` ahead of it. With none
    within the horizon: look again `lead_minutes` before the horizon's end, searching on from
    there (the stretch between was searched already and holds none), so no lead is cut short."""
    boundary = next_boundary(schedule, after, horizon=horizon)
    lead = timedelta(minutes=lead_minutes)
    if boundary is None:
        return NoticePlan(None, as_utc(after) + horizon - lead)
    return NoticePlan(boundary, boundary - lead)


def _covering(shifts: list[FinalShift], moment: datetime, *, just_before: bool) -> FinalShift | None:
    for shift in shifts:
        if (shift.start < moment <= shift.end) if just_before else (shift.start <= moment < shift.end):
            return shift
    return None


def _stretch_end(shifts: list[FinalShift], first: FinalShift, limit: datetime) -> datetime | None:
    end = first.end
    for shift in shifts:
        if shift.start == end and shift.user_id == first.user_id:
            end = shift.end
    return None if end >= limit else end


def changes_at(schedule: Schedule, boundary: datetime, *, horizon: timedelta = HORIZON) -> list[Handoff]:
    """Who comes off call (first) and who goes on call at `boundary`; empty when it is no boundary."""
    at = as_utc(boundary)
    limit = at + horizon
    shifts = final_shifts(schedule, at - _BEFORE, limit)  # sorted, never overlapping
    before = _covering(shifts, at, just_before=True)
    after = _covering(shifts, at, just_before=False)
    before_user = before.user_id if before else None
    after_user = after.user_id if after else None
    if before_user == after_user:
        return []
    changes = []
    if before_user is not None:
        changes.append(Handoff(before_user, "off_call", at))
    if after is not None and after_user is not None:
        changes.append(Handoff(after_user, "on_call", at, _stretch_end(shifts, after, limit)))
    return changes
