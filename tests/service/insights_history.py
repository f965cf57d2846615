"""A known history for the insights tests: incidents opened, acknowledged and resolved at chosen
offsets through the incident commands, then the events queue fed to the rollups' consumers only."""

from __future__ import annotations

from datetime import datetime

from chalicelib import aws
from chalicelib.auth.principal import Principal
from chalicelib.auth.scopes import ALL_SCOPES
from chalicelib.incident import commands
from chalicelib.insights import handlers
from chalicelib.queue.messages import EVENTS_QUEUE, Message
from chalicelib.settings import get_settings
from tests.kit.factories import Person

CONSUMERS = {
    "incident.created": handlers.on_created,
    "incident.acknowledged": handlers.on_acknowledged,
    "incident.status_changed": handlers.on_status_changed,
    "incident.escalated": handlers.on_escalated,
    "notification.page_sent": handlers.on_paged,
    "alert.event_counted": handlers.on_alert_event,
    "alert.auto_resolved": handlers.on_alert_auto_resolved,
}


def drain() -> list[Message]:
    sqs = aws.client("sqs")
    url = aws.queue_url(EVENTS_QUEUE)
    found: list[Message] = []
    while True:
        received = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=0).get("Messages", [])
        if not received:
            return found
        for raw in received:
            found.append(Message.from_json(raw["Body"]))
            sqs.delete_message(QueueUrl=url, ReceiptHandle=raw["ReceiptHandle"])


def feed_rollups(*, times: int = 1) -> list[Message]:
    """Every message on the queue to the insights consumers (`times` > 1: as SQS redelivering)."""
    messages = drain()
    for _ in range(times):
        for message in messages:
            consumer = CONSUMERS.get(message.message_type)
            if consumer is not None:
                consumer(message, get_settings())
    return messages


def as_person(organization_id: str, person: Person) -> Principal:
    return Principal(
        organization_id=organization_id,
        credential_kind="session",
        scopes=frozenset(ALL_SCOPES),
        user_id=person.user_id,
        email=person.email,
        name=person.name,
        display_name=person.email,
        role="responder",
    )


def acknowledge(organization_id: str, number: str, person: Person, at: datetime) -> None:
    commands.acknowledge(
        organization_id=organization_id, incident_number=number, principal=as_person(organization_id, person), now=at
    )


def move(organization_id: str, number: str, status: str, person: Person, at: datetime) -> None:
    commands.change_status(
        organization_id=organization_id,
        incident_number=number,
        status=status,
        comment=None,
        now=at,
        principal=as_person(organization_id, person),
    )
