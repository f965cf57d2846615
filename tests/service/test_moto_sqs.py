"""The emulator's cheaper SQS polls (chalicelib/local/moto_sqs.py) pick the same messages as moto's
own per-message checks: visible and not delayed, within the retention period."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws
from moto.core.models import DEFAULT_ACCOUNT_ID
from moto.sqs.models import sqs_backends

from chalicelib.local.moto_sqs import cheaper_sqs_polls

REGION = "us-east-1"


@pytest.fixture
def sqs() -> Iterator[Any]:
    cheaper_sqs_polls()
    with mock_aws():
        yield boto3.client("sqs", region_name=REGION)


def _backend() -> Any:
    return sqs_backends[DEFAULT_ACCOUNT_ID][REGION]


def _queue_with_every_kind(sqs: Any) -> tuple[str, dict[str, str]]:
    """A queue holding one message of each kind: ready, delayed, in flight, past retention."""
    url = sqs.create_queue(QueueName="timers")["QueueUrl"]
    ids = {"ready": sqs.send_message(QueueUrl=url, MessageBody="ready")["MessageId"]}
    ids["delayed"] = sqs.send_message(QueueUrl=url, MessageBody="delayed", DelaySeconds=900)["MessageId"]
    ids["in_flight"] = sqs.send_message(QueueUrl=url, MessageBody="in flight")["MessageId"]
    ids["expired"] = sqs.send_message(QueueUrl=url, MessageBody="expired")["MessageId"]
    queue = _backend().get_queue("timers")
    by_id = {message.id: message for message in queue._messages}
    by_id[ids["in_flight"]].change_visibility(600)
    by_id[ids["expired"]].sent_timestamp -= 5 * 86400 * 1000  # past the default four days
    return url, ids


def test_the_messages_a_queue_offers_are_the_visible_undelayed_ones(sqs: Any) -> None:
    _, ids = _queue_with_every_kind(sqs)
    queue = _backend().get_queue("timers")
    offered = {message.id for message in queue.messages}
    by_moto = {message.id for message in queue._messages if message.visible and not message.delayed}
    assert offered == by_moto == {ids["ready"], ids["expired"]}


def test_the_retention_check_agrees_with_the_queue_attribute(sqs: Any) -> None:
    _, ids = _queue_with_every_kind(sqs)
    backend = _backend()
    queue = backend.get_queue("timers")
    retention = int(backend.get_queue_attributes("timers", ["MessageRetentionPeriod"])["MessageRetentionPeriod"])
    assert retention == 4 * 86400
    for message in queue._messages:
        expected = message.id != ids["expired"]
        assert backend.is_message_valid_based_on_retention_period("timers", message) is expected


def test_a_receive_returns_the_ready_message_and_never_the_others(sqs: Any) -> None:
    url, ids = _queue_with_every_kind(sqs)
    received: list[str] = []
    for _ in range(3):
        answer = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=0)
        received += [message["MessageId"] for message in answer.get("Messages", [])]
    assert received == [ids["ready"]]


def test_a_changed_retention_period_is_read(sqs: Any) -> None:
    url = sqs.create_queue(QueueName="short", Attributes={"MessageRetentionPeriod": "60"})["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody="old")
    message = _backend().get_queue("short")._messages[0]
    message.sent_timestamp -= 61 * 1000
    assert _backend().is_message_valid_based_on_retention_period("short", message) is False
    message.sent_timestamp += 30 * 1000
    assert _backend().is_message_valid_based_on_retention_period("short", message) is True


def test_applying_twice_changes_nothing() -> None:
    from moto.sqs import models

    cheaper_sqs_polls()
    installed = vars(models.Queue)["messages"]
    cheaper_sqs_polls()
    assert vars(models.Queue)["messages"] is installed
