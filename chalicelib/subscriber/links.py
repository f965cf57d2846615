"""Signed links in subscriber emails: confirm a subscription, or leave it in one click.

A token is `s1.<base64url(purpose, page_id, subscriber_id)>.<base64url HMAC-SHA256>`; the key is
derived from API_KEY_HMAC_SECRET with its own purpose label, so no other signature in the service
is ever valid here. Tokens do not expire: an unsubscribe link must keep working in an old email
(RFC 8058), and a confirmation link stops working by itself once its pending subscriber expires.
Following a link names only that one subscriber, so a token is all the proof needed.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from dataclasses import dataclass
from typing import Literal

from chalicelib.settings import Settings

LinkPurpose = Literal["confirm", "unsubscribe"]
PURPOSES: tuple[LinkPurpose, ...] = ("confirm", "unsubscribe")
VERSION = "s1"
MAX_TOKEN_LENGTH = 400
_SEPARATOR = "\n"


@dataclass(frozen=True)
class SubscriberLink:
    purpose: LinkPurpose
    page_id: str
    subscriber_id: str


class LinkRefused(Exception):
    """A token we did not sign, or a malformed one."""


def signing_key(*, settings: Settings) -> bytes:
    secret = settings.api_key_hmac_secret.encode()
    return hmac.new(secret, b"tocsin status subscriber links", hashlib.sha256).digest()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _signature(body: str, key: bytes) -> str:
    return _b64(hmac.new(key, VERSION.encode() + b"." + body.encode("ascii"), hashlib.sha256).digest())


def sign(link: SubscriberLink, key: bytes | None = None, *, settings: Settings) -> str:
    body = _b64(_SEPARATOR.join([link.purpose, link.page_id, link.subscriber_id]).encode("utf-8"))
    return f"{VERSION}.{body}.{_signature(body, key or signing_key(settings=settings))}"


def verify(token: str, purpose: LinkPurpose, key: bytes | None = None, *, settings: Settings) -> SubscriberLink:
    """The link the token carries, when we signed it for this purpose; LinkRefused otherwise."""
    parts = token.split(".") if len(token) <= MAX_TOKEN_LENGTH else []
    if len(parts) != 3 or parts[0] != VERSION or not parts[1].isascii():
        raise LinkRefused()
    _, body, sent = parts
    if not hmac.compare_digest(_signature(body, key or signing_key(settings=settings)).encode(), sent.encode("utf-8")):
        raise LinkRefused()
    try:
        fields = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)).decode("utf-8").split(_SEPARATOR)
    except (binascii.Error, ValueError):
        raise LinkRefused() from None
    if len(fields) != 3 or fields[0] != purpose:
        raise LinkRefused()
    return SubscriberLink(purpose=purpose, page_id=fields[1], subscriber_id=fields[2])


def link_url(slug: str, link: SubscriberLink, *, settings: Settings) -> str:
    """The public URL of a link: `{public_base_url}/status/{slug}/{confirm|unsubscribe}?token=...`."""
    base = settings.public_base_url.rstrip("/")
    return f"{base}/status/{slug}/{link.purpose}?token={sign(link, settings=settings)}"


def webhook_secret(page_id: str, subscriber_id: str, *, settings: Settings) -> str:
    """The secret a webhook subscriber verifies its deliveries with (hex): derived, never stored,
    shown on the page its confirmation link opens (only the email's holder sees it)."""
    secret = settings.api_key_hmac_secret.encode()
    key = hmac.new(secret, b"tocsin status subscriber webhooks", hashlib.sha256).digest()
    return hmac.new(key, f"{page_id}\n{subscriber_id}".encode(), hashlib.sha256).hexdigest()
