"""Handoff boundaries and who is told what at each: tables over layers, overrides, restrictions,
back-to-back shifts of one person, layer changes and DST. Pure."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from chalicelib.oncall import Layer, Override, Restriction, Schedule
from chalicelib.oncall.handoffs import HORIZON, Handoff, NoticePlan, changes_at, next_boundary, next_notice

MONDAY = datetime(2026, 11, 16, 8, 0, tzinfo=UTC)  # 09:00 in Europe/Berlin
DAY = timedelta(days=1)
WEEK = timedelta(days=7)
HOUR = timedelta(hours=1)


def utc(month: int, day: int, hour: int, minute: int = 0) -> datetime:
    return datetime(2026, month, day, hour, minute, tzinfo=UTC)


def layer(members: tuple[str, ...], rotation: str = "weekly", **changes: Any) -> Layer:
    values: dict[str, Any] = {
        "layer_id": "lyr_1",
        "name": "Weekly",
        "members": members,
        "rotation": rotation,
        "handoff_time": "09:00",
        "start": MONDAY,
    }
    values.update(changes)
    return Layer(**values)


def schedule(*layers: Layer, overrides: tuple[Override, ...] = (), zone: str = "Europe/Berlin") -> Schedule:
    return Schedule("sch_1", "Primary", zone, layers, overrides)


WEEKLY = schedule(layer(("alice", "bob")))
BUSINESS_HOURS = schedule(layer(("carol",), "daily", restrictions=(Restriction.daily("09:00", "17:00"),)))
SOLO = schedule(layer(("alice",)))
# One person on two layers: the later layer takes over on Wednesday 09:00 (same person).
LAYER_CHANGE = schedule(
    layer(("alice",), layer_id="lyr_a"),
    layer(("alice", "bob"), layer_id="lyr_b", start=MONDAY + 2 * DAY),
)
OVERRIDE = schedule(
    layer(("alice", "bob")),
    overrides=(Override("ovr_1", "dave", utc(11, 18, 12), utc(11, 18, 14)),),
)
# An override of the person already on call: no change at its edges.
SAME_PERSON_OVERRIDE = schedule(
    layer(("alice", "bob")),
    overrides=(Override("ovr_1", "alice", utc(11, 18, 12), utc(11, 18, 14)),),
)
# Back to back: alice's override ends exactly when her layer shift begins.
BACK_TO_BACK = schedule(
    layer(("alice", "bob"), start=MONDAY + WEEK),
    overrides=(Override("ovr_1", "alice", MONDAY + WEEK - 2 * HOUR, MONDAY + WEEK),),
)
ENDED = schedule(layer(("alice", "bob"), end=MONDAY + 10 * DAY))
NEW_YORK_DAILY = schedule(
    layer(("a", "b"), "daily", start=utc(10, 26, 13)),  # 09:00 EDT
    zone="America/New_York",
)
# Berlin springs forward on Sunday 29 Mar: Monday 09:00 is 08:00Z before and 07:00Z after.
BERLIN_SPRING = schedule(layer(("alice", "bob"), start=utc(3, 16, 8)))


@pytest.mark.parametrize(
    ("plan", "after", "expected"),
    [
        pytest.param(WEEKLY, MONDAY - DAY, MONDAY, id="the-layer-start"),
        pytest.param(WEEKLY, MONDAY, MONDAY + WEEK, id="strictly-after"),
        pytest.param(WEEKLY, MONDAY + 3 * DAY, MONDAY + WEEK, id="weekly-next-monday"),
        pytest.param(BUSINESS_HOURS, utc(11, 17, 10), utc(11, 17, 16), id="restriction-end-17-00"),
        pytest.param(BUSINESS_HOURS, utc(11, 17, 16), utc(11, 18, 8), id="restriction-start-09-00"),
        pytest.param(SOLO, MONDAY, None, id="one-member-forever-none"),
        pytest.param(LAYER_CHANGE, MONDAY, MONDAY + 9 * DAY, id="layer-change-same-person-skipped"),
        pytest.param(OVERRIDE, MONDAY + DAY, utc(11, 18, 12), id="override-start"),
        pytest.param(OVERRIDE, utc(11, 18, 12), utc(11, 18, 14), id="override-end"),
        pytest.param(SAME_PERSON_OVERRIDE, MONDAY, MONDAY + WEEK, id="override-of-the-same-person"),
        pytest.param(BACK_TO_BACK, MONDAY, MONDAY + WEEK - 2 * HOUR, id="back-to-back-start"),
        pytest.param(BACK_TO_BACK, MONDAY + WEEK - 2 * HOUR, MONDAY + 2 * WEEK, id="back-to-back-no-seam"),
        pytest.param(ENDED, MONDAY + WEEK, MONDAY + 10 * DAY, id="layer-end"),
        pytest.param(ENDED, MONDAY + 10 * DAY, None, id="after-the-end-none"),
        # New York falls back on 1 Nov: 09:00 EDT is 13:00Z, 09:00 EST is 14:00Z.
        pytest.param(NEW_YORK_DAILY, utc(10, 31, 14), utc(11, 1, 14), id="dst-fall-back-09-00-local"),
        pytest.param(NEW_YORK_DAILY, utc(10, 30, 14), utc(10, 31, 13), id="dst-before-09-00-edt"),
    ],
)
def test_next_boundary(plan: Schedule, after: datetime, expected: datetime | None) -> None:
    assert next_boundary(plan, after) == expected


def test_a_boundary_beyond_the_first_window_is_found_and_the_horizon_is_inclusive() -> None:
    far = schedule(layer(("alice", "bob"), start=MONDAY + 20 * DAY))
    assert next_boundary(far, MONDAY) == MONDAY + 20 * DAY
    assert next_boundary(far, MONDAY, horizon=20 * DAY) == MONDAY + 20 * DAY
    assert next_boundary(far, MONDAY, horizon=20 * DAY - timedelta(microseconds=1)) is None


@pytest.mark.parametrize(
    ("plan", "at", "expected"),
    [
        pytest.param(
            WEEKLY,
            MONDAY + WEEK,
            [
                Handoff("alice", "off_call", MONDAY + WEEK),
                Handoff("bob", "on_call", MONDAY + WEEK, MONDAY + 2 * WEEK),
            ],
            id="weekly-handoff",
        ),
        pytest.param(
            WEEKLY, MONDAY, [Handoff("alice", "on_call", MONDAY, MONDAY + WEEK)], id="first-shift-nobody-before"
        ),
        pytest.param(WEEKLY, MONDAY + DAY, [], id="no-boundary-nothing"),
        pytest.param(BUSINESS_HOURS, utc(11, 17, 16), [Handoff("carol", "off_call", utc(11, 17, 16))], id="into-a-gap"),
        pytest.param(
            BUSINESS_HOURS,
            utc(11, 18, 8),
            [Handoff("carol", "on_call", utc(11, 18, 8), utc(11, 18, 16))],
            id="out-of-a-gap-until-17-00",
        ),
        pytest.param(
            OVERRIDE,
            utc(11, 18, 12),
            [
                Handoff("alice", "off_call", utc(11, 18, 12)),
                Handoff("dave", "on_call", utc(11, 18, 12), utc(11, 18, 14)),
            ],
            id="override-takes-over",
        ),
        pytest.param(
            OVERRIDE,
            utc(11, 18, 14),
            [Handoff("dave", "off_call", utc(11, 18, 14)), Handoff("alice", "on_call", utc(11, 18, 14), MONDAY + WEEK)],
            id="override-gives-back",
        ),
        pytest.param(SAME_PERSON_OVERRIDE, utc(11, 18, 12), [], id="override-of-the-person-on-call"),
        pytest.param(LAYER_CHANGE, MONDAY + 2 * DAY, [], id="layer-change-same-person"),
        pytest.param(
            LAYER_CHANGE,
            MONDAY,
            [Handoff("alice", "on_call", MONDAY, MONDAY + 9 * DAY)],
            id="stretch-merges-across-layers",
        ),
        pytest.param(
            BACK_TO_BACK,
            MONDAY + WEEK - 2 * HOUR,
            [Handoff("alice", "on_call", MONDAY + WEEK - 2 * HOUR, MONDAY + 2 * WEEK)],
            id="back-to-back-one-stretch",
        ),
        pytest.param(BACK_TO_BACK, MONDAY + WEEK, [], id="back-to-back-seam-nothing"),
        pytest.param(SOLO, MONDAY, [Handoff("alice", "on_call", MONDAY, None)], id="no-end-within-the-horizon"),
        pytest.param(
            NEW_YORK_DAILY,
            utc(11, 1, 14),
            # Daily a, b, a, ... from 26 Oct: b's 31 Oct period lasts 25 hours (09:00 EDT to 09:00 EST).
            [Handoff("b", "off_call", utc(11, 1, 14)), Handoff("a", "on_call", utc(11, 1, 14), utc(11, 2, 14))],
            id="dst-25-hour-day",
        ),
        pytest.param(
            BERLIN_SPRING,
            utc(3, 23, 8),
            [Handoff("alice", "off_call", utc(3, 23, 8)), Handoff("bob", "on_call", utc(3, 23, 8), utc(3, 30, 7))],
            id="dst-spring-forward-week-of-167-hours",
        ),
    ],
)
def test_changes_at(plan: Schedule, at: datetime, expected: list[Handoff]) -> None:
    assert changes_at(plan, at) == expected


def test_every_boundary_has_changes_and_every_change_is_at_a_boundary() -> None:
    after = MONDAY - DAY
    for plan in (WEEKLY, BUSINESS_HOURS, LAYER_CHANGE, OVERRIDE, BACK_TO_BACK, NEW_YORK_DAILY, BERLIN_SPRING):
        moment = after
        for _ in range(12):
            boundary = next_boundary(plan, moment)
            if boundary is None:
                break
            assert changes_at(plan, boundary), (plan.layers, boundary)
            # Just before and just after a boundary nothing changes.
            assert changes_at(plan, boundary + timedelta(minutes=1)) == []
            moment = boundary


def test_next_notice_is_the_boundary_less_the_lead_or_a_second_look() -> None:
    assert next_notice(WEEKLY, MONDAY, 30) == NoticePlan(MONDAY + WEEK, MONDAY + WEEK - timedelta(minutes=30))
    assert next_notice(WEEKLY, MONDAY, 0) == NoticePlan(MONDAY + WEEK, MONDAY + WEEK)
    # Nothing within the horizon: look again the lead before its end, so a boundary just past
    # the horizon is still told the lead ahead.
    assert next_notice(SOLO, MONDAY, 60) == NoticePlan(None, MONDAY + HORIZON - HOUR)
