"""Organizations: every item belongs to one; keys and session tokens resolve to one.

An organization has a time zone (an IANA name, "UTC" until set): the zone of its people who have
not chosen their own (chalicelib.directory.users), so notifications and the console show their
times in it.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from pynamodb.exceptions import DoesNotExist

from chalicelib import zones
from chalicelib.errors import Conflict, NotFound, ValidationFailed
from chalicelib.organization.tables import OrganizationRecord
from chalicelib.store import scope, update_if


@dataclass(frozen=True)
class Organization:
    organization_id: str
    name: str
    created_at: datetime
    time_zone: str = zones.DEFAULT_ZONE


def _to_domain(record: OrganizationRecord) -> Organization:
    return Organization(record.organization_id, record.name, record.created_at, zones.zone_or_default(record.time_zone))


def check_time_zone(value: str, field: str = "time_zone") -> str:
    """`value` when the zone database has it; otherwise a 400 naming `field`."""
    if not zones.is_valid_zone(value):
        raise ValidationFailed.for_field(field, zones.ZONE_HINT)
    return value


def create_organization(
    *, name: str, now: datetime, organization_id: str | None = None, time_zone: str | None = None
) -> Organization:
    record = OrganizationRecord(
        organization_id or str(uuid.uuid4()),
        name=name,
        created_at=now,
        time_zone=check_time_zone(time_zone) if time_zone is not None else None,
    )
    record.save(condition=OrganizationRecord.organization_id.does_not_exist())
    return _to_domain(record)


def get_organization(*, organization_id: str) -> Organization:
    found = scope.remembered(("organization", organization_id), lambda: _read_organization(organization_id))
    if found is None:
        raise NotFound("Organization not found.")
    return found


def _read_organization(organization_id: str) -> Organization | None:
    try:
        return _to_domain(OrganizationRecord.get(organization_id))
    except DoesNotExist:
        return None


def find_organization(*, organization_id: str) -> Organization | None:
    try:
        return get_organization(organization_id=organization_id)
    except NotFound:
        return None


def organization_time_zone(organization_id: str) -> str:
    """The organization's zone ("UTC" when it has none or is gone): its people's default."""
    found = find_organization(organization_id=organization_id)
    return found.time_zone if found is not None else zones.DEFAULT_ZONE


def set_time_zone(*, organization_id: str, time_zone: str) -> Organization:
    """Set the organization's zone (a 400 naming `time_zone` for a name the database lacks)."""
    zone = check_time_zone(time_zone)
    try:
        record = OrganizationRecord.get(organization_id, consistent_read=True)
    except DoesNotExist:
        raise NotFound("Organization not found.") from None
    if not update_if(record, [OrganizationRecord.time_zone.set(zone)]):
        raise Conflict("The organization changed at the same time; retry.")
    updated = _to_domain(record)
    scope.remember(("organization", organization_id), updated)
    return updated
