"""The consumers of each message type, and running them for one message.

A message type may have several consumers (the escalation and the outbound webhooks both follow
`incident.created`). They must not retry each other: when one of several fails, the message is
re-sent addressed to that consumer alone (`Message.consumer`), and only a failure to re-send, or
a failure of a message already addressed to one consumer, returns the record to SQS (and, after
its receive count, the DLQ).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from dataclasses import dataclass

from chalicelib.queue.messages import Message, publish
from chalicelib.settings import Settings

logger = logging.getLogger("tocsin.workers")

# A consumer gets the settings its entry point (the worker dispatch) read once for the batch.
MessageHandler = Callable[[Message, Settings], None]
# A consumer retried on its own waits this long, as SQS redelivery would.
CONSUMER_RETRY_DELAY_SECONDS = 30


@dataclass(frozen=True)
class Consumer:
    name: str
    function: MessageHandler
    first: bool = False  # runs before the others of its message type (paging people beats webhooks)


_consumers: dict[str, list[Consumer]] = {}


def handles(
    message_type: str, *, name: str | None = None, first: bool = False
) -> Callable[[MessageHandler], MessageHandler]:
    """Register a consumer. Consumers run in registration order, those registered with `first`
    before the rest: the one that pages people should not wait for webhook fan-out."""

    def register(function: MessageHandler) -> MessageHandler:
        consumer = Consumer(name or f"{function.__module__}.{function.__qualname__}", function, first)
        registered = _consumers.setdefault(message_type, [])
        registered[:] = [existing for existing in registered if existing.name != consumer.name]
        registered.append(consumer)
        registered.sort(key=lambda existing: not existing.first)  # stable: order kept within each group
        return function

    return register


def registered_types() -> list[str]:
    return sorted(_consumers)


def consumers_of(message_type: str) -> list[str]:
    return [consumer.name for consumer in _consumers.get(message_type, [])]


def handle(message: Message, *, settings: Settings) -> bool:
    """Run the message's consumers; False when SQS should deliver the record again."""
    consumers = [
        consumer
        for consumer in _consumers.get(message.message_type, [])
        if message.consumer is None or consumer.name == message.consumer
    ]
    if not consumers:
        logger.info("no consumer for message type", extra={"message_type": message.message_type})
        return True
    failed = [consumer for consumer in consumers if not _run(consumer, message, settings)]
    if not failed:
        return True
    if len(consumers) == 1:
        return False
    try:
        for consumer in failed:
            retry = dataclasses.replace(message, consumer=consumer.name)
            publish(retry, delay_seconds=CONSUMER_RETRY_DELAY_SECONDS)
    except Exception:
        logger.exception("could not re-send for failed consumers", extra={"message_type": message.message_type})
        return False
    return True


def _run(consumer: Consumer, message: Message, settings: Settings) -> bool:
    try:
        consumer.function(message, settings)
    except Exception:
        logger.exception("message failed", extra={"message_type": message.message_type, "consumer": consumer.name})
        return False
    return True
