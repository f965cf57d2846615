"""One-click links in a page email: "Acknowledge" and "Resolve", signed, bound, expiring, used once.

A link is `{app}/email-actions/{token}`; the token carries the organization, the recipient (a
directory user id), the incident number, the action, an expiry (24 hours after sending) and a
random link id, signed with HMAC-SHA256 (`signing_key`). Opening it (GET) only shows a
confirmation page, because mail scanners fetch links; its form POSTs, and only the POST acts.
The first POST claims the link id with a conditional write (`claim`), so a link works once even
when two clicks race; a claim is never released for the person's mistakes (an incident already
acknowledged still spends the link), only when acting failed unexpectedly (`release`).

The signature is what proves who the person is: anyone holding the email can act as its
recipient, as with every product's one-click email link. Keep the expiry short for that reason.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from chalicelib import signed_tokens
from chalicelib.settings import Settings
from chalicelib.store.conditions import delete_if, save_if
from chalicelib.store.unique import UniqueNameRecord, owner_of

EmailAction = Literal["acknowledge", "resolve", "escalate"]
EMAIL_ACTIONS: tuple[EmailAction, ...] = ("acknowledge", "resolve")
# A chat or push page's links (chalicelib/notification/hooks.py) may escalate too, and say which
# channel they came by: the same token with a seventh field, under its own version.
CHANNEL_ACTIONS: tuple[EmailAction, ...] = ("acknowledge", "resolve", "escalate")
LINK_LIFETIME = timedelta(hours=24)
VERSION = "e1"
CHANNEL_VERSION = "c1"
MAX_TOKEN_LENGTH = 600  # a token longer than this is refused before any decoding
_CLAIM_PREFIX = "email-link#"


@dataclass(frozen=True)
class EmailLink:
    organization_id: str
    user_id: str
    incident_number: str
    action: EmailAction
    expires_at: int  # Unix seconds
    link_id: str
    via: str = "email"  # the channel the link was sent by (paging.respond's CHANNELS key)


class LinkRefused(Exception):
    """A token that is not one we signed, or no longer works; `reason` is shown to the person."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


BAD_LINK = "This link is not valid. Open the incident from the console instead."
EXPIRED = "This link has expired (links work for 24 hours). Open the incident from the console instead."
USED = "This link has already been used; each link works once. Open the incident from the console instead."


def signing_key(*, settings: Settings) -> bytes:
    """EMAIL_LINK_SECRET when set, else a key derived from API_KEY_HMAC_SECRET (its own purpose,
    so a link's signature is never valid as anything else's)."""
    if settings.email_link_secret:
        return settings.email_link_secret.encode()
    return signed_tokens.purpose_key(b"tocsin email action links", secret=settings.api_key_hmac_secret)


def sign(link: EmailLink, key: bytes | None = None, *, settings: Settings) -> str:
    """The token: `e1.<base64url fields>.<base64url HMAC>` (URL- and path-safe; chalicelib.signed_tokens);
    a link sent by another channel than email is `c1.` with the channel as a seventh field."""
    fields = [link.organization_id, link.user_id, link.incident_number, link.action, str(link.expires_at), link.link_id]
    if link.via == "email":
        return signed_tokens.sign(VERSION, fields, key or signing_key(settings=settings))
    return signed_tokens.sign(CHANNEL_VERSION, [*fields, link.via], key or signing_key(settings=settings))


def new_link(
    *,
    organization_id: str,
    user_id: str,
    incident_number: str,
    action: EmailAction,
    now: datetime,
    via: str = "email",
) -> EmailLink:
    return EmailLink(
        organization_id=organization_id,
        user_id=user_id,
        incident_number=incident_number,
        action=action,
        expires_at=int((now + LINK_LIFETIME).timestamp()),
        link_id=secrets.token_urlsafe(12),
        via=via,
    )


def verify(token: str, *, now: datetime, key: bytes | None = None, settings: Settings) -> EmailLink:
    """The link the token carries; LinkRefused when it is malformed, forged or expired."""
    version = CHANNEL_VERSION if token.startswith(CHANNEL_VERSION + ".") else VERSION
    field_count = 7 if version == CHANNEL_VERSION else 6
    try:
        fields = signed_tokens.unsign(
            version, token, key or signing_key(settings=settings), max_length=MAX_TOKEN_LENGTH, field_count=field_count
        )
    except signed_tokens.BadToken:
        raise LinkRefused(BAD_LINK) from None
    via = fields.pop() if version == CHANNEL_VERSION else "email"
    allowed = EMAIL_ACTIONS if via == "email" else CHANNEL_ACTIONS
    if (version == CHANNEL_VERSION and via in ("", "email")) or fields[3] not in allowed or not fields[4].isdigit():
        raise LinkRefused(BAD_LINK)
    organization_id, user_id, incident_number, action, expires_at, link_id = fields
    link = EmailLink(organization_id, user_id, incident_number, action, int(expires_at), link_id, via)  # type: ignore[arg-type]
    if now.timestamp() >= link.expires_at:
        raise LinkRefused(EXPIRED)
    return link


def claim(link: EmailLink) -> bool:
    """Spend the link: True for exactly one of any number of racing POSTs. The claim sits in the
    kernel's unique-value table under the link's organization, naming the recipient."""
    record = UniqueNameRecord(link.organization_id, _CLAIM_PREFIX + link.link_id, owner_id=link.user_id)
    return save_if(record, UniqueNameRecord.unique_key.does_not_exist())


def link_url(link: EmailLink, *, settings: Settings) -> str:
    return f"{settings.app_url()}/email-actions/{sign(link, settings=settings)}"


def release(link: EmailLink) -> None:
    """Give the link back after a failure that was not the person's (the store or a command
    raised): a link that changed nothing can be clicked again. Only this link's own claim."""
    record = UniqueNameRecord(link.organization_id, _CLAIM_PREFIX + link.link_id, owner_id=link.user_id)
    delete_if(record, UniqueNameRecord.owner_id == link.user_id, add_version_condition=False)


def is_claimed(link: EmailLink) -> bool:
    """Whether the link was already used (a read: showing the confirmation page spends nothing)."""
    return owner_of(organization_id=link.organization_id, unique_key=_CLAIM_PREFIX + link.link_id) is not None
