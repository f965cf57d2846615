"""Route each SQS record to the handler for its message type; report partial batch failures."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from chalicelib.workers.messages import Message

logger = logging.getLogger("tocsin.workers")

MessageHandler = Callable[[Message], None]
_handlers: dict[str, MessageHandler] = {}


def handles(message_type: str) -> Callable[[MessageHandler], MessageHandler]:
    def register(function: MessageHandler) -> MessageHandler:
        _handlers[message_type] = function
        return function

    return register


def registered_types() -> list[str]:
    return sorted(_handlers)


def handle_records(records: list[dict[str, Any]]) -> dict[str, list[dict[str, str]]]:
    """Process a Lambda SQS batch; failed records are returned for redelivery (then the DLQ)."""
    # The consumers register on import; imported here, at the first batch, so the API function
    # (which shares app.py) never loads them.
    import chalicelib.workers.handlers  # noqa: F401

    failures: list[dict[str, str]] = []
    for record in records:
        message_id = str(record.get("messageId", ""))
        try:
            message = Message.from_json(str(record["body"]))
        except (KeyError, ValueError, TypeError):
            # A body we cannot read will never succeed; dropping it beats poisoning the batch.
            logger.error("unreadable message dropped", extra={"sqs_message_id": message_id})
            continue
        handler = _handlers.get(message.message_type)
        if handler is None:
            logger.info("no consumer for message type", extra={"message_type": message.message_type})
            continue
        try:
            handler(message)
        except Exception:
            logger.exception("message failed", extra={"message_type": message.message_type})
            failures.append({"itemIdentifier": message_id})
    return {"batchItemFailures": failures}
