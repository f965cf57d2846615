"""The event log: the one write a recorded request costs, and the reads of the API and console.

`record` is one write, nothing read first: a PutItem on the request's own slot, or, on a slot
shared past the minute's bound, one UpdateItem that sets every attribute (removing those the
request has not: the slot holds an older request), and counts the requests it stands for.
Reads check the integration belongs to the caller's organization (404 otherwise) and leave out
records past their TTL (DynamoDB and moto delete them lazily).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pynamodb.expressions.update import Action

from chalicelib.errors import NotFound, ValidationFailed
from chalicelib.eventlog import capture, slots
from chalicelib.eventlog.outcome import Outcome
from chalicelib.eventlog.tables import IntegrationEventRecord
from chalicelib.integration import admin
from chalicelib.integration.tables import IntegrationRecord

MAX_RESPONSE_BYTES = 4 * 1024
PAGE_SIZE = 25  # items per DynamoDB page while listing
MAX_PAGES = 8  # a filtered list reads at most this many pages per call, then hands a cursor back
_KEYS = ("integration_id", "event_id")


@dataclass(frozen=True)
class Received:
    """A request to an integration, as it arrived."""

    integration_id: str
    organization_id: str
    operation_id: str
    method: str
    route: str  # the route's template: /webhooks/{routing_key}, never the key itself
    source_address: str
    headers: Mapping[str, str]
    body: bytes
    received_at: datetime
    signature: capture.SignatureState | None = None  # valid/invalid when one was checked


@dataclass(frozen=True)
class Answer:
    status: int
    body: Any  # the answer's JSON document, or None
    outcome: Outcome


@dataclass(frozen=True)
class EventPage:
    items: list[IntegrationEventRecord]
    next_cursor: str | None


@dataclass(frozen=True)
class FoundEvent:
    event: IntegrationEventRecord
    integration: IntegrationRecord  # its current item (active or revoked)


def record(
    received: Received, answer: Answer, slot: slots.Slot, *, replay_of: str | None = None
) -> IntegrationEventRecord:
    """Record one request: one write, nothing read first."""
    values = _values(received, answer, replay_of)
    if not slot.shared:
        # Its own slot: a PutItem of the whole item.
        kept = {name: value for name, value in values.items() if value is not None}
        item = IntegrationEventRecord(received.integration_id, slot.event_id, request_count=1, **kept)
        item.save()
        return item
    # A shared slot (past the minute's bound): one UpdateItem sets every attribute, removes those
    # this request has not (an older request's), and counts the requests the item stands for.
    item = IntegrationEventRecord(received.integration_id, slot.event_id)
    actions: list[Action] = [IntegrationEventRecord.request_count.add(1)]
    for name, attribute in IntegrationEventRecord.get_attributes().items():
        if name in _KEYS or name == "request_count":
            continue
        value = values.get(name)
        actions.append(attribute.remove() if value is None else attribute.set(value))
    item.update(actions=actions)
    return item


def _values(received: Received, answer: Answer, replay_of: str | None) -> dict[str, Any]:
    body = capture.bounded_body(received.body)
    outcome = answer.outcome
    return {
        "organization_id": received.organization_id,
        "received_at": received.received_at,
        "expires_at": received.received_at + slots.RETENTION,
        "operation_id": received.operation_id,
        "method": received.method,
        "route": received.route,
        "source_address": received.source_address,
        "headers": capture.kept_headers(received.headers, received.signature),
        "signature": received.signature,
        "body": body.text,
        "body_size": body.size,
        "truncated": body.truncated,
        "body_whole": body.whole,
        "status": answer.status,
        "outcome": outcome.outcome,
        "action": outcome.action,
        "title": outcome.title,
        "message": outcome.message,
        "error_code": outcome.error_code,
        "warnings": list(outcome.warnings) or None,
        "incident_number": outcome.incident_number,
        "alert_id": outcome.alert_id,
        "suppressed_by": outcome.suppressed_by,
        "rule_ids": list(outcome.rule_ids) or None,
        "response": _bounded_response(answer.body),
        "replay_of": replay_of,
    }


def _bounded_response(body: Any) -> Any:
    if body is None:
        return None
    if len(json.dumps(body, default=str).encode()) > MAX_RESPONSE_BYTES:
        return {"truncated": True}
    return body


# --- reads -----------------------------------------------------------------------------------------


def _not_found() -> NotFound:
    return NotFound("No such event in this integration's log (events are kept 30 days).")


def check_integration(*, organization_id: str, integration_id: str) -> IntegrationRecord:
    """The caller's organization's integration (404 otherwise)."""
    return admin.current_record(organization_id=organization_id, integration_id=integration_id)


def get_event(*, organization_id: str, integration_id: str, event_id: str, now: datetime) -> FoundEvent:
    integration = check_integration(organization_id=organization_id, integration_id=integration_id)
    if not slots.is_event_id(event_id):
        raise _not_found()
    try:
        found = IntegrationEventRecord.get(integration_id, event_id, consistent_read=True)
    except IntegrationEventRecord.DoesNotExist:
        raise _not_found() from None
    if found.organization_id != organization_id or found.expires_at <= now:
        raise _not_found()
    return FoundEvent(found, integration)


def list_events(
    *,
    organization_id: str,
    integration_id: str,
    now: datetime,
    outcomes: Sequence[str] = (),
    since: datetime | None = None,
    until: datetime | None = None,
    limit: int = 20,
    cursor: str | None = None,
) -> EventPage:
    """Newest first. One Query on the integration's partition, the time range a key condition; an
    outcome filter may leave a page short: at most MAX_PAGES pages are read per call, and
    `next_cursor` goes on from where the reading stopped."""
    check_integration(organization_id=organization_id, integration_id=integration_id)
    if cursor is not None and not slots.is_event_id(cursor):
        raise ValidationFailed.for_field("cursor", "not a cursor from a previous page of this listing")
    lower = slots.lower_bound(since) if since is not None else None
    upper = slots.upper_bound(until) if until is not None else None
    if cursor is not None and lower is not None and cursor <= lower:
        return EventPage([], None)  # the previous page ended at the range's oldest end
    if cursor is not None and upper is not None and cursor >= upper:
        cursor = None  # a cursor past the range's newest end: start at that end
    found = IntegrationEventRecord.query(
        integration_id,
        _key_range(lower, upper),
        filter_condition=_filter(outcomes, now),
        scan_index_forward=False,
        page_size=PAGE_SIZE,
        last_evaluated_key={"integration_id": {"S": integration_id}, "event_id": {"S": cursor}} if cursor else None,
    )
    items: list[IntegrationEventRecord] = []
    pages = found.page_iter
    for number, page in enumerate(pages, start=1):
        for raw in page.get("Items", []):
            if len(items) == limit:
                return EventPage(items, items[-1].event_id)
            items.append(IntegrationEventRecord.from_raw_data(raw))
        evaluated = pages.last_evaluated_key
        if not evaluated:
            return EventPage(items, None)
        if number >= MAX_PAGES:
            return EventPage(items, items[-1].event_id if len(items) == limit else str(evaluated["event_id"]["S"]))
    return EventPage(items, None)


def _key_range(lower: str | None, upper: str | None) -> Any:
    event_id = IntegrationEventRecord.event_id
    if lower is not None and upper is not None:
        return event_id.between(lower, upper)
    if lower is not None:
        return event_id >= lower
    if upper is not None:
        return event_id <= upper
    return None


def _filter(outcomes: Sequence[str], now: datetime) -> Any:
    alive = IntegrationEventRecord.expires_at > now
    if outcomes:
        return alive & IntegrationEventRecord.outcome.is_in(*outcomes)
    return alive
