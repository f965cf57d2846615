"""Email through Amazon SES (SendEmail), from the sender address in settings.

Every user-supplied string (title, message) is HTML-escaped in the HTML part. SES keeps its
own answers short; a ClientError becomes `SES_<Code>` (e.g. SES_MessageRejected for an
unverified sender), a connection problem or timeout PROVIDER_ERROR. Both are provider
failures: retrying later may succeed.
"""

from __future__ import annotations

import html
import logging
from dataclasses import dataclass
from typing import Any

from chalicelib import aws, clock
from chalicelib.notification.channels import (
    PROVIDER_ERROR,
    ChannelName,
    DeliveryResult,
    Notification,
    Recipient,
    subject_line,
)
from chalicelib.settings import get_settings

logger = logging.getLogger("tocsin.notification")


@dataclass(frozen=True)
class RenderedEmail:
    subject: str
    text: str
    html: str


def render(notification: Notification, recipient: Recipient) -> RenderedEmail:
    at = clock.isoformat(notification.at) if notification.at is not None else None
    greeting = f"Hi {recipient.name}," if recipient.name else "Hi,"
    lines = [
        greeting,
        "",
        f"{notification.incident_number}: {notification.title}",
        f"Severity {notification.severity}, {notification.urgency} urgency.",
    ]
    if notification.message:
        lines += ["", notification.message]
    lines += ["", f"Open the incident: {notification.url}"]
    if at:
        lines += ["", f"Paged by Tocsin at {at}."]
    text = "\n".join(lines) + "\n"

    e = html.escape
    message = f'<p style="white-space:pre-wrap">{e(notification.message)}</p>' if notification.message else ""
    footer = f'<p>Paged by Tocsin at <time datetime="{e(at)}">{e(at)}</time>.</p>' if at else ""
    body = (
        "<!DOCTYPE html><html><body>"
        f"<p>{e(greeting)}</p>"
        f"<h2>{e(notification.incident_number)}: {e(notification.title)}</h2>"
        f"<p>Severity <strong>{e(notification.severity)}</strong>, {e(notification.urgency)} urgency.</p>"
        f"{message}"
        f'<p><a href="{e(notification.url)}">Open the incident</a></p>'
        f"{footer}"
        "</body></html>"
    )
    return RenderedEmail(subject=subject_line(notification), text=text, html=body)


class SesEmailChannel:
    name: ChannelName = "email"

    def __init__(self, client: Any | None = None, sender: str | None = None) -> None:
        self._client = client
        self._sender = sender

    def send(self, notification: Notification, recipient: Recipient) -> DeliveryResult:
        if not recipient.email:
            return DeliveryResult.contact_missing(self.name, "email address")
        from botocore.exceptions import BotoCoreError, ClientError

        rendered = render(notification, recipient)
        client = self._client or aws.client("ses")
        try:
            response = client.send_email(
                Source=self._sender or get_settings().ses_sender,
                Destination={"ToAddresses": [recipient.email]},
                Message={
                    "Subject": {"Data": rendered.subject, "Charset": "UTF-8"},
                    "Body": {
                        "Text": {"Data": rendered.text, "Charset": "UTF-8"},
                        "Html": {"Data": rendered.html, "Charset": "UTF-8"},
                    },
                },
            )
        except ClientError as error:
            code = str(error.response.get("Error", {}).get("Code") or "Unknown")
            text = str(error.response.get("Error", {}).get("Message") or code)
            logger.warning("SES refused an email", extra={"error_code": code, "incident": notification.incident_number})
            return DeliveryResult.provider_failed(self.name, f"SES_{code}", f"SES refused the email: {text}")
        except BotoCoreError as error:
            logger.warning("SES unreachable", extra={"error": type(error).__name__})
            return DeliveryResult.provider_failed(self.name, PROVIDER_ERROR, f"SES could not be reached: {error}")
        return DeliveryResult.delivered(self.name, str(response.get("MessageId") or "") or None)
