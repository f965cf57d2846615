"""Webhook subscribers: one signed POST per attempt, on outbound's retry schedule.

The same deliveries as outbound subscriptions (chalicelib/outbound): the body fixed when the
delivery was written, the headers signed the same way (X-Tocsin-Signature over the timestamp and
body), the target checked again right before sending and the connection made to the address the
check accepted (`outbound.delivery.post`), attempts at once, +1 min, +5 min, +30 min, +2 h
(`outbound.retry_schedule`). Each attempt is claimed first (a conditional update with a short
lease) so a redelivered message never posts the same attempt twice.

After the fifth failure the subscriber is removed (the subscriber and its URL guard, one
transaction) and `status_page.subscriber_webhook_removed` asks for an email to the address the
subscriber gave: it can subscribe again once its receiver works.

The signing secret is the subscriber's own, derived from the service secret, the page and the
subscriber (`signing_secret`): nothing to store, and it is the same for every delivery.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Literal

from pynamodb.exceptions import DoesNotExist

from chalicelib import aws, clock, templates
from chalicelib.integration.signing import signed_headers
from chalicelib.outbound import delivery, retry_schedule
from chalicelib.queue.messages import Message, publish
from chalicelib.settings import get_settings
from chalicelib.statuspage.pages import public_url
from chalicelib.statuspage.repository import load_structure
from chalicelib.store import Transaction, TransactionCancelled, assign, delete_if, update_if
from chalicelib.subscriber import links
from chalicelib.subscriber.notices import WEBHOOK_DELIVER, deliver_message
from chalicelib.subscriber.rules import guard_key
from chalicelib.subscriber.tables import (
    SubscriberItem,
    notice_key,
    subscriber_key,
)

logger = logging.getLogger("tocsin.subscriber")
WEBHOOK_REMOVED = "status_page.subscriber_webhook_removed"
CLAIM_SECONDS = delivery.CLAIM_SECONDS
UNFINISHED = ("pending", "retrying")
Outcome = Literal["sent", "not_due", "already_done", "claimed", "gone"]

__all__ = ["WEBHOOK_DELIVER", "WEBHOOK_REMOVED", "deliver", "handle", "notify_removed", "signing_secret"]


def signing_secret(page_id: str, subscriber_id: str) -> str:
    """The secret a webhook subscriber verifies its deliveries with (HMAC-SHA256, hex)."""
    return links.webhook_secret(page_id, subscriber_id)


def handle(message: Message) -> None:
    payload = message.payload
    deliver(
        organization_id=message.organization_id,
        page_id=str(payload["page_id"]),
        notice_id=str(payload["notice_id"]),
        subscriber_id=str(payload["subscriber_id"]),
        attempt=int(payload["attempt"]),
        now=clock.now(),
    )


def _get(page_id: str, key: str) -> SubscriberItem | None:
    try:
        return SubscriberItem.get(page_id, key, consistent_read=True)
    except DoesNotExist:
        return None


def deliver(
    *, organization_id: str, page_id: str, notice_id: str, subscriber_id: str, attempt: int, now: datetime
) -> Outcome:
    record = _get(page_id, notice_key(notice_id, subscriber_id))
    if record is None or not record.body or not record.url:
        return "gone"
    made = int(record.attempts or 0)
    if made >= attempt or record.delivery_status not in UNFINISHED:
        return "already_done"
    if made != attempt - 1:
        return "already_done"  # an out-of-order message: the attempt it names is not the next one
    if not retry_schedule.is_due(record.next_attempt_at, now):
        waiting_for = record.next_attempt_at or now
        publish(
            deliver_message(organization_id, page_id, notice_id, subscriber_id, attempt),
            delay_seconds=retry_schedule.sqs_delay(waiting_for, now),
        )
        return "not_due"
    subscriber = _get(page_id, subscriber_key(subscriber_id))
    s = SubscriberItem
    if subscriber is None:  # unsubscribed since: the delivery ends unsent
        update_if(record, [s.delivery_status.set("failed"), s.last_error.set("not sent: unsubscribed")])
        return "gone"
    if record.claimed_until is not None and record.claimed_until > now:
        return "claimed"
    claim = (s.attempts == attempt - 1) & s.delivery_status.is_in(*UNFINISHED)
    if not update_if(record, [s.claimed_until.set(now + timedelta(seconds=CLAIM_SECONDS))], claim):
        return "claimed"
    timestamp = int(clock.now().timestamp())
    headers = {
        "Content-Type": "application/json",
        "User-Agent": delivery.USER_AGENT,
        **signed_headers(signing_secret(page_id, subscriber_id), timestamp, record.body.encode()),
        "X-Tocsin-Event-Id": notice_id,
        "X-Tocsin-Event-Type": record.event_type or "",
        "X-Tocsin-Delivery-Attempt": str(attempt),
    }
    result = delivery.post(record.url, record.body.encode(), headers)
    status = retry_schedule.status_after(result, attempt)
    next_due = retry_schedule.next_attempt_at(attempt, now) if status == "retrying" else None
    record.update(
        actions=[
            s.attempts.set(attempt),
            s.delivery_status.set(status),
            s.last_attempt_at.set(now),
            assign(s.next_attempt_at, next_due),
            assign(s.last_error, result.error),
            assign(s.response_code, result.response_code),
            s.claimed_until.remove(),
            s.updated_at.set(clock.now()),
        ]
    )
    if next_due is not None:
        publish(
            deliver_message(organization_id, page_id, notice_id, subscriber_id, attempt + 1),
            delay_seconds=retry_schedule.sqs_delay(next_due, clock.now()),
        )
    elif status == "failed":
        _remove(organization_id, subscriber, record)
    return "sent"


def _remove(organization_id: str, subscriber: SubscriberItem, record: SubscriberItem) -> None:
    """Remove a webhook subscriber whose receiver kept failing, with its URL guard; then ask for
    the email that tells its address. Removed already (or changed since): nothing to do."""
    url = subscriber.url or ""
    guard = SubscriberItem(subscriber.page_id, guard_key(email=subscriber.email or "", url=url))
    tx = Transaction()
    tx.delete("subscriber", subscriber)  # conditional on the version read
    # The guard is the subscriber's whatever its version: it names its holder.
    tx.delete("guard", guard, SubscriberItem.subscriber_id == subscriber.subscriber_id, check_version=False)
    try:
        tx.commit()
    except TransactionCancelled as cancelled:
        if cancelled.failed != frozenset({"guard"}) or not delete_if(subscriber):
            return  # the subscriber changed or left meanwhile
    payload = {
        "page_id": subscriber.page_id,
        "subscriber_id": subscriber.subscriber_id,
        "email": subscriber.email,
        "url": url,
        "attempts": int(record.attempts or retry_schedule.MAX_ATTEMPTS),
        "last_error": record.last_error,
    }
    publish(Message(WEBHOOK_REMOVED, organization_id, payload))
    logger.info("webhook subscriber removed after failures", extra={"subscriber_id": subscriber.subscriber_id})


def notify_removed(message: Message) -> None:
    """Email the address of a removed webhook subscriber; SES failing raises (SQS retries)."""
    payload = message.payload
    email = str(payload.get("email") or "")
    structure = load_structure(str(payload["page_id"]))
    if not email or structure is None:
        return  # nobody to tell, or the page itself is gone
    page_name = structure.page.name or ""
    values = {
        "page_name": page_name,
        "page_url": public_url(structure.page.slug or ""),
        "url": str(payload.get("url") or ""),
        "attempts": int(payload.get("attempts") or retry_schedule.MAX_ATTEMPTS),
        "last_error": payload.get("last_error"),
    }
    subject = f"[{' '.join(page_name.split())}] Your status webhook was removed"
    text = templates.render("email/status_webhook_removed.txt", **values)
    html = templates.render("email/status_webhook_removed.html", **values)
    aws.client("ses").send_email(
        Source=get_settings().ses_sender,
        Destination={"ToAddresses": [email]},
        Message={
            "Subject": {"Data": subject, "Charset": "UTF-8"},
            "Body": {"Text": {"Data": text, "Charset": "UTF-8"}, "Html": {"Data": html, "Charset": "UTF-8"}},
        },
    )
