"""The page call's callback: the URL we build, Twilio's signature over it, and what a key does.
Pure: no I/O here (the secrets are passed in).

Two proofs, both needed, because the URL names who is acting:
- `X-Twilio-Signature` proves the request came from the provider: base64 HMAC-SHA1, keyed with
  the account's auth token, of the full URL followed by every POST field sorted by name, each
  written as name + value (Twilio's "validating requests" rule).
- The URL's own `token` proves we built it: HMAC-SHA256 over the organization, the incident,
  the person called and an expiry, keyed with a key derived from the app's API-key secret. A
  holder of the auth token alone (or the local sink's well-known one) still cannot point a call
  at another person or incident, nor reuse a callback after `expires`.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import urllib.parse
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

CALLBACK_PATH = "/integrations/voice/callback"
PRESS_ACK, PRESS_RESOLVE, PRESS_ESCALATE = "4", "6", "8"
# A key pressed -> the action (paging.respond's names).
KeyAction = Literal["acknowledge", "resolve", "escalate"]
KEY_ACTIONS: dict[str, KeyAction] = {PRESS_ACK: "acknowledge", PRESS_RESOLVE: "resolve", PRESS_ESCALATE: "escalate"}
# Long enough for a call that rings, is answered late and repeats its message; short enough that a
# leaked URL soon stops working.
CALLBACK_LIFETIME = timedelta(hours=1)
# The query fields, in the order the URL carries them (the URL is rebuilt in this order).
QUERY_FIELDS = ("incident_number", "organization_id", "user_id", "expires", "token")
_TOKEN_PURPOSE = b"tocsin voice callback v1"


@dataclass(frozen=True)
class CallbackTarget:
    """Who the call was for and about: what a verified callback acts on."""

    organization_id: str
    incident_number: str
    user_id: str
    expires: int  # unix seconds


def token_key(app_secret: str) -> bytes:
    """A key for this purpose alone, derived from the app's secret."""
    return hmac.new(app_secret.encode(), _TOKEN_PURPOSE, hashlib.sha256).digest()


def callback_token(target: CallbackTarget, key: bytes) -> str:
    signed = "\n".join((target.organization_id, target.incident_number, target.user_id, str(target.expires)))
    return hmac.new(key, signed.encode(), hashlib.sha256).hexdigest()


def callback_query(target: CallbackTarget, key: bytes) -> str:
    return urllib.parse.urlencode(
        {
            "incident_number": target.incident_number,
            "organization_id": target.organization_id,
            "user_id": target.user_id,
            "expires": str(target.expires),
            "token": callback_token(target, key),
        }
    )


def build_callback_url(base_url: str, target: CallbackTarget, key: bytes) -> str:
    return f"{base_url.rstrip('/')}{CALLBACK_PATH}?{callback_query(target, key)}"


def expiry_for(now: datetime) -> int:
    return int((now + CALLBACK_LIFETIME).timestamp())


def target_from_query(query: Mapping[str, str], key: bytes, now: datetime) -> CallbackTarget | None:
    """The target a callback URL names, when its token is ours and it has not expired; else None."""
    values = {name: query.get(name) or "" for name in QUERY_FIELDS}
    if not all(values.values()) or not values["expires"].isdigit() or len(values["expires"]) > 12:
        return None
    target = CallbackTarget(
        organization_id=values["organization_id"],
        incident_number=values["incident_number"],
        user_id=values["user_id"],
        expires=int(values["expires"]),
    )
    if not hmac.compare_digest(callback_token(target, key), values["token"]):
        return None
    if target.expires < now.timestamp():
        return None
    return target


# ---------------------------------------------------------------- Twilio's request signature


def twilio_signature(auth_token: str, url: str, params: Iterable[tuple[str, str]]) -> str:
    """What Twilio puts in X-Twilio-Signature for a POST of `params` to `url`."""
    signed = url + "".join(name + value for name, value in sorted(params))
    digest = hmac.new(auth_token.encode(), signed.encode(), hashlib.sha1).digest()
    return base64.b64encode(digest).decode()


def signature_matches(auth_token: str, url: str, params: Iterable[tuple[str, str]], header: str) -> bool:
    if not header:
        return False
    return hmac.compare_digest(twilio_signature(auth_token, url, params), header.strip())


def requested_url(base_url: str, query: Mapping[str, str]) -> str:
    """The URL Twilio requested (and signed), rebuilt from the query we received: our fields in
    the order we wrote them. A request that added or reordered fields signs another URL, so it
    cannot match."""
    present = [(name, query[name]) for name in QUERY_FIELDS if name in query]
    return f"{base_url.rstrip('/')}{CALLBACK_PATH}?{urllib.parse.urlencode(present)}"
