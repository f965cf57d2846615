"""Messages on the side-effect queues. Written after the DynamoDB write commits."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from chalicelib import aws, clock

# Queue short names; the stage prefix comes from settings.
EVENTS_QUEUE = "events"
QUEUES: tuple[str, ...] = (EVENTS_QUEUE,)
MAX_DELAY_SECONDS = 900
# Every queue has a dead-letter queue named with this suffix, where a message goes after
# MAX_RECEIVE_COUNT failed receives: the deployment template and local provisioning both read these.
DLQ_SUFFIX = "-dlq"
MAX_RECEIVE_COUNT = 5
# Handlers subscribe with `queue="tocsin-<short name>"` (app.py); the stage prefix replaces this one
# in the deployment template and on the local worker loop.
QUEUE_NAME_PREFIX = "tocsin-"


def short_queue_name(subscribed_queue: str | None) -> str:
    """The short name of the queue an SQS handler subscribes to (`tocsin-events` -> `events`)."""
    return (subscribed_queue or "").removeprefix(QUEUE_NAME_PREFIX)


@dataclass(frozen=True)
class Message:
    message_type: str
    organization_id: str
    payload: dict[str, Any]
    message_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    occurred_at: str = field(default_factory=lambda: clock.isoformat(clock.now()))
    # Set only on a retry addressed to one consumer of a message type that has several.
    consumer: str | None = None
    # Which receive of the SQS record this is (its ApproximateReceiveCount; not in the body).
    receive_count: int = field(default=1, compare=False)

    @property
    def final_attempt(self) -> bool:
        """This receive is the last before SQS moves the record to the DLQ: a consumer that
        retries by raising records its failure now instead."""
        return self.receive_count >= MAX_RECEIVE_COUNT

    def to_json(self) -> str:
        document: dict[str, Any] = {
            "message_type": self.message_type,
            "message_id": self.message_id,
            "organization_id": self.organization_id,
            "occurred_at": self.occurred_at,
            "payload": self.payload,
        }
        if self.consumer is not None:
            document["consumer"] = self.consumer
        return json.dumps(document)

    @classmethod
    def from_json(cls, body: str, *, receive_count: int = 1) -> Message:
        document = json.loads(body)
        return cls(
            message_type=str(document["message_type"]),
            organization_id=str(document["organization_id"]),
            payload=dict(document.get("payload") or {}),
            message_id=str(document["message_id"]),
            occurred_at=str(document["occurred_at"]),
            consumer=str(document["consumer"]) if document.get("consumer") else None,
            receive_count=receive_count,
        )


def publish(message: Message, *, queue: str = EVENTS_QUEUE, delay_seconds: int = 0) -> None:
    """Send one message; delays beyond SQS's 900 s cap are the caller's to re-enqueue."""
    aws.client("sqs").send_message(
        QueueUrl=aws.queue_url(queue),
        MessageBody=message.to_json(),
        DelaySeconds=max(0, min(delay_seconds, MAX_DELAY_SECONDS)),
    )


def due_in_seconds(due_at: datetime, now: datetime) -> int:
    return max(0, int((due_at - now).total_seconds() + 0.999))
