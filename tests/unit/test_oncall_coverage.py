"""Coverage gaps as tables: a schedule's spans with nobody to page (restrictions, DST days, layers
starting and ending, overrides filling a gap, deactivated people), a policy's levels reaching
nobody, and the gap ids that make a notice once per gap."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from chalicelib.escalation.coverage import PolicyGap, level_gaps, policy_gaps
from chalicelib.escalation.steps import EscalationPolicy, Level, Target
from chalicelib.oncall import Layer, Override, Restriction, Schedule
from chalicelib.oncall.coverage import (
    COVERAGE_HORIZON,
    LOOKBACK,
    ONGOING,
    carried_ids,
    check_window,
    clipped,
    coverage_window,
    gap_id,
    people_on_call,
    schedule_gaps,
)
from chalicelib.oncall.coverage_text import render_coverage_notice
from chalicelib.oncall.handoff_text import SHORT_TEXT_MAX, gsm7_length
from chalicelib.oncall.intervals import intersect


def at(day: int, hour: int = 0, minute: int = 0, month: int = 1) -> datetime:
    return datetime(2026, month, day, hour, minute, tzinfo=UTC)


def layer(**changes: Any) -> Layer:
    values: dict[str, Any] = {
        "layer_id": "lyr_1",
        "name": "Primary",
        "members": ("a", "b"),
        "rotation": "daily",
        "handoff_time": "09:00",
        "start": at(5, 9),  # Monday 2026-01-05
    }
    values.update(changes)
    return Layer(**values)


def schedule(*layers: Layer, overrides: tuple[Override, ...] = (), zone: str = "UTC") -> Schedule:
    return Schedule("sch_1", "Primary", zone, layers, overrides)


WEEK = (at(5), at(12))  # Monday 00:00 to the next Monday 00:00, UTC

CASES: list[tuple[str, Schedule, tuple[datetime, datetime], list[tuple[datetime, datetime]]]] = [
    ("one layer all day: no gap after its start", schedule(layer()), (at(6), at(8)), []),
    ("before the layer starts", schedule(layer()), (at(5), at(6)), [(at(5), at(5, 9))]),
    ("after the layer ends", schedule(layer(end=at(7, 9))), (at(6), at(8)), [(at(7, 9), at(8))]),
    (
        "a daily 09-17 restriction leaves every night",
        schedule(layer(start=at(5), restrictions=(Restriction.daily("09:00", "17:00"),))),
        (at(5), at(7)),
        [(at(5), at(5, 9)), (at(5, 17), at(6, 9)), (at(6, 17), at(7))],
    ),
    (
        "a night layer over a day layer covers everything",
        schedule(
            layer(start=at(5), restrictions=(Restriction.daily("09:00", "17:00"),)),
            layer(layer_id="lyr_2", start=at(5), restrictions=(Restriction.daily("17:00", "09:00"),)),
        ),
        (at(5), at(7)),
        [],
    ),
    (
        "a weekly Mon 09:00 to Fri 17:00 restriction leaves the weekend",
        schedule(layer(start=at(5), restrictions=(Restriction.weekly(0, "09:00", 4, "17:00"),))),
        WEEK,
        [(at(5), at(5, 9)), (at(9, 17), at(12))],
    ),
    (
        "an override fills a restriction's gap exactly",
        schedule(
            layer(start=at(5), restrictions=(Restriction.daily("09:00", "17:00"),)),
            overrides=(Override("ovr_1", "c", at(5, 17), at(6, 9)),),
        ),
        (at(5, 9), at(6, 17)),
        [],
    ),
    (
        "an override fills part of a gap",
        schedule(
            layer(start=at(5), restrictions=(Restriction.daily("09:00", "17:00"),)),
            overrides=(Override("ovr_1", "c", at(5, 17), at(5, 20)),),
        ),
        (at(5, 9), at(6, 9)),
        [(at(5, 20), at(6, 9))],
    ),
    ("no layer reaches the window", schedule(layer(start=at(20))), (at(5), at(6)), [(at(5), at(6))]),
    ("an empty window", schedule(layer()), (at(6), at(6)), []),
]


@pytest.mark.parametrize(("name", "subject", "window", "expected"), CASES, ids=[case[0] for case in CASES])
def test_schedule_gaps(name: str, subject: Schedule, window: tuple[datetime, datetime], expected: list[Any]) -> None:
    assert schedule_gaps(subject, window) == expected


def test_a_deactivated_person_on_call_is_a_gap_and_an_override_over_them_is_not() -> None:
    # a: Monday 09:00 to Tuesday 09:00; b: Tuesday 09:00 to Wednesday 09:00.
    subject = schedule(layer(), overrides=(Override("ovr_1", "c", at(6, 12), at(6, 14)),))
    gaps = schedule_gaps(subject, (at(5, 9), at(7, 9)), pageable=lambda user: user != "b")
    assert gaps == [(at(6, 9), at(6, 12)), (at(6, 14), at(7, 9))]
    assert people_on_call(subject, (at(5, 9), at(7, 9))) == {"a", "b", "c"}


@pytest.mark.parametrize(
    ("month", "day", "expected_hours"),
    [
        (3, 8, 15.0),  # 2026-03-08, America/New_York springs forward: the night ending that morning is 15 h
        (11, 1, 17.0),  # 2026-11-01 falls back: 17 h
        (11, 2, 16.0),  # an ordinary night
    ],
)
def test_a_nightly_gap_across_dst_follows_the_wall_clock(month: int, day: int, expected_hours: float) -> None:
    subject = schedule(
        layer(start=at(1, month=1), restrictions=(Restriction.daily("09:00", "17:00"),)), zone="America/New_York"
    )
    morning = datetime(2026, month, day, 18, tzinfo=UTC)  # 13:00 or 14:00 in New York
    [night] = schedule_gaps(subject, (morning - timedelta(days=1), morning))
    assert (night[1] - night[0]).total_seconds() / 3600 == expected_hours
    assert night[1].astimezone(ZoneInfo("America/New_York")).strftime("%d %H:%M") == f"{day:02d} 09:00"


def test_windows_and_clipping() -> None:
    now = at(5, 12)
    assert coverage_window(now) == (now, now + COVERAGE_HORIZON)
    assert check_window(now) == (now - LOOKBACK, now + COVERAGE_HORIZON)
    assert clipped([(at(4), at(5, 13)), (at(6), at(7)), (at(30), at(31))], (now, at(20))) == [
        (now, at(5, 13)),
        (at(6), at(7)),
    ]


def test_a_gap_is_named_by_its_start_unless_it_began_before_the_window() -> None:
    window_start = at(4, 12)
    assert gap_id(at(5, 17), window_start) == "2026-01-05T17:00:00Z"
    assert gap_id(window_start, window_start) == ONGOING
    # Told by its start yesterday; today's window starts after that start: the same gap, ongoing.
    assert carried_ids({"2026-01-05T17:00:00Z", "2026-01-09T17:00:00Z"}, at(6)) == {ONGOING, "2026-01-09T17:00:00Z"}
    assert carried_ids({ONGOING}, at(6)) == {ONGOING}


# --- policies -------------------------------------------------------------------------------------

WINDOW = (at(5), at(6))
NIGHTS = [(at(5), at(5, 9)), (at(5, 17), at(6))]
SCHEDULE_GAPS = {"sch_day": NIGHTS, "sch_all": [], "sch_late": [(at(5, 20), at(6))]}


def pageable(user_id: str) -> bool:
    return user_id in {"ana", "bo"}


LEVEL_CASES: list[tuple[str, tuple[Target, ...], list[tuple[datetime, datetime]]]] = [
    ("a pageable person covers all", (Target("user", "ana"),), []),
    ("a deactivated person reaches nobody", (Target("user", "gone"),), [WINDOW]),
    ("a schedule's gaps are the level's", (Target("schedule", "sch_day"),), NIGHTS),
    ("a schedule that is gone reaches nobody", (Target("schedule", "sch_gone"),), [WINDOW]),
    (
        "two schedules: only where both have a gap",
        (Target("schedule", "sch_day"), Target("schedule", "sch_late")),
        [(at(5, 20), at(6))],
    ),
    ("a schedule and a person: the person covers", (Target("schedule", "sch_day"), Target("user", "bo")), []),
    ("no targets", (), [WINDOW]),
]


@pytest.mark.parametrize(("name", "targets", "expected"), LEVEL_CASES, ids=[case[0] for case in LEVEL_CASES])
def test_level_gaps(name: str, targets: tuple[Target, ...], expected: list[Any]) -> None:
    assert level_gaps(targets, WINDOW, SCHEDULE_GAPS, pageable) == expected


def policy(*levels: tuple[Target, ...]) -> EscalationPolicy:
    return EscalationPolicy("pol_1", "Checkout", tuple(Level(targets, 5) for targets in levels))


def test_a_policy_gap_names_the_levels_that_reach_nobody() -> None:
    found = policy_gaps(
        policy((Target("schedule", "sch_day"),), (Target("schedule", "sch_late"),), (Target("user", "ana"),)),
        WINDOW,
        SCHEDULE_GAPS,
        pageable,
    )
    assert found == [
        PolicyGap(at(5), at(5, 9), (1,)),
        PolicyGap(at(5, 17), at(5, 20), (1,)),
        PolicyGap(at(5, 20), at(6), (1, 2)),
    ]


def test_a_policy_whose_levels_all_reach_someone_has_no_gap() -> None:
    assert (
        policy_gaps(policy((Target("schedule", "sch_all"),), (Target("user", "bo"),)), WINDOW, SCHEDULE_GAPS, pageable)
        == []
    )


def test_neighbouring_spans_with_the_same_levels_merge() -> None:
    gaps = {"x": [(at(5), at(5, 6))], "y": [(at(5, 6), at(5, 12))]}
    found = policy_gaps(policy((Target("schedule", "x"),), (Target("schedule", "y"),)), WINDOW, gaps, pageable)
    assert found == [PolicyGap(at(5), at(5, 6), (1,)), PolicyGap(at(5, 6), at(5, 12), (2,))]
    both = policy_gaps(policy((Target("schedule", "x"), Target("schedule", "x"))), WINDOW, gaps, pageable)
    assert both == [PolicyGap(at(5), at(5, 6), (1,))]


def test_intersect_of_span_lists() -> None:
    assert intersect([(at(5), at(5, 10)), (at(5, 12), at(5, 20))], [(at(5, 8), at(5, 14))]) == [
        (at(5, 8), at(5, 10)),
        (at(5, 12), at(5, 14)),
    ]
    assert intersect([], [(at(5), at(6))]) == []


def test_the_coverage_notice_lists_the_gaps_in_the_readers_zone_and_fits_one_sms() -> None:
    now = at(5, 12)
    gaps = [(at(5, 6), at(5, 16)), *[(at(day, 17), at(day + 1, 9)) for day in range(5, 17)]]
    words = render_coverage_notice(
        kind="policy", name="Checkout " * 20, gaps=gaps, levels=[(1,)] * len(gaps), time_zone="Europe/Berlin", now=now
    )
    assert words.subject.startswith("Nobody to page: escalation policy Checkout")
    assert "13 coverage gaps from Mon 05 Jan 13:00" in words.subject  # a gap on now is shown from now
    lines = words.text.splitlines()
    assert lines[1] == "- Mon 05 Jan 2026 13:00 CET to Mon 05 Jan 2026 17:00 CET (level 1)"
    assert "- and 3 more" in lines
    assert lines[-1] == "Times are in Europe/Berlin."
    assert gsm7_length(words.short_text) <= SHORT_TEXT_MAX and "Europe/Berlin" in words.short_text
    one = render_coverage_notice(kind="schedule", name="Nights", gaps=gaps[1:2], time_zone="UTC", now=now)
    assert one.subject == "Nobody to page: schedule Nights has 1 coverage gap from Mon 05 Jan 17:00"
    assert "(level" not in one.text
