"""The retry schedule and attempt outcomes, pure: spec timings, the 900 s SQS cap, what counts as failed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from chalicelib.outbound import retry_schedule

T0 = datetime(2026, 11, 22, 12, 0, 0, tzinfo=UTC)


def test_delays_before_each_attempt_are_the_specs():
    assert [retry_schedule.delay_before(n) for n in range(1, 6)] == [0, 60, 300, 1800, 7200]
    for invalid in (0, 6, -1):
        with pytest.raises(ValueError):
            retry_schedule.delay_before(invalid)


def test_attempt_times_when_every_attempt_fails():
    attempted_at = [T0]
    while (due := retry_schedule.next_attempt_at(len(attempted_at), attempted_at[-1])) is not None:
        attempted_at.append(due)
    offsets = [int((moment - T0).total_seconds()) for moment in attempted_at]
    # +0, then 1 min, 5 min, 30 min and 2 h after the attempt before.
    assert offsets == [0, 60, 360, 2160, 9360]
    assert retry_schedule.next_attempt_at(5, T0) is None


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
    while not retry_schedule.is_due(due, now):
        delay = retry_schedule.sqs_delay(due, now)
        delays.append(delay)
        now += timedelta(seconds=delay)
    assert delays == expected_messages
    assert now >= due


def test_sqs_delay_is_zero_when_due_or_late():
    assert retry_schedule.sqs_delay(T0, T0) == 0
    assert retry_schedule.sqs_delay(T0 - timedelta(minutes=5), T0) == 0
    assert retry_schedule.is_due(None, T0)


@pytest.mark.parametrize("status", [200, 201, 202, 204, 299])
def test_any_2xx_succeeds(status):
    result = retry_schedule.from_response(status)
    assert result.succeeded and result.response_code == status and result.error is None


@pytest.mark.parametrize("status", [408, 429, 500, 502, 503, 504])
def test_retryable_failures(status):
    result = retry_schedule.from_response(status, "Oops")
    assert not result.succeeded and result.retryable
    assert result.response_code == status
    assert result.error == f"HTTP {status} Oops"


@pytest.mark.parametrize("status", [400, 401, 403, 404, 410, 422])
def test_other_4xx_are_failures_too(status):
    result = retry_schedule.from_response(status)
    assert not result.succeeded and not result.retryable
    assert result.error is not None and result.error.startswith(f"HTTP {status}")
    assert "rejected" in result.error


def test_a_redirect_is_a_failure_and_is_not_followed():
    result = retry_schedule.from_response(302, "Found")
    assert not result.succeeded
    assert result.error == "HTTP 302 Found (redirects are not followed)"


def test_no_answer_at_all():
    timeout = retry_schedule.from_error("timeout", "")
    assert (timeout.succeeded, timeout.response_code, timeout.retryable) == (False, None, True)
    assert timeout.error == "timed out after 10 s"
    refused = retry_schedule.from_error("connection", "ConnectionRefusedError: [Errno 111]")
    assert refused.retryable and refused.error == "connection failed: ConnectionRefusedError: [Errno 111]"
    target = retry_schedule.from_error("target", "url: the host resolves to 10.0.0.5")
    assert not target.retryable and target.error == "target refused: url: the host resolves to 10.0.0.5"


def test_every_failure_counts_towards_the_five_attempts():
    failure = retry_schedule.from_response(400)
    assert [retry_schedule.status_after(failure, n) for n in range(1, 6)] == ["retrying"] * 4 + ["failed"]
    assert retry_schedule.status_after(retry_schedule.from_error("timeout", ""), 5) == "failed"
    assert retry_schedule.status_after(retry_schedule.from_response(204), 5) == "succeeded"
    assert retry_schedule.REQUEST_TIMEOUT_SECONDS == 10
