"""The email telling a webhook subscription's owner that failed deliveries disabled it.

Sent through SES from the same sender as pages (settings.ses_sender), so the local outbox shows
it next to them. Like the channels, it never raises for a delivery problem: it reports a
DeliveryResult and the caller decides whether to retry.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from chalicelib import aws, clock, templates
from chalicelib.notification.channels import PROVIDER_ERROR, DeliveryResult
from chalicelib.notification.gate import send_within_budget
from chalicelib.settings import Settings

logger = logging.getLogger("tocsin.notification")


@dataclass(frozen=True)
class DisabledSubscription:
    subscription_id: str
    url: str
    description: str | None
    attempts: int
    last_error: str | None
    disabled_at: datetime


def render(notice: DisabledSubscription) -> tuple[str, str, str]:
    """(subject, text, html) of the notice (templates email/webhook_disabled.txt and .html)."""
    name = notice.description or notice.url
    subject = f"[Tocsin] Webhook subscription disabled: {' '.join(name.split())[:120]}"
    values = {
        "subscription_id": notice.subscription_id,
        "url": notice.url,
        "disabled_at": clock.isoformat(notice.disabled_at),
        "attempts": notice.attempts,
        "last_error": notice.last_error,
    }
    text = templates.render("email/webhook_disabled.txt", **values)
    return subject, text, templates.render("email/webhook_disabled.html", **values)


def send_disabled_notice(
    to: str,
    notice: DisabledSubscription,
    *,
    organization_id: str | None = None,
    client: Any | None = None,
    settings: Settings,
) -> DeliveryResult:
    """The notice to the subscription's owner, within the organization's outbound budget."""
    return send_within_budget(
        channel="email",
        destination=to,
        purpose="notice",
        organization_id=organization_id,
        now=clock.now(),
        deliver=lambda: _send(to, notice, client, settings=settings),
        settings=settings,
    )


def _send(to: str, notice: DisabledSubscription, client: Any | None, *, settings: Settings) -> DeliveryResult:
    from botocore.exceptions import BotoCoreError, ClientError

    subject, text, body = render(notice)
    try:
        response = (client or aws.client("ses")).send_email(
            Source=settings.ses_sender,
            Destination={"ToAddresses": [to]},
            Message={
                "Subject": {"Data": subject, "Charset": "UTF-8"},
                "Body": {"Text": {"Data": text, "Charset": "UTF-8"}, "Html": {"Data": body, "Charset": "UTF-8"}},
            },
        )
    except ClientError as error:
        code = str(error.response.get("Error", {}).get("Code") or "Unknown")
        logger.warning("SES refused the webhook notice", extra={"error_code": code})
        return DeliveryResult.provider_failed("email", f"SES_{code}", f"SES refused the email: {code}")
    except BotoCoreError as error:
        logger.warning("SES unreachable", extra={"error": type(error).__name__})
        return DeliveryResult.provider_failed("email", PROVIDER_ERROR, f"SES could not be reached: {error}")
    return DeliveryResult.delivered("email", str(response.get("MessageId") or "") or None)
