"""Reading and writing incident partitions: the incident item plus its timeline entries."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, TypeVar

from pynamodb.exceptions import DoesNotExist

from chalicelib import clock
from chalicelib.errors import NotFound
from chalicelib.incident.models import TIMELINE_LIMIT
from chalicelib.incident.tables import (
    INCIDENT_SORT_KEY,
    NOTIFICATION_EVENTS,
    TIMELINE_PREFIX,
    IncidentRecord,
    TimelineRecord,
    incident_partition,
    list_partition,
    notification_sort,
)
from chalicelib.store import (
    ConditionFailed,
    RetryableConflict,
    Transaction,
    TransactionCancelled,
    conditional,
    retry_on_conflict,
    scope,
)

T = TypeVar("T")
VERSION_ATTEMPTS = 6
# The resolution of a timeline sort key (clock.isoformat: milliseconds).
TIMELINE_TICK = timedelta(milliseconds=1)


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
    """A consistent read; inside a read scope (one queue message) the item is read once and each
    call gets its own copy, so a caller's changes stay its own until it commits them."""
    key = incident_partition(organization_id, incident_number)
    if not scope.active():
        return _read_incident(key, incident_number)
    raw = scope.remembered(("incident", key), lambda: _read_incident(key, incident_number).serialize())
    return IncidentRecord.from_raw_data(raw)


def forget(incident: IncidentRecord) -> None:
    """Drop the read scope's copy of the incident, so the next get_incident reads it again (a
    caller whose conditional write found its copy stale)."""
    scope.forget(("incident", incident.incident_key))


def _read_incident(incident_key: str, incident_number: str) -> IncidentRecord:
    try:
        return IncidentRecord.get(incident_key, INCIDENT_SORT_KEY, consistent_read=True)
    except DoesNotExist:
        raise NotFound(f"Incident {incident_number} was not found.") from None


def get_with_timeline(organization_id: str, incident_number: str, limit: int = TIMELINE_LIMIT) -> IncidentWithTimeline:
    """One Query, newest first: the incident sorts first, then up to limit+1 entries (to know has_more)."""
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
    unit: Transaction | None = None,
) -> None:
    """Write the incident (labelled "incident", version-checked) and its new timeline entries
    ("timeline") in one transaction; raises TransactionCancelled when it wrote nothing.

    `unit`: a transaction that already holds the caller's own labelled items (e.g. an inbound
    alert and its dedup claim), written with the incident or not at all.
    """
    _time_after_previous_commits(incident, entries)
    transaction = unit if unit is not None else Transaction()
    condition = IncidentRecord.incident_key.does_not_exist() if new else None
    transaction.put("incident", incident, condition)
    _add_entries(transaction, entries)
    try:
        transaction.commit()
    except TransactionCancelled:
        scope.forget(("incident", incident.incident_key))  # ours may be stale: the retry reads again
        raise
    scope.remember(("incident", incident.incident_key), incident.serialize())


def _time_after_previous_commits(incident: IncidentRecord, entries: list[TimelineRecord]) -> None:
    """Time a change's entries at this commit attempt: their request's time, but after the newest
    entry of every earlier commit (the incident's `timeline_at`, read by this attempt). A request
    that started first but commits last, after a retry, is then listed as the newest, as it is;
    the version check makes commits one sequence. The incident's `updated_at` follows.

    Entries written without the version check (comments, the workers' notes) keep their own time."""
    if not entries:
        return
    at = max(entry.created_at for entry in entries)
    if incident.timeline_at is not None and at < incident.timeline_at + TIMELINE_TICK:
        at = incident.timeline_at + TIMELINE_TICK
    for entry in entries:
        entry.created_at = at
    incident.timeline_at = at
    if incident.updated_at is None or incident.updated_at < at:
        incident.updated_at = at


def _add_entries(transaction: Transaction, entries: list[TimelineRecord]) -> None:
    for position, entry in enumerate(entries):
        # Entries of one change share a timestamp; the position keeps their order in the timeline.
        entry.item_key = f"{TIMELINE_PREFIX}{clock.isoformat(entry.created_at)}#{position:02d}{uuid.uuid4().hex[:12]}"
        _index_notification(entry)
        transaction.put("timeline", entry, TimelineRecord.item_key.does_not_exist())


def _index_notification(entry: TimelineRecord) -> None:
    """A notification entry joins the organization-time-index (the notifications export)."""
    if entry.event_type not in NOTIFICATION_EVENTS:
        return
    organization_id, _, incident_number = entry.incident_key.rpartition("#")
    entry.organization_id = organization_id
    entry.created_sort = notification_sort(clock.isoformat(entry.created_at), incident_number, entry.item_key)


def add_entries(
    incident: IncidentRecord, entries: list[TimelineRecord], *, also: Callable[[Transaction], None] | None = None
) -> None:
    """Add entries to a read incident's timeline, in their order, in one transaction that checks
    the incident still exists (`also` adds the caller's items to it). NotFound when it is gone;
    TransactionCancelled on contention."""
    _add_if_exists(incident.incident_key, incident.incident_number, entries, also=also)


def add_entry_if_incident_exists(organization_id: str, incident_number: str, entry: TimelineRecord) -> None:
    """One transaction: the incident must exist (ConditionCheck) and the entry is written."""
    _add_if_exists(incident_partition(organization_id, incident_number), incident_number, [entry])


def _add_if_exists(
    incident_key: str,
    incident_number: str,
    entries: list[TimelineRecord],
    also: Callable[[Transaction], None] | None = None,
) -> None:
    transaction = Transaction()
    if also is not None:
        also(transaction)
    transaction.check("incident", IncidentRecord, incident_key, INCIDENT_SORT_KEY, IncidentRecord.incident_key.exists())
    _add_entries(transaction, entries)
    try:
        transaction.commit()
    except TransactionCancelled as cancelled:
        if "incident" in cancelled.failed:
            raise NotFound(f"Incident {incident_number} was not found.") from None
        raise


def record_alert(organization_id: str, incident_number: str, *, now: datetime, summary: str) -> IncidentRecord | None:
    """A dedup hit: count the alert on the open incident in one UpdateItem, without reading it
    first, and get the updated incident back. The version is bumped, so a concurrent
    read-modify-write retries instead of overwriting the count. None when the incident is no
    longer open (or gone): the caller then opens a new one. The timeline entry is written by
    the events worker, keeping a dedup hit at two DynamoDB round trips.
    """
    try:
        with conditional():
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
    except ConditionFailed:
        return None
    scope.remember(("incident", incident_partition(organization_id, incident_number)), response["Attributes"])
    return IncidentRecord.from_raw_data(response["Attributes"])


def with_version_retries(operation: Callable[[], T]) -> T:
    """Run a read-modify-write; on a version conflict, read again and retry. Never a lost update."""

    def attempt() -> T:
        try:
            return operation()
        except TransactionCancelled as cancelled:
            if not cancelled.failed:
                raise  # contention only: not a version conflict
            raise RetryableConflict() from cancelled

    return retry_on_conflict(
        attempt,
        what="incident",
        attempts=VERSION_ATTEMPTS,
        message="The incident is being changed by others right now; retry the request.",
    )
