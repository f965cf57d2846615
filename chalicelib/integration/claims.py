"""Dedup claims: which alert (and incident) a source's dedup key points at."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from pynamodb.exceptions import DoesNotExist

from chalicelib.integration.origin import AlertOrigin
from chalicelib.integration.tables import AlertDedupRecord
from chalicelib.store import Transaction

DEDUP_LIFETIME = timedelta(days=90)
# The dedup claim's label in a new alert's transaction.
DEDUP_LABEL = "dedup"


def dedup_id(origin: AlertOrigin, key: str) -> str:
    return f"{origin.organization_id}#{origin.origin_id}#{key}"


def read_claim(key: str) -> AlertDedupRecord | None:
    try:
        return AlertDedupRecord.get(key, consistent_read=True)
    except DoesNotExist:
        return None


def claim_key(
    transaction: Transaction,
    claim: tuple[str, AlertDedupRecord | None],
    *,
    alert_id: str,
    incident_number: str | None,
    now: datetime,
) -> None:
    """Point the key at a new alert, if nobody pointed it elsewhere since the claim was read."""
    key, previous = claim
    unchanged: Any
    if previous is None:
        unchanged = AlertDedupRecord.dedup_id.does_not_exist()
    elif previous.alert_id is not None:
        unchanged = AlertDedupRecord.alert_id == previous.alert_id
    else:
        unchanged = AlertDedupRecord.incident_number == previous.incident_number
    transaction.put(
        DEDUP_LABEL,
        AlertDedupRecord(
            key,
            alert_id=alert_id,
            incident_number=incident_number,
            updated_at=now,
            expires_at=now + DEDUP_LIFETIME,
        ),
        unchanged,
    )
