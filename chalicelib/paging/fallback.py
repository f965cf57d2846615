"""The organization's fallback contacts: who is paged when an incident's escalation reaches nobody
(docs/PAGING.md, GET/PUT /api/v1/settings/paging).

Stored on the organization item (`paging_settings.fallback_contacts`: user ids, in order), written
with its version checked. A contact is given as a user id or an email and must be an active person
of the organization when set; one deactivated later stays listed (shown inactive) but is skipped
when paging, and one removed is dropped.
"""

from __future__ import annotations

from dataclasses import dataclass

from pynamodb.exceptions import DoesNotExist

from chalicelib.directory.users import User, find_user_by_email, get_users
from chalicelib.errors import Conflict, NotFound, ValidationFailed
from chalicelib.organization.tables import OrganizationRecord
from chalicelib.store import update_if

MAX_FALLBACK_CONTACTS = 10
FIELD = "fallback_contacts"


@dataclass(frozen=True)
class PagingSettings:
    fallback_contacts: list[User]  # in the order set; deactivated ones included

    @property
    def active_contacts(self) -> list[User]:
        return [user for user in self.fallback_contacts if user.is_active]


def _load(organization_id: str) -> OrganizationRecord:
    try:
        return OrganizationRecord.get(organization_id, consistent_read=True)
    except DoesNotExist:
        raise NotFound("Organization not found.") from None


def _stored_ids(record: OrganizationRecord) -> list[str]:
    stored = record.paging_settings if isinstance(record.paging_settings, dict) else {}
    return [str(user_id) for user_id in stored.get(FIELD) or []]


def _settings_of(organization_id: str, user_ids: list[str]) -> PagingSettings:
    found = get_users(organization_id=organization_id, user_ids=user_ids) if user_ids else {}
    return PagingSettings([found[user_id] for user_id in user_ids if user_id in found])


def paging_settings(*, organization_id: str) -> PagingSettings:
    """A GetItem and, when contacts are set, one BatchGetItem."""
    return _settings_of(organization_id, _stored_ids(_load(organization_id)))


def _resolve(organization_id: str, given: list[str]) -> list[str]:
    """User ids of the people named (by id or email), each once; ValidationFailed naming every
    entry that is not an active person of the organization."""
    by_id = get_users(organization_id=organization_id, user_ids=[value for value in given if "@" not in value])
    problems: list[dict[str, str]] = []
    chosen: list[str] = []
    for index, value in enumerate(given):
        user = find_user_by_email(organization_id=organization_id, email=value) if "@" in value else by_id.get(value)
        where = f"{FIELD}.{index}"
        if user is None:
            problems.append({"field": where, "message": f"{value} is not a user of this organization"})
        elif not user.is_active:
            problems.append({"field": where, "message": f"{value} is deactivated: only active people can be paged"})
        elif user.user_id not in chosen:
            chosen.append(user.user_id)
    if problems:
        raise ValidationFailed.for_fields(
            problems, "Every fallback contact must be an active user of this organization."
        )
    return chosen


def save_paging_settings(*, organization_id: str, fallback_contacts: list[str]) -> PagingSettings:
    """Replace the fallback contacts (an empty list removes them all)."""
    if len(fallback_contacts) > MAX_FALLBACK_CONTACTS:
        raise ValidationFailed.for_field(FIELD, f"at most {MAX_FALLBACK_CONTACTS} fallback contacts")
    user_ids = _resolve(organization_id, fallback_contacts)
    record = _load(organization_id)
    if not update_if(record, [OrganizationRecord.paging_settings.set({FIELD: user_ids})]):
        raise Conflict("The organization changed at the same time; retry.")
    return _settings_of(organization_id, user_ids)
