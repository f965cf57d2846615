"""The local stage's webhook receiver: outbound webhook deliveries land here and show in the outbox.

POST /local/webhook-sink/{sink_name} keeps every request it receives (headers, raw body, the
status it answered) in the local outbox table, next to the Slack sink's messages, so
`GET /local/outbox` lists them as channel "webhook". `?fail=<status>` makes it answer that
status instead of 204, to watch retries happen.

The signature is checked the way a receiver would: the event body names its organization, the
organization's subscriptions whose URL points at this sink are read (one Query), and the request
must verify against one of their secrets (X-Service-Signature over `timestamp.body`, timestamp
fresh). With no such subscription the result is unknown (None), not a failure.

Local-only: the local server mounts the route that calls it (chalicelib/local/routes.py).
"""

from __future__ import annotations

import re
import urllib.parse
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from chalicelib import clock
from chalicelib.api.validation import single_values
from chalicelib.errors import ValidationFailed
from chalicelib.json_body import JsonBodyError, read_json
from chalicelib.local import outbox_table
from chalicelib.local.outbox_item import OutboxItem
from chalicelib.settings import get_settings

SINK_PATH_PREFIX = "/local/webhook-sink/"
WEBHOOK_CHANNEL = "webhook"
MAX_BODY_BYTES = 256 * 1024  # what an outbound event may weigh; the item must stay under 400 KB
MAX_ITEMS = 500
_SINK_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")
_INCIDENT_NUMBER = re.compile(r"INC-\d{4}-\d{1,12}")


@dataclass(frozen=True)
class SignatureCheck:
    verified: bool | None  # None: no subscription of the event's organization points at this sink
    subscription_id: str | None  # the subscription whose secret verified it
    error: str | None  # why it did not verify


@dataclass(frozen=True)
class ReceivedWebhook:
    item_id: str
    sink_name: str
    received_at: str
    answered_status: int
    headers: dict[str, str]
    body: str
    event_id: str | None
    event_type: str | None
    attempt: int | None
    incident_number: str | None
    signature: SignatureCheck


# ---------------------------------------------------------------- pure rules


def check_sink_name(sink_name: str) -> str:
    if not _SINK_NAME.fullmatch(sink_name):
        raise ValidationFailed.for_field("sink_name", "must be 1-64 letters, digits, '.', '_' or '-'")
    return sink_name


def answer_status(query: Mapping[str, list[str]]) -> int:
    """204, or the status `?fail=` asks for (200-599). Other parameters are refused."""
    unknown = sorted(set(query) - {"fail"})
    if unknown:
        raise ValidationFailed.for_fields([{"field": name, "message": "unknown query parameter"} for name in unknown])
    text = single_values(query).get("fail")
    if text is None:
        return 204
    if not text.isdigit() or not 200 <= int(text) <= 599:
        raise ValidationFailed.for_field("fail", "must be an HTTP status from 200 to 599")
    return int(text)


def targets_sink(url: str, sink_name: str) -> bool:
    """Whether a subscription URL points at this sink (any host: the local server has several names)."""
    return urllib.parse.urlsplit(url).path == SINK_PATH_PREFIX + sink_name


def event_facts(body: bytes) -> dict[str, Any]:
    """What the outbox shows about an event body: its id, type, organization and incident number."""
    try:
        event = read_json(body, max_bytes=MAX_BODY_BYTES)
    except JsonBodyError:
        return {}
    if not isinstance(event, dict):
        return {}
    data = _mapping(event.get("data"))
    organization = _mapping(event.get("organization"))
    incident = _mapping(data.get("incident"))
    number = incident.get("incident_number") or data.get("incident_number")
    return {
        "event_id": event.get("id") if isinstance(event.get("id"), str) else None,
        "event_type": event.get("type") if isinstance(event.get("type"), str) else None,
        "organization_id": organization.get("id") if isinstance(organization.get("id"), str) else None,
        "incident_number": number if isinstance(number, str) and _INCIDENT_NUMBER.fullmatch(number) else None,
    }


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


# ---------------------------------------------------------------- signature


def check_signature(
    *, sink_name: str, organization_id: str | None, headers: Mapping[str, str], body: bytes, now: datetime
) -> SignatureCheck:
    from chalicelib.errors import DeliveryRejected
    from chalicelib.integration.signing import verify_custom
    from chalicelib.outbound.tables import WebhookSubscriptionRecord
    from chalicelib.secrets_box import unseal

    if not organization_id:
        return SignatureCheck(None, None, None)
    candidates = [
        record for record in WebhookSubscriptionRecord.query(organization_id) if targets_sink(record.url, sink_name)
    ]
    error: str | None = None
    for record in candidates:
        secret = unseal(record.sealed_secret, context=record.subscription_id, settings=get_settings())
        try:
            verify_custom(secret, headers, body, now=now)
        except DeliveryRejected as rejected:
            error = rejected.message
            continue
        return SignatureCheck(True, record.subscription_id, None)
    return SignatureCheck(False, None, error) if candidates else SignatureCheck(None, None, None)


# ---------------------------------------------------------------- storage


def _attempt(headers: Mapping[str, str]) -> int | None:
    text = headers.get("x-tocsin-delivery-attempt", "")
    return int(text) if text.isdigit() else None


def receive(*, sink_name: str, headers: Mapping[str, str], body: bytes, status: int, now: datetime) -> ReceivedWebhook:
    """Check and keep one request the sink received; returns it as the outbox lists it."""
    lowered = {str(name).lower(): str(value) for name, value in headers.items()}
    facts = event_facts(body)
    signature = check_signature(
        sink_name=sink_name, organization_id=facts.get("organization_id"), headers=lowered, body=body, now=now
    )
    received = ReceivedWebhook(
        item_id=uuid.uuid4().hex,
        sink_name=sink_name,
        received_at=clock.isoformat(now),
        answered_status=status,
        headers=lowered,
        body=body.decode("utf-8", errors="replace"),
        event_id=facts.get("event_id") or lowered.get("x-tocsin-event-id"),
        event_type=facts.get("event_type") or lowered.get("x-tocsin-event-type"),
        attempt=_attempt(lowered),
        incident_number=facts.get("incident_number"),
        signature=signature,
    )
    outbox_table.record(
        OutboxItem(
            channel=WEBHOOK_CHANNEL,
            to=sink_name,
            subject=received.event_type,
            text=received.body,
            sent_at=received.received_at,
            incident_number=received.incident_number,
            id=received.item_id,
            webhook={
                "answered_status": status,
                "event_id": received.event_id,
                "event_type": received.event_type,
                "attempt": received.attempt,
                "signature_verified": signature.verified,
                "subscription_id": signature.subscription_id,
                "signature_error": signature.error,
                "headers": lowered,
            },
        )
    )
    return received


def received_webhooks(limit: int = MAX_ITEMS) -> list[ReceivedWebhook]:
    """Newest first."""
    found = []
    for item in outbox_table.query(WEBHOOK_CHANNEL, limit=limit):
        details = item.webhook or {}
        found.append(
            ReceivedWebhook(
                item_id=item.id,
                sink_name=item.to,
                received_at=item.sent_at or "",
                answered_status=int(details["answered_status"]),
                headers=dict(details["headers"]),
                body=item.text,
                event_id=details.get("event_id"),
                event_type=details.get("event_type"),
                attempt=details.get("attempt"),
                incident_number=item.incident_number,
                signature=SignatureCheck(
                    details.get("signature_verified"), details.get("subscription_id"), details.get("signature_error")
                ),
            )
        )
    return found
