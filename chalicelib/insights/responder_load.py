"""GET /api/v1/insights/responders, pure: per person, pages by channel and urgency, incidents
acknowledged and resolved, interruptions by the band of the person's own local hour, and hours on
call from final shifts split into working hours, off-hours and weekends (in the person's zone)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from chalicelib import clock
from chalicelib.insights import figures, periods, rollups
from chalicelib.insights.bands import BANDS, Bands
from chalicelib.insights.incident_metrics import HourItem

Interval = tuple[datetime, datetime]


@dataclass(frozen=True)
class Person:
    user_id: str
    name: str | None
    email: str | None
    time_zone: str


def merged(intervals: Iterable[Interval]) -> list[Interval]:
    """The union of intervals, in order (a person on two schedules at once is on call once)."""
    result: list[Interval] = []
    for start, end in sorted(interval for interval in intervals if interval[0] < interval[1]):
        if result and start <= result[-1][1]:
            result[-1] = (result[-1][0], max(result[-1][1], end))
        else:
            result.append((start, end))
    return result


def on_call_hours(intervals: Iterable[Interval], zone: ZoneInfo, bands: Bands) -> dict[str, float]:
    """Hours on call: `working` (a working day's working hours), `off_hours` (a working day's other
    hours), `weekend` (every hour of a day that is not a working day); `total` their sum.
    Walked one local hour at a time, so a shift across midnight or a DST change splits exactly."""
    seconds = {"working": 0.0, "off_hours": 0.0, "weekend": 0.0}
    for start, end in merged(intervals):
        moment = start.astimezone(UTC)
        end = end.astimezone(UTC)
        while moment < end:
            local = moment.astimezone(zone)
            boundary = local.replace(minute=0, second=0, microsecond=0).astimezone(UTC) + timedelta(hours=1)
            piece_end = min(end, boundary)
            if local.weekday() not in bands.working_days:
                part = "weekend"
            else:
                part = "working" if bands.is_working(local) else "off_hours"
            seconds[part] += (piece_end - moment).total_seconds()
            moment = piece_end
    hours = {name: round(value / 3600, 2) for name, value in seconds.items()}
    return {"total": round(sum(seconds.values()) / 3600, 2), **hours}


def clipped(intervals: Iterable[Interval], span: periods.Range) -> list[Interval]:
    return [(max(start, span.since), min(end, span.until)) for start, end in intervals]


def person_figures(
    person: Person, items: Sequence[HourItem], shifts: Sequence[Interval], span: periods.Range, bands: Bands
) -> dict[str, Any]:
    zone = ZoneInfo(person.time_zone)
    counters = figures.summed(item.counters for item in items if span.since <= item.hour < span.until)
    interruptions = dict.fromkeys(BANDS, 0)
    for item in items:
        if span.since <= item.hour < span.until:
            interruptions[bands.band_of(item.hour.astimezone(zone))] += item.counters.get(rollups.PAGES, 0)
    return {
        "user": {"id": person.user_id, "name": person.name, "email": person.email, "time_zone": person.time_zone},
        "pages": {
            "total": counters.get(rollups.PAGES, 0),
            "by_channel": {ch: counters.get(rollups.page_channel_counter(ch), 0) for ch in rollups.CHANNELS},
            "by_urgency": {u: counters.get(rollups.page_urgency_counter(u), 0) for u in rollups.URGENCIES},
        },
        "interruptions": interruptions,
        "acknowledged": counters.get(rollups.PERSON_ACKED, 0),
        "resolved": counters.get(rollups.PERSON_RESOLVED, 0),
        "on_call_hours": on_call_hours(clipped(shifts, span), zone, bands),
    }


def compute(
    span: periods.Range,
    people: Mapping[str, Person],
    items: Sequence[HourItem],
    shifts: Mapping[str, Sequence[Interval]],
    bands: Bands,
) -> dict[str, Any]:
    """Every person with a page, an acknowledgement, a resolution or a shift in the range, by name."""
    by_person: dict[str, list[HourItem]] = {}
    for item in items:
        by_person.setdefault(item.value, []).append(item)
    ids = [user_id for user_id in dict.fromkeys([*by_person, *shifts]) if user_id in people]
    ordered = sorted(ids, key=lambda user_id: ((people[user_id].name or "").lower(), user_id))
    return {
        "since": clock.isoformat(span.since),
        "until": clock.isoformat(span.until),
        "bands": bands.to_dict(),
        "people": [
            person_figures(people[user_id], by_person.get(user_id, []), shifts.get(user_id, []), span, bands)
            for user_id in ordered
        ],
    }
