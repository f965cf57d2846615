"""An alert's Opsgenie record and its tiny id; what a request became. Every read is a GetItem.

A tiny id is the organization's next number (an atomic counter): the alert's record and the tiny
id's pointer to it are written in one transaction, on the condition that neither exists, so a
tiny id names one alert and an alert keeps its first tiny id (a racing second write loses, and
its number is never used).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from pynamodb.exceptions import DoesNotExist

from chalicelib.alert.repository import ALERT_LIFETIME
from chalicelib.integration.parsers.opsgenie import OpsgenieFields
from chalicelib.opsgenie.tables import (
    OpsgenieAlertRecord,
    OpsgenieRequestRecord,
    OpsgenieTinyRecord,
    alert_item_key,
    request_item_key,
    tiny_item_key,
)
from chalicelib.store import Transaction, TransactionCancelled
from chalicelib.store.counters import next_value

TINY_COUNTER = "opsgenie-tiny-id"
REQUEST_LIFETIME = timedelta(days=7)
RECORD_LABEL, TINY_LABEL = "opsgenie alert", "tiny id"


def _live(expires_at: datetime | None, now: datetime) -> bool:
    return expires_at is None or expires_at > now


def read_alert(organization_id: str, alert_id: str, *, now: datetime) -> OpsgenieAlertRecord | None:
    try:
        record = OpsgenieAlertRecord.get(alert_item_key(organization_id, alert_id), consistent_read=True)
    except DoesNotExist:
        return None
    return record if _live(record.expires_at, now) else None


def alert_of_tiny(organization_id: str, tiny_id: int, *, now: datetime) -> str | None:
    """The alert tiny id `tiny_id` names, if any."""
    try:
        pointer = OpsgenieTinyRecord.get(tiny_item_key(organization_id, tiny_id), consistent_read=True)
    except DoesNotExist:
        return None
    return str(pointer.alert_id) if _live(pointer.expires_at, now) else None


def remember_alert(
    *, organization_id: str, alert_id: str, fields: OpsgenieFields, now: datetime
) -> OpsgenieAlertRecord:
    """The alert's Opsgenie record: the one it has, else a new one with the next tiny id."""
    existing = read_alert(organization_id, alert_id, now=now)
    if existing is not None:
        return existing
    tiny_id = next_value(organization_id=organization_id, counter_name=TINY_COUNTER)
    expires_at = now + ALERT_LIFETIME
    record = OpsgenieAlertRecord(
        alert_item_key(organization_id, alert_id),
        alert_id=alert_id,
        tiny_id=tiny_id,
        alias=fields.alias,
        priority=fields.priority,
        tags=list(fields.tags),
        entity=fields.entity,
        source=fields.source,
        user=fields.user,
        actions=list(fields.actions),
        responders=[dict(r) for r in fields.responders],
        visible_to=[dict(r) for r in fields.visible_to],
        created_at=now,
        expires_at=expires_at,
    )
    pointer = OpsgenieTinyRecord(tiny_item_key(organization_id, tiny_id), alert_id=alert_id, expires_at=expires_at)
    transaction = Transaction()
    transaction.put(RECORD_LABEL, record, OpsgenieAlertRecord.item_key.does_not_exist())
    transaction.put(TINY_LABEL, pointer, OpsgenieTinyRecord.item_key.does_not_exist())
    try:
        transaction.commit()
    except TransactionCancelled as cancelled:
        if RECORD_LABEL not in cancelled.failed:
            raise
        won = read_alert(organization_id, alert_id, now=now)  # a racing request wrote it first
        if won is None:
            raise
        return won
    return record


@dataclass(frozen=True)
class Outcome:
    """What a request became, as Opsgenie's request status says it."""

    action: str  # Create, Acknowledge, Close, AddNote
    success: bool
    status: str
    alert_id: str | None = None
    alias: str | None = None


def record_request(
    *, organization_id: str, integration_id: str, request_id: str, outcome: Outcome, now: datetime
) -> None:
    OpsgenieRequestRecord(
        request_item_key(organization_id, request_id),
        request_id=request_id,
        integration_id=integration_id,
        action=outcome.action,
        success=outcome.success,
        status=outcome.status[:1000],
        alert_id=outcome.alert_id,
        alias=outcome.alias,
        processed_at=now,
        expires_at=now + REQUEST_LIFETIME,
    ).save()


def read_request(organization_id: str, request_id: str, *, now: datetime) -> OpsgenieRequestRecord | None:
    try:
        record = OpsgenieRequestRecord.get(request_item_key(organization_id, request_id), consistent_read=True)
    except DoesNotExist:
        return None
    return record if _live(record.expires_at, now) else None
