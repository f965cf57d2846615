"""Webhook subscribers on moto, against a real receiver on 127.0.0.1 with time frozen: signed like
outbound deliveries, retried on the same schedule, the target checked before each attempt, never
the same attempt twice, and removed (with an email to its address) after five failures."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from datetime import timedelta

import pytest

from chalicelib import aws, clock
from chalicelib.integration import signing
from chalicelib.queue.messages import EVENTS_QUEUE, Message
from chalicelib.settings import get_settings
from chalicelib.statuspage import incidents
from chalicelib.subscriber import links, notice_webhooks, notices
from chalicelib.subscriber.tables import URL_GUARD_PREFIX, SubscriberItem
from tests.conftest import NOW, Org, reconfigure
from tests.service.outbound_fakes import Receiver, RecordingSqs, record_published_messages, run_queue
from tests.service.subscriber_fakes import Page, add_subscriber, make_page, plain_emails, raw_emails, stored


@pytest.fixture
def receiver(aws_env: None) -> Iterator[Receiver]:
    started = Receiver().start()
    yield started
    started.stop()


@pytest.fixture
def sqs(org: Org) -> RecordingSqs:
    return record_published_messages()


@pytest.fixture
def page(org: Org, sqs: RecordingSqs) -> Page:
    return make_page(org)


@pytest.fixture
def hook(org: Org, page: Page, receiver: Receiver) -> SubscriberItem:
    return add_subscriber(org, page, "sub_hook", url=receiver.url(), email_address="ops@example.com")


def open_incident(org: Org, page: Page) -> None:
    with clock.frozen(NOW):
        incidents.create_incident(
            organization_id=org.organization_id,
            page_id=page.page_id,
            title="Slow checkout",
            status="investigating",
            impact="minor",
            body="Looking into it.",
            component_ids=[page.checkout],
            incident_number=None,
            now=NOW,
            settings=get_settings(),
        )


def first_attempt(sqs: RecordingSqs) -> Message:
    """Fan out and run the batch; the first-attempt message, not yet handled."""
    (change,) = [message for message, _, _ in sqs.take("status_page.incident_updated")]
    notices.fan_out(change)
    (batch,) = [message for message, _, _ in sqs.take(notices.NOTICE_BATCH)]
    assert notices.send_batch(batch, now=NOW, settings=get_settings()).webhooks_queued == 1
    (attempt,) = [message for message, _, _ in sqs.take(notices.WEBHOOK_DELIVER)]
    return attempt


def test_a_webhook_subscriber_gets_a_signed_notice(
    org: Org, page: Page, receiver: Receiver, sqs: RecordingSqs, hook: SubscriberItem
) -> None:
    open_incident(org, page)
    run_queue(sqs, until=NOW + timedelta(minutes=1))
    (request,) = receiver.requests
    secret = notice_webhooks.signing_secret(page.page_id, "sub_hook", settings=get_settings())
    assert signing.verify_custom(secret, request.headers, request.body, now=request.at) == int(NOW.timestamp())
    with pytest.raises(Exception, match="does not match"):
        signing.verify_custom(
            notice_webhooks.signing_secret(page.page_id, "sub_other", settings=get_settings()),
            request.headers,
            request.body,
            now=request.at,
        )
    assert request.headers["content-type"] == "application/json"
    assert request.headers["user-agent"] == "Tocsin-Webhooks/1.0"
    assert request.headers["x-tocsin-event-type"] == "incident.created"
    assert request.headers["x-tocsin-delivery-attempt"] == "1"
    body = json.loads(request.body)
    assert request.headers["x-tocsin-event-id"] == body["id"]
    assert body["type"] == "incident.created" and body["status_page"]["slug"] == "acme"
    assert body["incident"]["title"] == "Slow checkout"
    assert body["incident"]["affected_components"] == [{"component_id": page.checkout, "name": "Checkout"}]
    token = body["unsubscribe_url"].split("token=", 1)[1]
    assert links.verify(token, "unsubscribe", settings=get_settings()).subscriber_id == "sub_hook"
    assert raw_emails() == []  # a webhook subscriber's email address is only for trouble


def test_a_failing_webhook_is_retried_on_the_outbound_schedule_then_removed_and_its_address_told(
    org: Org, page: Page, receiver: Receiver, sqs: RecordingSqs, hook: SubscriberItem
) -> None:
    receiver.default = 500
    open_incident(org, page)
    run_queue(sqs, until=NOW + timedelta(hours=4))
    offsets = [int((request.at - NOW).total_seconds()) for request in receiver.requests]
    assert offsets == [0, 60, 60 + 300, 360 + 1800, 2160 + 7200]
    assert [r.headers["x-tocsin-delivery-attempt"] for r in receiver.requests] == ["1", "2", "3", "4", "5"]
    assert len({r.body for r in receiver.requests}) == 1  # every attempt sends the same bytes
    guard_key = URL_GUARD_PREFIX + hashlib.sha256(receiver.url().encode()).hexdigest()
    assert stored(page, "SUB#sub_hook") is None and stored(page, guard_key) is None
    (told,) = plain_emails()
    assert told.destinations["ToAddresses"] == ["ops@example.com"]
    assert told.subject == "[Acme Cloud] Your status webhook was removed"
    assert receiver.url() in told.body and "5 attempts" in told.body and "HTTP 500" in told.body


def test_a_webhook_that_recovers_stays(
    org: Org, page: Page, receiver: Receiver, sqs: RecordingSqs, hook: SubscriberItem
) -> None:
    receiver.answers = [503, 502]
    open_incident(org, page)
    run_queue(sqs, until=NOW + timedelta(hours=4))
    assert [r.headers["x-tocsin-delivery-attempt"] for r in receiver.requests] == ["1", "2", "3"]
    record = next(iter(SubscriberItem.query(page.page_id, SubscriberItem.item_key.startswith("SENT#"))))
    assert (record.delivery_status, record.attempts, record.response_code) == ("succeeded", 3, 204)
    assert stored(page, "SUB#sub_hook") is not None and plain_emails() == []


def test_an_attempt_is_never_posted_twice(
    org: Org, page: Page, receiver: Receiver, sqs: RecordingSqs, hook: SubscriberItem
) -> None:
    open_incident(org, page)
    message = first_attempt(sqs)
    with clock.frozen(NOW):
        notice_webhooks.handle(message, get_settings())
        notice_webhooks.handle(message, get_settings())  # SQS delivered it again
    assert len(receiver.requests) == 1


def test_a_redelivered_batch_queues_an_unattempted_delivery_again_but_it_is_posted_once(
    org: Org, page: Page, receiver: Receiver, sqs: RecordingSqs, hook: SubscriberItem
) -> None:
    open_incident(org, page)
    (change,) = [message for message, _, _ in sqs.take("status_page.incident_updated")]
    notices.fan_out(change)
    (batch,) = [message for message, _, _ in sqs.take(notices.NOTICE_BATCH)]
    assert notices.send_batch(batch, now=NOW, settings=get_settings()).webhooks_queued == 1
    # Delivered again: the first run may have died before publishing, so the unattempted
    # delivery's first attempt is published again.
    assert notices.send_batch(batch, now=NOW, settings=get_settings()).already_claimed == 1
    attempts = [message for message, _, _ in sqs.take(notices.WEBHOOK_DELIVER)]
    assert len(attempts) == 2 and attempts[0].payload == attempts[1].payload
    with clock.frozen(NOW):
        for attempt in attempts:
            notice_webhooks.handle(attempt, get_settings())
    assert len(receiver.requests) == 1


def test_the_target_is_checked_before_each_attempt(
    org: Org, page: Page, receiver: Receiver, sqs: RecordingSqs, hook: SubscriberItem
) -> None:
    open_incident(org, page)
    message = first_attempt(sqs)
    # Outside the local stage a loopback target is refused, whatever it was when subscribed.
    reconfigure(LOCAL_ALLOW_HTTP_WEBHOOKS="false")
    aws.set_client("sqs", sqs)
    aws._clients[f"queue-url:{EVENTS_QUEUE}"] = "https://sqs.test/events"  # never called for real
    with clock.frozen(NOW):
        notice_webhooks.handle(message, get_settings())
    assert receiver.requests == []
    record = next(iter(SubscriberItem.query(page.page_id, SubscriberItem.item_key.startswith("SENT#"))))
    assert (record.delivery_status, record.attempts, record.response_code) == ("retrying", 1, None)
    assert record.last_error is not None and record.last_error.startswith("target refused: url: must use https")


def test_an_unsubscribed_webhook_gets_nothing_more(
    org: Org, page: Page, receiver: Receiver, sqs: RecordingSqs, hook: SubscriberItem
) -> None:
    open_incident(org, page)
    message = first_attempt(sqs)
    hook.delete()
    with clock.frozen(NOW):
        assert (
            notice_webhooks.deliver(
                organization_id=org.organization_id,
                page_id=page.page_id,
                notice_id=str(message.payload["notice_id"]),
                subscriber_id="sub_hook",
                attempt=1,
                now=NOW,
                settings=get_settings(),
            )
            == "gone"
        )
    assert receiver.requests == []
