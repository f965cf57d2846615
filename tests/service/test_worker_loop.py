"""The local worker loop hands Lambda-shaped SQS batches to the same handler Lambda calls."""

from __future__ import annotations

import threading
from typing import Any

from chalice.app import SQSEventConfig

from chalicelib import aws
from chalicelib.local.worker_loop import QueueWorker
from chalicelib.workers import dispatch
from chalicelib.workers.messages import EVENTS_QUEUE, Message, publish

received: list[Message] = []
failures_left = {"count": 0}


@dispatch.handles("test.recorded")
def _record(message: Message) -> None:
    received.append(message)


@dispatch.handles("test.flaky")
def _flaky(message: Message) -> None:
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
