"""A status page with subscribers written straight into the table (the subscribe flow is its own
module), and the notice emails SES on moto accepted, parsed."""

from __future__ import annotations

import email
import hashlib
from dataclasses import dataclass
from email.message import EmailMessage
from email.policy import default
from typing import Any, cast

from chalicelib.statuspage import pages, structure
from chalicelib.statuspage.repository import item_id
from chalicelib.subscriber.tables import (
    CONFIRMED,
    EMAIL,
    EMAIL_GUARD_PREFIX,
    URL_GUARD_PREFIX,
    WEBHOOK,
    SubscriberItem,
    subscriber_key,
)
from tests.conftest import NOW, Org


@dataclass(frozen=True)
class Page:
    page_id: str
    slug: str
    checkout: str  # component ids
    api: str


def make_page(org: Org, slug: str = "acme") -> Page:
    page = pages.create_page(organization_id=org.organization_id, name="Acme Cloud", slug=slug, now=NOW)
    section = structure.create_section(page_id=page.page_id, name="Web", now=NOW)
    ids = [
        item_id(
            structure.create_component(
                page_id=page.page_id,
                section_id=item_id(section),
                group_id=None,
                name=name,
                status="operational",
                now=NOW,
            )
        )
        for name in ("Checkout", "API")
    ]
    return Page(page.page_id, slug, ids[0], ids[1])


def add_subscriber(
    org: Org,
    page: Page,
    subscriber_id: str,
    *,
    email_address: str | None = None,
    url: str | None = None,
    components: list[str] | None = None,
    status: str = CONFIRMED,
) -> SubscriberItem:
    """A subscriber and its guard, as the subscribe flow leaves them."""
    address = email_address or f"{subscriber_id}@example.com"
    item = SubscriberItem(
        page.page_id,
        subscriber_key(subscriber_id),
        subscriber_id=subscriber_id,
        organization_id=org.organization_id,
        kind=WEBHOOK if url else EMAIL,
        email=address,
        url=url,
        component_ids=components or [],
        status=status,
        created_at=NOW,
        confirmed_at=NOW if status == CONFIRMED else None,
    )
    item.save()
    guard_key = URL_GUARD_PREFIX + hashlib.sha256(url.encode()).hexdigest() if url else EMAIL_GUARD_PREFIX + address
    SubscriberItem(page.page_id, guard_key, subscriber_id=subscriber_id).save()
    return item


def stored(page: Page, key: str) -> SubscriberItem | None:
    try:
        return SubscriberItem.get(page.page_id, key, consistent_read=True)
    except SubscriberItem.DoesNotExist:
        return None


def raw_emails() -> list[EmailMessage]:
    """The raw (SendRawEmail) messages SES on moto accepted, in the order sent."""
    from moto.ses.models import ses_backends

    sent = ses_backends["123456789012"]["us-east-1"].sent_messages
    return [
        cast(EmailMessage, email.message_from_string(message.raw_data, policy=default))
        for message in sent
        if hasattr(message, "raw_data")
    ]


def plain_emails() -> list[Any]:
    """The SendEmail messages (subject and HTML body) SES on moto accepted."""
    from moto.ses.models import ses_backends

    return [m for m in ses_backends["123456789012"]["us-east-1"].sent_messages if hasattr(m, "subject")]


def text_of(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("plain",))
    assert part is not None
    return str(part.get_content()).replace("\r\n", "\n")


def html_of(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("html",))
    assert part is not None
    return str(part.get_content())


def recipients(messages: list[EmailMessage]) -> list[str]:
    return sorted(str(message["To"]) for message in messages)
