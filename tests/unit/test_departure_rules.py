"""Leaving schedules and policies on deactivation (chalicelib/paging/departure_rules.py): the person
leaves layers and policy levels, an emptied layer or level goes, their future overrides go, and a
schedule or policy they alone fill keeps them (stuck) rather than becoming empty."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from chalicelib.escalation.steps import EscalationPolicy, Level, Target
from chalicelib.oncall.schedule import Layer, Override, Schedule
from chalicelib.paging.departure_rules import policy_departure, schedule_departure

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def layer(name: str, *members: str) -> Layer:
    return Layer(
        layer_id=f"lay_{name}",
        name=name,
        members=members,
        rotation="weekly",
        handoff_time="09:00",
        start=NOW - timedelta(days=30),
    )


def override(override_id: str, user_id: str, start_hours: int, end_hours: int) -> Override:
    return Override(override_id, user_id, NOW + timedelta(hours=start_hours), NOW + timedelta(hours=end_hours))


def schedule(*layers: Layer, overrides: tuple[Override, ...] = ()) -> Schedule:
    return Schedule(schedule_id="sch_1", name="Primary", time_zone="UTC", layers=layers, overrides=overrides)


def test_a_schedule_that_does_not_name_them_is_untouched() -> None:
    past = override("ovr_past", "ana", -10, -5)  # ended: history, not a reason to change anything
    assert schedule_departure(schedule(layer("Day", "bo")), "ana", NOW) is None
    assert schedule_departure(schedule(layer("Day", "bo"), overrides=(past,)), "ana", NOW) is None


def test_they_leave_a_shared_layer_an_emptied_one_goes_and_their_future_overrides_go() -> None:
    past = override("ovr_past", "ana", -10, -5)
    ongoing = override("ovr_now", "ana", -1, 2)
    later = override("ovr_later", "ana", 24, 30)
    theirs_not = override("ovr_bo", "bo", 24, 30)
    before = schedule(
        layer("Day", "bo", "ana", "cy"), layer("Night", "ana"), overrides=(past, ongoing, later, theirs_not)
    )
    departure = schedule_departure(before, "ana", NOW)
    assert departure is not None and not departure.stuck and departure.changes_layers
    assert departure.layers_left == ("Day",) and departure.layers_removed == ("Night",)
    assert [one.members for one in departure.schedule.layers] == [("bo", "cy")]  # the others keep their order
    assert departure.overrides_removed == (ongoing, later)
    assert departure.schedule.overrides == (past, theirs_not)


def test_a_schedule_they_alone_fill_keeps_them() -> None:
    before = schedule(layer("Day", "ana"), layer("Night", "ana"), overrides=(override("ovr", "ana", 1, 2),))
    departure = schedule_departure(before, "ana", NOW)
    assert departure is not None and departure.stuck and not departure.changes_layers
    assert departure.schedule.layers == before.layers  # never empty: the gap is flagged instead
    assert departure.overrides_removed and departure.schedule.overrides == ()


def test_they_leave_policy_levels_and_an_emptied_level_goes() -> None:
    ana, bo, team = Target("user", "ana"), Target("user", "bo"), Target("schedule", "ana")  # a schedule id, not her
    policy = EscalationPolicy(
        policy_id="pol_1",
        name="Checkout",
        levels=(Level((ana, bo), 0), Level((ana,), 10), Level((team,), 20)),
    )
    departure = policy_departure(policy, "ana")
    assert departure is not None and not departure.stuck
    assert departure.levels_left == (1,) and departure.levels_removed == (2,)
    assert [level.targets for level in departure.policy.levels] == [(bo,), (team,)]
    assert policy_departure(policy, "cy") is None


def test_a_policy_they_alone_fill_keeps_them() -> None:
    policy = EscalationPolicy(policy_id="pol_1", name="Solo", levels=(Level((Target("user", "ana"),), 0),))
    departure = policy_departure(policy, "ana")
    assert departure is not None and departure.stuck and departure.levels_removed == (1,)
    assert departure.policy.levels == policy.levels
