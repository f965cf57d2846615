"""Webhook subscribers: one attempt of a status-page notice to a webhook follower.

The attempt runs in the delivery kernel (chalicelib/delivery/attempts.py), as outbound
subscriptions' do: claimed once, the signed POST to the checked target
(chalicelib/delivery/http_post.py), attempts at once, +1 min, +5 min, +30 min, +2 h
(chalicelib/delivery/webhook.py). This module says only what is a follower's own:
- the delivery is the notice claim `SENT#<notice_id>#<subscriber_id>` on the page's partition,
  its body fixed when the batch wrote it (chalicelib/subscriber/notices.py);
- it is for the subscriber as it is now: unsubscribed since, the delivery ends unsent;
- the signing secret is the subscriber's own, derived from the service secret, the page and the
  subscriber (`signing_secret`): nothing to store, and it is the same for every delivery;
- giving up, after the fifth failure: the subscriber is removed (the subscriber and its URL
  guard, one transaction) and `status_page.subscriber_webhook_removed` asks for an email to the
  address the subscriber gave: it can subscribe again once its receiver works.
"""

from __future__ import annotations

import logging
from datetime import datetime

from pynamodb.exceptions import DoesNotExist
from pynamodb.expressions.condition import Condition

from chalicelib import aws, clock, templates
from chalicelib.budget import service as budget
from chalicelib.budget.rules import Send
from chalicelib.delivery import attempts, http_post, webhook
from chalicelib.delivery.attempts import AttemptFields, Outcome, ScheduledDelivery, Unsent
from chalicelib.queue.messages import Message, publish
from chalicelib.settings import Settings
from chalicelib.statuspage.pages import public_url
from chalicelib.statuspage.repository import load_structure
from chalicelib.store import Transaction, TransactionCancelled, delete_if
from chalicelib.subscriber import links
from chalicelib.subscriber.rules import guard_key
from chalicelib.subscriber.tables import SubscriberItem, notice_key, subscriber_key

logger = logging.getLogger("tocsin.subscriber")
WEBHOOK_DELIVER = "status_page.subscriber_deliver"
WEBHOOK_REMOVED = "status_page.subscriber_webhook_removed"

__all__ = [
    "WEBHOOK_DELIVER",
    "WEBHOOK_REMOVED",
    "FollowerWebhook",
    "deliver",
    "deliver_message",
    "handle",
    "notify_removed",
    "signing_secret",
]


def signing_secret(page_id: str, subscriber_id: str, *, settings: Settings) -> str:
    """The secret a webhook subscriber verifies its deliveries with (HMAC-SHA256, hex)."""
    return links.webhook_secret(page_id, subscriber_id, settings=settings)


def deliver_message(organization_id: str, page_id: str, notice_id: str, subscriber_id: str, attempt: int) -> Message:
    payload = {"page_id": page_id, "notice_id": notice_id, "subscriber_id": subscriber_id, "attempt": attempt}
    return Message(WEBHOOK_DELIVER, organization_id, payload)


class FollowerWebhook(ScheduledDelivery[SubscriberItem, SubscriberItem]):
    """One notice to one webhook subscriber of a page."""

    model = SubscriberItem
    schedule = webhook.RETRIES
    fields = AttemptFields(status="delivery_status")

    def __init__(self, organization_id: str, page_id: str, notice_id: str, subscriber_id: str) -> None:
        self.organization_id = organization_id
        self.page_id = page_id
        self.notice_id = notice_id
        self.subscriber_id = subscriber_id

    @property
    def key(self) -> tuple[str, str]:
        return self.page_id, notice_key(self.notice_id, self.subscriber_id)

    @property
    def guard(self) -> Condition:
        # An email's notice claim has no URL nor body: it is no webhook delivery.
        condition: Condition = SubscriberItem.url.exists() & SubscriberItem.body.exists()
        return condition

    def owns(self, record: SubscriberItem) -> bool:
        return bool(record.url and record.body)

    @property
    def where(self) -> dict[str, str]:
        return {"notice_id": self.notice_id, "subscriber_id": self.subscriber_id}

    def message(self, attempt: int) -> Message:
        return deliver_message(self.organization_id, self.page_id, self.notice_id, self.subscriber_id, attempt)

    def recipient(self, record: SubscriberItem) -> SubscriberItem | Unsent:
        subscriber = _get(self.page_id, subscriber_key(self.subscriber_id))
        return Unsent("unsubscribed") if subscriber is None else subscriber

    def send(
        self, record: SubscriberItem, recipient: SubscriberItem, attempt: int, *, settings: Settings
    ) -> http_post.Answer:
        return http_post.post(
            record.url or "",
            (record.body or "").encode(),
            secret=signing_secret(self.page_id, self.subscriber_id, settings=settings),
            headers=webhook.event_headers(self.notice_id, record.event_type or "", attempt),
            settings=settings,
        )

    def give_up(self, record: SubscriberItem, now: datetime, recipient: SubscriberItem | None) -> None:
        subscriber = recipient or _get(self.page_id, subscriber_key(self.subscriber_id))
        if subscriber is not None:
            _remove(self.organization_id, subscriber, record)


def handle(message: Message, settings: Settings) -> None:
    payload = message.payload
    page_id, notice_id, subscriber_id = (
        str(payload["page_id"]),
        str(payload["notice_id"]),
        str(payload["subscriber_id"]),
    )
    delivery = FollowerWebhook(message.organization_id, page_id, notice_id, subscriber_id)
    attempts.run(delivery, int(payload["attempt"]), clock.now(), settings=settings)


def deliver(
    *,
    organization_id: str,
    page_id: str,
    notice_id: str,
    subscriber_id: str,
    attempt: int,
    now: datetime,
    settings: Settings,
) -> Outcome:
    return attempts.run(
        FollowerWebhook(organization_id, page_id, notice_id, subscriber_id), attempt, now, settings=settings
    )


def _get(page_id: str, key: str) -> SubscriberItem | None:
    try:
        return SubscriberItem.get(page_id, key, consistent_read=True)
    except DoesNotExist:
        return None


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
        "attempts": int(record.attempts or webhook.RETRIES.max_attempts),
        "last_error": record.last_error,
    }
    publish(Message(WEBHOOK_REMOVED, organization_id, payload))
    logger.info("webhook subscriber removed after failures", extra={"subscriber_id": subscriber.subscriber_id})


def notify_removed(message: Message, settings: Settings) -> None:
    """Email the address of a removed webhook subscriber, within the outbound budget (a refusal is
    logged); SES failing raises (SQS retries)."""
    payload = message.payload
    email = str(payload.get("email") or "")
    structure = load_structure(str(payload["page_id"]))
    if not email or structure is None:
        return  # nobody to tell, or the page itself is gone
    page_name = structure.page.name or ""
    values = {
        "page_name": page_name,
        "page_url": public_url(structure.page.slug or "", settings=settings),
        "url": str(payload.get("url") or ""),
        "attempts": int(payload.get("attempts") or webhook.RETRIES.max_attempts),
        "last_error": payload.get("last_error"),
    }
    subject = f"[{' '.join(page_name.split())}] Your status webhook was removed"
    text = templates.render("email/status_webhook_removed.txt", **values)
    html = templates.render("email/status_webhook_removed.html", **values)
    decision = budget.spend(
        Send("email", email, "subscriber_notice", message.organization_id), clock.now(), settings=settings
    )
    if decision.refusal is not None:
        logger.warning(
            "webhook-removed email not sent: over the outbound budget", extra={"limit": decision.refusal.limit}
        )
        return
    try:
        aws.client("ses").send_email(
            Source=settings.ses_sender,
            Destination={"ToAddresses": [email]},
            Message={
                "Subject": {"Data": subject, "Charset": "UTF-8"},
                "Body": {"Text": {"Data": text, "Charset": "UTF-8"}, "Html": {"Data": html, "Charset": "UTF-8"}},
            },
        )
    except Exception:
        decision.refund()  # not sent: SQS retries the message, which charges again
        raise
