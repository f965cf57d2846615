"""Unique values per organization: a user's email, a team's or service's name, an incident's
postmortem. Each is a UniqueNameRecord that names its owner, claimed in the same transaction as
the owner's item, so two racing creates (or renames) end with exactly one winner.

It lives in the kernel because several domains claim values in the same table (directory,
postmortem); each domain builds its own `unique_key` (e.g. `team-name#payments`).
"""

from __future__ import annotations

from pynamodb.attributes import UnicodeAttribute
from pynamodb.exceptions import DoesNotExist

from chalicelib import aws
from chalicelib.store.model import TocsinModel
from chalicelib.store.transactions import Transaction


@aws.register_model
class UniqueNameRecord(TocsinModel):
    """Claims a unique value inside an organization for its owner (the guarded item's id)."""

    class Meta(TocsinModel.Meta):
        table_name = "unique-names"

    organization_id = UnicodeAttribute(hash_key=True)
    unique_key = UnicodeAttribute(range_key=True)  # e.g. team-name#payments
    owner_id = UnicodeAttribute()


def claim_unique(tx: Transaction, label: str, organization_id: str, unique_key: str, owner_id: str) -> None:
    """Add the claim to `tx`; the transaction is cancelled with `label` failed when the value is taken."""
    record = UniqueNameRecord(organization_id, unique_key, owner_id=owner_id)
    tx.put(label, record, condition=UniqueNameRecord.unique_key.does_not_exist())


def release_unique(tx: Transaction, label: str, organization_id: str, unique_key: str, owner_id: str) -> None:
    """Add the release to `tx`; `label` fails when the value is no longer this owner's."""
    record = UniqueNameRecord(organization_id, unique_key, owner_id=owner_id)
    tx.delete(label, record, condition=UniqueNameRecord.owner_id == owner_id)


def owner_of(*, organization_id: str, unique_key: str) -> str | None:
    """Who holds the value now (one consistent GetItem); None when nobody does."""
    try:
        return str(UniqueNameRecord.get(organization_id, unique_key, consistent_read=True).owner_id)
    except DoesNotExist:
        return None
