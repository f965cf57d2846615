"""Rotation math by example: cadences, member order, restrictions, layers, overrides, on_call_at."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from chalicelib.oncall import FinalShift, Layer, Override, Restriction, Schedule, Shift, final_shifts, layer_shifts
from chalicelib.oncall import on_call_at as on_call
from chalicelib.oncall.intervals import clip, subtract, total, union
from chalicelib.oncall.rotation import FIRST_LOOKAROUND, MAX_LOOKAROUND


def at(day: int, hour: int = 0, minute: int = 0, month: int = 1) -> datetime:
    return datetime(2026, month, day, hour, minute, tzinfo=UTC)


def layer(**changes: Any) -> Layer:
    values: dict[str, Any] = {
        "layer_id": "lyr_1",
        "name": "Primary",
        "members": ("a", "b", "c"),
        "rotation": "daily",
        "handoff_time": "09:00",
        "start": at(5, 9),  # Monday 2026-01-05
    }
    values.update(changes)
    return Layer(**values)


def schedule(*layers: Layer, overrides: tuple[Override, ...] = (), zone: str = "UTC") -> Schedule:
    return Schedule("sch_1", "Primary", zone, layers, overrides)


def people(shifts: list[Shift] | list[FinalShift]) -> list[tuple[str, datetime, datetime]]:
    return [(shift.user_id, shift.start, shift.end) for shift in shifts]


# --- daily --------------------------------------------------------------------------------------


def test_daily_rotation_goes_through_the_members_in_order():
    shifts = layer_shifts(layer(), "UTC", at(5), at(9, 12))
    assert people(shifts) == [
        ("a", at(5, 9), at(6, 9)),
        ("b", at(6, 9), at(7, 9)),
        ("c", at(7, 9), at(8, 9)),
        ("a", at(8, 9), at(9, 9)),
        ("b", at(9, 9), at(9, 12)),
    ]


def test_a_start_between_handoffs_makes_a_short_first_period():
    shifts = layer_shifts(layer(start=at(5, 15)), "UTC", at(5), at(7, 12))
    assert people(shifts) == [("a", at(5, 15), at(6, 9)), ("b", at(6, 9), at(7, 9)), ("c", at(7, 9), at(7, 12))]


def test_a_window_long_after_the_start_costs_nothing_and_keeps_the_order():
    # 2026-01-05 09:00 + 1000 days: period 1000 belongs to members[1000 % 3] == "b".
    since = at(5, 9) + timedelta(days=1000, hours=1)
    shifts = layer_shifts(layer(), "UTC", since, since + timedelta(days=1))
    assert [shift.user_id for shift in shifts] == ["b", "c"]
    assert shifts[0].start == since and shifts[0].end == at(5, 9) + timedelta(days=1001)


def test_nothing_before_the_start_after_the_end_or_in_an_empty_window():
    assert layer_shifts(layer(), "UTC", at(1), at(5, 9)) == []
    assert layer_shifts(layer(), "UTC", at(6), at(6)) == []
    assert layer_shifts(layer(), "UTC", at(7), at(6)) == []
    ended = layer(end=at(6, 21))
    assert people(layer_shifts(ended, "UTC", at(1), at(10))) == [("a", at(5, 9), at(6, 9)), ("b", at(6, 9), at(6, 21))]
    assert layer_shifts(ended, "UTC", at(7), at(10)) == []


def test_a_one_member_layer_is_one_merged_shift():
    assert people(layer_shifts(layer(members=("solo",)), "UTC", at(1), at(20))) == [("solo", at(5, 9), at(20))]


def test_naive_window_bounds_are_read_as_utc():
    assert layer_shifts(layer(), "UTC", datetime(2026, 1, 5), datetime(2026, 1, 6)) == layer_shifts(
        layer(), "UTC", at(5), at(6)
    )


# --- weekly, hourly, custom -------------------------------------------------------------------


def test_weekly_hands_off_on_the_start_weekday_at_the_handoff_time():
    weekly = layer(rotation="weekly", members=("a", "b"), start=at(7, 10))  # Wednesday 10:00
    shifts = layer_shifts(weekly, "UTC", at(1), at(29))
    assert people(shifts) == [
        ("a", at(7, 10), at(14, 9)),
        ("b", at(14, 9), at(21, 9)),
        ("a", at(21, 9), at(28, 9)),
        ("b", at(28, 9), at(29)),
    ]


def test_weekly_start_before_the_handoff_time_hands_off_the_same_day():
    weekly = layer(rotation="weekly", members=("a", "b"), start=at(7, 8))
    assert people(layer_shifts(weekly, "UTC", at(7), at(14, 12)))[:2] == [
        ("a", at(7, 8), at(7, 9)),
        ("b", at(7, 9), at(14, 9)),
    ]


def test_hourly_hands_off_every_hour_at_the_handoff_minute():
    hourly = layer(rotation="hourly", members=("a", "b"), handoff_time="09:15", start=at(5, 10, 40))
    shifts = layer_shifts(hourly, "UTC", at(5), at(5, 13, 30))
    assert people(shifts) == [
        ("a", at(5, 10, 40), at(5, 11, 15)),
        ("b", at(5, 11, 15), at(5, 12, 15)),
        ("a", at(5, 12, 15), at(5, 13, 15)),
        ("b", at(5, 13, 15), at(5, 13, 30)),
    ]


def test_hourly_start_on_the_grid_is_a_full_first_hour():
    hourly = layer(rotation="hourly", members=("a", "b"), handoff_time="00:15", start=at(5, 10, 15))
    assert people(layer_shifts(hourly, "UTC", at(5), at(5, 12)))[0] == ("a", at(5, 10, 15), at(5, 11, 15))


def test_custom_counts_absolute_hours_from_the_first_handoff():
    custom = layer(rotation="custom", rotation_hours=36, members=("a", "b"), handoff_time="07:30", start=at(5, 6))
    shifts = layer_shifts(custom, "UTC", at(5), at(9))
    assert people(shifts) == [
        ("a", at(5, 6), at(5, 7, 30)),
        ("b", at(5, 7, 30), at(6, 19, 30)),
        ("a", at(6, 19, 30), at(8, 7, 30)),
        ("b", at(8, 7, 30), at(9)),
    ]


def test_custom_first_handoff_is_the_next_day_when_the_start_is_past_the_handoff_time():
    custom = layer(rotation="custom", rotation_hours=8, members=("a", "b"), handoff_time="07:30", start=at(5, 8))
    shifts = layer_shifts(custom, "UTC", at(5), at(6, 16))
    assert people(shifts) == [
        ("a", at(5, 8), at(6, 7, 30)),
        ("b", at(6, 7, 30), at(6, 15, 30)),
        ("a", at(6, 15, 30), at(6, 16)),
    ]


def test_custom_far_window_uses_arithmetic():
    custom = layer(rotation="custom", rotation_hours=5, members=("a", "b", "c"), handoff_time="09:00", start=at(5, 9))
    since = at(5, 9) + timedelta(hours=5 * 7001)
    assert people(layer_shifts(custom, "UTC", since, since + timedelta(hours=5))) == [
        ("c", since, since + timedelta(hours=5))  # 7001 % 3 == 2
    ]


# --- restrictions -----------------------------------------------------------------------------


def test_daily_restriction_keeps_the_member_of_the_period():
    restricted = layer(
        members=("a", "b"), handoff_time="12:00", start=at(5, 12), restrictions=(Restriction.daily("09:00", "17:00"),)
    )
    assert people(layer_shifts(restricted, "UTC", at(5), at(8))) == [
        ("a", at(5, 12), at(5, 17)),
        ("a", at(6, 9), at(6, 12)),
        ("b", at(6, 12), at(6, 17)),
        ("b", at(7, 9), at(7, 12)),
        ("a", at(7, 12), at(7, 17)),
    ]


def test_daily_restriction_wrapping_midnight():
    night = layer(members=("a", "b"), restrictions=(Restriction.daily("22:00", "06:00"),))
    assert people(layer_shifts(night, "UTC", at(5), at(7, 12))) == [
        ("a", at(5, 22), at(6, 6)),
        ("b", at(6, 22), at(7, 6)),
    ]


def test_weekly_restrictions_are_a_union_and_may_wrap_the_week():
    weekend = layer(
        members=("a",),
        restrictions=(Restriction.weekly(4, "18:00", 0, "08:00"), Restriction.weekly(2, "12:00", 2, "13:00")),
        start=at(1),
    )
    shifts = layer_shifts(weekend, "UTC", at(1), at(20))  # 2026-01-01 is a Thursday
    assert people(shifts) == [
        ("a", at(2, 18), at(5, 8)),
        ("a", at(7, 12), at(7, 13)),
        ("a", at(9, 18), at(12, 8)),
        ("a", at(14, 12), at(14, 13)),
        ("a", at(16, 18), at(19, 8)),
    ]


def test_overlapping_restrictions_merge():
    both = layer(
        members=("a",), restrictions=(Restriction.daily("09:00", "12:00"), Restriction.daily("11:00", "14:00"))
    )
    assert people(layer_shifts(both, "UTC", at(6), at(7))) == [("a", at(6, 9), at(6, 14))]


# --- layers and overrides ---------------------------------------------------------------------


def test_a_later_layer_wins_and_gaps_fall_through():
    base = layer(layer_id="base", members=("a", "b"))
    day = layer(layer_id="day", members=("x",), restrictions=(Restriction.daily("10:00", "12:00"),))
    shifts = final_shifts(schedule(base, day), at(5, 9), at(6, 13))
    assert [(s.user_id, s.start, s.end, s.layer_id) for s in shifts] == [
        ("a", at(5, 9), at(5, 10), "base"),
        ("x", at(5, 10), at(5, 12), "day"),
        ("a", at(5, 12), at(6, 9), "base"),
        ("b", at(6, 9), at(6, 10), "base"),
        ("x", at(6, 10), at(6, 12), "day"),
        ("b", at(6, 12), at(6, 13), "base"),
    ]
    assert all(s.source == "layer" and s.override_id is None for s in shifts)
    # Reversing the order lets the base layer cover everything.
    assert {s.layer_id for s in final_shifts(schedule(day, base), at(5, 9), at(6, 13))} == {"base"}


def test_a_layer_before_its_start_falls_through_to_the_one_below():
    base = layer(layer_id="base", members=("a",))
    later = layer(layer_id="later", members=("n",), start=at(6, 9))
    shifts = final_shifts(schedule(base, later), at(5, 12), at(7))
    assert people(shifts) == [("a", at(5, 12), at(6, 9)), ("n", at(6, 9), at(7))]


def test_an_override_wins_for_exactly_its_interval_and_later_overrides_win():
    base = layer(members=("a", "b"))
    overrides = (Override("o1", "z", at(5, 20), at(6, 12)), Override("o2", "y", at(6, 10), at(6, 11)))
    shifts = final_shifts(schedule(base, overrides=overrides), at(5, 9), at(6, 14))
    assert [(s.user_id, s.start, s.end, s.source, s.layer_id, s.override_id) for s in shifts] == [
        ("a", at(5, 9), at(5, 20), "layer", "lyr_1", None),
        ("z", at(5, 20), at(6, 10), "override", None, "o1"),
        ("y", at(6, 10), at(6, 11), "override", None, "o2"),
        ("z", at(6, 11), at(6, 12), "override", None, "o1"),
        ("b", at(6, 12), at(6, 14), "layer", "lyr_1", None),
    ]


def test_an_override_outside_every_layer_still_counts_and_is_clipped_to_the_window():
    shifts = final_shifts(schedule(layer(start=at(10)), overrides=(Override("o", "z", at(1), at(9)),)), at(2), at(3))
    assert people(shifts) == [("z", at(2), at(3))]


def test_adjacent_pieces_of_one_origin_merge_but_different_layers_do_not():
    low = layer(layer_id="low", members=("a",))
    high = layer(layer_id="high", members=("a",), restrictions=(Restriction.daily("10:00", "11:00"),))
    shifts = final_shifts(schedule(low, high), at(5, 9), at(5, 12))
    assert [(s.start, s.end, s.layer_id) for s in shifts] == [
        (at(5, 9), at(5, 10), "low"),
        (at(5, 10), at(5, 11), "high"),
        (at(5, 11), at(5, 12), "low"),
    ]
    ok = final_shifts(schedule(low), at(5, 9), at(8))
    assert len(ok) == 1 and (ok[0].start, ok[0].end) == (at(5, 9), at(8))


def test_final_shift_dicts():
    shift = FinalShift("a", at(5, 9), at(6, 9), "layer", layer_id="l")
    assert shift.to_dict() == {
        "user_id": "a",
        "start": "2026-01-05T09:00:00Z",
        "end": "2026-01-06T09:00:00Z",
        "source": "layer",
        "layer_id": "l",
        "override_id": None,
    }
    assert Shift("a", at(5), at(6)).to_dict() == {
        "user_id": "a",
        "start": "2026-01-05T00:00:00Z",
        "end": "2026-01-06T00:00:00Z",
    }


# --- on_call_at -------------------------------------------------------------------------------


def test_on_call_at_gives_the_full_shift():
    current = on_call(schedule(layer()), at(7, 15))
    assert current is not None and (current.user_id, current.start, current.end) == ("c", at(7, 9), at(8, 9))
    assert on_call(schedule(layer()), at(7, 9)).user_id == "c"  # type: ignore[union-attr]
    assert on_call(schedule(layer()), at(8, 9)).user_id == "a"  # type: ignore[union-attr]


def test_on_call_at_is_none_in_a_gap_and_before_the_start():
    restricted = layer(restrictions=(Restriction.daily("09:00", "17:00"),))
    assert on_call(schedule(restricted), at(7, 18)) is None
    assert on_call(schedule(layer()), at(1)) is None


def test_on_call_at_prefers_the_override():
    current = on_call(schedule(layer(), overrides=(Override("o", "z", at(7, 12), at(7, 13)),)), at(7, 12, 30))
    assert current == FinalShift("z", at(7, 12), at(7, 13), "override", override_id="o")


def test_on_call_at_widens_the_window_for_long_shifts_up_to_the_cap():
    monthly = layer(rotation="custom", rotation_hours=24 * 60, members=("a", "b"))
    current = on_call(schedule(monthly), at(20, month=2))
    assert current is not None and (current.start, current.end) == (
        at(6, 9, month=3) - timedelta(days=60),
        at(6, 9, month=3),
    )
    forever = layer(members=("solo",), start=at(5, 9))
    now = at(5, 9) + timedelta(days=2000)
    endless = on_call(schedule(forever), now)
    assert endless is not None and (endless.start, endless.end) == (now - MAX_LOOKAROUND, now + MAX_LOOKAROUND)
    assert FIRST_LOOKAROUND < MAX_LOOKAROUND


# --- interval helpers -------------------------------------------------------------------------


def test_interval_helpers():
    spans = union([(at(3), at(4)), (at(1), at(2)), (at(2), at(3)), (at(6), at(5)), (at(7), at(9)), (at(8), at(8))])
    assert spans == [(at(1), at(4)), (at(7), at(9))]
    assert clip((at(2), at(8)), spans) == [(at(2), at(4)), (at(7), at(8))]
    assert subtract((at(0 + 1), at(10)), spans) == [(at(4), at(7)), (at(9), at(10))]
    assert subtract((at(2), at(3)), spans) == []
    assert clip((at(5), at(6)), spans) == []
    assert total([(at(1), at(3)), (at(2), at(4))]) == timedelta(days=3)


def test_edge_cases_of_the_helpers():
    from zoneinfo import ZoneInfo

    from chalicelib.oncall.restrictions import allowed_spans
    from chalicelib.oncall.wallclock import first_change

    assert final_shifts(schedule(layer()), at(7), at(7)) == []
    assert allowed_spans([Restriction.daily("09:00", "17:00")], ZoneInfo("UTC"), at(7), at(6)) == []
    assert first_change(ZoneInfo("Europe/Berlin"), at(7), at(8)) is None
    # Unvalidated input (one override id twice, back to back) still comes out merged.
    twice = (Override("o", "z", at(6, 1), at(6, 2)), Override("o", "z", at(6, 2), at(6, 3)))
    assert people(final_shifts(schedule(layer(), overrides=twice), at(6), at(6, 4)))[1] == ("z", at(6, 1), at(6, 3))
