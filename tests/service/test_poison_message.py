"""A poison message (its consumer always raises) reaches the DLQ after MAX_RECEIVE_COUNT receives,
through the local worker loop on moto SQS with the redrive policy provisioning sets, while the
other messages of its batch are processed once each."""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Iterator

import pytest
from chalice.app import SQSEventConfig

from chalicelib import aws
from chalicelib.local.worker_loop import QueueWorker
from chalicelib.queue import consumers
from chalicelib.queue.messages import DLQ_SUFFIX, EVENTS_QUEUE, MAX_RECEIVE_COUNT, Message, publish
from chalicelib.settings import Settings

handled: Counter[str] = Counter()
poison_receives: list[int] = []


@consumers.handles("test.poison.good")
def _good(message: Message, settings: Settings) -> None:
    handled[str(message.payload["n"])] += 1


@consumers.handles("test.poison.bad")
def _poison(message: Message, settings: Settings) -> None:
    poison_receives.append(message.receive_count)
    raise ValueError("this message can never be handled")


@pytest.fixture
def redelivered_at_once(aws_env: None) -> Iterator[str]:
    """The events queue with no visibility timeout (a failed record is visible again at once, as
    after the timeout in production); restored after the test, as the emulator keeps attributes."""
    sqs = aws.client("sqs")
    url = aws.queue_url(EVENTS_QUEUE)
    before = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["VisibilityTimeout"])["Attributes"]
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"VisibilityTimeout": "0"})
    yield url
    sqs.set_queue_attributes(QueueUrl=url, Attributes=before)


def events_worker() -> QueueWorker:
    from app import app

    config = next(s for s in app.event_sources if isinstance(s, SQSEventConfig) and s.queue == "tocsin-events")
    return QueueWorker(app, config, threading.Event(), wait_seconds=0)


def depth(url: str) -> dict[str, str]:
    names = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
    return dict(aws.client("sqs").get_queue_attributes(QueueUrl=url, AttributeNames=names)["Attributes"])


def dead_letters() -> list[Message]:
    sqs = aws.client("sqs")
    url = aws.queue_url(EVENTS_QUEUE + DLQ_SUFFIX)
    received = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=0).get("Messages", [])
    return [Message.from_json(raw["Body"]) for raw in received]


def test_a_poison_message_reaches_the_dlq_without_holding_back_its_batch(redelivered_at_once: str) -> None:
    handled.clear()
    poison_receives.clear()
    sqs = aws.client("sqs")
    redrive = json.loads(
        sqs.get_queue_attributes(QueueUrl=redelivered_at_once, AttributeNames=["RedrivePolicy"])["Attributes"][
            "RedrivePolicy"
        ]
    )
    assert int(redrive["maxReceiveCount"]) == MAX_RECEIVE_COUNT
    poison = Message("test.poison.bad", "org-1", {"n": "poison"})
    publish(Message("test.poison.good", "org-1", {"n": 1}))
    publish(poison)
    for n in range(2, 6):
        publish(Message("test.poison.good", "org-1", {"n": n}))

    worker = events_worker()
    assert worker.poll_once() == 5  # one batch: every good message done on the first receive
    assert handled == Counter({str(n): 1 for n in range(1, 6)})
    for _ in range(3 * MAX_RECEIVE_COUNT):  # bounded: the poison is received again until redriven
        worker.poll_once()
        if depth(redelivered_at_once) == {
            "ApproximateNumberOfMessages": "0",
            "ApproximateNumberOfMessagesNotVisible": "0",
        }:
            break

    assert poison_receives == list(range(1, MAX_RECEIVE_COUNT + 1))
    assert [m.message_id for m in dead_letters()] == [poison.message_id]
    assert handled == Counter({str(n): 1 for n in range(1, 6)})  # none of the others ran twice
    assert depth(redelivered_at_once) == {
        "ApproximateNumberOfMessages": "0",
        "ApproximateNumberOfMessagesNotVisible": "0",
    }
