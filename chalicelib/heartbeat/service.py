"""Heartbeats of an organization: create (the ping URL is shown once), list, get, update,
regenerate the ping URL, delete.

Edits are conditional on the state read (`repository.unchanged`) and on `version` (PynamoDB's
version check): a ping or the overdue step landing in between makes the edit re-read and re-apply,
so neither loses the other's write; a PATCH naming the version it read gets a 409 when someone
edited since.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from types import EllipsisType

from chalicelib.catalog.service import find_service
from chalicelib.errors import Conflict, NotFound, ValidationFailed
from chalicelib.heartbeat import repository, rules
from chalicelib.heartbeat.tables import HeartbeatRecord
from chalicelib.settings import Settings
from chalicelib.store import RetryableConflict, delete_if, put_if_absent, retry_on_conflict, update_if

MAX_HEARTBEATS = 200  # per organization


@dataclass(frozen=True)
class IssuedHeartbeat:
    """A heartbeat and its ping URL: shown at creation and when regenerated, never again."""

    record: HeartbeatRecord
    ping_url: str


def ping_url(token: str, *, settings: Settings) -> str:
    return f"{settings.public_base_url.rstrip('/')}/heartbeats/{token}"


def _not_found() -> NotFound:
    return NotFound("Heartbeat not found.")


def _hash(heartbeat_id: str, secret: str, *, settings: Settings) -> str:
    return rules.hash_secret(settings.api_key_hmac_secret, heartbeat_id, secret)


def _service_key(organization_id: str, service_ref: str) -> str:
    service = find_service(organization_id=organization_id, service_ref=service_ref)
    if service is None or not service.is_active:
        raise ValidationFailed.for_field("service", "not an active service of this organization (SER-nnnnn or svc_...)")
    return service.service_key


def get_heartbeat(*, organization_id: str, heartbeat_id: str) -> HeartbeatRecord:
    record = repository.read(heartbeat_id)
    if record is None or record.organization_id != organization_id:
        raise _not_found()
    return record


def list_heartbeats(*, organization_id: str) -> list[HeartbeatRecord]:
    """Newest first; one Query on the organization index."""
    found = list(HeartbeatRecord.by_organization.query(organization_id))
    return sorted(found, key=lambda r: (r.created_at, r.heartbeat_id), reverse=True)


def find_by_name(*, organization_id: str, name: str) -> list[HeartbeatRecord]:
    """The organization's heartbeats named `name` (exactly; else ignoring case, when none is), oldest
    first: one Query on the organization index (at most MAX_HEARTBEATS items)."""
    found = list_heartbeats(organization_id=organization_id)[::-1]
    exact = [record for record in found if record.name == name]
    return exact or [record for record in found if record.name.casefold() == name.casefold()]


def create_heartbeat(
    *,
    organization_id: str,
    name: str,
    service_ref: str,
    interval_seconds: int,
    grace_seconds: int,
    now: datetime,
    description: str | None = None,
    enabled: bool = True,
    created_by: str | None = None,
    settings: Settings,
) -> IssuedHeartbeat:
    beat = rules.new_beat(interval_seconds=interval_seconds, grace_seconds=grace_seconds, enabled=enabled, now=now)
    service_key = _service_key(organization_id, service_ref)
    if HeartbeatRecord.by_organization.count(organization_id) >= MAX_HEARTBEATS:
        raise Conflict(f"The organization has {MAX_HEARTBEATS} heartbeats, the most it may have; delete one first.")
    heartbeat_id, secret = rules.new_heartbeat_id(), rules.new_secret()
    record = HeartbeatRecord(
        heartbeat_id,
        organization_id=organization_id,
        name=name,
        description=description,
        service_key=service_key,
        secret_hash=_hash(heartbeat_id, secret, settings=settings),
        created_at=now,
        created_by=created_by,
    )
    repository.apply(record, beat)
    if not put_if_absent(record):
        raise Conflict("A heartbeat with this id exists already; retry.")  # 96 random bits: never in practice
    return IssuedHeartbeat(record, ping_url(rules.token_of(heartbeat_id, secret), settings=settings))


def _stale(expected: int, current: int) -> Conflict:
    return Conflict(
        f"The heartbeat changed since version {expected}; it is now at version {current}. "
        "Read it again and reapply your change.",
        details={"expected_version": expected, "current_version": current},
    )


def update_heartbeat(
    *,
    organization_id: str,
    heartbeat_id: str,
    now: datetime,
    expected_version: int | None = None,
    name: str | EllipsisType = ...,
    description: str | EllipsisType | None = ...,
    interval_seconds: int | EllipsisType = ...,
    grace_seconds: int | EllipsisType = ...,
    enabled: bool | EllipsisType = ...,
) -> HeartbeatRecord:
    """Change only the arguments given (`...` means unchanged). See rules.reconfigured for what a
    new interval, a pause and a resume do to the current wait."""
    if interval_seconds is not ...:
        rules.check_interval(interval_seconds)
    if grace_seconds is not ...:
        rules.check_grace(grace_seconds)

    def attempt() -> HeartbeatRecord:
        record = get_heartbeat(organization_id=organization_id, heartbeat_id=heartbeat_id)
        if expected_version is not None and record.version != expected_version:
            raise _stale(expected_version, int(record.version or 0))
        read = repository.beat_of(record)
        beat = rules.reconfigured(
            read,
            now,
            interval_seconds=None if interval_seconds is ... else interval_seconds,
            grace_seconds=None if grace_seconds is ... else grace_seconds,
            enabled=None if enabled is ... else enabled,
        )
        actions = [*repository.state_actions(beat), HeartbeatRecord.updated_at.set(now)]
        if name is not ...:
            actions.append(HeartbeatRecord.name.set(name))
        if description is not ...:
            attribute = HeartbeatRecord.description
            actions.append(attribute.remove() if description is None else attribute.set(description))
        # update_if adds the version check and bumps it; `unchanged` catches pings and checks.
        if update_if(record, actions, repository.unchanged(read)):
            return record
        latest = repository.read(heartbeat_id)
        if latest is None:
            raise _not_found()
        if expected_version is not None and latest.version != expected_version:
            raise _stale(expected_version, int(latest.version or 0))
        raise RetryableConflict()

    return retry_on_conflict(attempt, what="heartbeat")


def regenerate_ping_url(
    *, organization_id: str, heartbeat_id: str, now: datetime, settings: Settings
) -> IssuedHeartbeat:
    """A new secret: the old ping URL answers 404 from now on."""
    secret = rules.new_secret()

    def attempt() -> IssuedHeartbeat:
        record = get_heartbeat(organization_id=organization_id, heartbeat_id=heartbeat_id)
        changes = [
            HeartbeatRecord.secret_hash.set(_hash(heartbeat_id, secret, settings=settings)),
            HeartbeatRecord.updated_at.set(now),
        ]
        if not update_if(record, changes, HeartbeatRecord.heartbeat_id.exists()):
            raise RetryableConflict()  # edited or deleted in between: read again (404 when deleted)
        return IssuedHeartbeat(record, ping_url(rules.token_of(heartbeat_id, secret), settings=settings))

    return retry_on_conflict(attempt, what="heartbeat")


def delete_heartbeat(*, organization_id: str, heartbeat_id: str) -> None:
    """Its ping URL answers 404 from now on. An open outage's incident stays open for people to resolve."""
    record = get_heartbeat(organization_id=organization_id, heartbeat_id=heartbeat_id)
    if not delete_if(record, HeartbeatRecord.heartbeat_id.exists(), add_version_condition=False):
        raise _not_found()
