"""What became of each inbound trigger event, told to the insights rollups after the write
(`alert.event_counted`), and an alert its source resolved (`alert.auto_resolved`): one SQS
message each, so the rollups are kept by the worker, never on the delivery's path."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from chalicelib import clock
from chalicelib.alert.tables import AlertRecord
from chalicelib.integration.normalized import NormalizedAlert
from chalicelib.integration.origin import AlertOrigin
from chalicelib.integration.timeline import EVERY_EVENT_UP_TO, THEN_EVERY, worth_an_entry
from chalicelib.integration.triggering import IngestResult
from chalicelib.queue.messages import Message, publish

ALERT_EVENT = "alert.event_counted"
ALERT_AUTO_RESOLVED = "alert.auto_resolved"


def outcome_of(result: IngestResult) -> str:
    """created, grouped, deduplicated, suppressed or dropped (rollups.INBOUND_OUTCOMES)."""
    if result.dropped:
        return "dropped"
    if result.suppressed:
        return "deduplicated" if result.deduplicated else "suppressed"
    if result.created:
        return "created"
    if result.grouped:
        return "grouped"
    return "deduplicated"


def _facts(
    origin: AlertOrigin, alert: NormalizedAlert | None, record: AlertRecord | None, now: datetime
) -> dict[str, Any]:
    """Source, service and key of the alert record, else of the event (a dropped one has no record)."""
    source: str | None = None
    service_key: str | None = None
    key: str | None = None
    if record is not None:
        source, service_key, key = record.source, record.service_key, record.dedup_key or record.title
    elif alert is not None:
        source, service_key = alert.source, alert.service_hint or origin.default_service_key
        key = alert.dedup_key or alert.title
    return {
        "at": clock.isoformat(now),
        "source": source or origin.integration_type,
        "service_key": service_key,
        "key": key,
    }


def events_told(count: int) -> int:
    """How many repeats the `count`-th event of an alert tells the rollups of: each of the first
    five, then the hundredth, two hundredth... each the events since the last told (a storm of
    repeats costs a message per hundred, as its timeline entries do); 0 for the others."""
    if not worth_an_entry(count):
        return 0
    if count <= EVERY_EVENT_UP_TO:
        return 1
    return count - max(EVERY_EVENT_UP_TO, count - THEN_EVERY)


def publish_trigger_outcome(origin: AlertOrigin, alert: NormalizedAlert, result: IngestResult, now: datetime) -> None:
    if result.note and result.incident is None and result.alert is None and not result.dropped:
        return  # nothing was recorded (no alert to count)
    record = result.alert
    outcome = outcome_of(result)
    events = 1
    if outcome == "deduplicated" and record is not None:
        events = events_told(int(record.event_count or 1))
        if events == 0:
            return
    suppressed_by = (record.suppressed_by or {}).get("kind") if record is not None else None
    facts = _facts(origin, alert, record, now)
    payload = {**facts, "outcome": outcome, "suppressed_by": suppressed_by, "events": events}
    publish(Message(ALERT_EVENT, origin.organization_id, payload))


def publish_auto_resolved(origin: AlertOrigin, record: AlertRecord, now: datetime) -> None:
    payload = {
        **_facts(origin, None, record, now),
        "outcome": "resolved",
        "event_id": f"{record.alert_id}#resolved",
        "opened_at": clock.isoformat(record.first_received_at),
    }
    publish(Message(ALERT_AUTO_RESOLVED, origin.organization_id, payload))
