"""Email through Amazon SES (SendEmail), from the sender address in settings.

The bodies are templates (chalicelib/templates/email/): the HTML part is autoescaped, the text
part is plain text and carries the values as they are. SES keeps its
own answers short; a ClientError becomes `SES_<Code>` (e.g. SES_MessageRejected for an
unverified sender), a connection problem or timeout PROVIDER_ERROR. Both are provider
failures: retrying later may succeed.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from chalicelib import aws, clock, templates, zones
from chalicelib.notification import email_links, page_facts
from chalicelib.notification.channels import (
    PROVIDER_ERROR,
    ChannelName,
    DeliveryResult,
    Notification,
    Recipient,
    assignee_label,
    subject_line,
)
from chalicelib.settings import Settings

logger = logging.getLogger("tocsin.notification")
# Text colours of the urgency line, both over 4.5:1 on white (WCAG AA).
HIGH_URGENCY_ACCENT = "#b42318"
LOW_URGENCY_ACCENT = "#1f2328"
# An email has room for the whole description an API caller may write (10 000 characters) but
# not for a wall of alert text: past this it is cut, and the console page has the rest.
MAX_DESCRIPTION = 4000


@dataclass(frozen=True)
class RenderedEmail:
    subject: str
    text: str
    html: str


def action_links(
    notification: Notification, recipient: Recipient, now: datetime, *, settings: Settings
) -> dict[str, str]:
    """The one-click "Acknowledge" and "Resolve" links, signed for this recipient and incident
    (notification/email_links.py); none when the page names no organization."""
    if not notification.organization_id or not recipient.user_id:
        return {}
    return {
        action: email_links.link_url(
            email_links.new_link(
                organization_id=notification.organization_id,
                user_id=recipient.user_id,
                incident_number=notification.incident_number,
                action=action,
                now=now,
            ),
            settings=settings,
        )
        for action in email_links.EMAIL_ACTIONS
    }


def render(
    notification: Notification, recipient: Recipient, now: datetime | None = None, *, settings: Settings
) -> RenderedEmail:
    """Subject, text part and HTML part (templates email/incident_page.txt and .html); both link
    to the incident's page in the responder console, carry the one-click action links, the
    description, labels, source and runbook links, and show times in the recipient's zone."""
    links = action_links(notification, recipient, now or clock.now(), settings=settings)
    zone = notification.time_zone
    description = notification.description
    if description and len(description) > MAX_DESCRIPTION:
        description = page_facts.shorten(description, MAX_DESCRIPTION) + "\n(The rest is on the incident's page.)"
    values = {
        "acknowledge_url": links.get("acknowledge"),
        "resolve_url": links.get("resolve"),
        "recipient_name": recipient.name,
        "incident_number": notification.incident_number,
        "title": notification.title,
        "severity": notification.severity,
        "urgency": notification.urgency,
        "message": notification.message,
        "url": notification.url,
        "service_name": notification.service_name,
        "assigned_to": assignee_label(notification),
        "accent": HIGH_URGENCY_ACCENT if notification.urgency == "high" else LOW_URGENCY_ACCENT,
        "paged_at": zones.message_time(notification.at, zone) if notification.at is not None else None,
        "paged_at_iso": clock.isoformat(notification.at) if notification.at is not None else None,
        "opened_at": zones.message_time(notification.opened_at, zone) if notification.opened_at else None,
        "description": description,
        "labels": list(notification.labels),
        "source_url": notification.source_url,
        "source_name": notification.source_name,
        "runbook_url": notification.runbook_url,
    }
    return RenderedEmail(
        subject=subject_line(notification),
        text=templates.render("email/incident_page.txt", **values),
        html=templates.render("email/incident_page.html", **values),
    )


class SesEmailChannel:
    name: ChannelName = "email"

    def __init__(self, client: Any | None = None, sender: str | None = None, *, settings: Settings) -> None:
        self._client = client
        self._sender = sender or settings.ses_sender
        self._settings = settings

    def send(self, notification: Notification, recipient: Recipient) -> DeliveryResult:
        if not recipient.email:
            return DeliveryResult.contact_missing(self.name, "email address")
        from botocore.exceptions import BotoCoreError, ClientError

        rendered = render(notification, recipient, settings=self._settings)
        client = self._client or aws.client("ses")
        try:
            response = client.send_email(
                Source=self._sender,
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
