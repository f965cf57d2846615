"""The double opt-in email: the one message a pending subscriber ever gets.

Every subscribe request publishes `status_subscriber.confirmation_requested` after its write (a
resend is a new message), naming who asked (a digest of the address); the consumer here sends the
email through SES with the signed confirm link (templates email/status_confirm.txt and .html),
only when the subscriber is pending and its own address is the one that asked. So a confirmed
address, or a pending webhook subscriber's URL named with another address, gets nothing, while
the request did the same work as one that sends (chalicelib/subscriber/service.py). Once per message: the delivery
`status-confirm#<subscriber_id>#<message_id>` is claimed first, so a redelivered message never
sends twice; an SES failure releases the claim and SQS retries. A subscriber confirmed, gone or
expired by the time the message is read gets nothing. The email passes the outbound budget (a
mailbox gets at most 3 confirmations an hour, however its address is spelled and whatever page or
organization asks: chalicelib/budget); a refusal is logged and not retried.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from chalicelib import aws, clock, templates
from chalicelib.notification import deliveries
from chalicelib.notification.channels import PROVIDER_ERROR, DeliveryResult
from chalicelib.notification.gate import send_within_budget
from chalicelib.queue.consumers import handles
from chalicelib.queue.messages import Message, publish
from chalicelib.settings import Settings
from chalicelib.statuspage.pages import public_url
from chalicelib.statuspage.repository import load_structure
from chalicelib.subscriber import repository, rules
from chalicelib.subscriber.links import SubscriberLink, link_url
from chalicelib.subscriber.tables import PENDING, WEBHOOK, SubscriberItem

logger = logging.getLogger("tocsin.subscriber")

CONFIRMATION_REQUESTED = "status_subscriber.confirmation_requested"


def request(subscriber: SubscriberItem, *, requested_by: str) -> None:
    """After the write: ask the worker to send the confirmation email, if `requested_by` (the
    request's address) is the pending subscriber's own."""
    publish(
        Message(
            CONFIRMATION_REQUESTED,
            subscriber.organization_id or "",
            {
                "page_id": subscriber.page_id,
                "subscriber_id": subscriber.subscriber_id or "",
                "requested_by": rules.requester_digest(requested_by),
            },
        )
    )


def wanted_by_its_owner(subscriber: SubscriberItem | None, payload: dict[str, Any]) -> bool:
    """A pending subscriber with an address, asked for by that address (a message queued before
    requests carried `requested_by` counts as asked by it)."""
    if subscriber is None or subscriber.status != PENDING or not subscriber.email:
        return False
    asked = payload.get("requested_by")
    return asked is None or asked == rules.requester_digest(subscriber.email)


@dataclass(frozen=True)
class ConfirmationEmail:
    subject: str
    text: str
    html: str


def render(*, page_name: str, page_url: str, confirm_url: str, subscriber: SubscriberItem) -> ConfirmationEmail:
    values: dict[str, Any] = {
        "page_name": page_name,
        "page_url": page_url,
        "confirm_url": confirm_url,
        "webhook_url": subscriber.url if subscriber.kind == WEBHOOK else None,
        "component_count": len(subscriber.component_ids or []),
        "valid_hours": int(rules.PENDING_FOR.total_seconds() // 3600),
    }
    return ConfirmationEmail(
        subject=f"Confirm your subscription to {page_name} status",
        text=templates.render("email/status_confirm.txt", **values),
        html=templates.render("email/status_confirm.html", **values),
    )


def send_email(
    address: str, email: ConfirmationEmail, client: Any | None = None, *, settings: Settings
) -> DeliveryResult:
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        response = (client or aws.client("ses")).send_email(
            Source=settings.ses_sender,
            Destination={"ToAddresses": [address]},
            Message={
                "Subject": {"Data": email.subject, "Charset": "UTF-8"},
                "Body": {
                    "Text": {"Data": email.text, "Charset": "UTF-8"},
                    "Html": {"Data": email.html, "Charset": "UTF-8"},
                },
            },
        )
    except ClientError as error:
        code = str(error.response.get("Error", {}).get("Code") or "Unknown")
        return DeliveryResult.provider_failed("email", f"SES_{code}", f"SES refused the email: {code}")
    except BotoCoreError as error:
        return DeliveryResult.provider_failed("email", PROVIDER_ERROR, f"SES could not be reached: {error}")
    return DeliveryResult.delivered("email", str(response.get("MessageId") or "") or None)


@handles(CONFIRMATION_REQUESTED)
def on_confirmation_requested(message: Message, settings: Settings) -> None:
    now = clock.now()
    page_id = str(message.payload.get("page_id") or "")
    subscriber_id = str(message.payload.get("subscriber_id") or "")
    where = {"page_id": page_id, "subscriber_id": subscriber_id, "message_id": message.message_id}

    def send() -> DeliveryResult | None:
        subscriber = repository.get_subscriber(page_id, subscriber_id, now)
        wanted = wanted_by_its_owner(subscriber, message.payload)
        structure = load_structure(page_id) if wanted else None
        if subscriber is None or structure is None or not subscriber.email:
            logger.info("confirmation not needed (confirmed, gone, or asked by another address)", extra=where)
            return None
        slug = structure.page.slug or ""
        email = render(
            page_name=structure.page.name or slug,
            page_url=public_url(slug, settings=settings),
            confirm_url=link_url(slug, SubscriberLink("confirm", page_id, subscriber_id), settings=settings),
            subscriber=subscriber,
        )
        return send_within_budget(
            channel="email",
            destination=subscriber.email,
            purpose="confirmation",
            organization_id=message.organization_id or None,
            now=now,
            deliver=lambda: send_email(str(subscriber.email), email, settings=settings),
            settings=settings,
        )

    deliveries.send_once(
        f"status-confirm#{subscriber_id}#{message.message_id}",
        now,
        send,
        final_attempt=message.final_attempt,
        what="subscription confirmation",
        where=where,
    )
