"""Delivery ids claimed with a conditional write, so a redelivered SQS message never sends twice.

Used by every consumer that sends to a person: escalation pages and rule steps
(chalicelib/paging/handlers.py), handoff notices, contact verification codes
(chalicelib/notification/verification.py), subscription confirmations, and the answer to an
inbound SMS. It lives with the notifications so that all of them can reach it (paging sits above
notification in the import layers). The claim-run-settle dance is the delivery kernel's
(chalicelib/delivery/claims.py); this module says what a notification's claim is (a
DeliveryRecord `sending`, taken over after CLAIM_LEASE) and what settles it (`sent`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, TypeVar

from pynamodb.attributes import (
    BooleanAttribute,
    JSONAttribute,
    TTLAttribute,
    UnicodeAttribute,
    UnicodeSetAttribute,
    UTCDateTimeAttribute,
)

from chalicelib import aws
from chalicelib.delivery.claims import Claim, Done, Guard, run_once
from chalicelib.delivery.schedule import Verdict, after_once
from chalicelib.notification.channels import DeliveryResult
from chalicelib.store import Transaction
from chalicelib.store.model import TocsinModel

logger = logging.getLogger("tocsin.notification")
T = TypeVar("T")

KEEP_FOR = timedelta(days=7)
# A claim older than this whose send never completed (a crashed worker) may be taken over.
CLAIM_LEASE = timedelta(minutes=5)


@aws.register_model
class DeliveryRecord(TocsinModel):
    class Meta(TocsinModel.Meta):
        table_name = "notification-deliveries"

    delivery_id = UnicodeAttribute(hash_key=True)
    state = UnicodeAttribute()  # sending | sent | skipped (a page its incident no longer wanted)
    claimed_at = UTCDateTimeAttribute()
    expires_at = TTLAttribute()
    # Set only on the record of an SMS page (chalicelib/paging/sms_reply.py): what a reply refers to.
    organization_id = UnicodeAttribute(null=True)
    incident_number = UnicodeAttribute(null=True)
    user_id = UnicodeAttribute(null=True)
    # Set only on the record of an action taken from a page (chalicelib/paging/action_once.py):
    # what the first request was answered, so a replay is answered the same.
    answer = JSONAttribute(null=True)
    # Set only on a number's last inbound SMS (chalicelib/paging/sms_loops.py): the same text again is a loop.
    body_digest = UnicodeAttribute(null=True)
    # Set only on a page digest (chalicelib/notification/digests.py): its channel, the incidents
    # it lists, the addresses it goes to, and whether its message was published.
    channel = UnicodeAttribute(null=True)
    digest_incidents = UnicodeSetAttribute(null=True)
    digest_addresses = UnicodeSetAttribute(null=True)
    digest_published = BooleanAttribute(null=True)


def claim_of(delivery_id: str, now: datetime, guard: Guard | None = None) -> Claim:
    """Written when the delivery id is new, or over a `sending` claim older than CLAIM_LEASE;
    with a guard, only while it holds (a page: only while its incident still wants it)."""
    return Claim(
        DeliveryRecord(delivery_id, state="sending", claimed_at=now, expires_at=now + KEEP_FOR),
        in_progress=DeliveryRecord.state == "sending",
        takeover=(DeliveryRecord.state == "sending") & (DeliveryRecord.claimed_at < now - CLAIM_LEASE),
        what="a notification delivery",
        guard=guard,
    )


def once(
    delivery_id: str,
    now: datetime,
    work: Callable[[], T],
    settle: Callable[[T], bool],
    *,
    guard: Guard | None = None,
) -> Done[T] | None:
    """`work` at most once per delivery id (chalicelib/delivery/claims.py, `run_once`): None when
    it was sent already or another worker is sending it. `settle(result)` marks it sent (or lets
    `work` have done so in its own transaction, `mark_sent_in`) and answers True, or answers
    False to release it for a retry; `work` raising releases it. A `guard` false at the claim
    raises GuardFailed (nothing ran)."""
    return run_once(claim_of(delivery_id, now, guard), work, settle)


def mark_sent(delivery_id: str, now: datetime) -> None:
    _sent(delivery_id, now).save()


def mark_sent_in(transaction: Transaction, delivery_id: str, now: datetime) -> None:
    """mark_sent inside the caller's transaction (the one that records what was sent)."""
    transaction.put("delivery", _sent(delivery_id, now))


def mark_skipped_in(transaction: Transaction, delivery_id: str, now: datetime) -> None:
    """Record, in the caller's transaction, that a delivery will never be sent: only while nobody
    has claimed it (the transaction fails on label "delivery" otherwise), so a skip is recorded
    once and never over a page that went out."""
    record = DeliveryRecord(delivery_id, state="skipped", claimed_at=now, expires_at=now + KEEP_FOR)
    transaction.put("delivery", record, DeliveryRecord.delivery_id.does_not_exist())


def _sent(delivery_id: str, now: datetime) -> DeliveryRecord:
    return DeliveryRecord(delivery_id, state="sent", claimed_at=now, expires_at=now + KEEP_FOR)


class NotSentYet(Exception):
    """A provider failed on an attempt that is not the last: SQS delivers the message again."""


def verdict_of(result: DeliveryResult) -> Verdict:
    """A provider failure may pass; a missing contact or a refusal will not."""
    if result.sent:
        return "delivered"
    return "retryable" if result.provider_failure else "final"


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

    def settle(result: DeliveryResult | None) -> bool:
        if result is None or not result.sent:
            return False
        mark_sent(delivery_id, now)
        return True

    done = once(delivery_id, now, send, settle)
    if done is None or done.result is None:
        return None  # sent already, another worker is sending it, or nothing to send
    result = done.result
    if result.sent:
        logger.info(f"{what} sent", extra={**where, "channel": result.channel})
        return result
    failure = {**where, "channel": result.channel, "error_code": result.error_code}
    if after_once(verdict_of(result), final_attempt=final_attempt) == "give_up":
        logger.warning(f"{what} not sent", extra=failure)
        return result
    logger.warning(f"{what} not sent yet; retrying", extra=failure)
    raise NotSentYet(f"{result.channel}: {result.error_code}")
