"""Pushover: a page is a form POSTed to Pushover's Messages API with the deployment's application
token and the person's user key (chalicelib/notification/payload_push.py builds it).

High urgency is an emergency (priority 2): Pushover repeats it every minute for an hour until the
person acknowledges it on their phone, answers Tocsin with a `receipt`, and then POSTs the
acknowledgement to the callback URL the page named: `/integrations/pushover/callback/{token}`,
the token a signed single-use "acknowledge" link for that person and incident (the email links'
machinery, via "pushover"). Pushover does not sign its callback, so the receipt is the proof it
came from Pushover: kept with the link's id when the page was sent (`remember_receipt`), and the
callback acts only when it names that receipt (`check_receipt`), once.
"""

from __future__ import annotations

import hmac
import json
from datetime import datetime, timedelta

from chalicelib.notification import email_links
from chalicelib.notification.deliveries import DeliveryRecord
from chalicelib.notification.email_links import EmailLink
from chalicelib.notification.hook_links import base_url
from chalicelib.settings import Settings

CALLBACK_PATH = "/integrations/pushover/callback"
_RECEIPT_PREFIX = "pushover-receipt#"
KEEP_FOR = timedelta(days=2)  # longer than an emergency repeats (an hour) and a link lives (a day)


def new_acknowledge_link(organization_id: str, user_id: str, incident_number: str, now: datetime) -> EmailLink:
    return email_links.new_link(
        organization_id=organization_id,
        user_id=user_id,
        incident_number=incident_number,
        action="acknowledge",
        now=now,
        via="pushover",
    )


def callback_url(link: EmailLink, *, settings: Settings) -> str:
    return f"{base_url(settings=settings)}{CALLBACK_PATH}/{email_links.sign(link, settings=settings)}"


def receipt_of(answer_body: bytes) -> str | None:
    """The `receipt` of Pushover's answer to an emergency message (None when it has none)."""
    try:
        document = json.loads(answer_body or b"{}")
    except ValueError:
        return None
    receipt = document.get("receipt") if isinstance(document, dict) else None
    return str(receipt) if isinstance(receipt, str) and receipt else None


def remember_receipt(link: EmailLink, receipt: str, now: datetime) -> None:
    DeliveryRecord(
        _RECEIPT_PREFIX + link.link_id,
        state="sent",
        claimed_at=now,
        expires_at=now + KEEP_FOR,
        organization_id=link.organization_id,
        incident_number=link.incident_number,
        user_id=link.user_id,
        answer={"receipt": receipt},
    ).save()


def check_receipt(link: EmailLink, receipt: str | None) -> bool:
    """True when `receipt` is the one Pushover gave for this link's page (constant-time compare)."""
    if not receipt:
        return False
    try:
        record = DeliveryRecord.get(_RECEIPT_PREFIX + link.link_id, consistent_read=True)
    except DeliveryRecord.DoesNotExist:
        return False
    kept = str((record.answer or {}).get("receipt") or "")
    return bool(kept) and hmac.compare_digest(kept.encode(), receipt.encode())
