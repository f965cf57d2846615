"""Property tests (hypothesis) for the rotation math, around real DST transitions.

Oracles are independent of the implementation: restrictions are checked minute by minute by
reading the wall clock; layering is checked on elementary intervals by brute force; handoffs are
checked against "the first instant whose wall clock shows the handoff time".
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chalicelib.oncall import FinalShift, Layer, Override, Restriction, Schedule, Shift, final_shifts, layer_shifts
from chalicelib.oncall.intervals import Span, clip, subtract, union
from chalicelib.oncall.wallclock import at_local, minutes_of, to_instant

ZONES = ["UTC", "America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "America/St_Johns"]
# 2026 transitions of those zones (Lord Howe moves by 30 minutes) and one quiet date.
PIVOTS = [datetime(2026, m, d, tzinfo=UTC) for m, d in ((3, 8), (3, 29), (4, 5), (6, 15), (10, 4), (10, 25), (11, 1))]
MINUTE = timedelta(minutes=1)
PROPERTY = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SAMPLED = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

hhmm = st.builds(lambda h, m: f"{h:02d}:{m:02d}", st.integers(0, 23), st.sampled_from([0, 1, 15, 30, 45, 59]))
moments = st.builds(
    lambda pivot, minutes, seconds: pivot + timedelta(minutes=minutes, seconds=seconds),
    st.sampled_from(PIVOTS),
    st.integers(-4 * 1440, 4 * 1440),
    st.sampled_from([0, 0, 0, 17]),
)


@st.composite
def restrictions(draw: st.DrawFn) -> Restriction:
    start, end = draw(hhmm), draw(hhmm)
    if draw(st.booleans()):
        if start == end:
            end = "23:59" if start != "23:59" else "00:00"
        return Restriction.daily(start, end)
    start_day, end_day = draw(st.integers(0, 6)), draw(st.integers(0, 6))
    if (start_day, start) == (end_day, end):
        end_day = (end_day + 1) % 7
    return Restriction.weekly(start_day, start, end_day, end)


@st.composite
def layers(draw: st.DrawFn, *, restricted: bool | None = None, layer_id: str = "lyr", distinct: bool = False) -> Layer:
    rotation = draw(st.sampled_from(["hourly", "daily", "weekly", "custom"]))
    count = draw(st.integers(2 if distinct else 1, 4))
    members = (
        ("a", "b", "c", "d")[:count]
        if distinct
        else tuple(draw(st.lists(st.sampled_from("abc"), min_size=1, max_size=4)))
    )
    start = draw(moments)
    has_end = draw(st.booleans())
    if restricted is None:
        restricted = draw(st.booleans())
    return Layer(
        layer_id=layer_id,
        name=layer_id,
        members=members,
        rotation=rotation,
        rotation_hours=draw(st.sampled_from([1, 5, 12, 36])) if rotation == "custom" else None,
        handoff_time=draw(hhmm),
        start=start,
        end=start + timedelta(minutes=draw(st.integers(1, 6 * 1440))) if has_end else None,
        restrictions=tuple(draw(st.lists(restrictions(), min_size=1, max_size=3))) if restricted else (),
    )


@st.composite
def windows(draw: st.DrawFn, around: datetime, max_minutes: int = 3 * 1440) -> tuple[datetime, datetime]:
    since = around + timedelta(minutes=draw(st.integers(-2 * 1440, 4 * 1440)))
    return since, since + timedelta(minutes=draw(st.integers(1, max_minutes)))


def spans(shifts: list[Shift] | list[FinalShift]) -> list[Span]:
    return [(shift.start, shift.end) for shift in shifts]


def assert_well_formed(shifts: list[Shift] | list[FinalShift], lo: datetime, hi: datetime) -> None:
    for shift in shifts:
        assert lo <= shift.start < shift.end <= hi
        assert shift.start.tzinfo == UTC
    for before, after in itertools.pairwise(shifts):
        assert before.end <= after.start


def wall_allows(restriction_list: tuple[Restriction, ...], zone: ZoneInfo, instant: datetime) -> bool:
    """The brute-force oracle: read the wall clock at the instant and check each window."""
    if not restriction_list:
        return True
    local = instant.astimezone(zone)
    minute_of_day = local.hour * 60 + local.minute
    minute_of_week = local.weekday() * 1440 + minute_of_day
    for rule in restriction_list:
        start, end = minutes_of(rule.start), minutes_of(rule.end)
        value = minute_of_day
        if rule.kind == "weekly":
            start += (rule.start_day or 0) * 1440
            end += (rule.end_day or 0) * 1440
            value = minute_of_week
        inside = start <= value < end if start < end else (value >= start or value < end)
        if inside:
            return True
    return False


# --- one layer ----------------------------------------------------------------------------------


@PROPERTY
@given(st.sampled_from(ZONES), layers(), st.data())
def test_layer_shifts_are_sorted_disjoint_and_inside_the_window(zone_name, layer, data):
    since, until = data.draw(windows(layer.start))
    shifts = layer_shifts(layer, zone_name, since, until)
    lo = max(since, layer.start)
    hi = until if layer.end is None else min(until, layer.end)
    assert_well_formed(shifts, lo, max(lo, hi))
    for before, after in itertools.pairwise(shifts):
        assert not (before.user_id == after.user_id and before.end == after.start)  # merged


@PROPERTY
@given(st.sampled_from(ZONES), layers(restricted=False), st.data())
def test_without_restrictions_shifts_cover_the_window_exactly(zone_name, layer, data):
    since, until = data.draw(windows(layer.start))
    lo = max(since, layer.start)
    hi = until if layer.end is None else min(until, layer.end)
    covered = union(spans(layer_shifts(layer, zone_name, since, until)))
    assert covered == ([(lo, hi)] if lo < hi else [])


@SAMPLED
@given(st.sampled_from(ZONES), layers(restricted=True), st.data())
def test_with_restrictions_shifts_cover_exactly_the_allowed_minutes(zone_name, layer, data):
    zone = ZoneInfo(zone_name)
    # Minute-aligned window, so every boundary is on a whole minute and sampling is exact.
    since, until = data.draw(windows(layer.start.replace(second=0), max_minutes=2 * 1440))
    covered = spans(layer_shifts(layer, zone, since, until))
    instant, index = since, 0
    while instant < until:
        while index < len(covered) and covered[index][1] <= instant:
            index += 1
        in_shift = index < len(covered) and covered[index][0] <= instant
        in_layer = instant >= layer.start and (layer.end is None or instant < layer.end)
        expected = in_layer and wall_allows(layer.restrictions, zone, instant)
        assert in_shift == expected, instant
        instant += MINUTE


@PROPERTY
@given(st.sampled_from(ZONES), layers(), st.data())
def test_a_window_is_the_same_as_the_whole_history_clipped(zone_name, layer, data):
    since, until = data.draw(windows(layer.start))
    whole = layer_shifts(layer, zone_name, layer.start, until)
    clipped: list[Shift] = []
    for shift in whole:
        for start, end in clip((shift.start, shift.end), [(since, until)]):
            clipped.append(Shift(shift.user_id, start, end))
    assert layer_shifts(layer, zone_name, since, until) == clipped


@PROPERTY
@given(st.sampled_from(ZONES), layers(restricted=False, distinct=True), st.integers(1, 9 * 24))
def test_periods_follow_the_member_order_and_handoffs_follow_the_wall_clock(zone_name, layer, hours):
    zone = ZoneInfo(zone_name)
    layer = replace(layer, end=None)
    shifts = layer_shifts(layer, zone, layer.start, layer.start + timedelta(hours=hours))
    assert [s.user_id for s in shifts] == [layer.members[k % len(layer.members)] for k in range(len(shifts))]
    handoffs = [shift.start for shift in shifts[1:]]
    clock = time.fromisoformat(layer.handoff_time)
    for handoff in handoffs:
        local = handoff.astimezone(zone)
        if layer.rotation in ("daily", "weekly"):
            wanted = datetime.combine(local.date(), clock)
            # The first instant whose wall clock shows the handoff time or later, on its own date.
            assert local.replace(tzinfo=None) >= wanted and local.fold == 0
            assert (handoff - timedelta(seconds=1)).astimezone(zone).replace(tzinfo=None) < wanted
            if layer.rotation == "weekly":
                assert local.weekday() == layer.start.astimezone(zone).weekday()
        elif layer.rotation == "hourly" and zone_name != "Australia/Lord_Howe":
            assert (local.minute, local.second) == (clock.minute, 0)
    step = {"hourly": timedelta(hours=1), "custom": timedelta(hours=layer.rotation_hours or 0)}.get(layer.rotation)
    if step:
        assert all(later - earlier == step for earlier, later in itertools.pairwise(handoffs))
    if layer.rotation == "custom" and handoffs:
        # The first handoff: the first instant at or after the start at which the clock shows HH:MM.
        anchor = layer.start if handoffs[0] - step == layer.start else handoffs[0]
        day = anchor.astimezone(zone).date()
        assert at_local(zone, day, clock) == anchor
        assert at_local(zone, day - timedelta(days=1), clock) < layer.start


# --- layers and overrides -----------------------------------------------------------------------


@st.composite
def schedules(draw: st.DrawFn) -> Schedule:
    count = draw(st.integers(1, 3))
    layer_list = [draw(layers(layer_id=f"l{index}")) for index in range(count)]
    anchor = layer_list[0].start
    overrides = []
    for index in range(draw(st.integers(0, 3))):
        start = anchor + timedelta(minutes=draw(st.integers(-1440, 4 * 1440)))
        end = start + timedelta(minutes=draw(st.integers(1, 2 * 1440)))
        overrides.append(Override(f"o{index}", draw(st.sampled_from("xyz")), start, end))
    return Schedule("sch", "S", draw(st.sampled_from(ZONES)), tuple(layer_list), tuple(overrides))


def brute_force_final(schedule: Schedule, since: datetime, until: datetime) -> list[FinalShift]:
    """Owner of every elementary interval by direct lookup, then merged."""
    per_layer = [(layer, layer_shifts(layer, schedule.time_zone, since, until)) for layer in schedule.layers]
    cuts = {since, until}
    for _, shifts in per_layer:
        cuts.update(moment for shift in shifts for moment in (shift.start, shift.end))
    for override in schedule.overrides:
        cuts.update(moment for moment in (override.start, override.end) if since < moment < until)
    points = sorted(cuts)
    result: list[FinalShift] = []
    for lo, hi in itertools.pairwise(points):
        owner: FinalShift | None = None
        for override in schedule.overrides:
            if override.start <= lo and hi <= override.end:
                owner = FinalShift(override.user_id, lo, hi, "override", override_id=override.override_id)
        if owner is None:
            for layer, shifts in per_layer:
                for shift in shifts:
                    if shift.start <= lo and hi <= shift.end:
                        owner = FinalShift(shift.user_id, lo, hi, "layer", layer_id=layer.layer_id)
        if owner is None:
            continue
        if result and result[-1].origin == owner.origin and result[-1].end == lo:
            last = result[-1]
            result[-1] = FinalShift(last.user_id, last.start, hi, last.source, last.layer_id, last.override_id)
        else:
            result.append(owner)
    return result


@PROPERTY
@given(schedules(), st.data())
def test_final_shifts_match_a_brute_force_layering_and_never_overlap(schedule, data):
    since, until = data.draw(windows(schedule.layers[0].start))
    shifts = final_shifts(schedule, since, until)
    assert_well_formed(shifts, since, until)
    assert shifts == brute_force_final(schedule, since, until)


@PROPERTY
@given(schedules(), st.data())
def test_an_override_replaces_exactly_its_interval(schedule, data):
    since, until = data.draw(windows(schedule.layers[0].start))
    start = since + timedelta(minutes=data.draw(st.integers(-600, 3 * 1440)))
    override = Override("o_new", "override_user", start, start + timedelta(minutes=data.draw(st.integers(1, 1440))))
    without = final_shifts(schedule, since, until)
    with_it = final_shifts(replace(schedule, overrides=(*schedule.overrides, override)), since, until)
    outside = subtract((since, until), [(override.start, override.end)])

    def pieces(shifts: list[FinalShift], where: list[Span]) -> list[tuple[object, datetime, datetime]]:
        return [(s.origin, lo, hi) for s in shifts for lo, hi in clip((s.start, s.end), where)]

    assert pieces(with_it, outside) == pieces(without, outside)
    inside = clip((override.start, override.end), [(since, until)])
    assert pieces(with_it, inside) == [(("override_user", "override", None, "o_new"), lo, hi) for lo, hi in inside]


@PROPERTY
@given(st.sampled_from(ZONES), moments, st.integers(1, 3 * 1440))
def test_to_instant_is_monotone_and_exact_where_the_time_exists(zone_name, moment, minutes):
    zone = ZoneInfo(zone_name)
    wall = moment.replace(tzinfo=None, second=0)
    later = wall + timedelta(minutes=minutes)
    assert to_instant(zone, wall) <= to_instant(zone, later)
    instant = to_instant(zone, wall)
    shown = instant.astimezone(zone).replace(tzinfo=None)
    assert shown >= wall and (
        shown == wall or (instant - timedelta(seconds=1)).astimezone(zone).replace(tzinfo=None) < wall
    )
    assert at_local(zone, wall.date(), wall.time()) == instant
    assert instant.astimezone(zone).fold == 0
