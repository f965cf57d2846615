"""The SQS entry point Lambda and the local worker loop share: a batch in, partial failures out."""

from __future__ import annotations

import logging
from typing import Any

from chalicelib import aws
from chalicelib.queue.consumers import handle
from chalicelib.queue.messages import Message
from chalicelib.settings import get_settings
from chalicelib.store.scope import read_scope

logger = logging.getLogger("tocsin.workers")


def handle_records(records: list[dict[str, Any]]) -> dict[str, list[dict[str, str]]]:
    """Process a Lambda SQS batch; failed records are returned for redelivery (then the DLQ)."""
    # The consumers register on import; imported here, at the first batch, so the API function
    # (which shares app.py) never loads them.
    import chalicelib.workers.handlers  # noqa: F401

    aws.bind_tables()  # the entry point binds the tables once; the consumers below use them
    settings = get_settings()  # and reads the settings once, handed to every consumer

    failures: list[dict[str, str]] = []
    for record in records:
        message_id = str(record.get("messageId", ""))
        try:
            message = Message.from_json(str(record["body"]), receive_count=receive_count(record))
        except (KeyError, ValueError, TypeError):
            # A body we cannot read will never succeed; dropping it beats poisoning the batch.
            logger.error("unreadable message dropped", extra={"sqs_message_id": message_id})
            continue
        # Every consumer of the message shares one read scope: each item is read once per message.
        with read_scope():
            handled = handle(message, settings=settings)
        if not handled:
            failures.append({"itemIdentifier": message_id})
    return {"batchItemFailures": failures}


def receive_count(record: dict[str, Any]) -> int:
    """The record's ApproximateReceiveCount (SQS attributes are strings); 1 when absent or odd."""
    attributes = record.get("attributes")
    raw = attributes.get("ApproximateReceiveCount") if isinstance(attributes, dict) else None
    try:
        return max(1, int(str(raw)))
    except ValueError:
        return 1
