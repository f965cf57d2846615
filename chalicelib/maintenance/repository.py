"""Reading and writing windows with their per-service items: one transaction per change.

Every write goes through `commit`: the window (created on the condition that it is new, or
saved on the version it was read at) and its memberships in one TransactWriteItems, so a window
and the Query the alert pipeline runs never disagree, and two racing edits cannot both land on
the same version.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from pynamodb.exceptions import DoesNotExist

from chalicelib.errors import NotFound
from chalicelib.maintenance import rules
from chalicelib.maintenance.tables import MaintenanceMembershipRecord, MaintenanceWindowRecord
from chalicelib.store import RetryableConflict, Transaction, TransactionCancelled


@dataclass(frozen=True)
class MaintenanceWindow:
    window_id: str
    organization_id: str
    service_keys: tuple[str, ...]
    start: datetime
    end: datetime
    description: str | None
    ended_early_at: datetime | None
    created_by: str | None
    created_at: datetime
    updated_at: datetime | None
    version: int

    def state(self, now: datetime) -> rules.State:
        return rules.state_of(start=self.start, end=self.end, now=now)


def to_domain(record: MaintenanceWindowRecord) -> MaintenanceWindow:
    return MaintenanceWindow(
        window_id=record.window_id,
        organization_id=record.organization_id,
        service_keys=tuple(str(key) for key in record.service_keys or ()),
        start=record.starts_at,
        end=record.ends_at,
        description=record.description,
        ended_early_at=record.ended_early_at,
        created_by=record.created_by,
        created_at=record.created_at,
        updated_at=record.updated_at,
        version=int(record.version or 0),
    )


def not_found() -> NotFound:
    return NotFound("Maintenance window not found.")


def get_record(organization_id: str, window_id: str, *, consistent: bool = False) -> MaintenanceWindowRecord:
    if not rules.is_window_id(window_id):
        raise not_found()
    try:
        return MaintenanceWindowRecord.get(organization_id, window_id, consistent_read=consistent)
    except DoesNotExist:
        raise not_found() from None


def organization_records(organization_id: str) -> list[MaintenanceWindowRecord]:
    """Every window of the organization: one Query on its partition."""
    return list(MaintenanceWindowRecord.query(organization_id))


def memberships_of(record: MaintenanceWindowRecord, now: datetime) -> list[MaintenanceMembershipRecord]:
    """The per-service items a window needs while its end is ahead; none once it has ended."""
    if record.ends_at <= now:
        return []
    return [
        MaintenanceMembershipRecord(
            rules.membership_partition(record.organization_id, service_key),
            rules.membership_sort_key(record.ends_at, record.window_id),
            window_id=record.window_id,
            starts_at=record.starts_at,
            ends_at=record.ends_at,
            description=record.description,
            expires_at=record.ends_at + rules.MEMBERSHIP_GRACE,
        )
        for service_key in to_domain(record).service_keys
    ]


def _key(membership: MaintenanceMembershipRecord) -> tuple[str, str]:
    return (membership.service_partition, membership.end_and_window)


def commit(
    *,
    window: MaintenanceWindowRecord,
    before: list[MaintenanceMembershipRecord],
    after: list[MaintenanceMembershipRecord],
    new: bool = False,
    delete_window: bool = False,
) -> None:
    """Write the window (or delete it) and swap its memberships `before` for `after`, all or none.

    The window's version is checked (PynamoDB adds the condition); a new window must not exist
    yet. A lost race raises RetryableConflict: the caller reads again and re-applies."""
    tx = Transaction()
    if delete_window:
        tx.delete("window", window, condition=MaintenanceWindowRecord.window_id.exists())
    elif new:
        tx.put("window", window, condition=MaintenanceWindowRecord.window_id.does_not_exist())
    else:
        tx.put("window", window, condition=MaintenanceWindowRecord.window_id.exists())
    kept = {_key(membership) for membership in after}
    for membership in before:
        if _key(membership) not in kept:
            tx.delete("membership", membership)
    for membership in after:
        tx.put("membership", membership)
    try:
        tx.commit()
    except TransactionCancelled as cancelled:
        if cancelled.retryable:
            raise RetryableConflict() from None
        raise
