"""The webhook delivery worker on moto, against a real receiver on 127.0.0.1, with time frozen:
the spec's retry schedule, success and failure answers, never the same attempt twice, the target
re-checked, disabling and the owner's email. Messages run through a simulated queue
(tests/service/outbound_fakes.py), so nothing sleeps.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import pytest

from chalicelib import aws, clock
from chalicelib.integration import signing
from chalicelib.outbound import delivery, fanout, subscriptions
from chalicelib.outbound.tables import WebhookDeliveryRecord
from chalicelib.queue import consumers
from chalicelib.queue.messages import EVENTS_QUEUE, Message
from chalicelib.settings import get_settings
from tests.conftest import NOW, Org, reconfigure
from tests.service.outbound_fakes import (
    OWNER,
    Receiver,
    RecordingSqs,
    open_incident,
    record_published_messages,
    run_queue,
    sent_emails,
    subscribe,
    the_delivery,
    the_subscription,
)


@pytest.fixture
def receiver(aws_env: None) -> Iterator[Receiver]:
    started = Receiver().start()
    yield started
    started.stop()


@pytest.fixture
def sqs(org: Org, receiver: Receiver) -> RecordingSqs:
    return record_published_messages()


@dataclass(frozen=True)
class Subscribed:
    subscription_id: str
    secret: str
    incident_number: str


@pytest.fixture
def subscribed(org: Org, receiver: Receiver, sqs: RecordingSqs) -> Subscribed:
    created = subscribe(org, receiver.url())
    number = open_incident(org)
    (message, _, _) = sqs.take("incident.created")[0]
    with clock.frozen(NOW):
        assert fanout.fan_out(message, now=NOW, settings=get_settings()).created == 1
    return Subscribed(created.record.subscription_id, created.secret, number)


def first_attempt(sqs: RecordingSqs) -> Message:
    (message, delay, _) = sqs.take(fanout.DELIVER)[0]
    assert delay == 0 and message.payload["attempt"] == 1
    return message


def handle(message: Message, at: datetime) -> None:
    """Run the message's consumer directly (so its exceptions reach the test)."""
    consumer = delivery.notify_owner if message.message_type == delivery.SUBSCRIPTION_DISABLED else delivery.handle
    with clock.frozen(at):
        consumer(message, get_settings())


# ---------------------------------------------------------------- the schedule, end to end


def test_failing_receiver_gets_five_attempts_on_the_spec_schedule_then_the_subscription_is_disabled(
    org: Org, receiver: Receiver, sqs: RecordingSqs, subscribed: Subscribed
) -> None:
    receiver.default = 500
    handled = run_queue(sqs, until=NOW + timedelta(hours=4))

    # Requests arrived at +0, +1 min, +5 min after that, +30 min after that, +2 h after that.
    offsets = [int((request.at - NOW).total_seconds()) for request in receiver.requests]
    assert offsets == [0, 60, 60 + 300, 360 + 1800, 2160 + 7200]
    assert [r.headers["x-tocsin-delivery-attempt"] for r in receiver.requests] == ["1", "2", "3", "4", "5"]
    # The delays published: 60 and 300 directly; 30 min and 2 h as 900 s hops, re-enqueued.
    deliver = [(m.payload["attempt"], delay) for _, m, delay in handled if m.message_type == fanout.DELIVER]
    assert deliver == [(1, 0), (2, 60), (3, 300), (4, 900), (4, 900), *[(5, 900)] * 8]

    record = the_delivery(subscribed.subscription_id)
    assert (record.status, record.attempts, record.response_code) == ("failed", 5, 500)
    assert record.last_error == "HTTP 500 Internal Server Error"
    assert record.next_attempt_at is None and record.claimed_until is None
    assert record.last_attempt_at == NOW + timedelta(seconds=9360)
    subscription = the_subscription(org, subscribed.subscription_id)
    assert not subscription.enabled
    assert subscription.disabled_reason == "delivery_failures"
    assert subscription.disabled_at == NOW + timedelta(seconds=9360)

    (email,) = sent_emails()
    assert email.destinations["ToAddresses"] == [OWNER]
    assert "Webhook subscription disabled" in email.subject and "Ops receiver" in email.subject
    assert subscribed.subscription_id in email.body and "HTTP 500" in email.body


def test_every_attempt_is_signed_over_the_same_body_and_verifies(
    receiver: Receiver, sqs: RecordingSqs, subscribed: Subscribed
) -> None:
    receiver.answers = [503]
    run_queue(sqs, until=NOW + timedelta(minutes=2))
    first, second = receiver.requests
    assert first.body == second.body
    for request in (first, second):
        assert request.path == "/hooks/tocsin"
        assert request.headers["content-type"] == "application/json"
        assert request.headers["user-agent"] == "Tocsin-Webhooks/1.0"
        assert request.headers["x-tocsin-event-type"] == "incident.triggered"
        timestamp = signing.verify_custom(subscribed.secret, request.headers, request.body, now=request.at)
        assert timestamp == int(request.at.timestamp())
        assert request.headers["x-service-signature"] == signing.sign(subscribed.secret, timestamp, request.body)
    event = json.loads(first.body)
    assert first.headers["x-tocsin-event-id"] == second.headers["x-tocsin-event-id"] == event["id"]
    assert event["type"] == "incident.triggered"
    assert event["data"]["incident"]["incident_number"] == subscribed.incident_number
    with pytest.raises(Exception, match="does not match"):
        signing.verify_custom("whsec_wrong", first.headers, first.body, now=first.at)


def test_a_2xx_ends_the_delivery(receiver: Receiver, sqs: RecordingSqs, subscribed: Subscribed) -> None:
    receiver.default = 200
    run_queue(sqs, until=NOW + timedelta(hours=4))
    assert len(receiver.requests) == 1
    record = the_delivery(subscribed.subscription_id)
    assert (record.status, record.attempts, record.response_code, record.last_error) == ("succeeded", 1, 200, None)
    assert record.next_attempt_at is None
    assert sent_emails() == []


def test_400_counts_as_a_failed_attempt_and_429_is_retried(
    org: Org, receiver: Receiver, sqs: RecordingSqs, subscribed: Subscribed
) -> None:
    receiver.answers = [400, 429, 202]
    message = first_attempt(sqs)
    handle(message, NOW)
    record = the_delivery(subscribed.subscription_id)
    assert (record.status, record.attempts, record.response_code) == ("retrying", 1, 400)
    assert record.last_error == "HTTP 400 Bad Request (the receiver rejected the event)"
    assert record.next_attempt_at == NOW + timedelta(minutes=1)
    handled = run_queue(sqs, until=NOW + timedelta(hours=1))
    assert [m.payload["attempt"] for _, m, _ in handled] == [2, 3]
    record = the_delivery(subscribed.subscription_id)
    assert (record.status, record.attempts, record.response_code) == ("succeeded", 3, 202)
    assert the_subscription(org, subscribed.subscription_id).enabled


def test_five_rejections_disable_too(org: Org, receiver: Receiver, sqs: RecordingSqs, subscribed: Subscribed) -> None:
    receiver.default = 410
    run_queue(sqs, until=NOW + timedelta(hours=4))
    assert len(receiver.requests) == 5
    assert not the_subscription(org, subscribed.subscription_id).enabled


# ---------------------------------------------------------------- never twice


def test_the_same_deliver_message_handled_twice_sends_once(
    receiver: Receiver, sqs: RecordingSqs, subscribed: Subscribed
) -> None:
    message = first_attempt(sqs)
    handle(message, NOW)
    handle(message, NOW + timedelta(seconds=30))
    assert len(receiver.requests) == 1
    assert the_delivery(subscribed.subscription_id).attempts == 1
    assert sqs.take(fanout.DELIVER) == []


def test_concurrent_workers_with_one_message_send_once(
    receiver: Receiver, sqs: RecordingSqs, subscribed: Subscribed
) -> None:
    message = first_attempt(sqs)
    barrier = threading.Barrier(6)

    def work(_: int) -> str:
        barrier.wait()
        return delivery.deliver(
            organization_id=message.organization_id,
            subscription_id=message.payload["subscription_id"],
            delivery_key=message.payload["delivery_key"],
            attempt=1,
            now=NOW,
            settings=get_settings(),
        )

    with ThreadPoolExecutor(max_workers=6) as pool:
        outcomes = list(pool.map(work, range(6)))
    assert outcomes.count("sent") == 1
    assert len(receiver.requests) == 1


def test_a_redelivered_failed_attempt_is_not_resent_and_only_reschedules_the_next(
    receiver: Receiver, sqs: RecordingSqs, subscribed: Subscribed
) -> None:
    receiver.default = 500
    message = first_attempt(sqs)
    handle(message, NOW)
    assert [(m.payload["attempt"], d) for m, d, _ in sqs.take(fanout.DELIVER)] == [(2, 60)]
    # As if the publish had failed and SQS delivered attempt 1 again 40 s later.
    handle(message, NOW + timedelta(seconds=40))
    assert len(receiver.requests) == 1
    assert [(m.payload["attempt"], d) for m, d, _ in sqs.take(fanout.DELIVER)] == [(2, 20)]


def test_an_attempt_claimed_by_a_live_worker_is_left_alone(
    receiver: Receiver, sqs: RecordingSqs, subscribed: Subscribed
) -> None:
    message = first_attempt(sqs)
    record = the_delivery(subscribed.subscription_id)
    record.update(actions=[WebhookDeliveryRecord.claimed_until.set(NOW + timedelta(seconds=45))])
    key = message.payload["delivery_key"]
    outcome = delivery.deliver(
        organization_id=message.organization_id,
        subscription_id=subscribed.subscription_id,
        delivery_key=key,
        attempt=1,
        now=NOW + timedelta(seconds=10),
        settings=get_settings(),
    )
    assert outcome == "claimed" and receiver.requests == []
    # The claim of a worker that died expires: the redelivered message runs the attempt.
    outcome = delivery.deliver(
        organization_id=message.organization_id,
        subscription_id=subscribed.subscription_id,
        delivery_key=key,
        attempt=1,
        now=NOW + timedelta(seconds=60),
        settings=get_settings(),
    )
    assert outcome == "sent" and len(receiver.requests) == 1


def test_an_early_message_waits_for_its_turn(receiver: Receiver, sqs: RecordingSqs, subscribed: Subscribed) -> None:
    receiver.answers = [500]
    handle(first_attempt(sqs), NOW)
    (second, _, _) = sqs.take(fanout.DELIVER)[0]
    handle(second, NOW + timedelta(seconds=15))
    assert len(receiver.requests) == 1
    assert [(m.payload["attempt"], d) for m, d, _ in sqs.take(fanout.DELIVER)] == [(2, 45)]


def test_messages_for_other_attempts_or_organizations_do_nothing(
    receiver: Receiver, sqs: RecordingSqs, subscribed: Subscribed
) -> None:
    message = first_attempt(sqs)
    arguments = {"subscription_id": subscribed.subscription_id, "delivery_key": message.payload["delivery_key"]}
    assert (
        delivery.deliver(
            organization_id=message.organization_id, attempt=3, now=NOW, **arguments, settings=get_settings()
        )
        == "stale"
    )
    assert (
        delivery.deliver(organization_id="another-org", attempt=1, now=NOW, **arguments, settings=get_settings())
        == "gone"
    )
    missing = {**arguments, "delivery_key": "2026-11-22T12:00:00.000Z#evt_missing"}
    assert (
        delivery.deliver(
            organization_id=message.organization_id, attempt=1, now=NOW, **missing, settings=get_settings()
        )
        == "gone"
    )
    assert receiver.requests == []


# ---------------------------------------------------------------- the subscription and the target


def test_a_disabled_subscription_gets_nothing_more(
    org: Org, receiver: Receiver, sqs: RecordingSqs, subscribed: Subscribed
) -> None:
    subscriptions.update_subscription(
        organization_id=org.organization_id,
        subscription_id=subscribed.subscription_id,
        now=NOW,
        enabled=False,
        settings=get_settings(),
    )
    handle(first_attempt(sqs), NOW)
    assert receiver.requests == []
    record = the_delivery(subscribed.subscription_id)
    assert (record.status, record.attempts) == ("failed", 0)
    assert record.last_error == "not sent: the subscription is disabled"


def test_the_target_is_checked_again_before_each_attempt(
    org: Org, receiver: Receiver, sqs: RecordingSqs, subscribed: Subscribed
) -> None:
    message = first_attempt(sqs)
    # Outside the local stage a loopback target is refused, whatever it was when subscribed.
    reconfigure(LOCAL_ALLOW_HTTP_WEBHOOKS="false")
    aws.set_client("sqs", sqs)
    aws._clients[f"queue-url:{EVENTS_QUEUE}"] = "https://sqs.test/events"  # never called for real
    handle(message, NOW)
    assert receiver.requests == []
    record = the_delivery(subscribed.subscription_id)
    assert (record.status, record.attempts, record.response_code) == ("retrying", 1, None)
    assert record.last_error is not None and record.last_error.startswith("target refused: url: must use https")


# ---------------------------------------------------------------- disabling and the owner's email


def fail_four_times(receiver: Receiver, sqs: RecordingSqs) -> Message:
    """Run attempts 1-4 against a failing receiver; returns the attempt-5 message, not yet handled."""
    receiver.default = 500
    run_queue(sqs, until=NOW + timedelta(seconds=2160))
    fifth = [m for m, _, _ in sqs.sent if m.message_type == fanout.DELIVER and m.payload["attempt"] == 5]
    sqs.sent.clear()
    return fifth[0]


def test_a_failed_disable_is_finished_when_the_last_attempt_is_redelivered(
    org: Org, receiver: Receiver, sqs: RecordingSqs, subscribed: Subscribed, monkeypatch: pytest.MonkeyPatch
) -> None:
    fifth = fail_four_times(receiver, sqs)
    real = subscriptions.disable_for_failures
    calls = iter([RuntimeError("DynamoDB throttled")])

    def flaky(*args: Any, **kwargs: Any) -> Any:
        failure = next(calls, None)
        if failure is not None:
            raise failure
        return real(*args, **kwargs)

    monkeypatch.setattr(subscriptions, "disable_for_failures", flaky)
    at = NOW + timedelta(seconds=9360)
    with pytest.raises(RuntimeError):
        handle(fifth, at)
    assert the_subscription(org, subscribed.subscription_id).enabled
    handle(fifth, at + timedelta(seconds=60))  # SQS redelivers it
    assert len(receiver.requests) == 5
    assert not the_subscription(org, subscribed.subscription_id).enabled
    (notice, _, _) = sqs.take(delivery.SUBSCRIPTION_DISABLED)[0]
    handle(notice, at + timedelta(seconds=61))
    assert len(sent_emails()) == 1


def test_a_subscription_re_enabled_by_hand_stays_enabled_when_the_last_attempt_is_redelivered(
    org: Org, receiver: Receiver, sqs: RecordingSqs, subscribed: Subscribed
) -> None:
    fifth = fail_four_times(receiver, sqs)
    at = NOW + timedelta(seconds=9360)
    handle(fifth, at)
    subscriptions.update_subscription(
        organization_id=org.organization_id,
        subscription_id=subscribed.subscription_id,
        now=at + timedelta(minutes=10),
        enabled=True,
        settings=get_settings(),
    )
    handle(fifth, at + timedelta(minutes=11))
    assert the_subscription(org, subscribed.subscription_id).enabled


def test_no_email_without_an_owner_or_once_re_enabled(org: Org, receiver: Receiver, sqs: RecordingSqs) -> None:
    created = subscribe(org, receiver.url(), owner_email=None)
    notice = Message(
        delivery.SUBSCRIPTION_DISABLED,
        org.organization_id,
        {"subscription_id": created.record.subscription_id, "delivery_key": "missing"},
    )
    subscriptions.disable_for_failures(org.organization_id, created.record.subscription_id, NOW)
    handle(notice, NOW)
    assert sent_emails() == []
    owned = subscribe(org, receiver.url())
    notice = Message(
        delivery.SUBSCRIPTION_DISABLED,
        org.organization_id,
        {"subscription_id": owned.record.subscription_id, "delivery_key": "missing"},
    )
    handle(notice, NOW)  # still enabled: nothing to say
    assert sent_emails() == []


def test_an_ses_failure_raises_so_sqs_retries_the_notice(org: Org, receiver: Receiver, sqs: RecordingSqs) -> None:
    from botocore.exceptions import ClientError

    class RefusingSes:
        def send_email(self, **_: Any) -> Any:
            raise ClientError({"Error": {"Code": "Throttling", "Message": "slow down"}}, "SendEmail")

    created = subscribe(org, receiver.url())
    subscriptions.disable_for_failures(org.organization_id, created.record.subscription_id, NOW)
    aws.set_client("ses", RefusingSes())
    notice = Message(
        delivery.SUBSCRIPTION_DISABLED,
        org.organization_id,
        {"subscription_id": created.record.subscription_id, "delivery_key": "missing"},
    )
    with pytest.raises(RuntimeError, match="SES_Throttling"):
        handle(notice, NOW)


def test_the_consumers_are_registered() -> None:
    import chalicelib.workers.handlers  # noqa: F401

    assert consumers.consumers_of(fanout.DELIVER) == ["outbound.deliver"]
    assert consumers.consumers_of(delivery.SUBSCRIPTION_DISABLED) == ["outbound.owner_notice"]
    for message_type in ("incident.created", "incident.status_changed", "incident.acknowledged"):
        assert "outbound.fanout" in consumers.consumers_of(message_type)
    assert "outbound.fanout" not in consumers.consumers_of("incident.alert_received")
