"""The local worker loop hands Lambda-shaped SQS batches to the same handler Lambda calls."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from chalice.app import SQSEventConfig

from chalicelib import aws
from chalicelib.local.worker_loop import QueueWorker
from chalicelib.queue import consumers
from chalicelib.queue.messages import EVENTS_QUEUE, Message, publish
from chalicelib.settings import Settings
from chalicelib.workers import dispatch

received: list[Message] = []
failures_left = {"count": 0}


@consumers.handles("test.recorded")
def _record(message: Message, settings: Settings) -> None:
    received.append(message)


@consumers.handles("test.flaky")
def _flaky(message: Message, settings: Settings) -> None:
    if failures_left["count"] > 0:
        failures_left["count"] -= 1
        raise RuntimeError("provider down")
    received.append(message)


def _events_worker() -> QueueWorker:
    from app import app

    config = next(s for s in app.event_sources if isinstance(s, SQSEventConfig) and s.queue == "tocsin-events")
    return QueueWorker(app, config, threading.Event(), wait_seconds=0)


def _queue_depths() -> dict[str, Any]:
    attributes = aws.client("sqs").get_queue_attributes(
        QueueUrl=aws.queue_url(EVENTS_QUEUE),
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )["Attributes"]
    return {k: int(v) for k, v in attributes.items()}


def test_message_reaches_its_handler_and_is_deleted(aws_env: None) -> None:
    received.clear()
    publish(Message("test.recorded", "org-1", {"n": 1}))
    worker = _events_worker()
    assert worker.poll_once() == 1
    assert [m.payload for m in received] == [{"n": 1}]
    assert _queue_depths() == {"ApproximateNumberOfMessages": 0, "ApproximateNumberOfMessagesNotVisible": 0}


def test_failed_record_is_left_for_redelivery_and_others_are_deleted(aws_env: None) -> None:
    received.clear()
    failures_left["count"] = 1
    publish(Message("test.flaky", "org-1", {"n": 1}))
    publish(Message("test.recorded", "org-1", {"n": 2}))
    worker = _events_worker()
    done = 0
    for _ in range(3):
        done += worker.poll_once()
    assert done == 1
    assert [m.payload for m in received] == [{"n": 2}]
    # The failed one is in flight (invisible) until its visibility timeout, then redelivered.
    assert _queue_depths()["ApproximateNumberOfMessagesNotVisible"] == 1


def test_handle_records_reports_partial_batch_failures() -> None:
    failures_left["count"] = 1
    good = {"messageId": "a", "body": Message("test.recorded", "o", {}).to_json()}
    bad = {"messageId": "b", "body": Message("test.flaky", "o", {}).to_json()}
    unreadable = {"messageId": "c", "body": "not json"}
    result = dispatch.handle_records([good, bad, unreadable])
    assert result == {"batchItemFailures": [{"itemIdentifier": "b"}]}


shared_calls: list[str] = []
shared_failures = {"second": 0}


@consumers.handles("test.shared", name="test.first")
def _shared_first(message: Message, settings: Settings) -> None:
    shared_calls.append("first")


@consumers.handles("test.shared", name="test.second")
def _shared_second(message: Message, settings: Settings) -> None:
    if shared_failures["second"] > 0:
        shared_failures["second"] -= 1
        raise RuntimeError("receiver down")
    shared_calls.append("second")


def test_every_consumer_of_a_type_runs(aws_env: None) -> None:
    shared_calls.clear()
    record = {"messageId": "a", "body": Message("test.shared", "o", {}).to_json()}
    assert dispatch.handle_records([record]) == {"batchItemFailures": []}
    assert shared_calls == ["first", "second"]
    assert consumers.consumers_of("test.shared") == ["test.first", "test.second"]


@consumers.handles("test.ordered", name="test.later")
def _ordered_later(message: Message, settings: Settings) -> None:
    shared_calls.append("later")


@consumers.handles("test.ordered", name="test.pages", first=True)
def _ordered_pages(message: Message, settings: Settings) -> None:
    shared_calls.append("pages")


def test_a_consumer_registered_first_runs_before_those_registered_earlier(aws_env: None) -> None:
    shared_calls.clear()
    record = {"messageId": "a", "body": Message("test.ordered", "o", {}).to_json()}
    assert dispatch.handle_records([record]) == {"batchItemFailures": []}
    assert shared_calls == ["pages", "later"]
    assert consumers.consumers_of("test.ordered") == ["test.pages", "test.later"]


def test_paging_follows_a_new_incident_before_the_webhook_fan_out() -> None:
    import chalicelib.workers.handlers  # noqa: F401

    names = consumers.consumers_of("incident.created")
    assert names[0] == "chalicelib.paging.handlers.on_incident_created"
    assert "outbound.fanout" in names[1:]


def test_a_failed_consumer_is_retried_alone(aws_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    shared_calls.clear()
    shared_failures["second"] = 1
    resent: list[tuple[Message, int]] = []
    monkeypatch.setattr(consumers, "publish", lambda message, delay_seconds: resent.append((message, delay_seconds)))
    original = Message("test.shared", "o", {"n": 1})
    # The record succeeds, so the first consumer does not run again; the second gets its own message.
    assert dispatch.handle_records([{"messageId": "a", "body": original.to_json()}]) == {"batchItemFailures": []}
    assert shared_calls == ["first"]
    [(retry, delay)] = resent
    assert (retry.consumer, retry.message_id, retry.payload) == ("test.second", original.message_id, {"n": 1})
    assert delay == consumers.CONSUMER_RETRY_DELAY_SECONDS
    assert dispatch.handle_records([{"messageId": "b", "body": retry.to_json()}]) == {"batchItemFailures": []}
    assert shared_calls == ["first", "second"]


def test_when_the_resend_fails_the_record_goes_back_to_sqs(aws_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    shared_failures["second"] = 1

    def unavailable(message: Message, delay_seconds: int) -> None:
        raise RuntimeError("SQS unavailable")

    monkeypatch.setattr(consumers, "publish", unavailable)
    record = {"messageId": "a", "body": Message("test.shared", "o", {}).to_json()}
    assert dispatch.handle_records([record]) == {"batchItemFailures": [{"itemIdentifier": "a"}]}


def test_a_message_for_one_consumer_fails_back_to_sqs(aws_env: None) -> None:
    shared_calls.clear()
    shared_failures["second"] = 1
    addressed = Message("test.shared", "o", {}, consumer="test.second")
    assert dispatch.handle_records([{"messageId": "b", "body": addressed.to_json()}]) == {
        "batchItemFailures": [{"itemIdentifier": "b"}]
    }
    assert shared_calls == []
