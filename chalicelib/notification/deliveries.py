"""Delivery ids claimed with a conditional write, so a redelivered SQS message never sends twice.

Used by every consumer that sends to a person: escalation pages (chalicelib/paging/handlers.py)
and contact verification codes (chalicelib/notification/verification.py). It lives with the
notifications so that both can reach it (paging sits above notification in the import layers)."""

from __future__ import annotations

from datetime import datetime, timedelta

from pynamodb.attributes import TTLAttribute, UnicodeAttribute, UTCDateTimeAttribute

from chalicelib import aws
from chalicelib.store import Transaction, best_effort, save_if
from chalicelib.store.model import TocsinModel

KEEP_FOR = timedelta(days=7)
# A claim older than this whose send never completed (a crashed worker) may be taken over.
CLAIM_LEASE = timedelta(minutes=5)


@aws.register_model
class DeliveryRecord(TocsinModel):
    class Meta(TocsinModel.Meta):
        table_name = "notification-deliveries"

    delivery_id = UnicodeAttribute(hash_key=True)
    state = UnicodeAttribute()  # sending | sent
    claimed_at = UTCDateTimeAttribute()
    expires_at = TTLAttribute()


def claim(delivery_id: str, now: datetime) -> bool:
    """True when this worker may send; False when it was sent already or another worker is sending."""
    aws.bind_tables()
    return save_if(
        DeliveryRecord(delivery_id, state="sending", claimed_at=now, expires_at=now + KEEP_FOR),
        DeliveryRecord.delivery_id.does_not_exist()
        | ((DeliveryRecord.state == "sending") & (DeliveryRecord.claimed_at < now - CLAIM_LEASE)),
    )


def mark_sent(delivery_id: str, now: datetime) -> None:
    _sent(delivery_id, now).save()


def mark_sent_in(transaction: Transaction, delivery_id: str, now: datetime) -> None:
    """mark_sent inside the caller's transaction (the one that records what was sent)."""
    transaction.put("delivery", _sent(delivery_id, now))


def _sent(delivery_id: str, now: datetime) -> DeliveryRecord:
    return DeliveryRecord(delivery_id, state="sent", claimed_at=now, expires_at=now + KEEP_FOR)


def release(delivery_id: str) -> None:
    """The send failed at the provider: let the retry claim it again."""
    with best_effort("release a notification delivery"):
        DeliveryRecord(delivery_id).delete(condition=DeliveryRecord.state == "sending")
