"""Coverage gaps of a schedule: the spans with nobody to page. Pure, no AWS.

A schedule pages whoever its final shifts name (`rotation.final_shifts`: overrides over the
latest layer over earlier layers). An instant is a gap when no shift covers it (restrictions,
a layer not started yet or ended, no layer at all) or when the person on call cannot be paged
(deactivated or removed: the runtime's "nobody to page" says the same, chalicelib.paging.current
`level_misses`). Overrides fill gaps like any shift.

Gaps are looked for over a bounded window: COVERAGE_HORIZON (14 days) from now, so the cost of
a check is the rotation math of 14 days, whatever the schedule's history.

A gap's id names it across checks, so its owners are told once (chalicelib.paging.coverage_check):
its start, or ONGOING when it began before the window the check looked at (the check looks back
LOOKBACK, so a gap that opens while someone is editing keeps its start as id).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime, timedelta

from chalicelib.oncall.fields import format_moment, parse_moment
from chalicelib.oncall.intervals import Span, subtract, union
from chalicelib.oncall.rotation import FinalShift, final_shifts
from chalicelib.oncall.schedule import Schedule
from chalicelib.oncall.wallclock import as_utc

COVERAGE_HORIZON = timedelta(days=14)
LOOKBACK = timedelta(days=1)
ONGOING = "ongoing"


def coverage_window(now: datetime) -> Span:
    """The window whose gaps an answer reports: [now, now + COVERAGE_HORIZON)."""
    start = as_utc(now)
    return start, start + COVERAGE_HORIZON


def check_window(now: datetime) -> Span:
    """The window a notice check looks at: LOOKBACK before now (to find the start of a gap that is
    on now) to the end of the coverage window."""
    start = as_utc(now)
    return start - LOOKBACK, start + COVERAGE_HORIZON


def gaps_of_shifts(shifts: Iterable[FinalShift], window: Span, pageable: Callable[[str], bool]) -> list[Span]:
    """The parts of `window` no shift of a pageable person covers."""
    covered = union((shift.start, shift.end) for shift in shifts if pageable(shift.user_id))
    return subtract(window, covered)


def schedule_gaps(
    schedule: Schedule, window: Span, pageable: Callable[[str], bool] = lambda _user_id: True
) -> list[Span]:
    """Every span of `window` in which the schedule pages nobody (sorted, merged, in UTC)."""
    since, until = as_utc(window[0]), as_utc(window[1])
    if since >= until:
        return []
    return gaps_of_shifts(final_shifts(schedule, since, until), (since, until), pageable)


def people_on_call(schedule: Schedule, window: Span) -> set[str]:
    """Everyone a final shift names within the window (whose state decides `pageable`)."""
    return {shift.user_id for shift in final_shifts(schedule, as_utc(window[0]), as_utc(window[1]))}


def clipped(gaps: Iterable[Span], window: Span) -> list[Span]:
    """The gaps within `window` (the API reports the next 14 days; a check looks back further)."""
    lo, hi = window
    return [(max(start, lo), min(end, hi)) for start, end in gaps if start < hi and end > lo]


def gap_id(start: datetime, window_start: datetime) -> str:
    """A gap's id in a check over a window starting at `window_start` (see the module docstring)."""
    return ONGOING if start <= window_start else format_moment(start)


def carried_ids(noticed: Iterable[str], window_start: datetime) -> set[str]:
    """The ids told before, as a check over a window starting at `window_start` names them: a gap
    told by its start that began before this window is the gap this check calls ONGOING."""
    carried: set[str] = set()
    for noticed_id in noticed:
        moment = parse_moment(noticed_id)
        carried.add(ONGOING if moment is None or moment <= window_start else noticed_id)
    return carried
