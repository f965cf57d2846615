"""Long-poll the local queues and call the same handlers Lambda calls, with Lambda-shaped events;
run the scheduled handlers every LOCAL_SCHEDULE_SECONDS (default 15)."""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import uuid
from typing import Any

from chalice.app import Chalice, ScheduledEventConfig, SQSEventConfig
from chalice.local import LambdaContext

from chalicelib import aws
from chalicelib.queue.messages import short_queue_name
from chalicelib.settings import get_settings

logger = logging.getLogger("tocsin.local.workers")


def lambda_record(message: dict[str, Any], queue_arn: str, region: str) -> dict[str, Any]:
    body = message["Body"]
    return {
        "messageId": message["MessageId"],
        "receiptHandle": message["ReceiptHandle"],
        "body": body,
        "attributes": message.get("Attributes", {}),
        "messageAttributes": message.get("MessageAttributes", {}),
        "md5OfBody": message.get("MD5OfBody") or hashlib.md5(body.encode()).hexdigest(),
        "eventSource": "aws:sqs",
        "eventSourceARN": queue_arn,
        "awsRegion": region,
    }


class QueueWorker(threading.Thread):
    def __init__(self, app: Chalice, config: SQSEventConfig, stop: threading.Event, wait_seconds: int = 1) -> None:
        super().__init__(name=f"worker-{config.name}", daemon=True)
        self.handler = _find_handler(config)
        self.config = config
        self.stop_event = stop
        self.wait_seconds = wait_seconds
        self.processed = 0
        self._queue_arn: str | None = None

    def run(self) -> None:
        while not self.stop_event.is_set():
            try:
                self.poll_once()
            except Exception:
                if not self.stop_event.is_set():
                    logger.exception("worker poll failed", extra={"queue": short_queue_name(self.config.queue)})
                    self.stop_event.wait(1)

    def poll_once(self) -> int:
        """Receive one batch, hand it to the handler, delete what succeeded; returns the count done."""
        sqs = aws.client("sqs")
        url = aws.queue_url(short_queue_name(self.config.queue))
        if self._queue_arn is None:  # asked once: a round trip before every receive delayed each message
            self._queue_arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"][
                "QueueArn"
            ]
        arn = self._queue_arn
        region = get_settings().aws_region
        received = sqs.receive_message(
            QueueUrl=url,
            MaxNumberOfMessages=min(10, self.config.batch_size),
            WaitTimeSeconds=self.wait_seconds,
            AttributeNames=["All"],
            MessageAttributeNames=["All"],
        ).get("Messages", [])
        if not received:
            return 0
        records = [lambda_record(m, arn, region) for m in received]
        context = LambdaContext(self.config.name, 256, max_runtime_ms=60_000)
        result = self.handler({"Records": records}, context) or {}
        failed = {f["itemIdentifier"] for f in result.get("batchItemFailures", [])}
        done = [r for r in records if r["messageId"] not in failed]
        if done:
            sqs.delete_message_batch(
                QueueUrl=url,
                Entries=[{"Id": str(i), "ReceiptHandle": r["receiptHandle"]} for i, r in enumerate(done)],
            )
        self.processed += len(done)
        return len(done)


def _find_handler(config: SQSEventConfig | ScheduledEventConfig) -> Any:
    import importlib

    module_name, _, function_name = config.handler_string.rpartition(".")
    return getattr(importlib.import_module(module_name), function_name)


class ScheduleWorker(threading.Thread):
    """Runs a scheduled handler every `interval` seconds (EventBridge's role on AWS), with a
    CloudWatch scheduled-event shape. The first run is right away."""

    def __init__(self, config: ScheduledEventConfig, stop: threading.Event, interval: float) -> None:
        super().__init__(name=f"schedule-{config.name}", daemon=True)
        self.handler = _find_handler(config)
        self.config = config
        self.stop_event = stop
        self.interval = interval
        self.runs = 0

    def run(self) -> None:
        while not self.stop_event.is_set():
            try:
                self.run_once()
            except Exception:
                logger.exception("scheduled handler failed", extra={"schedule": self.config.name})
            self.stop_event.wait(self.interval)

    def run_once(self) -> Any:
        from chalicelib import clock

        settings = get_settings()
        event = {
            "version": "0",
            "id": str(uuid.uuid4()),
            "detail-type": "Scheduled Event",
            "source": "aws.events",
            "account": "000000000000",
            "time": clock.isoformat(clock.now()),
            "region": settings.aws_region,
            "resources": [f"arn:aws:events:{settings.aws_region}:000000000000:rule/{self.config.name}"],
            "detail": {},
        }
        result = self.handler(event, LambdaContext(self.config.name, 256, max_runtime_ms=60_000))
        self.runs += 1
        return result


def schedule_interval() -> float:
    return float(os.environ.get("LOCAL_SCHEDULE_SECONDS", "15"))


def pollers_per_queue() -> int:
    """Lambda runs several batches of a queue at once; so do we (LOCAL_QUEUE_POLLERS, default 4),
    so a slow webhook receiver does not hold up escalation timers behind it."""
    try:
        return max(1, int(os.environ.get("LOCAL_QUEUE_POLLERS", "4")))
    except ValueError:
        return 4


def start_workers(app: Chalice, stop: threading.Event, wait_seconds: int = 1) -> list[QueueWorker | ScheduleWorker]:
    workers: list[QueueWorker | ScheduleWorker] = [
        QueueWorker(app, source, stop, wait_seconds)
        for source in app.event_sources
        if isinstance(source, SQSEventConfig)
        for _ in range(pollers_per_queue())
    ]
    interval = schedule_interval()
    workers += [
        ScheduleWorker(source, stop, interval)
        for source in app.event_sources
        if isinstance(source, ScheduledEventConfig)
    ]
    for worker in workers:
        worker.start()
    return workers
