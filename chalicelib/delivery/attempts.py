"""Scheduled deliveries: claim an attempt, run it, record it, schedule the next or give up.

A delivery is one record (a webhook delivery of an outbound subscription, a status-page notice
to a webhook follower) holding what every attempt sends and its attempt state: status (pending,
retrying, succeeded, failed), attempts made, the next attempt's due time, the claim in flight,
the last answer. Each kind of delivery subclasses `ScheduledDelivery` to say only what is its
own: which record, whom it is for now (`recipient`), how one attempt is sent (`send`), the queue
message that runs an attempt (`message`), and what giving up means (`give_up`); the retry
schedule is data (`schedule`). `run` does the rest, the same for every kind:

1. Claim attempt n in one conditional update that returns the record: the delivery is the
   caller's (`guard`), unfinished, at exactly n - 1 attempts, due and not claimed. The claim
   (`claimed_until`) lasts CLAIM_SECONDS, so a redelivered message, or one message handled by
   two workers, never sends the same attempt twice; a worker that dies mid-send leaves a claim
   that expires, and the attempt runs again when SQS redelivers the message.
2. When the claim is refused, read the record to say why (`schedule.standing`): finished or
   recorded already (a redelivery: finish what the first run may not have, the next attempt's
   message or the give-up), out of order, early (the message re-enqueues itself), or held.
3. The recipient gone (deleted, disabled, unsubscribed): the delivery ends unsent.
4. Send, record the answer and release the claim in one update checked against the version
   the claim wrote; then publish the next attempt's message, delayed to its due time, or, after
   the schedule's last attempt, call `give_up`.

`begin` writes a new delivery and publishes its first attempt, once per delivery.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from dataclasses import dataclass, fields
from datetime import datetime, timedelta
from typing import Any, Generic, Literal, TypeVar

from pynamodb.exceptions import DoesNotExist
from pynamodb.expressions.condition import Condition
from pynamodb.models import Model

from chalicelib import clock
from chalicelib.delivery.http_post import Answer
from chalicelib.delivery.schedule import UNFINISHED, Next, RetrySchedule, after_attempt, sqs_delay, standing
from chalicelib.queue.messages import Message, publish
from chalicelib.settings import Settings
from chalicelib.store import ConditionFailed, assign, conditional, put_if_absent, update_if

logger = logging.getLogger("tocsin.delivery")
# Longer than a send takes (10 s to connect, 10 s per read), shorter than the queue's visibility
# timeout (60 s locally, 360 s on AWS), so a crashed attempt's redelivery finds the claim expired.
CLAIM_SECONDS = 45
Outcome = Literal["sent", "not_due", "already_done", "claimed", "stale", "gone"]
R = TypeVar("R", bound=Model)
T = TypeVar("T")


@dataclass(frozen=True)
class AttemptFields:
    """The names of the attributes a delivery's model keeps its attempt state in."""

    status: str = "status"
    attempts: str = "attempts"
    claimed_until: str = "claimed_until"
    next_attempt_at: str = "next_attempt_at"
    last_attempt_at: str = "last_attempt_at"
    last_error: str = "last_error"
    response_code: str = "response_code"
    updated_at: str = "updated_at"
    version: str = "version"


@dataclass(frozen=True)
class Unsent:
    """The delivery's recipient is no longer there: `reason` ends up in its last_error."""

    reason: str


class ScheduledDelivery(ABC, Generic[R, T]):
    """One delivery of one kind, as a queue message names it; `T` is its recipient (the live
    subscription, subscriber, ...). A subclass sets `model`, `schedule` and, when its names
    differ, `fields`."""

    model: type[R]
    schedule: RetrySchedule
    fields: AttemptFields = AttemptFields()

    @property
    @abstractmethod
    def key(self) -> tuple[str, str]:
        """The delivery record's hash and range key."""

    @property
    def guard(self) -> Condition | None:
        """What the record must hold for this caller besides its attempt state (`owns` in Python)."""
        return None

    def owns(self, record: R) -> bool:
        return True

    @property
    def where(self) -> dict[str, Any]:
        """What log lines about this delivery carry."""
        return {}

    @abstractmethod
    def message(self, attempt: int) -> Message:
        """The queue message that runs attempt `attempt`."""

    @abstractmethod
    def recipient(self, record: R) -> T | Unsent:
        """Whom the delivery is for, as they are now; Unsent when they are gone."""

    @abstractmethod
    def send(self, record: R, recipient: T, attempt: int, *, settings: Settings) -> Answer:
        """Attempt `attempt` itself (never raises for a delivery problem: the answer says it)."""

    @abstractmethod
    def give_up(self, record: R, now: datetime, recipient: T | None) -> None:
        """After the last attempt failed. `recipient` as read for it; None when a redelivered
        message finishes a give-up that may not have happened (read it again)."""


@dataclass(frozen=True)
class _Columns:
    """The model's attributes named by AttemptFields (for conditions and update actions)."""

    status: Any
    attempts: Any
    claimed_until: Any
    next_attempt_at: Any
    last_attempt_at: Any
    last_error: Any
    response_code: Any
    updated_at: Any
    version: Any


def _columns(delivery: ScheduledDelivery[Any, Any]) -> _Columns:
    names = delivery.fields
    return _Columns(**{f.name: getattr(delivery.model, getattr(names, f.name)) for f in fields(AttemptFields)})


def _value(delivery: ScheduledDelivery[Any, Any], record: Model, name: str) -> Any:
    return getattr(record, getattr(delivery.fields, name))


def run(delivery: ScheduledDelivery[R, T], attempt: int, now: datetime, *, settings: Settings) -> Outcome:
    """Run attempt `attempt` if it is due and unclaimed; returns what happened (logs and tests)."""
    record = _claim_at_once(delivery, attempt, now)
    if record is None:
        record = read(delivery)
        if record is None or not delivery.owns(record):
            return "gone"
        found = standing(
            attempt=attempt,
            made=int(_value(delivery, record, "attempts") or 0),
            status=_value(delivery, record, "status"),
            next_attempt_at=_value(delivery, record, "next_attempt_at"),
            claimed_until=_value(delivery, record, "claimed_until"),
            now=now,
        )
        if found == "done":
            _after_redelivery(delivery, record, attempt, now)
            return "already_done"
        if found == "stale":
            logger.warning("out-of-order delivery attempt dropped", extra={**delivery.where, "attempt": attempt})
            return "stale"
        if found == "not_due":
            waiting_for = _value(delivery, record, "next_attempt_at") or now
            publish(delivery.message(attempt), delay_seconds=sqs_delay(waiting_for, now))
            return "not_due"
        if found == "claimed" or not _claim(delivery, record, attempt, now):
            return "claimed"
    return _attempt(delivery, record, attempt, now, settings=settings)


def read(delivery: ScheduledDelivery[R, Any]) -> R | None:
    hash_key, range_key = delivery.key
    try:
        return delivery.model.get(hash_key, range_key, consistent_read=True)
    except DoesNotExist:
        return None


def _attempt(
    delivery: ScheduledDelivery[R, T], record: R, attempt: int, now: datetime, *, settings: Settings
) -> Outcome:
    """The claimed attempt: send, record the answer, schedule the next attempt or give up."""
    recipient = delivery.recipient(record)
    if isinstance(recipient, Unsent):
        _stop(delivery, record, f"not sent: {recipient.reason}", now)
        return "gone"
    answer = delivery.send(record, recipient, attempt, settings=settings)
    step = after_attempt(delivery.schedule, attempt, answer.verdict, now, settings=settings)
    _record(delivery, record, attempt, answer, step, now)
    if not answer.succeeded:
        failure = {"attempt": attempt, "error": answer.error, "retryable": answer.retryable}
        logger.info("delivery attempt failed", extra={**delivery.where, **failure})
    if step.due is not None:
        _schedule(delivery, attempt + 1, step.due)
    elif step.gave_up:
        delivery.give_up(record, now, recipient)
    return "sent"


def _claim_at_once(delivery: ScheduledDelivery[R, Any], attempt: int, now: datetime) -> R | None:
    """The usual case in one request: claim the attempt without reading the record first, and get
    the record back. None when any condition does not hold (or the record is gone): the caller
    then reads the record and finds out which."""
    c = _columns(delivery)
    condition = (
        (c.attempts == attempt - 1)
        & c.status.is_in(*UNFINISHED)
        & (c.next_attempt_at.does_not_exist() | (c.next_attempt_at <= now))
        & (c.claimed_until.does_not_exist() | (c.claimed_until <= now))
    )
    if delivery.guard is not None:
        condition = delivery.guard & condition
    hash_key, range_key = delivery.key
    try:
        with conditional():
            answer = delivery.model._get_connection().update_item(
                hash_key,
                range_key,
                actions=[c.claimed_until.set(now + timedelta(seconds=CLAIM_SECONDS)), c.version.add(1)],
                condition=condition,
                return_values="ALL_NEW",
            )
    except ConditionFailed:
        return None
    return delivery.model.from_raw_data(answer["Attributes"])


def _claim(delivery: ScheduledDelivery[R, Any], record: R, attempt: int, now: datetime) -> bool:
    """Take the attempt after a read: True for exactly one of any number of concurrent callers
    (the record's version is checked too: whoever wrote since our read wins)."""
    c = _columns(delivery)
    return update_if(
        record,
        [c.claimed_until.set(now + timedelta(seconds=CLAIM_SECONDS))],
        (c.attempts == attempt - 1) & c.status.is_in(*UNFINISHED),
    )


def _record(
    delivery: ScheduledDelivery[R, Any], record: R, attempt: int, answer: Answer, step: Next, now: datetime
) -> None:
    """Write the attempt's answer and release the claim (conditional on the version we claimed)."""
    c = _columns(delivery)
    record.update(
        actions=[
            c.attempts.set(attempt),
            c.status.set(step.status),
            c.last_attempt_at.set(now),
            assign(c.next_attempt_at, step.due),
            assign(c.last_error, answer.error),
            assign(c.response_code, answer.response_code),
            c.claimed_until.remove(),
            c.updated_at.set(clock.now()),
        ]
    )


def _stop(delivery: ScheduledDelivery[R, Any], record: R, reason: str, now: datetime) -> None:
    """Finish a claimed delivery that will not be sent, releasing the claim. Nothing happens when
    it finished (or was stopped) in the meantime."""
    c = _columns(delivery)
    update_if(
        record,
        [
            c.status.set("failed"),
            c.last_error.set(reason),
            c.next_attempt_at.remove(),
            c.claimed_until.remove(),
            c.updated_at.set(now),
        ],
        c.status.is_in(*UNFINISHED),
    )


def _schedule(delivery: ScheduledDelivery[Any, Any], attempt: int, due: datetime) -> None:
    """The next attempt's message, delayed (at most 900 s; an early arrival re-enqueues itself)."""
    publish(delivery.message(attempt), delay_seconds=sqs_delay(due, clock.now()))


def _after_redelivery(delivery: ScheduledDelivery[R, Any], record: R, attempt: int, now: datetime) -> None:
    """A message for an attempt already recorded. Its first run may have stopped after recording
    and before what follows (the publish or the give-up failed, so SQS redelivered): do that
    part again. The attempt's claim makes an extra next-attempt message harmless."""
    if int(_value(delivery, record, "attempts") or 0) != attempt or _value(delivery, record, "last_attempt_at") is None:
        return
    status = _value(delivery, record, "status")
    next_attempt_at = _value(delivery, record, "next_attempt_at")
    if status == "retrying" and next_attempt_at is not None:
        _schedule(delivery, attempt + 1, next_attempt_at)
    elif status == "failed" and attempt >= delivery.schedule.max_attempts:
        delivery.give_up(record, now, None)


@dataclass(frozen=True)
class Begun:
    created: bool  # the delivery was written by this call
    enqueued: bool  # its first attempt's message was published (new, or pending and re-sent)


def begin(delivery: ScheduledDelivery[R, Any], record: R) -> Begun:
    """Write the delivery (`record`: its body fixed now, pending, no attempt) and publish its
    first attempt. Written already: whichever run wrote first fixed the body; when it is still
    pending with no attempt made, the first attempt is published again (the earlier run may have
    stopped between the write and the publish; the attempt's claim keeps that from sending twice)."""
    if put_if_absent(record):
        publish(delivery.message(1))
        return Begun(created=True, enqueued=True)
    existing = read(delivery)
    if existing is None:
        return Begun(created=False, enqueued=False)
    pending = _value(delivery, existing, "status") == "pending" and not _value(delivery, existing, "attempts")
    if pending:
        logger.info("re-enqueueing a pending delivery", extra=delivery.where)
        publish(delivery.message(1))
    return Begun(created=False, enqueued=pending)
