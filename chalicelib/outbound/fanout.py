"""Fan a domain message out to the organization's webhook subscriptions.

Per message: one Query for the organization's subscriptions (most organizations have none, and
then nothing else is read), then, when some enabled subscription wants one of the message's
events, one GetItem for the incident, one for the organization's name and one BatchGetItem for
the incident's service (its name in the event's `service`). Each (event,
subscription) becomes a WebhookDeliveryRecord written with a conditional put, keyed by the event,
and a "webhook.deliver" message for its first attempt.

A redelivered domain message finds its deliveries written: it creates nothing new and
re-enqueues only those still pending with no attempt made (the earlier run may have stopped
between the write and the publish); the attempt's claim keeps that from sending twice (both are
the delivery kernel's: chalicelib/delivery/attempts.py, `begin` and `run`).

Loop prevention: a change an inbound webhook of integration X caused carries
`source_integration_id` X; a subscription that is X's sync target (sync_integration_id X) does not
receive it, so the tool never hears back about its own update.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from chalicelib import clock
from chalicelib.catalog.service import get_services
from chalicelib.delivery import attempts
from chalicelib.errors import NotFound
from chalicelib.incident import repository
from chalicelib.incident.presenters import incident_v1
from chalicelib.incident.tables import IncidentRecord
from chalicelib.notification import page_facts
from chalicelib.notification.service import console_url
from chalicelib.organization.service import find_organization
from chalicelib.outbound import events
from chalicelib.outbound.delivery import DELIVER, SubscriptionDelivery
from chalicelib.outbound.events import PlannedEvent
from chalicelib.outbound.tables import WebhookDeliveryRecord, WebhookSubscriptionRecord
from chalicelib.queue.messages import Message
from chalicelib.settings import Settings

# DELIVER: the message type of every first attempt published here.
__all__ = ["DELIVER", "DELIVERY_LIFETIME", "FanOutResult", "fan_out", "handle", "wanted_by"]
DELIVERY_LIFETIME = timedelta(days=30)
LABELS_SENT = 20  # a receiver has room for more labels than a page


@dataclass(frozen=True)
class FanOutResult:
    created: int  # deliveries written by this run
    enqueued: int  # first-attempt messages published (new ones, and pending ones re-sent)


def wanted_by(subscription: WebhookSubscriptionRecord, event: PlannedEvent) -> bool:
    """Enabled, subscribed to the type, and not the tool whose own inbound update caused it."""
    if not subscription.enabled or not events.subscribes_to(set(subscription.event_types or ()), event.event_type):
        return False
    echo = event.source_integration_id is not None and subscription.sync_integration_id == event.source_integration_id
    return not echo


def fan_out(message: Message, *, now: datetime, settings: Settings) -> FanOutResult:
    planned = events.plan_events(
        message_type=message.message_type,
        message_id=message.message_id,
        occurred_at=message.occurred_at,
        payload=message.payload,
    )
    if not planned:
        return FanOutResult(0, 0)
    subscriptions = list(WebhookSubscriptionRecord.query(message.organization_id))
    addressed = [(event, sub) for event in planned for sub in subscriptions if wanted_by(sub, event)]
    if not addressed:
        return FanOutResult(0, 0)
    context = _read_context(message.organization_id, planned, settings=settings)
    if context is None:
        return FanOutResult(0, 0)  # the incident or organization is gone: nothing to tell
    created = enqueued = 0
    for event, subscription in addressed:
        document = events.event_document(
            event,
            organization_id=message.organization_id,
            organization_name=context.organization_name,
            incident=context.incident,
            incident_category=context.incident_category,
            include_sync_status=subscription.sync_integration_id is not None,
            responder=context.responder,
        )
        begun = _begin_delivery(message.organization_id, subscription, event, document, now)
        created += int(begun.created)
        enqueued += int(begun.enqueued)
    return FanOutResult(created, enqueued)


@dataclass(frozen=True)
class _Context:
    organization_name: str
    incident: dict[str, Any] | None
    incident_category: str | None
    responder: dict[str, Any] | None = None


def _read_context(organization_id: str, planned: list[PlannedEvent], *, settings: Settings) -> _Context | None:

    organization = find_organization(organization_id=organization_id)
    if organization is None:
        return None
    number = next((event.incident_number for event in planned if event.is_incident_event), None)
    if number is None:
        return _Context(organization.name, None, None)

    try:
        record = repository.get_incident(organization_id, number)
    except NotFound:
        return None
    incident = incident_v1(record).model_dump(mode="json")
    return _Context(organization.name, incident, record.status_category, _responder(record, settings=settings))


def _responder(record: IncidentRecord, *, settings: Settings) -> dict[str, Any]:
    """The incident's first service (one BatchGetItem), labels and links."""
    keys = [str(key) for key in record.service_keys or []][:1]
    found = get_services(organization_id=record.organization_id, service_keys=keys).get(keys[0]) if keys else None
    return events.responder_fields(
        service=(found.service_key, found.name) if found is not None else None,
        labels=page_facts.incident_labels(record, LABELS_SENT),
        console_url=console_url(record.incident_number, settings=settings),
        source_url=page_facts.source_link(record),
        runbook_url=page_facts.runbook_link(record),
    )


def _begin_delivery(
    organization_id: str,
    subscription: WebhookSubscriptionRecord,
    event: PlannedEvent,
    document: dict[str, Any],
    now: datetime,
) -> attempts.Begun:
    """Write the delivery and publish its first attempt. The body is fixed by whichever run wrote first."""
    record = WebhookDeliveryRecord(
        subscription.subscription_id,
        event.delivery_key,
        organization_id=organization_id,
        event_id=event.event_id,
        event_type=event.event_type,
        body=events.event_body(document),
        status="pending",
        attempts=0,
        next_attempt_at=now,
        created_at=now,
        expires_at=now + DELIVERY_LIFETIME,
    )
    delivery = SubscriptionDelivery(organization_id, subscription.subscription_id, event.delivery_key)
    return attempts.begin(delivery, record)


def handle(message: Message, settings: Settings) -> None:
    fan_out(message, now=clock.now(), settings=settings)
