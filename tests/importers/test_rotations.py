"""Vendor rotations as Tocsin layers (chalicelib.client.importers.rotations) and vendor
restrictions as Tocsin's, case by case: where the models meet exactly and what is approximated."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from chalicelib.client import document as doc
from chalicelib.client.importers import opsgenie_schedules, pagerduty_schedules, rotations

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
BERLIN = ZoneInfo("Europe/Berlin")


def turns(days: int | None, seconds: int, origin: datetime, members: int = 3) -> rotations.Turns:
    return rotations.Turns(tuple(f"u{i}@x.test" for i in range(members)), origin, BERLIN, days, seconds)


def test_a_weekly_turn_started_in_summer_hands_off_at_the_same_local_time_in_winter() -> None:
    summer = datetime(2026, 7, 6, 9, 0, tzinfo=BERLIN)  # a Monday, CEST
    built = rotations.build("L", turns(7, 7 * 86400, summer), start=summer, end=None, restrictions=[], now=NOW)
    [layer] = built.layers
    assert (layer.rotation, layer.handoff_time, layer.start) == ("weekly", "09:00", summer.astimezone(UTC))
    assert layer.members == ["u0@x.test", "u1@x.test", "u2@x.test"] and built.approximations == []


def test_a_two_week_turn_lists_each_member_twice_and_a_two_day_turn_daily() -> None:
    origin = datetime(2026, 11, 2, 8, 30, tzinfo=BERLIN)
    weekly = rotations.build("L", turns(14, 14 * 86400, origin, 2), start=origin, end=None, restrictions=[], now=NOW)
    assert weekly.layers[0].rotation == "weekly"
    assert weekly.layers[0].members == ["u0@x.test", "u0@x.test", "u1@x.test", "u1@x.test"]
    daily = rotations.build("L", turns(2, 2 * 86400, origin, 2), start=origin, end=None, restrictions=[], now=NOW)
    assert (daily.layers[0].rotation, daily.layers[0].handoff_time) == ("daily", "08:30")
    assert daily.layers[0].members == ["u0@x.test", "u0@x.test", "u1@x.test", "u1@x.test"]


def test_a_daily_layer_starts_where_the_vendor_layer_does_with_whoever_is_on_then() -> None:
    origin = datetime(2026, 11, 1, 9, 0, tzinfo=BERLIN)
    start = datetime(2026, 11, 4, 15, 0, tzinfo=BERLIN)  # turn 3 (day 3) since the origin
    built = rotations.build("L", turns(1, 86400, origin), start=start, end=None, restrictions=[], now=NOW)
    assert built.layers[0].start == start.astimezone(UTC)
    assert built.layers[0].members == ["u0@x.test", "u1@x.test", "u2@x.test"]  # 3 % 3 == 0: u0 first


def test_a_weekly_layer_started_between_handoffs_starts_at_the_handoff_before() -> None:
    origin = datetime(2026, 11, 2, 10, 0, tzinfo=BERLIN)  # Mondays 10:00
    start = datetime(2026, 11, 11, 12, 0, tzinfo=BERLIN)  # a Wednesday, in turn 1
    built = rotations.build("L", turns(7, 7 * 86400, origin), start=start, end=None, restrictions=[], now=NOW)
    [layer] = built.layers
    assert layer.start == datetime(2026, 11, 9, 10, 0, tzinfo=BERLIN).astimezone(UTC)
    assert layer.members[0] == "u1@x.test"


def test_a_weekly_layer_that_starts_later_between_handoffs_gets_a_one_member_lead_in() -> None:
    origin = datetime(2026, 11, 2, 10, 0, tzinfo=BERLIN)
    start = datetime(2026, 12, 2, 12, 0, tzinfo=BERLIN)  # a Wednesday after NOW, in turn 4
    end = datetime(2027, 1, 1, tzinfo=BERLIN)
    built = rotations.build("L", turns(7, 7 * 86400, origin), start=start, end=end, restrictions=[], now=NOW)
    lead, main = built.layers
    assert (lead.name, lead.members, lead.start) == (
        "L (until its first handoff)",
        ["u1@x.test"],
        start.astimezone(UTC),
    )
    assert lead.end == main.start == datetime(2026, 12, 7, 10, 0, tzinfo=BERLIN).astimezone(UTC)
    assert main.members[0] == "u2@x.test" and main.end == end.astimezone(UTC)


def test_elapsed_turns_count_hours_from_a_boundary_whose_local_time_is_the_handoff() -> None:
    summer = datetime(2026, 6, 1, 20, 0, tzinfo=BERLIN)  # 18:00Z
    start = datetime(2026, 11, 10, tzinfo=UTC)
    built = rotations.build("L", turns(None, 12 * 3600, summer), start=start, end=None, restrictions=[], now=NOW)
    [layer] = built.layers
    assert (layer.rotation, layer.rotation_hours) == ("custom", 12)
    assert layer.start == datetime(2026, 11, 9, 18, 0, tzinfo=UTC)
    assert layer.handoff_time == "19:00"  # 18:00Z in winter (CET), not the origin's 20:00


def test_what_tocsin_cannot_count_is_approximated_and_said() -> None:
    origin = datetime(2026, 11, 2, 10, 0, 30, tzinfo=BERLIN)
    half_hour = rotations.build("L", turns(None, 1800, origin), start=origin, end=None, restrictions=[], now=NOW)
    assert half_hour.layers[0].rotation_hours == 1
    assert any("whole hours" in text for text in half_hour.approximations)
    assert any("seconds" in text for text in half_hour.approximations)
    crowded = rotations.build("L", turns(14, 14 * 86400, origin, 26), start=origin, end=None, restrictions=[], now=NOW)
    assert crowded.layers[0].rotation == "custom" and crowded.layers[0].rotation_hours == 336
    assert any("more than 50" in text for text in crowded.approximations)


def test_pagerduty_restrictions() -> None:
    daily = {"type": "daily_restriction", "start_time_of_day": "22:00:00", "duration_seconds": 8 * 3600}
    weekly = {
        "type": "weekly_restriction",
        "start_day_of_week": 5,
        "start_time_of_day": "18:00:00",
        "duration_seconds": 63 * 3600,
    }
    found, notes = pagerduty_schedules.restrictions_of([daily, weekly])
    assert found == [
        doc.Restriction(kind="daily", start="22:00", end="06:00"),
        doc.Restriction(kind="weekly", start="18:00", end="09:00", start_day=4, end_day=0),
    ]
    assert notes == []
    assert pagerduty_schedules.restrictions_of([{**daily, "duration_seconds": 86400}])[0] == []
    assert pagerduty_schedules.restrictions_of([{**weekly, "duration_seconds": 7 * 86400}])[0] == []
    assert pagerduty_schedules.restrictions_of([{**daily, "duration_seconds": 0}])[0] is None
    _, odd = pagerduty_schedules.restrictions_of([{**daily, "start_time_of_day": "22:00:30"}])
    assert odd == ["a restriction has seconds: Tocsin's windows are whole minutes"]


def test_opsgenie_restrictions() -> None:
    assert opsgenie_schedules.restrictions_of(None) == []
    day = {"type": "time-of-day", "restriction": {"startHour": 9, "startMin": 30, "endHour": 17, "endMin": 0}}
    assert opsgenie_schedules.restrictions_of(day) == [doc.Restriction(kind="daily", start="09:30", end="17:00")]
    same = {"type": "time-of-day", "restriction": {"startHour": 9, "startMin": 0, "endHour": 9, "endMin": 0}}
    assert opsgenie_schedules.restrictions_of(same) == []
    week = {
        "type": "weekday-and-time-of-day",
        "restrictions": [
            {"startDay": "friday", "startHour": 18, "startMin": 0, "endDay": "monday", "endHour": 9, "endMin": 0}
        ],
    }
    assert opsgenie_schedules.restrictions_of(week) == [
        doc.Restriction(kind="weekly", start="18:00", end="09:00", start_day=4, end_day=0)
    ]
    assert opsgenie_schedules.restrictions_of({"type": "weekday-and-time-of-day", "restrictions": []}) is None


def test_weekly_spans_and_their_overlap() -> None:
    nights = [doc.Restriction(kind="daily", start="18:00", end="09:00")]
    days = [doc.Restriction(kind="daily", start="09:00", end="18:00")]
    weekend = [doc.Restriction(kind="weekly", start="18:00", end="09:00", start_day=4, end_day=0)]
    assert not rotations.spans_overlap(rotations.weekly_spans(nights), rotations.weekly_spans(days))
    assert rotations.spans_overlap(rotations.weekly_spans(nights), rotations.weekly_spans(weekend))
    assert rotations.spans_overlap(rotations.weekly_spans([]), rotations.weekly_spans(days))
    assert rotations.weekly_spans([])[0] == (0, 7 * 1440)
    assert timedelta(minutes=sum(hi - lo for lo, hi in rotations.weekly_spans(weekend))) == timedelta(hours=63)
