"""Organizations: every item belongs to one; keys and session tokens resolve to one."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from pynamodb.exceptions import DoesNotExist

from chalicelib.errors import NotFound
from chalicelib.organization.tables import OrganizationRecord
from chalicelib.store import scope


@dataclass(frozen=True)
class Organization:
    organization_id: str
    name: str
    created_at: datetime


def _to_domain(record: OrganizationRecord) -> Organization:
    return Organization(record.organization_id, record.name, record.created_at)


def create_organization(*, name: str, now: datetime, organization_id: str | None = None) -> Organization:
    record = OrganizationRecord(organization_id or str(uuid.uuid4()), name=name, created_at=now)
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
