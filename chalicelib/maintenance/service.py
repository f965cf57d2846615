"""Maintenance windows of services: create, list, get, update, delete.

While a window is ongoing, alerts for its services are recorded as suppressed and page nobody
(the alert pipeline asks `in_effect.window_in_effect`). Deleting a future window removes it;
deleting an ongoing one ends it now (PagerDuty's semantics) and keeps it as history; a past
window cannot change. A PATCH naming the version it read gets a 409 when someone wrote in
between; without one the change is re-applied to the latest version, so no edit is lost.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from types import EllipsisType
from typing import Literal

from chalicelib.catalog.service import Service, find_service, get_services
from chalicelib.directory import rules as directory_rules
from chalicelib.errors import Conflict, ValidationFailed
from chalicelib.maintenance import repository, rules
from chalicelib.maintenance.repository import MaintenanceWindow, to_domain
from chalicelib.maintenance.tables import MaintenanceWindowRecord
from chalicelib.store import RetryableConflict, retry_on_conflict


@dataclass(frozen=True)
class Removal:
    """What a DELETE did: `deleted` a future window, or `ended` an ongoing one (then `window`)."""

    window_id: str
    outcome: Literal["deleted", "ended"]
    window: MaintenanceWindow | None


# --- services --------------------------------------------------------------------------------------


def resolve_services(*, organization_id: str, service_refs: list[str], field: str = "service_ids") -> list[str]:
    """The service keys `service_refs` (svc_ keys or SER-nnnnn ids) name, in order, without repeats.

    400 naming every reference that is no service of the organization."""
    if not service_refs:
        raise ValidationFailed.for_field(field, "must name at least one service")
    if len(service_refs) > rules.MAX_SERVICES:
        raise ValidationFailed.for_field(field, f"must name at most {rules.MAX_SERVICES} services")
    keys = [ref for ref in service_refs if directory_rules.is_service_key(ref)]
    by_key = get_services(organization_id=organization_id, service_keys=keys)  # one BatchGetItem
    resolved: list[str | None] = []
    for ref in service_refs:
        if ref in by_key:
            resolved.append(ref)
        elif directory_rules.is_service_key(ref):
            resolved.append(None)
        else:
            found = find_service(organization_id=organization_id, service_ref=ref)
            resolved.append(found.service_key if found is not None else None)
    problems = [
        {"field": f"{field}.{index}", "message": f"no such service in this organization: {ref}"}
        for index, (ref, key) in enumerate(zip(service_refs, resolved, strict=True))
        if key is None
    ]
    if problems:
        unknown = ", ".join(service_refs[int(p["field"].rsplit(".", 1)[1])] for p in problems)
        raise ValidationFailed.for_fields(problems, f"Unknown services in {field}: {unknown}.")
    return directory_rules.unique_in_order([key for key in resolved if key is not None])


def services_of(*, organization_id: str, windows: list[MaintenanceWindow]) -> dict[str, Service]:
    """The services the windows name, by key: one BatchGetItem for a whole page."""
    keys = [key for window in windows for key in window.service_keys]
    return get_services(organization_id=organization_id, service_keys=keys)


# --- reads -----------------------------------------------------------------------------------------


def get_window(*, organization_id: str, window_id: str) -> MaintenanceWindow:
    return to_domain(repository.get_record(organization_id, window_id))


def list_windows(
    *,
    organization_id: str,
    now: datetime,
    service_ref: str | None = None,
    state: rules.StateFilter | None = None,
) -> list[MaintenanceWindow]:
    """Ongoing first (ending soonest), then future (starting soonest), then past (latest ended).

    One Query on the organization's windows; `service_ref` (svc_ key or SER id) and `state`
    filter them. A service the organization does not have matches no window."""
    service_key: str | None = None
    if service_ref is not None:
        found = find_service(organization_id=organization_id, service_ref=service_ref)
        if found is None:
            return []
        service_key = found.service_key
    windows = [
        window
        for window in map(to_domain, repository.organization_records(organization_id))
        if (service_key is None or service_key in window.service_keys) and rules.matches_state(window.state(now), state)
    ]
    return sorted(
        windows,
        key=lambda w: rules.list_order(start=w.start, end=w.end, window_id=w.window_id, now=now),
    )


# --- writes ----------------------------------------------------------------------------------------


def create_window(
    *,
    organization_id: str,
    service_refs: list[str],
    start: datetime,
    end: datetime,
    now: datetime,
    description: str | None = None,
    created_by: str | None = None,
) -> MaintenanceWindow:
    """A start in the past means now. 400 when the end is not after the start, not in the
    future, or more than MAX_DURATION after the start, or when a service is unknown."""
    starts_at, ends_at = rules.effective_start(start, now), end.astimezone(UTC)
    rules.check_span(start=starts_at, end=ends_at, now=now)
    cleaned_description = directory_rules.clean_description(description)
    service_keys = resolve_services(organization_id=organization_id, service_refs=service_refs)

    def attempt() -> MaintenanceWindow:
        record = MaintenanceWindowRecord(
            organization_id,
            rules.new_window_id(),
            service_keys=service_keys,
            starts_at=starts_at,
            ends_at=ends_at,
            description=cleaned_description,
            created_by=created_by,
            created_at=now,
        )
        repository.commit(window=record, before=[], after=repository.memberships_of(record, now), new=True)
        return to_domain(record)

    return retry_on_conflict(attempt, what="maintenance window")


def _stale(expected: int, current: int) -> Conflict:
    return Conflict(
        f"The maintenance window changed since version {expected}; it is now at version {current}. "
        "Read it again and reapply your change.",
        details={"expected_version": expected, "current_version": current},
    )


def _ended() -> Conflict:
    return Conflict("The maintenance window has ended; a past window is kept as history and cannot change.")


def update_window(
    *,
    organization_id: str,
    window_id: str,
    now: datetime,
    expected_version: int | None = None,
    description: str | EllipsisType | None = ...,
    start: datetime | EllipsisType = ...,
    end: datetime | EllipsisType = ...,
    service_refs: list[str] | EllipsisType = ...,
) -> MaintenanceWindow:
    """Change only the arguments given (`...` means unchanged). 409 for a past window, or a new
    start for a window that has started; the times obey the same rules as on create."""
    cleaned_description = directory_rules.clean_description(description) if description is not ... else None
    repository.get_record(organization_id, window_id)  # 404 before the services are looked up
    service_keys = (
        resolve_services(organization_id=organization_id, service_refs=service_refs)
        if service_refs is not ...
        else None
    )

    def attempt() -> MaintenanceWindow:
        record = repository.get_record(organization_id, window_id, consistent=True)
        if expected_version is not None and int(record.version or 0) != expected_version:
            raise _stale(expected_version, int(record.version or 0))
        state = rules.state_of(start=record.starts_at, end=record.ends_at, now=now)
        if state == "past":
            raise _ended()
        if start is not ... and state == "ongoing":
            raise Conflict(
                "The maintenance window has started; its start can no longer change "
                "(change its end, or DELETE it to end it now).",
                details={"fields": [{"field": "start", "message": "the window has started"}]},
            )
        before = repository.memberships_of(record, now)
        new_start = rules.effective_start(start, now) if start is not ... else record.starts_at
        new_end = end.astimezone(UTC) if end is not ... else record.ends_at
        rules.check_span(start=new_start, end=new_end, now=now, end_field="end" if end is not ... else "start")
        record.starts_at, record.ends_at = new_start, new_end
        if description is not ...:
            record.description = cleaned_description
        if service_keys is not None:
            record.service_keys = service_keys  # type: ignore[assignment]  # PynamoDB stores a list[str]
        record.updated_at = now
        try:
            repository.commit(window=record, before=before, after=repository.memberships_of(record, now))
        except RetryableConflict:
            if expected_version is not None:
                latest = repository.get_record(organization_id, window_id, consistent=True)
                raise _stale(expected_version, int(latest.version or 0)) from None
            raise
        return to_domain(record)

    return retry_on_conflict(attempt, what="maintenance window")


def delete_window(*, organization_id: str, window_id: str, now: datetime) -> Removal:
    """A future window is deleted; an ongoing one ends now (its services leave maintenance at
    once) and stays listed as past. Repeating the DELETE of a window it ended answers the same;
    a window that ended by itself cannot be deleted (409)."""

    def attempt() -> Removal:
        record = repository.get_record(organization_id, window_id, consistent=True)
        state = rules.state_of(start=record.starts_at, end=record.ends_at, now=now)
        if state == "past":
            if record.ended_early_at is not None:
                return Removal(window_id, "ended", to_domain(record))
            raise _ended()
        before = repository.memberships_of(record, now)
        if state == "future":
            repository.commit(window=record, before=before, after=[], delete_window=True)
            return Removal(window_id, "deleted", None)
        record.ends_at, record.ended_early_at, record.updated_at = now, now, now
        repository.commit(window=record, before=before, after=[])
        return Removal(window_id, "ended", to_domain(record))

    return retry_on_conflict(attempt, what="maintenance window")
