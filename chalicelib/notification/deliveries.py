"""Delivery ids claimed with a conditional write, so a redelivered SQS message never sends twice.

Used by every consumer that sends to a person: escalation pages (chalicelib/paging/handlers.py)
and contact verification codes (chalicelib/notification/verification.py). It lives with the
notifications so that both can reach it (paging sits above notification in the import layers)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from pynamodb.attributes import TTLAttribute, UnicodeAttribute, UTCDateTimeAttribute

from chalicelib import aws
from chalicelib.notification.channels import DeliveryResult
from chalicelib.store import Transaction, best_effort, save_if
from chalicelib.store.model import TocsinModel

logger = logging.getLogger("tocsin.notification")

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
    # Set only on the record of an SMS page (chalicelib/paging/sms_reply.py): what a reply refers to.
    organization_id = UnicodeAttribute(null=True)
    incident_number = UnicodeAttribute(null=True)
    user_id = UnicodeAttribute(null=True)


def claim(delivery_id: str, now: datetime) -> bool:
    """True when this worker may send; False when it was sent already or another worker is sending."""
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


class NotSentYet(Exception):
    """A provider failed on an attempt that is not the last: SQS delivers the message again."""


def send_once(
    delivery_id: str,
    now: datetime,
    send: Callable[[], DeliveryResult | None],
    *,
    final_attempt: bool,
    what: str,
    where: dict[str, Any],
) -> DeliveryResult | None:
    """One message's send, at most once: claim the delivery, send, mark it sent; otherwise release
    the claim. A provider failure raises NotSentYet (SQS retries) unless this is the final
    attempt; any other failure, or `send` deciding there is nothing to send (None), is logged
    and the message is done. None when another worker has it or it was sent already."""
    if not claim(delivery_id, now):
        return None  # sent already, or another worker is sending it
    try:
        result = send()
    except Exception:
        release(delivery_id)
        raise
    if result is not None and result.sent:
        mark_sent(delivery_id, now)
        logger.info(f"{what} sent", extra={**where, "channel": result.channel})
        return result
    release(delivery_id)
    if result is None:
        return None
    failure = {**where, "channel": result.channel, "error_code": result.error_code}
    if final_attempt or not result.provider_failure:
        logger.warning(f"{what} not sent", extra=failure)
        return result
    logger.warning(f"{what} not sent yet; retrying", extra=failure)
    raise NotSentYet(f"{result.channel}: {result.error_code}")
