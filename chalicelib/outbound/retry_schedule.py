"""When webhook delivery attempts happen, and what an attempt's answer means. Pure (the retry
delays follow the local time scale, clock.scaled, which is 1 outside the local and test stages).

Spec (Events, delivery retry behavior): attempt 1 immediately, then 1 minute, 5 minutes,
30 minutes and 2 hours after the previous attempt; after 5 failed attempts the subscription is
disabled. SQS delays a message by at most 900 s, so a longer wait is sent as a 900 s delay and
the message, arriving early, re-enqueues itself for the remainder.

Outcome of one attempt: any 2xx ends the delivery. Everything else is a failed attempt and
counts towards the five: 408, 429 and 5xx, a timeout or a connection error (the receiver may
recover), and also any other 4xx or a 3xx (redirects are never followed: the target was
checked, its redirect was not).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from chalicelib import clock

MAX_ATTEMPTS = 5
# Wait before attempt n+1 after attempt n failed (index n-1).
RETRY_DELAYS_SECONDS: tuple[int, ...] = (60, 300, 1800, 7200)
MAX_SQS_DELAY_SECONDS = 900
REQUEST_TIMEOUT_SECONDS = 10.0
_RETRYABLE_CLIENT_ERRORS = frozenset({408, 429})


def delay_before(attempt: int) -> int:
    """Seconds between attempt `attempt - 1` and `attempt` (attempt 1 is immediate)."""
    if not 1 <= attempt <= MAX_ATTEMPTS:
        raise ValueError(f"attempt must be 1 to {MAX_ATTEMPTS}")
    return 0 if attempt == 1 else RETRY_DELAYS_SECONDS[attempt - 2]


def next_attempt_at(failed_attempt: int, attempted_at: datetime) -> datetime | None:
    """When the attempt after a failed one is due; None after the last attempt."""
    if failed_attempt >= MAX_ATTEMPTS:
        return None
    return attempted_at + clock.scaled(timedelta(seconds=delay_before(failed_attempt + 1)))


def sqs_delay(due_at: datetime, now: datetime) -> int:
    """The DelaySeconds for a message due at `due_at`: whole seconds, rounded up, at most 900."""
    remaining = (due_at - now).total_seconds()
    return max(0, min(MAX_SQS_DELAY_SECONDS, int(remaining + 0.999)))


def is_due(due_at: datetime | None, now: datetime) -> bool:
    return due_at is None or now >= due_at


@dataclass(frozen=True)
class AttemptResult:
    """What one POST came to: a status code, or an error before any answer (timeout, refused)."""

    succeeded: bool
    response_code: int | None
    error: str | None  # recorded as the delivery's last_error; None on success
    retryable: bool  # the receiver may recover by itself (informational: every failure is retried)


def from_response(status: int, reason: str = "") -> AttemptResult:
    if 200 <= status < 300:
        return AttemptResult(True, status, None, False)
    detail = f"HTTP {status}{' ' + reason if reason else ''}"
    if status in _RETRYABLE_CLIENT_ERRORS or status >= 500:
        return AttemptResult(False, status, detail, True)
    if 300 <= status < 400:
        return AttemptResult(False, status, f"{detail} (redirects are not followed)", False)
    return AttemptResult(False, status, f"{detail} (the receiver rejected the event)", False)


def from_error(kind: str, detail: str) -> AttemptResult:
    """No answer: `kind` is timeout, connection or target (the URL failed its check)."""
    if kind == "timeout":
        return AttemptResult(False, None, f"timed out after {REQUEST_TIMEOUT_SECONDS:g} s", True)
    if kind == "target":
        return AttemptResult(False, None, f"target refused: {detail}", False)
    return AttemptResult(False, None, f"connection failed: {detail}", True)


def status_after(result: AttemptResult, attempt: int) -> str:
    """The delivery's status after attempt `attempt` came to `result`."""
    if result.succeeded:
        return "succeeded"
    return "failed" if attempt >= MAX_ATTEMPTS else "retrying"
