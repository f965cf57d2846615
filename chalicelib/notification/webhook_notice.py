"""The email telling a webhook subscription's owner that failed deliveries disabled it.

Sent through SES from the same sender as pages (settings.ses_sender), so the local outbox shows
it next to them. Like the channels, it never raises for a delivery problem: it reports a
DeliveryResult and the caller decides whether to retry.
"""

from __future__ import annotations

import html
import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from chalicelib import aws, clock
from chalicelib.notification.channels import PROVIDER_ERROR, DeliveryResult
from chalicelib.settings import get_settings

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
    """(subject, text, html) of the notice. Every stored string is escaped in the HTML part."""
    name = notice.description or notice.url
    at = clock.isoformat(notice.disabled_at)
    subject = f"[Tocsin] Webhook subscription disabled: {' '.join(name.split())[:120]}"
    lines = [
        "Hi,",
        "",
        f"Tocsin disabled the webhook subscription {notice.subscription_id} ({notice.url}) at {at}:",
        f"an event could not be delivered in {notice.attempts} attempts.",
        f"Last error: {notice.last_error or 'unknown'}",
        "",
        "No events are sent to it until it is re-enabled: fix the receiver, then PATCH",
        f'/api/v1/webhook-subscriptions/{notice.subscription_id} with {{"enabled": true}}.',
    ]
    e = html.escape
    body = (
        "<!DOCTYPE html><html><body><p>Hi,</p>"
        f"<p>Tocsin disabled the webhook subscription <strong>{e(notice.subscription_id)}</strong> "
        f'({e(notice.url)}) at <time datetime="{e(at)}">{e(at)}</time>: an event could not be '
        f"delivered in {notice.attempts} attempts.</p>"
        f"<p>Last error: {e(notice.last_error or 'unknown')}</p>"
        "<p>No events are sent to it until it is re-enabled: fix the receiver, then PATCH "
        f"/api/v1/webhook-subscriptions/{e(notice.subscription_id)} with "
        "{&quot;enabled&quot;: true}.</p></body></html>"
    )
    return subject, "\n".join(lines) + "\n", body


def send_disabled_notice(to: str, notice: DisabledSubscription, *, client: Any | None = None) -> DeliveryResult:
    from botocore.exceptions import BotoCoreError, ClientError

    subject, text, body = render(notice)
    try:
        response = (client or aws.client("ses")).send_email(
            Source=get_settings().ses_sender,
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
