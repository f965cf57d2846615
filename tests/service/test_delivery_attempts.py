"""The delivery kernel's scheduled attempts on moto (chalicelib/delivery/attempts.py), with a
scripted kind of delivery (no HTTP) on the webhook-deliveries table: racing workers send an
attempt once, the schedule given as data drives the next messages, the give-up hook runs once
after the last attempt (and again only when a redelivery finds it may not have run), a recipient
gone ends the delivery unsent, and `begin` writes a delivery once."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta

import pytest

from chalicelib import clock
from chalicelib.delivery import attempts
from chalicelib.delivery.attempts import ScheduledDelivery, Unsent
from chalicelib.delivery.http_post import Answer
from chalicelib.delivery.schedule import RetrySchedule
from chalicelib.outbound.tables import WebhookDeliveryRecord
from chalicelib.queue.messages import Message
from chalicelib.settings import Settings, get_settings
from tests.conftest import NOW
from tests.service.outbound_fakes import RecordingSqs, record_published_messages

ORG = "org_kernel"
ATTEMPT = "test.kernel_attempt"
FAILED = Answer("retryable", 503, "HTTP 503 Service Unavailable")
DELIVERED = Answer("delivered", 204, None)


class Scripted(ScheduledDelivery[WebhookDeliveryRecord, str]):
    """Answers each attempt with the next of `answers`; remembers what the kernel asked of it."""

    model = WebhookDeliveryRecord
    schedule = RetrySchedule(delays_seconds=(10, 20))  # three attempts: at once, +10 s, +20 s

    def __init__(self, answers: list[Answer], *, organization_id: str = ORG, here: bool = True) -> None:
        self.answers = answers
        self.organization_id = organization_id
        self.here = here
        self.sent: list[int] = []
        self.gave_up: list[tuple[int, str | None]] = []
        self.lock = threading.Lock()

    @property
    def key(self) -> tuple[str, str]:
        return "sub_kernel", "2026-11-22T12:00:00.000Z#evt_1"

    @property
    def guard(self) -> object:
        return WebhookDeliveryRecord.organization_id == self.organization_id

    def owns(self, record: WebhookDeliveryRecord) -> bool:
        return record.organization_id == self.organization_id

    def message(self, attempt: int) -> Message:
        return Message(ATTEMPT, self.organization_id, {"attempt": attempt})

    def recipient(self, record: WebhookDeliveryRecord) -> str | Unsent:
        return "the receiver" if self.here else Unsent("the receiver left")

    def send(self, record: WebhookDeliveryRecord, recipient: str, attempt: int, *, settings: Settings) -> Answer:
        with self.lock:
            self.sent.append(attempt)
            return self.answers.pop(0) if self.answers else FAILED

    def give_up(self, record: WebhookDeliveryRecord, now: datetime, recipient: str | None) -> None:
        self.gave_up.append((int(record.attempts or 0), recipient))


@pytest.fixture
def sqs(aws_env: None) -> RecordingSqs:
    return record_published_messages()


def new_record() -> WebhookDeliveryRecord:
    return WebhookDeliveryRecord(
        "sub_kernel",
        "2026-11-22T12:00:00.000Z#evt_1",
        organization_id=ORG,
        event_id="evt_1",
        event_type="incident.triggered",
        body="{}",
        status="pending",
        attempts=0,
        next_attempt_at=NOW,
        created_at=NOW,
        expires_at=NOW + timedelta(days=30),
    )


def stored() -> WebhookDeliveryRecord:
    return WebhookDeliveryRecord.get("sub_kernel", "2026-11-22T12:00:00.000Z#evt_1", consistent_read=True)


def published(sqs: RecordingSqs) -> list[tuple[int, int]]:
    """(attempt, delay) of each attempt message published since the last call."""
    return [(m.payload["attempt"], delay) for m, delay, _ in sqs.take(ATTEMPT)]


def run(delivery: Scripted, attempt: int, at: datetime) -> str:
    with clock.frozen(at):
        return attempts.run(delivery, attempt, at, settings=get_settings())


def test_begin_writes_the_delivery_once_and_publishes_its_first_attempt(sqs: RecordingSqs) -> None:
    delivery = Scripted([])
    assert attempts.begin(delivery, new_record()) == attempts.Begun(created=True, enqueued=True)
    # A redelivered fan-out: written already, still pending with no attempt: published again.
    assert attempts.begin(delivery, new_record()) == attempts.Begun(created=False, enqueued=True)
    assert published(sqs) == [(1, 0), (1, 0)]
    assert run(delivery, 1, NOW) == "sent"
    published(sqs)
    # Attempted since: nothing to publish.
    assert attempts.begin(delivery, new_record()) == attempts.Begun(created=False, enqueued=False)
    assert published(sqs) == []


def test_racing_workers_send_an_attempt_once(sqs: RecordingSqs) -> None:
    delivery = Scripted([DELIVERED])
    attempts.begin(delivery, new_record())
    workers = 6
    barrier = threading.Barrier(workers)

    def work(_: int) -> str:
        barrier.wait()
        return attempts.run(delivery, 1, NOW, settings=get_settings())

    with ThreadPoolExecutor(max_workers=workers) as pool:
        outcomes = list(pool.map(work, range(workers)))
    assert outcomes.count("sent") == 1
    assert delivery.sent == [1]
    assert (stored().status, stored().attempts) == ("succeeded", 1)


def test_the_schedule_given_as_data_drives_the_attempts_then_the_give_up_hook(sqs: RecordingSqs) -> None:
    delivery = Scripted([])  # every attempt fails
    attempts.begin(delivery, new_record())
    published(sqs)
    assert run(delivery, 1, NOW) == "sent"
    assert published(sqs) == [(2, 10)]
    first = stored()
    assert (first.status, first.attempts, first.next_attempt_at) == ("retrying", 1, NOW + timedelta(seconds=10))
    assert run(delivery, 2, NOW + timedelta(seconds=10)) == "sent"
    assert published(sqs) == [(3, 20)]
    assert run(delivery, 3, NOW + timedelta(seconds=30)) == "sent"
    assert published(sqs) == []
    record = stored()
    assert (record.status, record.attempts, record.response_code) == ("failed", 3, 503)
    assert record.last_error == "HTTP 503 Service Unavailable"
    assert record.next_attempt_at is None and record.claimed_until is None
    assert delivery.sent == [1, 2, 3]
    assert delivery.gave_up == [(3, "the receiver")]


def test_a_redelivered_last_attempt_calls_the_give_up_hook_again_without_sending(sqs: RecordingSqs) -> None:
    delivery = Scripted([])
    attempts.begin(delivery, new_record())
    for attempt, at in ((1, NOW), (2, NOW + timedelta(seconds=10)), (3, NOW + timedelta(seconds=30))):
        run(delivery, attempt, at)
    # SQS delivers the last attempt's message again (its first run may have died before giving up).
    assert run(delivery, 3, NOW + timedelta(seconds=90)) == "already_done"
    assert delivery.sent == [1, 2, 3]
    assert delivery.gave_up == [(3, "the receiver"), (3, None)]  # None: the hook reads its recipient again


def test_a_redelivered_failed_attempt_only_publishes_the_next_again(sqs: RecordingSqs) -> None:
    delivery = Scripted([])
    attempts.begin(delivery, new_record())
    published(sqs)
    run(delivery, 1, NOW)
    assert published(sqs) == [(2, 10)]
    assert run(delivery, 1, NOW + timedelta(seconds=4)) == "already_done"
    assert published(sqs) == [(2, 6)]
    assert delivery.sent == [1] and delivery.gave_up == []


def test_an_early_message_waits_and_an_out_of_order_one_is_dropped(sqs: RecordingSqs) -> None:
    delivery = Scripted([])
    attempts.begin(delivery, new_record())
    run(delivery, 1, NOW)
    published(sqs)
    assert run(delivery, 2, NOW + timedelta(seconds=3)) == "not_due"
    assert published(sqs) == [(2, 7)]
    assert run(delivery, 3, NOW + timedelta(seconds=60)) == "stale"
    assert delivery.sent == [1]


def test_an_attempt_held_by_a_live_worker_is_left_until_its_claim_runs_out(sqs: RecordingSqs) -> None:
    delivery = Scripted([DELIVERED])
    attempts.begin(delivery, new_record())
    stored().update(actions=[WebhookDeliveryRecord.claimed_until.set(NOW + timedelta(seconds=45))])
    assert run(delivery, 1, NOW + timedelta(seconds=10)) == "claimed"
    assert delivery.sent == []
    assert run(delivery, 1, NOW + timedelta(seconds=45)) == "sent"  # the worker that held it died
    assert delivery.sent == [1]


def test_a_recipient_gone_ends_the_delivery_unsent(sqs: RecordingSqs) -> None:
    delivery = Scripted([], here=False)
    attempts.begin(delivery, new_record())
    assert run(delivery, 1, NOW) == "gone"
    record = stored()
    assert (record.status, record.attempts, record.last_error) == ("failed", 0, "not sent: the receiver left")
    assert record.claimed_until is None and record.next_attempt_at is None
    assert delivery.sent == [] and delivery.gave_up == []
    assert run(delivery, 1, NOW + timedelta(seconds=1)) == "already_done"


def test_a_delivery_that_is_not_the_callers_or_not_there_is_gone(sqs: RecordingSqs) -> None:
    assert run(Scripted([]), 1, NOW) == "gone"  # never written
    attempts.begin(Scripted([]), new_record())
    other = Scripted([], organization_id="org_other")
    assert run(other, 1, NOW) == "gone"
    assert other.sent == []
    assert stored().claimed_until is None
