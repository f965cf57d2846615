"""When attempts happen and what an attempt's answer leads to. Pure: `now` is passed in (retry
waits follow the local time scale, clock.scaled, which is 1 outside the local and test stages).

A retry schedule is data (`RetrySchedule`): the waits before the second, third, ... attempt,
each counted from the attempt before; the attempts are one more than the waits. SQS delays a
message by at most 900 s, so a longer wait is sent as a 900 s delay and the message, arriving
early, re-enqueues itself for the remainder (`sqs_delay`, `is_due`).

An attempt's answer is a `Verdict`: delivered, retryable (the receiver may recover by itself:
a timeout, a 5xx, SES throttling) or final (asking again cannot help: a 4xx, an address
refused). Two ways to retry use it:
- a scheduled delivery (chalicelib/delivery/attempts.py) spends every attempt of its schedule
  whatever the failure, because a receiver that refuses may be fixed before the next one
  (Tocsin's webhooks, spec): `after_attempt`;
- a claim run once per queue message (chalicelib/delivery/claims.py) is retried by SQS
  redelivering the message, only for a retryable failure and not on the message's final
  receive: `after_once`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from chalicelib import clock
from chalicelib.settings import Settings

Verdict = Literal["delivered", "retryable", "final"]
# A scheduled delivery's status: pending (no attempt yet), retrying, succeeded or failed.
Status = Literal["pending", "retrying", "succeeded", "failed"]
UNFINISHED: tuple[Status, ...] = ("pending", "retrying")
MAX_SQS_DELAY_SECONDS = 900


@dataclass(frozen=True)
class RetrySchedule:
    """Attempt 1 at once, then attempt n + 1 `delays_seconds[n - 1]` after attempt n failed."""

    delays_seconds: tuple[int, ...]

    @property
    def max_attempts(self) -> int:
        return len(self.delays_seconds) + 1

    def delay_before(self, attempt: int) -> int:
        """Seconds between attempt `attempt - 1` and `attempt` (attempt 1 is immediate)."""
        if not 1 <= attempt <= self.max_attempts:
            raise ValueError(f"attempt must be 1 to {self.max_attempts}")
        return 0 if attempt == 1 else self.delays_seconds[attempt - 2]

    def next_attempt_at(self, failed_attempt: int, attempted_at: datetime, *, settings: Settings) -> datetime | None:
        """When the attempt after a failed one is due; None after the last attempt."""
        if failed_attempt >= self.max_attempts:
            return None
        return attempted_at + clock.scaled(
            timedelta(seconds=self.delay_before(failed_attempt + 1)), scale=settings.effective_time_scale
        )


@dataclass(frozen=True)
class Next:
    """A scheduled delivery after an attempt: its status, and when the next attempt is due."""

    status: Status
    due: datetime | None = None

    @property
    def gave_up(self) -> bool:
        return self.status == "failed"


def after_attempt(
    schedule: RetrySchedule, attempt: int, verdict: Verdict, attempted_at: datetime, *, settings: Settings
) -> Next:
    """Delivered ends it; any failure is retried on the schedule until its last attempt."""
    if verdict == "delivered":
        return Next("succeeded")
    due = schedule.next_attempt_at(attempt, attempted_at, settings=settings)
    return Next("failed") if due is None else Next("retrying", due)


Standing = Literal["claimable", "done", "stale", "not_due", "claimed"]


def standing(
    *,
    attempt: int,
    made: int,
    status: str,
    next_attempt_at: datetime | None,
    claimed_until: datetime | None,
    now: datetime,
) -> Standing:
    """What a message for attempt `attempt` finds on its delivery record: the attempt recorded
    already (or the delivery finished), a message out of order, one early, an attempt another
    worker holds, or one this worker may claim."""
    if made >= attempt or status not in UNFINISHED:
        return "done"
    if made != attempt - 1:
        return "stale"
    if not is_due(next_attempt_at, now):
        return "not_due"
    if claimed_until is not None and claimed_until > now:
        return "claimed"
    return "claimable"


def sqs_delay(due_at: datetime, now: datetime) -> int:
    """The DelaySeconds for a message due at `due_at`: whole seconds, rounded up, at most 900."""
    remaining = (due_at - now).total_seconds()
    return max(0, min(MAX_SQS_DELAY_SECONDS, int(remaining + 0.999)))


def is_due(due_at: datetime | None, now: datetime) -> bool:
    return due_at is None or now >= due_at


OnceStep = Literal["done", "retry", "give_up"]


def after_once(verdict: Verdict, *, final_attempt: bool) -> OnceStep:
    """A claim run once per message: delivered is done; a retryable failure is tried again by a
    redelivery of the message, unless this is its final receive; anything else gives up."""
    if verdict == "delivered":
        return "done"
    if verdict == "retryable" and not final_attempt:
        return "retry"
    return "give_up"
