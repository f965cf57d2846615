"""Escalation steps with `now` passed in: start, timers (advance), manual escalate, stop, levels."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from chalicelib.escalation import (
    EscalationPolicy,
    EscalationState,
    Level,
    Step,
    Target,
    advance,
    current_and_next_level,
    delay_seconds,
    escalate_now,
    start,
    stop,
)
from chalicelib.escalation.steps import SQS_MAX_DELAY_SECONDS, timer_is_current
from chalicelib.settings import get_settings

T0 = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
L1 = (Target("schedule", "sch_primary"),)
L2 = (Target("user", "usr_lead"),)
L3 = (Target("user", "usr_vp"), Target("schedule", "sch_exec"))
POLICY = EscalationPolicy("pol", "Payments", (Level(L1, 5), Level(L2, 10), Level(L3, 20)), repeat_count=1)
ONE_LEVEL = EscalationPolicy("pol1", "Solo", (Level(L1, 15),), repeat_count=0)


def minutes(value: float) -> datetime:
    return T0 + timedelta(minutes=value)


def test_start_notifies_level_1_now_and_schedules_the_next_step():
    state, step = start(POLICY, T0, "tok-1", settings=get_settings())
    assert step == Step(level=1, targets=L1, next_at=minutes(5), token="tok-1", repeat=0, sequence=1)
    assert state == EscalationState(POLICY, 0, 0, "tok-1", minutes(5), stopped=False, sequence=1, run="tok-1")
    assert state.level == 1
    assert current_and_next_level(state) == (1, 2)
    assert delay_seconds(state, T0) == 300
    assert timer_is_current(state, "tok-1") and not timer_is_current(state, "other")
    assert step.to_dict() == {
        "level": 1,
        "targets": [{"kind": "schedule", "id": "sch_primary"}],
        "next_at": "2026-11-22T12:05:00Z",
        "token": "tok-1",
        "repeat": 0,
        "sequence": 1,
    }


def test_full_timeline_with_repeats_long_delays_early_and_stale_timers():
    state, _ = start(POLICY, T0, "tok-1", settings=get_settings())
    notified: list[tuple[int, int, datetime]] = []
    tokens = [state.token]

    def fire(now: datetime, token: str) -> Step | None:
        nonlocal state
        before = state
        state, step = advance(state, now, token, settings=get_settings())
        if step is None:
            return None
        assert step.token == state.token and step.next_at == state.next_at and step.sequence == state.sequence
        assert state.token != before.token  # every step gets a new timer token
        tokens.append(state.token)
        notified.append((step.level, step.repeat, now))
        return step

    # 12:05 level 2; a duplicate of the same message right after is stale.
    assert fire(minutes(5), "tok-1") is not None
    assert fire(minutes(5.01), "tok-1") is None
    assert current_and_next_level(state) == (2, 3)
    # Early timer: nothing happens; the caller re-enqueues the remainder.
    assert fire(minutes(14), state.token) is None and state.level == 2
    assert delay_seconds(state, minutes(14)) == 60
    # 12:15 level 3; its 20 minute delay is more than SQS allows, so the timer hops.
    assert fire(minutes(15), state.token) is not None
    assert state.next_at == minutes(35)
    assert delay_seconds(state, minutes(15)) == SQS_MAX_DELAY_SECONDS
    assert fire(minutes(30), state.token) is None
    assert delay_seconds(state, minutes(30)) == 300
    assert current_and_next_level(state) == (3, 1)  # wraps: one repeat left
    # 12:35 wraps to level 1 (repeat 1), then 2 and 3; a late timer counts the delay from when it ran.
    assert fire(minutes(35), state.token) is not None
    assert (state.level, state.repeats_done) == (1, 1)
    assert fire(minutes(41), state.token) is not None
    assert state.next_at == minutes(51)
    assert fire(minutes(51), state.token) is not None
    assert current_and_next_level(state) == (3, None)
    # The last delay passes with no next level: stopped, nobody notified.
    final_token = state.token
    assert fire(minutes(71), final_token) is None
    assert state.stopped and state.next_at is None
    assert delay_seconds(state, minutes(71)) is None
    assert fire(minutes(200), final_token) is None
    assert notified == [
        (2, 0, minutes(5)),
        (3, 0, minutes(15)),
        (1, 1, minutes(35)),
        (2, 1, minutes(41)),
        (3, 1, minutes(51)),
    ]
    assert len(set(tokens)) == len(tokens) == 6
    assert state.sequence == 6
    # Every old token is stale.
    for token in tokens:
        assert advance(state, minutes(500), token, settings=get_settings()) == (state, None)


def test_advance_is_deterministic():
    state, _ = start(POLICY, T0, "tok-1", settings=get_settings())
    assert advance(state, minutes(5), "tok-1", settings=get_settings()) == advance(
        state, minutes(5), "tok-1", settings=get_settings()
    )


def test_stop_makes_every_timer_a_no_op():
    state, _ = start(POLICY, T0, "tok-1", settings=get_settings())
    stopped = stop(state)
    assert stopped.stopped and stopped.next_at is None and stopped.level == 1
    assert advance(stopped, minutes(5), "tok-1", settings=get_settings()) == (stopped, None)
    assert delay_seconds(stopped, T0) is None
    assert not timer_is_current(stopped, "tok-1")
    assert stop(stopped) == stopped


def test_manual_escalate_moves_now_with_a_new_token():
    state, _ = start(POLICY, T0, "tok-1", settings=get_settings())
    state, step = escalate_now(state, minutes(1), "tok-manual", settings=get_settings())
    assert step == Step(level=2, targets=L2, next_at=minutes(11), token="tok-manual", repeat=0, sequence=2)
    assert state.token == "tok-manual" and state.next_at == minutes(11)
    assert current_and_next_level(state) == (2, 3)
    # The level 1 timer is now stale.
    assert advance(state, minutes(5), "tok-1", settings=get_settings()) == (state, None)
    # The new timer works.
    _, step = advance(state, minutes(11), "tok-manual", settings=get_settings())
    assert step is not None and step.level == 3


def test_manual_escalate_wraps_while_repeats_remain():
    state = EscalationState(POLICY, 2, 0, "t", minutes(20), sequence=3)
    state, step = escalate_now(state, T0, "t2", settings=get_settings())
    assert step is not None and (step.level, step.repeat) == (1, 1)
    assert current_and_next_level(state) == (1, 2)


def test_manual_escalate_without_a_next_level_is_escalated_false():
    state = EscalationState(POLICY, 2, 1, "t", minutes(20), sequence=6)
    assert escalate_now(state, T0, "t2", settings=get_settings()) == (state, None)
    assert current_and_next_level(state) == (3, None)
    solo, _ = start(ONE_LEVEL, T0, "s", settings=get_settings())
    assert escalate_now(solo, T0, "s2", settings=get_settings()) == (solo, None)
    assert current_and_next_level(solo) == (1, None)


def test_manual_escalate_of_an_acknowledged_incident_notifies_but_sets_no_timer():
    state, _ = start(POLICY, T0, "tok-1", settings=get_settings())
    acknowledged = stop(state)
    moved, step = escalate_now(acknowledged, minutes(2), "tok-2", settings=get_settings())
    assert step is not None and step.level == 2 and step.next_at is None
    assert moved.stopped and moved.next_at is None and moved.token == "tok-2"
    assert advance(moved, minutes(60), "tok-2", settings=get_settings()) == (moved, None)
    assert delay_seconds(moved, minutes(2)) is None


def test_one_level_policy_stops_after_its_delay():
    state, step = start(ONE_LEVEL, T0, "s", settings=get_settings())
    assert step.next_at == minutes(15) and current_and_next_level(state) == (1, None)
    assert advance(state, minutes(14), "s", settings=get_settings()) == (state, None)
    stopped, step2 = advance(state, minutes(15), "s", settings=get_settings())
    assert step2 is None and stopped.stopped and stopped.next_at is None and stopped.token == "s"


def test_a_state_without_next_at_ignores_timers():
    state = EscalationState(POLICY, 0, 0, "t", None)
    assert advance(state, minutes(100), "t", settings=get_settings()) == (state, None)
    assert delay_seconds(state, T0) is None and not timer_is_current(state, "t")


def test_delay_seconds_rounds_up_caps_and_never_goes_negative():
    state, _ = start(POLICY, T0, "t", settings=get_settings())
    assert delay_seconds(state, T0 + timedelta(seconds=299.2)) == 1
    assert delay_seconds(state, minutes(5)) == 0
    assert delay_seconds(state, minutes(9)) == 0
    assert delay_seconds(state, T0, cap=60) == 60
    long_wait = replace(state, next_at=minutes(1440))
    assert delay_seconds(long_wait, T0) == 900


# --- properties ---------------------------------------------------------------------------------

policies = st.builds(
    lambda delays, repeat: EscalationPolicy(
        "p", "P", tuple(Level((Target("user", f"u{i}"),), delay) for i, delay in enumerate(delays)), repeat
    ),
    st.lists(st.integers(1, 1440), min_size=1, max_size=5),
    st.integers(0, 9),
)


@settings(max_examples=200, deadline=None)
@given(policies, st.lists(st.integers(0, 3000), max_size=40))
def test_timers_notify_every_level_in_order_repeat_plus_one_times_then_stop(policy, lateness_seconds):
    state, first = start(policy, T0, "tok", settings=get_settings())
    levels = [first.level]
    now = T0
    stale = ["tok"]
    lateness = iter(lateness_seconds)
    for _ in range(len(policy.levels) * (policy.repeat_count + 1) + 1):
        assert state.next_at is not None
        # An early timer (1 s before) and stale ones do nothing.
        early = state.next_at - timedelta(seconds=1)
        assert advance(state, early, state.token, settings=get_settings()) == (state, None)
        assert 1 <= (delay_seconds(state, early) or 0) <= SQS_MAX_DELAY_SECONDS
        for token in stale[:-1]:
            assert advance(state, state.next_at, token, settings=get_settings()) == (state, None)
        now = state.next_at + timedelta(seconds=next(lateness, 0))
        state, step = advance(state, now, state.token, settings=get_settings())
        if step is None:
            break
        assert step.next_at == now + timedelta(minutes=policy.levels[step.level - 1].delay_minutes)
        stale.append(state.token)
        levels.append(step.level)
    expected = [index + 1 for _ in range(policy.repeat_count + 1) for index in range(len(policy.levels))]
    assert levels == expected
    assert state.stopped and state.next_at is None
    assert current_and_next_level(state) == (len(policy.levels), None)


@settings(max_examples=200, deadline=None)
@given(policies, st.lists(st.booleans(), min_size=1, max_size=60))
def test_manual_and_timer_steps_never_exceed_the_policy(policy, choices):
    state, _ = start(policy, T0, "tok", settings=get_settings())
    notified = 1
    now = T0
    for index, manual in enumerate(choices):
        now += timedelta(minutes=1)
        if manual:
            state, step = escalate_now(state, now, f"m{index}", settings=get_settings())
        else:
            if state.next_at is not None:
                now = max(now, state.next_at)
            state, step = advance(state, now, state.token, settings=get_settings())
        if step is not None:
            notified += 1
            assert state.level == step.level
        current, following = current_and_next_level(state)
        assert current == state.level_index + 1
        assert (following is None) == (
            state.level_index == len(policy.levels) - 1 and state.repeats_done == policy.repeat_count
        )
    assert notified <= len(policy.levels) * (policy.repeat_count + 1)
    assert state.sequence == notified


def test_the_run_token_is_the_first_levels_and_survives_every_move():
    state, _ = start(POLICY, T0, "tok-1", settings=get_settings())
    moved, step = advance(state, minutes(5), "tok-1", settings=get_settings())
    assert step is not None and moved.token != "tok-1"
    assert moved.run_token == "tok-1"
    escalated, _ = escalate_now(moved, minutes(6), "tok-manual", settings=get_settings())
    assert escalated.run_token == "tok-1"
    assert EscalationState.from_dict(escalated.to_dict()).run_token == "tok-1"
    stored_before_runs = {key: value for key, value in state.to_dict().items() if key != "run"}
    assert EscalationState.from_dict(stored_before_runs).run_token == "tok-1"  # its token stands in
