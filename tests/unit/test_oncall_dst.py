"""DST: wall-clock handoffs and restriction windows in America/New_York and Europe/Berlin, 2026.

New York springs forward on 2026-03-08 (02:00 EST -> 03:00 EDT, 07:00Z) and falls back on
2026-11-01 (02:00 EDT -> 01:00 EST, 06:00Z). Berlin springs forward on 2026-03-29 (02:00 CET ->
03:00 CEST, 01:00Z) and falls back on 2026-10-25 (03:00 CEST -> 02:00 CET, 01:00Z).

Decisions under test: a daily handoff stays at its local time (periods of 23 h / 25 h); a
handoff at a local time the clock skips happens when the clock jumps (02:30 -> 03:00 new time);
a handoff at a local time the clock repeats happens at its first occurrence (fold=0).
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from chalicelib.oncall import Layer, Restriction, Schedule, final_shifts, layer_shifts, on_call_at
from chalicelib.oncall.restrictions import allowed_spans
from chalicelib.oncall.wallclock import at_local, offset_segments, to_instant

NEW_YORK = ZoneInfo("America/New_York")
BERLIN = ZoneInfo("Europe/Berlin")
HOUR = timedelta(hours=1)


def utc(month: int, day: int, hour: int, minute: int = 0) -> datetime:
    return datetime(2026, month, day, hour, minute, tzinfo=UTC)


def daily(zone: ZoneInfo, handoff: str, start_day: date, **changes: Any) -> Layer:
    values: dict[str, Any] = {
        "layer_id": "lyr",
        "name": "L",
        "members": ("a", "b"),
        "rotation": "daily",
        "handoff_time": handoff,
        "start": at_local(zone, start_day, time.fromisoformat(handoff)),
    }
    values.update(changes)
    return Layer(**values)


def boundaries(layer: Layer, zone: ZoneInfo, since: datetime, until: datetime) -> list[datetime]:
    return [shift.start for shift in layer_shifts(layer, zone, since, until)][1:]


TRANSITIONS = [
    pytest.param(NEW_YORK, date(2026, 3, 8), timedelta(hours=23), id="new-york-spring-forward"),
    pytest.param(NEW_YORK, date(2026, 11, 1), timedelta(hours=25), id="new-york-fall-back"),
    pytest.param(BERLIN, date(2026, 3, 29), timedelta(hours=23), id="berlin-spring-forward"),
    pytest.param(BERLIN, date(2026, 10, 25), timedelta(hours=25), id="berlin-fall-back"),
]


@pytest.mark.parametrize(("zone", "day", "short_or_long"), TRANSITIONS)
def test_daily_0900_handoff_stays_0900_local(zone, day, short_or_long):
    layer = daily(zone, "09:00", day - timedelta(days=5))
    since = at_local(zone, day - timedelta(days=3), time(0))
    until = at_local(zone, day + timedelta(days=3), time(0))
    shifts = layer_shifts(layer, zone, since, until)
    starts = [shift.start for shift in shifts[1:]]
    assert [moment.astimezone(zone).time() for moment in starts] == [time(9)] * len(starts)
    assert [moment.astimezone(zone).date() for moment in starts] == [day + timedelta(days=n) for n in range(-3, 3)]
    lengths = [shift.end - shift.start for shift in shifts[1:-1]]
    # The period containing the transition (from 09:00 the day before to 09:00 on the day) is 23 h / 25 h.
    assert lengths == [
        timedelta(hours=24),
        timedelta(hours=24),
        short_or_long,
        timedelta(hours=24),
        timedelta(hours=24),
    ]
    assert [shift.user_id for shift in shifts] == ["b", "a", "b", "a", "b", "a", "b"]


def test_new_york_daily_0900_in_utc():
    layer = daily(NEW_YORK, "09:00", date(2026, 3, 6))
    assert boundaries(layer, NEW_YORK, utc(3, 6, 0), utc(3, 10, 0)) == [utc(3, 7, 14), utc(3, 8, 13), utc(3, 9, 13)]
    layer = daily(NEW_YORK, "09:00", date(2026, 10, 30))
    assert boundaries(layer, NEW_YORK, utc(10, 30, 0), utc(11, 3, 0)) == [
        utc(10, 31, 13),
        utc(11, 1, 14),
        utc(11, 2, 14),
    ]


def test_berlin_daily_0900_in_utc():
    layer = daily(BERLIN, "09:00", date(2026, 3, 27))
    assert boundaries(layer, BERLIN, utc(3, 27, 0), utc(3, 31, 0)) == [utc(3, 28, 8), utc(3, 29, 7), utc(3, 30, 7)]
    layer = daily(BERLIN, "09:00", date(2026, 10, 23))
    assert boundaries(layer, BERLIN, utc(10, 23, 0), utc(10, 27, 0)) == [utc(10, 24, 7), utc(10, 25, 8), utc(10, 26, 8)]


def test_handoff_at_a_skipped_time_happens_when_the_clock_jumps():
    # 02:30 does not exist on 2026-03-08 in New York: the handoff is at 03:00 EDT (07:00Z).
    layer = daily(NEW_YORK, "02:30", date(2026, 3, 6))
    assert boundaries(layer, NEW_YORK, utc(3, 6, 0), utc(3, 10, 0)) == [
        utc(3, 7, 7, 30),
        utc(3, 8, 7),
        utc(3, 9, 6, 30),
    ]
    assert utc(3, 8, 7).astimezone(NEW_YORK).strftime("%H:%M %Z") == "03:00 EDT"
    # Berlin, 2026-03-29: 02:30 -> 03:00 CEST (01:00Z).
    layer = daily(BERLIN, "02:30", date(2026, 3, 27))
    assert boundaries(layer, BERLIN, utc(3, 27, 0), utc(3, 31, 0)) == [
        utc(3, 28, 1, 30),
        utc(3, 29, 1),
        utc(3, 30, 0, 30),
    ]


def test_handoff_at_a_repeated_time_happens_at_its_first_occurrence():
    # 01:30 happens twice on 2026-11-01 in New York: 01:30 EDT (05:30Z) and 01:30 EST (06:30Z).
    layer = daily(NEW_YORK, "01:30", date(2026, 10, 30))
    assert boundaries(layer, NEW_YORK, utc(10, 30, 0), utc(11, 3, 0)) == [
        utc(10, 31, 5, 30),
        utc(11, 1, 5, 30),
        utc(11, 2, 6, 30),
    ]
    # Berlin 02:30 on 2026-10-25: 02:30 CEST (00:30Z), not 02:30 CET (01:30Z).
    layer = daily(BERLIN, "02:30", date(2026, 10, 23))
    assert boundaries(layer, BERLIN, utc(10, 23, 0), utc(10, 27, 0)) == [
        utc(10, 24, 0, 30),
        utc(10, 25, 0, 30),
        utc(10, 26, 1, 30),
    ]


def test_weekly_handoff_stays_local_across_both_changes():
    weekly = daily(NEW_YORK, "09:00", date(2026, 3, 1), rotation="weekly")  # Sundays
    shifts = layer_shifts(weekly, NEW_YORK, utc(3, 1, 0), utc(3, 22, 0))
    assert [s.start.astimezone(NEW_YORK).strftime("%a %H:%M") for s in shifts] == ["Sun 09:00"] * 3
    assert [s.end - s.start for s in shifts[:2]] == [timedelta(hours=167), timedelta(hours=168)]
    weekly = daily(BERLIN, "09:00", date(2026, 10, 18), rotation="weekly")
    shifts = layer_shifts(weekly, BERLIN, utc(10, 18, 0), utc(11, 8, 0))
    assert [s.end - s.start for s in shifts[:2]] == [timedelta(hours=169), timedelta(hours=168)]


def test_hourly_is_every_absolute_hour_at_the_minute():
    hourly = daily(NEW_YORK, "00:00", date(2026, 3, 8), rotation="hourly", members=("a", "b", "c"))
    shifts = layer_shifts(hourly, NEW_YORK, utc(3, 8, 5), utc(3, 8, 9))
    assert [s.start.astimezone(NEW_YORK).strftime("%H:%M") for s in shifts] == ["00:00", "01:00", "03:00", "04:00"]
    assert all(s.end - s.start == HOUR for s in shifts)
    fall = daily(NEW_YORK, "00:15", date(2026, 11, 1), rotation="hourly", members=("a", "b", "c"))
    shifts = layer_shifts(fall, NEW_YORK, utc(11, 1, 4, 15), utc(11, 1, 8, 15))
    local = [s.start.astimezone(NEW_YORK).strftime("%H:%M %Z") for s in shifts]
    assert local == ["00:15 EDT", "01:15 EDT", "01:15 EST", "02:15 EST"]
    assert [s.user_id for s in shifts] == ["a", "b", "c", "a"]


def test_custom_counts_absolute_hours_so_its_local_time_moves_with_dst():
    custom = daily(NEW_YORK, "09:00", date(2026, 3, 7), rotation="custom", rotation_hours=12)
    shifts = layer_shifts(custom, NEW_YORK, utc(3, 7, 14), utc(3, 9, 14))
    assert all(s.end - s.start == timedelta(hours=12) for s in shifts)
    assert [s.start.astimezone(NEW_YORK).strftime("%d %H:%M") for s in shifts] == [
        "07 09:00",
        "07 21:00",
        "08 10:00",
        "08 22:00",
    ]


def test_restrictions_follow_the_wall_clock_on_transition_days():
    def window(
        start: str, end: str, zone: ZoneInfo, since: datetime, until: datetime
    ) -> list[tuple[datetime, datetime]]:
        return allowed_spans([Restriction.daily(start, end)], zone, since, until)

    day = (utc(3, 8, 5), utc(3, 9, 4))  # local midnight to midnight, 2026-03-08 New York (23 h)
    assert window("09:00", "17:00", NEW_YORK, *day) == [(utc(3, 8, 13), utc(3, 8, 21))]
    assert window("01:00", "03:30", NEW_YORK, *day) == [(utc(3, 8, 6), utc(3, 8, 7, 30))]  # 1.5 h
    assert window("02:00", "02:45", NEW_YORK, *day) == []  # never on the wall clock that day
    assert window("02:30", "04:00", NEW_YORK, *day) == [(utc(3, 8, 7), utc(3, 8, 8))]
    fall = (utc(11, 1, 4), utc(11, 2, 5))  # 2026-11-01 New York (25 h)
    assert window("01:00", "01:30", NEW_YORK, *fall) == [
        (utc(11, 1, 5), utc(11, 1, 5, 30)),
        (utc(11, 1, 6), utc(11, 1, 6, 30)),
    ]
    assert window("00:00", "02:00", NEW_YORK, *fall) == [(utc(11, 1, 4), utc(11, 1, 7))]  # 3 h on the wall
    berlin_fall = (utc(10, 24, 22), utc(10, 25, 23))
    assert window("02:00", "03:00", BERLIN, *berlin_fall) == [(utc(10, 25, 0), utc(10, 25, 2))]  # twice, back to back
    berlin_spring = (utc(3, 28, 23), utc(3, 29, 22))
    assert window("22:00", "02:30", BERLIN, *berlin_spring) == [
        (utc(3, 28, 23), utc(3, 29, 1)),  # until the clock jumps from 02:00 CET to 03:00 CEST
        (utc(3, 29, 20), utc(3, 29, 22)),
    ]


def test_on_call_in_the_repeated_hour():
    schedule = Schedule("s", "S", "America/New_York", (daily(NEW_YORK, "01:30", date(2026, 10, 30)),))
    first = on_call_at(schedule, utc(11, 1, 5, 45))  # 01:45 EDT
    second = on_call_at(schedule, utc(11, 1, 6, 45))  # 01:45 EST, same wall time an hour later
    assert first is not None and second is not None and first == second
    assert (first.start, first.end) == (utc(11, 1, 5, 30), utc(11, 2, 6, 30))
    assert first.end - first.start == timedelta(hours=25)
    assert [s.user_id for s in final_shifts(schedule, utc(10, 31, 0), utc(11, 3, 0))] == ["a", "b", "a", "b"]


def test_to_instant_rules_and_monotonicity():
    assert to_instant(NEW_YORK, datetime(2026, 3, 8, 2, 30)) == utc(3, 8, 7)
    assert to_instant(NEW_YORK, datetime(2026, 3, 8, 2, 0)) == utc(3, 8, 7)
    assert to_instant(NEW_YORK, datetime(2026, 3, 8, 1, 59)) == utc(3, 8, 6, 59)
    assert to_instant(NEW_YORK, datetime(2026, 11, 1, 1, 30)) == utc(11, 1, 5, 30)
    assert to_instant(NEW_YORK, datetime(2026, 11, 1, 1, 30, fold=1)) == utc(11, 1, 5, 30)
    assert to_instant(BERLIN, datetime(2026, 3, 29, 2, 59, 59)) == utc(3, 29, 1)
    assert to_instant(ZoneInfo("UTC"), datetime(2026, 3, 29, 2, 59)) == utc(3, 29, 2, 59)
    for zone, day in (
        (NEW_YORK, date(2026, 3, 8)),
        (NEW_YORK, date(2026, 11, 1)),
        (BERLIN, date(2026, 3, 29)),
        (BERLIN, date(2026, 10, 25)),
    ):
        instants = [to_instant(zone, datetime.combine(day, time()) + timedelta(minutes=m)) for m in range(24 * 60)]
        assert instants == sorted(instants)


def test_offset_segments_of_a_year():
    segments = offset_segments(NEW_YORK, utc(1, 1, 0), datetime(2027, 1, 1, tzinfo=UTC))
    assert [(start, end, offset.total_seconds() / 3600) for start, end, offset in segments] == [
        (utc(1, 1, 0), utc(3, 8, 7), -5),
        (utc(3, 8, 7), utc(11, 1, 6), -4),
        (utc(11, 1, 6), datetime(2027, 1, 1, tzinfo=UTC), -5),
    ]
    assert offset_segments(NEW_YORK, utc(3, 8, 7), utc(3, 8, 7)) == []
    assert offset_segments(NEW_YORK, utc(3, 8, 6), utc(3, 8, 7)) == [(utc(3, 8, 6), utc(3, 8, 7), timedelta(hours=-5))]


def test_hourly_with_a_handoff_time_inside_the_gap_keeps_its_minute():
    # 02:01 does not exist on 2026-03-29 in Berlin; the hourly grid still runs at minute 01.
    hourly = Layer("h", "H", ("a", "b"), "hourly", "02:01", utc(3, 29, 0, 1))
    shifts = layer_shifts(hourly, BERLIN, utc(3, 29, 0), utc(3, 29, 4))
    assert [s.start.astimezone(BERLIN).strftime("%H:%M") for s in shifts] == ["01:01", "03:01", "04:01", "05:01"]
    assert [s.end - s.start for s in shifts[:3]] == [HOUR, HOUR, HOUR]
