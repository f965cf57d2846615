"""Pure uptime rules: each component's daily uptime over the last 90 days (UTC days), computed
from the time it spent in each status (docs/STATUS_PAGES.md, "Uptime history").

- Down weights, the share of the time in a status that counts as down: major_outage 1,
  partial_outage 0.3 (as Atlassian Statuspage), everything else 0: degraded_performance and
  under_maintenance are slow or planned, not down.
- No data: before the component existed, and while its status was `unknown` (nothing is known,
  so nothing is claimed either way). No-data time counts neither as up nor as down.
- A day's uptime = 100 x (1 - weighted down time / measured time), rounded DOWN to hundredths,
  so any down time at all shows below 100; None for a day without measured time. Today counts
  up to `now`.
- The 90-day figure weighs every measured second alike (not the mean of the daily figures).
- A day's worst status: the worst effective status (rules.COMPONENT_STATUS_ORDER) the component
  held for some time that day, `unknown` included; None for a day before it existed.
- The effective status is what the page showed: under_maintenance while a maintenance window
  held the component, unless its own status was worse (rules.effective_component_status).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from itertools import pairwise

from chalicelib.statuspage import rules

DAYS = 90
# Down weight in tenths, so the arithmetic stays in exact integers.
DOWN_WEIGHT_TENTHS: Mapping[str, int] = {"major_outage": 10, "partial_outage": 3}
NO_DATA_STATUSES = frozenset({"unknown"})
_MICROSECOND = timedelta(microseconds=1)


@dataclass(frozen=True)
class StatusChange:
    """A component's own (stored) status changed at `at`; `previous` None when it was created."""

    at: datetime
    previous: str | None
    status: str


@dataclass(frozen=True)
class MaintenanceMark:
    """A maintenance window began (`begins`) or stopped holding a component at `at`."""

    at: datetime
    maintenance_id: str
    component_id: str
    begins: bool
    scheduled_start: datetime | None = None


@dataclass(frozen=True)
class Span:
    """[start, end): a maintenance window held the component; end None while it still does."""

    start: datetime
    end: datetime | None


@dataclass(frozen=True)
class DayUptime:
    day: date
    uptime_percent: float | None
    worst_status: rules.ComponentStatus | None


@dataclass(frozen=True)
class ComponentUptime:
    days: list[DayUptime]  # oldest first, exactly `DAYS` of them, the last one today
    uptime_percent: float | None


def window_start(now: datetime, days: int = DAYS) -> datetime:
    """Midnight UTC starting the oldest day of the period that ends today."""
    today = now.astimezone(UTC).date()
    return datetime.combine(today - timedelta(days=days - 1), time(0), tzinfo=UTC)


def percent(measured: int, down_tenths: int) -> float | None:
    """100 x (1 - down / measured), rounded down to hundredths; None without measured time."""
    if measured <= 0:
        return None
    total = measured * 10
    hundredths = (total - down_tenths) * 10_000 // total
    return hundredths / 100


def maintenance_spans(
    marks: Iterable[MaintenanceMark],
    *,
    since: datetime,
    in_progress: Iterable[tuple[str, datetime | None]] = (),
) -> list[Span]:
    """One component's maintenance spans from its marks (in time order) since `since`.

    A stop without a begin in the period began before it (or at the window's scheduled start,
    whichever is later). `in_progress`: (maintenance id, scheduled start) of windows holding the
    component now; one without any mark in the period has held it since before the period."""
    open_at: dict[str, datetime] = {}
    seen: set[str] = set()
    spans: list[Span] = []
    for mark in sorted(marks, key=lambda m: m.at):
        seen.add(mark.maintenance_id)
        if mark.begins:
            open_at.setdefault(mark.maintenance_id, mark.at)
            continue
        began = open_at.pop(mark.maintenance_id, None)
        if began is None:
            began = max(since, mark.scheduled_start or since)
        spans.append(Span(began, mark.at))
    spans.extend(Span(began, None) for began in open_at.values())
    for maintenance_id, scheduled_start in in_progress:
        if maintenance_id not in seen:
            spans.append(Span(max(since, scheduled_start or since), None))
    return spans


def daily_uptime(
    *,
    now: datetime,
    created_at: datetime,
    current_status: str,
    changes: Iterable[StatusChange],
    maintenance: Iterable[Span] = (),
    days: int = DAYS,
) -> ComponentUptime:
    """The component's `days` days ending today. `changes` in the order they happened (ties
    keep their order); `current_status` its stored status now (used when nothing changed)."""
    start = window_start(now, days)
    first_day = start.date()
    begin = max(start, created_at)
    ordered = sorted(changes, key=lambda c: c.at)
    spans = [s for s in maintenance if (s.end is None or s.end > begin) and s.start < now]
    cuts = {begin, now}
    cuts.update(c.at for c in ordered if begin < c.at < now)
    for span in spans:
        cuts.update(t for t in (span.start, span.end) if t is not None and begin < t < now)
    cuts.update(start + timedelta(days=n) for n in range(1, days) if begin < start + timedelta(days=n) < now)
    points = sorted(cuts) if begin < now else []  # created after `now` (clock skew): no data yet

    measured = [0] * days
    down = [0] * days
    worst: list[rules.ComponentStatus | None] = [None] * days
    # Before the first change: the status it replaced (None when that change is the creation).
    own: str | None = ordered[0].previous if ordered else current_status
    applied = 0
    for left, right in pairwise(points):
        while applied < len(ordered) and ordered[applied].at <= left:
            own = ordered[applied].status
            applied += 1
        if own is None:
            continue
        in_maintenance = any(s.start <= left and (s.end is None or left < s.end) for s in spans)
        status = rules.effective_component_status(own, in_maintenance=in_maintenance)
        index = (left.astimezone(UTC).date() - first_day).days
        earlier = worst[index]
        worst[index] = status if earlier is None else rules.worst([earlier, status])
        if status in NO_DATA_STATUSES:
            continue
        length = (right - left) // _MICROSECOND
        measured[index] += length
        down[index] += length * DOWN_WEIGHT_TENTHS.get(status, 0)

    return ComponentUptime(
        days=[DayUptime(first_day + timedelta(days=n), percent(measured[n], down[n]), worst[n]) for n in range(days)],
        uptime_percent=percent(sum(measured), sum(down)),
    )
