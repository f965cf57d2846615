"""Recording change events and reading them back: by service and time range, for an incident's
recent changes, and for the organization-wide list.

Recording is one transaction of two puts (the content's claim, the change) and nothing else that
grows: the service is a GetItem (or, for a SER- id, a Query on the small services table).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from chalicelib.catalog.service import Service, find_service, get_service
from chalicelib.change.rules import (
    RETENTION,
    ChangeEvent,
    change_id,
    claim_lifetime,
    service_partition,
    sort_key,
    sort_range,
)
from chalicelib.change.tables import ChangeClaimRecord, ChangeEventRecord
from chalicelib.errors import InvalidPayload
from chalicelib.pagination import Page, paginate
from chalicelib.store import Transaction, TransactionCancelled

# An incident's recent changes: those on its services in this span before it opened, newest first.
RECENT_SPAN = timedelta(hours=1)
RECENT_LIMIT = 20
_CLAIM = "claim"


@dataclass(frozen=True)
class RecordedChange:
    change_id: str
    service: Service
    duplicate: bool  # the same content was recorded already (a retried delivery): nothing new written


def record_change(
    *, organization_id: str, integration_id: str, default_service_key: str | None, event: ChangeEvent, now: datetime
) -> RecordedChange:
    """Record `event` on the service its custom_details name, else the integration's default service.
    INVALID_PAYLOAD (PagerDuty's 400) when there is no such active service."""
    service = _service(organization_id, event.service_ref, default_service_key)
    identifier = change_id(event, now)
    timestamp = event.timestamp or now
    change = ChangeEventRecord(
        change_partition=service_partition(organization_id, service.service_key),
        change_sort=sort_key(timestamp, identifier),
        organization_id=organization_id,
        change_id=identifier,
        service_key=service.service_key,
        service_id=service.service_id,
        integration_id=integration_id,
        summary=event.summary,
        source=event.source,
        timestamp=timestamp,
        links=[{"href": link.href, "text": link.text} for link in event.links],
        custom_details=event.custom_details,
        received_at=now,
        expires_at=now + RETENTION,
    )
    claim = ChangeClaimRecord(
        change_partition=f"{organization_id}#claim#{event.fingerprint}",
        change_id=identifier,
        expires_at=now + claim_lifetime(event),
    )
    transaction = Transaction()
    # moto never expires TTL items: a claim past its expiry counts as absent.
    transaction.put(
        _CLAIM,
        claim,
        ChangeClaimRecord.change_partition.does_not_exist() | (ChangeClaimRecord.expires_at < now),
    )
    transaction.put("change", change)
    try:
        transaction.commit()
    except TransactionCancelled as cancelled:
        if _CLAIM not in cancelled.failed:
            raise
        return RecordedChange(change_id=identifier, service=service, duplicate=True)
    return RecordedChange(change_id=identifier, service=service, duplicate=False)


def _service(organization_id: str, service_ref: str | None, default_service_key: str | None) -> Service:
    if service_ref is not None:
        named = find_service(organization_id=organization_id, service_ref=service_ref)
        if named is None or not named.is_active:
            problem = f"'payload.custom_details.service_id' names no active service: {service_ref}"
            raise InvalidPayload(problem, details=[problem])
        return named
    if default_service_key is None:
        problem = (
            "The routing key's integration has no default service; name one in 'payload.custom_details.service_id'"
        )
        raise InvalidPayload(problem, details=[problem])
    default = find_service(organization_id=organization_id, service_ref=default_service_key)
    if default is None or not default.is_active:
        problem = "The routing key's integration has no active default service"
        raise InvalidPayload(problem, details=[problem])
    return default


# --- reading ---------------------------------------------------------------------------------------


def changes_of_service(
    *,
    organization_id: str,
    service_key: str,
    since: datetime | None,
    until: datetime | None,
    now: datetime,
    limit: int | None = None,
) -> list[ChangeEventRecord]:
    """Changes of one service timed in [since, until], newest first: one key-condition Query."""
    low, high = sort_range(since, until)
    query = ChangeEventRecord.query(
        service_partition(organization_id, service_key),
        ChangeEventRecord.change_sort.between(low, high),
        scan_index_forward=False,
    )
    return _live(query, now, limit)


def recent_changes(
    *, organization_id: str, service_keys: Iterable[str], opened_at: datetime, now: datetime
) -> list[ChangeEventRecord]:
    """The changes on these services in the hour before `opened_at` (inclusive), newest first, at most RECENT_LIMIT."""
    found: list[ChangeEventRecord] = []
    for service_key in dict.fromkeys(service_keys):
        found += changes_of_service(
            organization_id=organization_id,
            service_key=service_key,
            since=opened_at - RECENT_SPAN,
            until=opened_at,
            now=now,
            limit=RECENT_LIMIT,
        )
    return _newest_first(found)[:RECENT_LIMIT]


def list_changes(
    *,
    organization_id: str,
    service_ref: str | None,
    since: datetime | None,
    until: datetime | None,
    limit: int,
    offset: int,
    now: datetime,
) -> Page[ChangeEventRecord]:
    """The organization's changes (or one service's: NOT_FOUND when it does not exist), newest first."""
    if service_ref is not None:
        service = get_service(organization_id=organization_id, service_ref=service_ref)
        found = changes_of_service(
            organization_id=organization_id, service_key=service.service_key, since=since, until=until, now=now
        )
    else:
        low, high = sort_range(since, until)
        query = ChangeEventRecord.by_organization.query(
            organization_id, ChangeEventRecord.change_sort.between(low, high), scan_index_forward=False
        )
        found = _live(query, now, None)
    return paginate(_newest_first(found), limit=limit, offset=offset)


def _live(records: Iterable[ChangeEventRecord], now: datetime, limit: int | None) -> list[ChangeEventRecord]:
    live: list[ChangeEventRecord] = []
    for record in records:
        if record.expires_at is not None and record.expires_at <= now:
            continue
        live.append(record)
        if limit is not None and len(live) >= limit:
            break
    return live


def _newest_first(records: list[ChangeEventRecord]) -> list[ChangeEventRecord]:
    return sorted(records, key=lambda record: record.change_sort, reverse=True)
