"""Postmortem use cases: create (one per incident), import a legacy record, read, update.

Create and import write four items in one transaction: a check that the incident exists, the
per-incident guard (the one-per-incident rule under racing creates), the postmortem, and the
incident's `postmortem_created` timeline entry. Either all exist or none does.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from pynamodb.exceptions import DoesNotExist

from chalicelib.errors import Conflict, NotFound
from chalicelib.incident import repository
from chalicelib.incident.tables import (
    INCIDENT_SORT_KEY,
    TIMELINE_PREFIX,
    IncidentRecord,
    TimelineRecord,
    incident_partition,
)
from chalicelib.incident.workflow import EVENT_POSTMORTEM_CREATED, EVENT_STATUS_CHANGED
from chalicelib.postmortem import rules
from chalicelib.postmortem.models import PostmortemV1
from chalicelib.postmortem.tables import PostmortemRecord, incident_guard_key
from chalicelib.queue.messages import Message, publish
from chalicelib.store import (
    RetryableConflict,
    Transaction,
    TransactionCancelled,
    claim_unique,
    counters,
    owner_of,
    retry_on_conflict,
    save_if,
)

POSTMORTEM_PUBLISHED_MESSAGE = "postmortem.published"


def create_postmortem(
    *,
    organization_id: str,
    incident_number: str,
    level: str,
    content: dict[str, Any],
    response_timeline_overrides: dict[str, str | None],
    now: datetime,
    actor: str,
) -> PostmortemRecord:
    """`content` holds the fields the caller sent (structured ones as dicts/lists); the response
    timeline is prefilled from the incident, then `response_timeline_overrides` win."""
    incident = repository.get_incident(organization_id, incident_number)
    _refuse_second(organization_id, incident_number)
    prefill = rules.prefill_response_timeline(
        created_at=incident.created_at,
        acknowledged_at=incident.acknowledged_at,
        identified_at=rules.first_identified_at(_status_moves(organization_id, incident_number)),
        resolved_at=incident.resolved_at,
        now=now,
    )
    record = _new_record(organization_id, incident_number, created_at=now, actor=actor)
    record.level = level
    record.status = rules.INITIAL_STATUS
    _apply_content(record, {**content, "response_timeline": {**prefill, **response_timeline_overrides}})
    _write_new(record, incident, now=now, actor=actor, title=f"Postmortem {record.postmortem_number} created")
    return record


def import_legacy_postmortem(
    *,
    organization_id: str,
    incident_number: str,
    fields: dict[str, Any],
    created_at: datetime,
    now: datetime,
    actor: str,
) -> PostmortemRecord:
    """Store an older tool's record as given: its HTML strings are kept, never re-rendered."""
    incident = repository.get_incident(organization_id, incident_number)
    _refuse_second(organization_id, incident_number)
    record = _new_record(organization_id, incident_number, created_at=created_at, actor=actor)
    for name, value in fields.items():
        setattr(record, name, value)
    record.imported = "legacy"
    _write_new(record, incident, now=now, actor=actor, title=f"Postmortem {record.postmortem_number} imported")
    return record


def get_postmortem(*, organization_id: str, postmortem_id: str) -> PostmortemRecord:
    if not _is_uuid(postmortem_id):
        # Never a postmortem id; and a key over DynamoDB's size limit would be a ValidationException.
        raise NotFound(f"Postmortem {postmortem_id[:64]} was not found.")
    try:
        return PostmortemRecord.get(organization_id, postmortem_id, consistent_read=True)
    except DoesNotExist:
        raise NotFound(f"Postmortem {postmortem_id} was not found.") from None


def get_postmortem_for_incident(*, organization_id: str, incident_number: str) -> PostmortemRecord:
    postmortem_id = owner_of(organization_id=organization_id, unique_key=incident_guard_key(incident_number))
    if postmortem_id is None:
        raise NotFound(f"Incident {incident_number} has no postmortem.")
    return get_postmortem(organization_id=organization_id, postmortem_id=postmortem_id)


def list_postmortems(*, organization_id: str, status: str | None = None) -> list[PostmortemRecord]:
    """The organization's postmortems, newest first, optionally of one status: one Query on the
    organization's partition (the console's list; the API reads them one incident at a time)."""
    condition = PostmortemRecord.status == status if status is not None else None
    found = PostmortemRecord.query(organization_id, filter_condition=condition)
    return sorted(found, key=lambda record: (record.created_at, record.postmortem_number), reverse=True)


def update_postmortem(
    *,
    organization_id: str,
    postmortem_id: str,
    changes: dict[str, Any],
    now: datetime,
    expected_version: int | None = None,
) -> PostmortemRecord:
    """Apply content changes and/or a status move. A published postmortem is final: content changes
    answer 409. Concurrent writers are serialized by the version attribute: with `expected_version`
    a lost race is a 409, without it the change is re-read and re-applied."""
    target_status = changes.get("status")
    content = {name: value for name, value in changes.items() if name != "status"}
    published_now = False

    def attempt() -> PostmortemRecord:
        nonlocal published_now
        record = get_postmortem(organization_id=organization_id, postmortem_id=postmortem_id)
        if expected_version is not None and record.version != expected_version:
            raise _stale(expected_version, int(record.version or 0))
        moves = target_status is not None and rules.check_transition(record.status, target_status)
        if content and record.status == rules.PUBLISHED:
            raise Conflict(
                "A published postmortem is final; its content can no longer be changed.",
                details={"status": record.status},
            )
        if not content and not moves:
            return record  # a move to the current status and nothing else: no write
        _apply_content(record, content)
        if moves:
            record.status = target_status
        record.updated_at = now
        if not save_if(record, PostmortemRecord.postmortem_id.exists()):
            if expected_version is not None:
                raise _stale(expected_version, int(get_postmortem_version(organization_id, postmortem_id)))
            raise RetryableConflict()
        published_now = moves and target_status == rules.PUBLISHED
        return record

    record = retry_on_conflict(attempt, what="postmortem")
    if published_now:
        _publish_published(record)
    return record


def _publish_published(record: PostmortemRecord) -> None:
    """After the write: subscribers hear `postmortem.published` (chalicelib.outbound)."""

    payload = {
        "incident_number": record.incident_number,
        "postmortem": PostmortemV1.of(record).model_dump(mode="json"),
    }
    publish(Message(POSTMORTEM_PUBLISHED_MESSAGE, record.organization_id, payload))


def get_postmortem_version(organization_id: str, postmortem_id: str) -> int:
    return int(get_postmortem(organization_id=organization_id, postmortem_id=postmortem_id).version or 0)


# ---------------------------------------------------------------- internals


def _is_uuid(value: str) -> bool:
    try:
        return str(uuid.UUID(value)) == value
    except ValueError:
        return False


def _refuse_second(organization_id: str, incident_number: str) -> None:
    existing = owner_of(organization_id=organization_id, unique_key=incident_guard_key(incident_number))
    if existing is not None:
        raise _already_has(incident_number, existing)


def _already_has(incident_number: str, postmortem_id: str | None) -> Conflict:
    return Conflict(
        f"Incident {incident_number} already has a postmortem.",
        details={"incident_number": incident_number, "postmortem_id": postmortem_id},
    )


def _stale(expected: int, current: int) -> Conflict:
    return Conflict(
        f"The postmortem changed since version {expected}; it is now at version {current}. "
        "Read it again and reapply your change.",
        details={"expected_version": expected, "current_version": current},
    )


def _new_record(organization_id: str, incident_number: str, *, created_at: datetime, actor: str) -> PostmortemRecord:
    year = created_at.year
    sequence = counters.next_value(organization_id=organization_id, counter_name=rules.counter_name(year))
    return PostmortemRecord(
        organization_id,
        str(uuid.uuid4()),
        postmortem_number=rules.postmortem_number(year, sequence),
        incident_number=incident_number,
        level="standard",
        status=rules.INITIAL_STATUS,
        created_at=created_at,
        created_by=actor,
    )


def _apply_content(record: PostmortemRecord, content: dict[str, Any]) -> None:
    """Set the given fields; a structured field also gets its `*_html` re-rendered (null clears both)."""
    for name, value in content.items():
        setattr(record, name, value)
        if name in rules.STRUCTURED_FIELDS:
            setattr(record, f"{name}_html", rules.rendered_html(name, value))


def _write_new(record: PostmortemRecord, incident: IncidentRecord, *, now: datetime, actor: str, title: str) -> None:
    entry = repository.timeline_entry(
        incident,
        event_type=EVENT_POSTMORTEM_CREATED,
        now=now,
        title=title,
        user=actor,
        details={"postmortem_id": record.postmortem_id, "postmortem_number": record.postmortem_number},
    )

    def attempt() -> None:
        transaction = Transaction()
        transaction.check(
            "incident",
            IncidentRecord,
            incident.incident_key,
            INCIDENT_SORT_KEY,
            IncidentRecord.incident_key.exists(),
        )
        claim_unique(
            transaction,
            "guard",
            record.organization_id,
            incident_guard_key(record.incident_number),
            record.postmortem_id,
        )
        transaction.put("postmortem", record, condition=PostmortemRecord.postmortem_id.does_not_exist())
        transaction.put("timeline", entry, condition=TimelineRecord.item_key.does_not_exist())
        try:
            transaction.commit()
        except TransactionCancelled as cancelled:
            if "guard" in cancelled.failed:
                winner = owner_of(
                    organization_id=record.organization_id, unique_key=incident_guard_key(record.incident_number)
                )
                raise _already_has(record.incident_number, winner) from None
            if "incident" in cancelled.failed:
                raise NotFound(f"Incident {record.incident_number} was not found.") from None
            if cancelled.contention:
                raise RetryableConflict() from None  # nothing was written: try the same items again
            raise

    retry_on_conflict(attempt, what="postmortem")


def _status_moves(organization_id: str, incident_number: str) -> list[tuple[datetime, str]]:
    """Every status change on the incident's timeline, oldest first: (moved_at, to_status)."""
    entries = TimelineRecord.query(
        incident_partition(organization_id, incident_number),
        TimelineRecord.item_key.startswith(TIMELINE_PREFIX),
        filter_condition=TimelineRecord.event_type == EVENT_STATUS_CHANGED,
        consistent_read=True,
    )
    return [
        (entry.created_at, str(entry.details["to"]))
        for entry in entries
        if isinstance(entry.details, dict) and isinstance(entry.details.get("to"), str)
    ]
