"""Reading and writing incident partitions: the incident item plus its timeline entries."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from pynamodb.exceptions import DoesNotExist, TransactWriteError
from pynamodb.transactions import TransactWrite

from chalicelib import aws, clock
from chalicelib.errors import Conflict, NotFound
from chalicelib.incident.models import TIMELINE_LIMIT
from chalicelib.incident.tables import (
    INCIDENT_SORT_KEY,
    TIMELINE_PREFIX,
    IncidentRecord,
    TimelineRecord,
    incident_partition,
    list_partition,
)

T = TypeVar("T")
VERSION_ATTEMPTS = 6


@dataclass(frozen=True)
class IncidentWithTimeline:
    incident: IncidentRecord
    timeline: list[TimelineRecord]
    has_more: bool


def timeline_entry(
    incident: IncidentRecord,
    *,
    event_type: str,
    now: datetime,
    title: str | None = None,
    description: str | None = None,
    user: str | None = None,
    details: dict[str, Any] | None = None,
) -> TimelineRecord:
    return TimelineRecord(
        incident.incident_key,
        f"{TIMELINE_PREFIX}{clock.isoformat(now)}#{uuid.uuid4().hex[:12]}",
        event_type=event_type,
        title=title,
        description=description,
        user=user,
        created_at=now,
        details=details,
    )


def get_incident(organization_id: str, incident_number: str) -> IncidentRecord:
    aws.bind_tables()
    try:
        return IncidentRecord.get(
            incident_partition(organization_id, incident_number), INCIDENT_SORT_KEY, consistent_read=True
        )
    except DoesNotExist:
        raise NotFound(f"Incident {incident_number} was not found.") from None


def get_with_timeline(organization_id: str, incident_number: str, limit: int = TIMELINE_LIMIT) -> IncidentWithTimeline:
    """One Query, newest first: the incident sorts first, then up to limit+1 entries (to know has_more)."""
    aws.bind_tables()
    connection = IncidentRecord._get_connection()
    result = connection.query(
        incident_partition(organization_id, incident_number),
        scan_index_forward=False,
        limit=limit + 2,
        consistent_read=True,
    )
    items = result.get("Items", [])
    if not items or items[0]["item_key"]["S"] != INCIDENT_SORT_KEY:
        raise NotFound(f"Incident {incident_number} was not found.")
    incident = IncidentRecord.from_raw_data(items[0])
    entries = [TimelineRecord.from_raw_data(item) for item in items[1:]]
    return IncidentWithTimeline(incident, entries[:limit], has_more=len(entries) > limit)


def commit(
    incident: IncidentRecord,
    entries: list[TimelineRecord],
    *,
    new: bool = False,
    before: Callable[[TransactWrite, IncidentRecord], None] | None = None,
) -> None:
    """Write the incident (version-checked) and its new timeline entries in one transaction.

    `before` adds items ahead of the incident (their cancellation reasons come first), e.g. the
    dedup claim of an inbound alert.
    """
    with TransactWrite(connection=aws.transaction_connection()) as transaction:
        if before is not None:
            before(transaction, incident)
        condition = IncidentRecord.incident_key.does_not_exist() if new else None
        transaction.save(incident, condition=condition)
        for position, entry in enumerate(entries):
            # Entries of one change share a timestamp; the position keeps their order in the timeline.
            entry.item_key = (
                f"{TIMELINE_PREFIX}{clock.isoformat(entry.created_at)}#{position:02d}{uuid.uuid4().hex[:12]}"
            )
            transaction.save(entry, condition=TimelineRecord.item_key.does_not_exist())


def add_entry_if_incident_exists(organization_id: str, incident_number: str, entry: TimelineRecord) -> None:
    """One transaction: the incident must exist (ConditionCheck) and the entry is written."""
    aws.bind_tables()
    try:
        with TransactWrite(connection=aws.transaction_connection()) as transaction:
            transaction.condition_check(
                IncidentRecord,
                incident_partition(organization_id, incident_number),
                INCIDENT_SORT_KEY,
                condition=IncidentRecord.incident_key.exists(),
            )
            transaction.save(entry)
    except TransactWriteError as error:
        if is_condition_failure(error):
            raise NotFound(f"Incident {incident_number} was not found.") from None
        raise


def record_alert(organization_id: str, incident_number: str, *, now: datetime, summary: str) -> IncidentRecord | None:
    """A dedup hit: count the alert on the open incident in one UpdateItem, without reading it
    first, and get the updated incident back. The version is bumped, so a concurrent
    read-modify-write retries instead of overwriting the count. None when the incident is no
    longer open (or gone): the caller then opens a new one. The timeline entry is written by
    the events worker, keeping a dedup hit at two DynamoDB round trips.
    """
    from pynamodb.exceptions import UpdateError

    aws.bind_tables()
    try:
        response = IncidentRecord._get_connection().update_item(
            incident_partition(organization_id, incident_number),
            INCIDENT_SORT_KEY,
            actions=[
                IncidentRecord.alert_count.add(1),
                IncidentRecord.version.add(1),
                IncidentRecord.last_alert_at.set(now),
                IncidentRecord.last_alert_summary.set(summary[:500]),
                IncidentRecord.updated_at.set(now),
            ],
            condition=IncidentRecord.list_key == list_partition(organization_id, is_open=True),
            return_values="ALL_NEW",
        )
    except UpdateError as error:
        if getattr(error, "cause_response_code", None) == "ConditionalCheckFailedException":
            return None
        raise
    return IncidentRecord.from_raw_data(response["Attributes"])


def is_condition_failure(error: TransactWriteError) -> bool:
    return any(reason is not None and reason.code == "ConditionalCheckFailed" for reason in error.cancellation_reasons)


def with_version_retries(operation: Callable[[], T]) -> T:
    """Run a read-modify-write; on a version conflict, read again and retry. Never a lost update."""
    for _ in range(VERSION_ATTEMPTS):
        try:
            return operation()
        except TransactWriteError as error:
            if not is_condition_failure(error):
                raise
    raise Conflict("The incident is being changed by others right now; retry the request.")
