"""The ways a chat or push page acts: signed, single-use links for one recipient, incident and action.

They are the email links' tokens (chalicelib/notification/email_links.py) with the channel they
were sent by, so the timeline says "via Microsoft Teams" and each works once and for 24 hours:
- `pages`: the console's confirmation page (`/app/email-actions/{token}`): a GET shows what will
  happen, its button POSTs and acts (Teams, Discord and Google Chat open these);
- `taps`: `POST /integrations/page-actions/{token}` acts at once (ntfy's `http` action buttons,
  which POST from the phone's notification without opening anything);
- `tokens`: the bare token, carried in a Mattermost button's `integration.context` with the
  organization's Mattermost token (`mattermost_token`); the press posts it back.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from chalicelib.notification import email_links
from chalicelib.notification.channels import Notification, Recipient
from chalicelib.settings import Settings

TAP_PATH = "/integrations/page-actions"
MATTERMOST_ACTIONS_PATH = "/integrations/mattermost/actions"
LABELS = {"acknowledge": "Acknowledge", "resolve": "Resolve", "escalate": "Escalate"}


@dataclass(frozen=True)
class PageLinks:
    """Per action ("acknowledge", "resolve", "escalate"), in that order."""

    pages: dict[str, str] = field(default_factory=dict)
    taps: dict[str, str] = field(default_factory=dict)
    tokens: dict[str, str] = field(default_factory=dict)


def base_url(*, settings: Settings) -> str:
    return settings.public_base_url.rstrip("/")


def tap_url(token: str, *, settings: Settings) -> str:
    return f"{base_url(settings=settings)}{TAP_PATH}/{token}"


def mattermost_actions_url(*, settings: Settings) -> str:
    return f"{base_url(settings=settings)}{MATTERMOST_ACTIONS_PATH}"


def mattermost_token(organization_id: str, *, settings: Settings) -> str:
    """The organization's token a Mattermost button carries back (derived: nothing to store or
    rotate apart from the link key; another organization's token never matches)."""
    message = f"tocsin mattermost actions\n{organization_id}".encode()
    return hmac.new(email_links.signing_key(settings=settings), message, hashlib.sha256).hexdigest()[:40]


def page_links(
    notification: Notification,
    recipient: Recipient,
    *,
    via: str,
    actions: Sequence[str] = ("acknowledge", "resolve", "escalate"),
    now: datetime,
    settings: Settings,
) -> PageLinks:
    """Fresh links for the recipient (empty when the page names no organization: nothing to act on)."""
    if not notification.organization_id:
        return PageLinks()
    links = PageLinks()
    for action in actions:
        link = email_links.new_link(
            organization_id=notification.organization_id,
            user_id=recipient.user_id,
            incident_number=notification.incident_number,
            action=action,  # type: ignore[arg-type]
            now=now,
            via=via,
        )
        token = email_links.sign(link, settings=settings)
        links.tokens[action] = token
        links.pages[action] = email_links.link_url(link, settings=settings)
        links.taps[action] = tap_url(token, settings=settings)
    return links
