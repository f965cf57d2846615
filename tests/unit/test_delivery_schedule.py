"""The delivery kernel's pure parts, as tables: retry schedules as data (Tocsin's webhook schedule
and another), the 900 s SQS cap, what an attempt's verdict leads to, what a message finds on its
delivery record, and the once-per-message retry rule."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from chalicelib.delivery import schedule
from chalicelib.delivery.schedule import Next, RetrySchedule, after_attempt, after_once, standing
from chalicelib.delivery.webhook import RETRIES
from chalicelib.settings import get_settings

T0 = datetime(2026, 11, 22, 12, 0, 0, tzinfo=UTC)


def test_delays_before_each_attempt_are_the_specs():
    assert [RETRIES.delay_before(n) for n in range(1, 6)] == [0, 60, 300, 1800, 7200]
    assert RETRIES.max_attempts == 5
    for invalid in (0, 6, -1):
        with pytest.raises(ValueError):
            RETRIES.delay_before(invalid)


def test_attempt_times_when_every_attempt_fails():
    attempted_at = [T0]
    while (due := RETRIES.next_attempt_at(len(attempted_at), attempted_at[-1], settings=get_settings())) is not None:
        attempted_at.append(due)
    offsets = [int((moment - T0).total_seconds()) for moment in attempted_at]
    # +0, then 1 min, 5 min, 30 min and 2 h after the attempt before.
    assert offsets == [0, 60, 360, 2160, 9360]
    assert RETRIES.next_attempt_at(5, T0, settings=get_settings()) is None


@pytest.mark.parametrize(
    ("delays", "max_attempts", "offsets"),
    [
        ((), 1, [0]),  # one attempt, no retry
        ((10,), 2, [0, 10]),
        ((5, 5, 5), 4, [0, 5, 10, 15]),
    ],
)
def test_a_schedule_is_data(delays, max_attempts, offsets):
    given = RetrySchedule(delays_seconds=delays)
    assert given.max_attempts == max_attempts
    attempted_at = [T0]
    while (due := given.next_attempt_at(len(attempted_at), attempted_at[-1], settings=get_settings())) is not None:
        attempted_at.append(due)
    assert [int((moment - T0).total_seconds()) for moment in attempted_at] == offsets


@pytest.mark.parametrize(
    ("wait_seconds", "expected_messages"),
    [
        (60, [60]),
        (300, [300]),
        (900, [900]),
        (1800, [900, 900]),  # 30 min: a 900 s delay, then the remainder
        (7200, [900] * 8),  # 2 h: eight hops
        (1000.5, [900, 101]),  # fractions round up: a message never arrives before it is due
    ],
)
def test_waits_over_900_seconds_are_split_into_re_enqueued_hops(wait_seconds, expected_messages):
    due = T0 + timedelta(seconds=wait_seconds)
    now, delays = T0, []
    while not schedule.is_due(due, now):
        delay = schedule.sqs_delay(due, now)
        delays.append(delay)
        now += timedelta(seconds=delay)
    assert delays == expected_messages
    assert now >= due


def test_sqs_delay_is_zero_when_due_or_late():
    assert schedule.sqs_delay(T0, T0) == 0
    assert schedule.sqs_delay(T0 - timedelta(minutes=5), T0) == 0
    assert schedule.is_due(None, T0)


@pytest.mark.parametrize(
    ("attempt", "verdict", "expected"),
    [
        (1, "delivered", Next("succeeded")),
        (5, "delivered", Next("succeeded")),
        (1, "retryable", Next("retrying", T0 + timedelta(seconds=60))),
        (1, "final", Next("retrying", T0 + timedelta(seconds=60))),  # every failure counts (spec)
        (2, "retryable", Next("retrying", T0 + timedelta(seconds=300))),
        (4, "final", Next("retrying", T0 + timedelta(seconds=7200))),
        (5, "retryable", Next("failed")),
        (5, "final", Next("failed")),
    ],
)
def test_after_an_attempt(attempt, verdict, expected):
    step = after_attempt(RETRIES, attempt, verdict, T0, settings=get_settings())
    assert step == expected
    assert step.gave_up == (expected.status == "failed")


def test_every_failure_counts_towards_the_five_attempts():
    statuses = [after_attempt(RETRIES, n, "final", T0, settings=get_settings()).status for n in range(1, 6)]
    assert statuses == ["retrying"] * 4 + ["failed"]
    assert after_attempt(RETRIES, 5, "retryable", T0, settings=get_settings()).status == "failed"
    assert after_attempt(RETRIES, 5, "delivered", T0, settings=get_settings()).status == "succeeded"


LATER = T0 + timedelta(minutes=1)


@pytest.mark.parametrize(
    ("attempt", "made", "status", "next_at", "claimed_until", "expected"),
    [
        (1, 0, "pending", T0, None, "claimable"),
        (1, 0, "pending", None, None, "claimable"),
        (2, 1, "retrying", T0, T0, "claimable"),  # a claim that ran out (a worker died)
        (2, 1, "retrying", T0, T0 - timedelta(seconds=1), "claimable"),
        (1, 0, "pending", T0, LATER, "claimed"),  # another worker holds it
        (2, 1, "retrying", LATER, None, "not_due"),  # early: re-enqueued for the rest
        (1, 1, "retrying", LATER, None, "done"),  # recorded already: a redelivery
        (1, 1, "succeeded", None, None, "done"),
        (2, 1, "succeeded", None, None, "done"),  # finished before this attempt was due
        (2, 1, "failed", None, None, "done"),  # stopped (recipient gone)
        (3, 1, "retrying", T0, None, "stale"),  # out of order
        (5, 2, "retrying", LATER, LATER, "stale"),
    ],
)
def test_what_a_message_finds(attempt, made, status, next_at, claimed_until, expected):
    found = standing(
        attempt=attempt, made=made, status=status, next_attempt_at=next_at, claimed_until=claimed_until, now=T0
    )
    assert found == expected


@pytest.mark.parametrize(
    ("verdict", "final_attempt", "expected"),
    [
        ("delivered", False, "done"),
        ("delivered", True, "done"),
        ("retryable", False, "retry"),  # released: the redelivered message tries again
        ("retryable", True, "give_up"),  # the final receive: recorded as failed
        ("final", False, "give_up"),  # asking again cannot help
        ("final", True, "give_up"),
    ],
)
def test_once_per_message(verdict, final_attempt, expected):
    assert after_once(verdict, final_attempt=final_attempt) == expected
