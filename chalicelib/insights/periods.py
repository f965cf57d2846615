"""Ranges and buckets in a time zone (pure): days, ISO weeks (Monday) and months, cut from the
UTC hours of the rollups. An hour belongs to the bucket its start falls in locally, so in a zone
whose offset is not whole hours (India, +05:30) a bucket edge is off by that half hour."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from typing import Literal
from zoneinfo import ZoneInfo

from chalicelib.errors import ValidationFailed
from chalicelib.insights import rollups

Interval = Literal["day", "week", "month"]
INTERVALS: tuple[Interval, ...] = ("day", "week", "month")
MAX_RANGE = timedelta(days=400)  # a year and its edges; the cost of a read grows with the range
DEFAULT_RANGE = timedelta(days=30)


@dataclass(frozen=True)
class Range:
    """[since, until) in UTC, cut at whole hours (since rounded down, until rounded up)."""

    since: datetime
    until: datetime

    def hours(self) -> Iterator[datetime]:
        moment = self.since
        while moment < self.until:
            yield moment
            moment += timedelta(hours=1)


def checked_range(since: datetime | None, until: datetime | None, now: datetime) -> Range:
    """The range a request asked for (default: the 30 days before now); 400 VALIDATION_FAILED for
    an empty, inverted or too long one."""
    end = until or now
    start = since or end - DEFAULT_RANGE
    if start >= end:
        raise ValidationFailed.for_field("since", "must be before until")
    if end - start > MAX_RANGE:
        raise ValidationFailed.for_field("since", f"the range may be at most {MAX_RANGE.days} days")
    low = rollups.hour_of(start)
    high = rollups.hour_of(end)
    if high < end.astimezone(UTC):
        high += timedelta(hours=1)
    return Range(low, high)


def bucket_start(moment: datetime, interval: Interval, zone: ZoneInfo) -> datetime:
    local = moment.astimezone(zone)
    day = local.date()
    if interval == "week":
        day -= timedelta(days=day.weekday())
    elif interval == "month":
        day = day.replace(day=1)
    return datetime.combine(day, time(0), tzinfo=zone)


def next_start(start: datetime, interval: Interval, zone: ZoneInfo) -> datetime:
    day = start.date()
    if interval == "day":
        following = day + timedelta(days=1)
    elif interval == "week":
        following = day + timedelta(days=7)
    else:
        following = (day.replace(day=28) + timedelta(days=4)).replace(day=1)
    return datetime.combine(following, time(0), tzinfo=zone)


def bucket_starts(span: Range, interval: Interval, zone: ZoneInfo) -> list[datetime]:
    """Every bucket that holds an hour of the range, in order (local midnights)."""
    starts = []
    start = bucket_start(span.since, interval, zone)
    while start.astimezone(UTC) < span.until:
        starts.append(start)
        start = next_start(start, interval, zone)
    return starts
