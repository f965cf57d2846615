"""A console identity's organizations: invited by each, bound to one only once the person accepts.

A console identity is a person's sign-in (one Cognito user per email address, its password);
organizations are the directory's. Creating a directory user records an invitation here
(`invite`); nothing binds the identity to that organization until the person signs in with their
own password and accepts it (`accept`). So an organization that creates a user with someone
else's employee's email first gains nothing: the invitation waits, unaccepted, while the
employee's own organization invites them too and they accept that one. A person in two
organizations chooses at sign-in.

Identities from before this record existed carry their organization in the Cognito attribute
`custom:org` (set only by admins); sign-in counts that organization as accepted
(`with_legacy`), and accepting sets it, so the API's Cognito ID tokens name the organization the
person last chose.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from chalicelib.identity.tables import ACCEPTED, INVITED, ConsoleMembershipRecord
from chalicelib.store import delete_if, put_if_absent, update_if

# A person invited by more organizations than this sees the first ones (by organization id).
MAX_MEMBERSHIPS = 25


@dataclass(frozen=True)
class Membership:
    email: str
    organization_id: str
    user_id: str | None  # None: known only from the identity's legacy `custom:org`
    accepted: bool
    notified: bool = False


def _key(email: str) -> str:
    return email.strip().lower()


def _to_domain(record: ConsoleMembershipRecord) -> Membership:
    return Membership(
        email=record.email,
        organization_id=record.organization_id,
        user_id=record.user_id,
        accepted=record.status == ACCEPTED,
        notified=record.notified_at is not None,
    )


def invite(*, email: str, organization_id: str, user_id: str, now: datetime) -> Membership:
    """Record the organization's invitation (once: a retried message, or a user re-created in the
    organization, finds it and changes nothing, an acceptance included)."""
    record = ConsoleMembershipRecord(_key(email), organization_id, user_id=user_id, status=INVITED, invited_at=now)
    if put_if_absent(record):
        return _to_domain(record)
    return _to_domain(ConsoleMembershipRecord.get(_key(email), organization_id, consistent_read=True))


def memberships_of(email: str) -> list[Membership]:
    """Every organization that invited the address, accepted or not (one Query)."""
    records = ConsoleMembershipRecord.query(_key(email), consistent_read=True, limit=MAX_MEMBERSHIPS)
    return [_to_domain(record) for record in records]


def with_legacy(memberships: list[Membership], email: str, legacy_organization_id: str | None) -> list[Membership]:
    """The memberships, with the identity's `custom:org` counted as accepted (the module's note)."""
    if not legacy_organization_id:
        return memberships
    found = [m for m in memberships if m.organization_id != legacy_organization_id]
    return [Membership(_key(email), legacy_organization_id, None, accepted=True), *found]


def accept(*, email: str, organization_id: str, now: datetime) -> None:
    """The person accepted the organization's invitation (idempotent). An identity known to the
    organization only through its legacy `custom:org` has no record: one is written, accepted."""
    key = _key(email)
    record = ConsoleMembershipRecord(key, organization_id)
    accepted = [ConsoleMembershipRecord.status.set(ACCEPTED), ConsoleMembershipRecord.accepted_at.set(now)]
    if update_if(record, accepted, condition=ConsoleMembershipRecord.status == INVITED):
        return
    legacy = ConsoleMembershipRecord(key, organization_id, user_id="", status=ACCEPTED, invited_at=now, accepted_at=now)
    put_if_absent(legacy)


def decline(*, email: str, organization_id: str) -> None:
    """The person declined the invitation: it goes (an accepted membership stays). The
    organization inviting again takes a new directory user, and then a new invitation."""
    record = ConsoleMembershipRecord(_key(email), organization_id)
    delete_if(record, ConsoleMembershipRecord.status == INVITED, add_version_condition=False)


def mark_notified(*, email: str, organization_id: str, now: datetime) -> None:
    """The invitation email to an identity that already signs in went out."""
    record = ConsoleMembershipRecord(_key(email), organization_id)
    update_if(record, [ConsoleMembershipRecord.notified_at.set(now)], condition=ConsoleMembershipRecord.email.exists())
