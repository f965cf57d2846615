"""Fakes for the outbound webhook tests: a receiver on 127.0.0.1 and a simulated events queue.

The queue is simulated: every message the code publishes is recorded with its delay (SQS would
hold it that long), and `run_queue` hands each to the real dispatcher at the instant it becomes
visible, with the clock frozen at that instant. Nothing sleeps.
"""

from __future__ import annotations

import heapq
import itertools
import ssl
import threading
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from chalicelib import aws, clock
from chalicelib.outbound import subscriptions
from chalicelib.outbound.tables import WebhookDeliveryRecord, WebhookSubscriptionRecord
from chalicelib.queue.messages import EVENTS_QUEUE, Message
from chalicelib.settings import get_settings
from chalicelib.workers import dispatch
from tests.conftest import NOW, Org, reconfigure

OWNER = "owner@acme.test"


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    at: datetime


@dataclass
class Receiver:
    """Answers each POST with the next status in `answers` (then `default`), and records it."""

    answers: list[int] = field(default_factory=list)
    default: int = 204
    requests: list[Received] = field(default_factory=list)
    server: ThreadingHTTPServer | None = None

    def url(self, path: str = "/hooks/tocsin") -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}{path}"

    def start(self, tls: ssl.SSLContext | None = None) -> Receiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                headers = {key.lower(): value for key, value in self.headers.items()}
                receiver.requests.append(Received(self.path, headers, body, clock.now()))
                status = receiver.answers.pop(0) if receiver.answers else receiver.default
                self.send_response(status)
                if status in (301, 302):
                    self.send_header("Location", "http://169.254.169.254/latest/meta-data/")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        if tls is not None:
            self.server.socket = tls.wrap_socket(self.server.socket, server_side=True)
        # A short poll interval: shutdown() waits for one poll (0.5 s by default) after every test.
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()


class RecordingSqs:
    """Records what is published (with the delay asked for) instead of queueing it."""

    def __init__(self) -> None:
        self.sent: list[tuple[Message, int, datetime]] = []

    def send_message(self, **arguments: Any) -> dict[str, str]:
        message = Message.from_json(arguments["MessageBody"])
        self.sent.append((message, int(arguments.get("DelaySeconds", 0)), clock.now()))
        return {"MessageId": message.message_id}

    def take(self, message_type: str | None = None) -> list[tuple[Message, int, datetime]]:
        taken = [sent for sent in self.sent if message_type is None or sent[0].message_type == message_type]
        self.sent = [sent for sent in self.sent if sent not in taken]
        return taken


def run_queue(sqs: RecordingSqs, until: datetime) -> list[tuple[datetime, Message, int]]:
    """Hand every published message to the dispatcher when it becomes visible (clock frozen there),
    until the queue is empty or `until`. Returns (visible at, message, delay) in order."""
    order = itertools.count()
    pending: list[tuple[datetime, int, Message, int]] = []
    handled = []

    def collect() -> None:
        for message, delay, sent_at in sqs.take():
            heapq.heappush(pending, (sent_at + timedelta(seconds=delay), next(order), message, delay))

    collect()
    while pending and pending[0][0] <= until:
        visible_at, _, message, delay = heapq.heappop(pending)
        with clock.frozen(visible_at):
            outcome = dispatch.handle_records([{"messageId": message.message_id, "body": message.to_json()}])
        assert outcome == {"batchItemFailures": []}
        handled.append((visible_at, message, delay))
        collect()
    # Not visible by `until`: back on the queue, as published.
    sqs.sent.extend(
        (message, delay, visible_at - timedelta(seconds=delay)) for visible_at, _, message, delay in pending
    )
    return handled


def record_published_messages() -> RecordingSqs:
    """Allow http targets on 127.0.0.1 (the local stage's rule) and record what is published."""
    reconfigure(LOCAL_ALLOW_HTTP_WEBHOOKS="true")
    recording = RecordingSqs()
    aws.set_client("sqs", recording)
    aws._clients[f"queue-url:{EVENTS_QUEUE}"] = "https://sqs.test/events"  # never called for real
    return recording


def subscribe(org: Org, url: str, *, owner_email: str | None = OWNER, event_types: list[str] | None = None) -> Any:
    return subscriptions.create_subscription(
        organization_id=org.organization_id,
        url=url,
        event_types=event_types or ["*"],
        now=NOW,
        owner_email=owner_email,
        description="Ops receiver",
        settings=get_settings(),
    )


def open_incident(org: Org) -> str:
    from chalicelib.catalog import service as services
    from chalicelib.incident import service

    svc = services.create_service(organization_id=org.organization_id, name="Checkout", now=NOW)
    with clock.frozen(NOW):
        record = service.create_incident(
            organization_id=org.organization_id,
            request=service.NewIncident(title="Checkout down", service_keys=[svc.service_key], severity="SEV1"),
            now=NOW,
            actor="tester",
            settings=get_settings(),
        )
    return record.incident_number


def sent_emails() -> list[Any]:
    from moto.ses.models import ses_backends

    return list(ses_backends["123456789012"]["us-east-1"].sent_messages)


def the_delivery(subscription_id: str) -> WebhookDeliveryRecord:
    (record,) = list(WebhookDeliveryRecord.query(subscription_id, consistent_read=True))
    return record


def the_subscription(org: Org, subscription_id: str) -> WebhookSubscriptionRecord:
    return WebhookSubscriptionRecord.get(org.organization_id, subscription_id, consistent_read=True)
