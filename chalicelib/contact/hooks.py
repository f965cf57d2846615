"""Webhook-style contact methods: where a message to a chat room or a push server goes.

(A `pushover` method is the odd one: its destination is a Pushover user key, posted to Pushover's
own API with the deployment's application token; it is sealed and hinted the same way.)

A `teams`, `mattermost`, `discord` or `google_chat` method is an incoming-webhook URL; an `ntfy`
method is a topic URL on an ntfy server (`https://ntfy.sh/<topic>`, any self-hosted server too)
with an optional access token. Each of those is a secret: whoever holds the URL (or the topic on
a public server) can post to it or read it. So the destination is sealed with `secrets_box` when
the method is written (`sealed`), never answered, never logged; what the API shows as `address`
is a hint (`https://ntfy.sh/…c9x2`). Two methods of one person name the same destination when
their `identity` (an HMAC of the destination) is the same.

The URL passes the outbound rules of every POST to a customer's URL (chalicelib/delivery/targets.py:
https on 443 to public addresses only; the local stage may allow plain http to any address),
when the method is written and again before every send.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from chalicelib import secrets_box
from chalicelib.delivery import targets
from chalicelib.errors import ValidationFailed
from chalicelib.settings import Settings

HOOK_TYPES: tuple[str, ...] = ("teams", "mattermost", "ntfy", "discord", "google_chat", "pushover")
HOOK_LABELS: dict[str, str] = {
    "teams": "Microsoft Teams",
    "mattermost": "Mattermost",
    "ntfy": "ntfy",
    "discord": "Discord",
    "google_chat": "Google Chat",
    "pushover": "Pushover",
}
# Pushover's user and group keys: 30 letters and digits (https://pushover.net/api#identifiers).
PUSHOVER_KEY = re.compile(r"^[A-Za-z0-9]{30}$")
# ntfy's own topic rule (server/types.go: `[-_A-Za-z0-9]{1,64}`).
NTFY_TOPIC = re.compile(r"^[-_A-Za-z0-9]{1,64}$")
SECRET_MAX = 256
_SECRET_CHARACTERS = re.compile(r"^[\x21-\x7e]+$")  # a token: printable ASCII, no spaces
HINT_TAIL = 4


def is_hook(method_type: str) -> bool:
    return method_type in HOOK_TYPES


@dataclass(frozen=True)
class Destination:
    """Where a hook method's messages go: the URL posted to, and ntfy's access token. Its repr
    shows neither (a log line or a traceback must not carry them)."""

    url: str = field(repr=False)
    token: str | None = field(default=None, repr=False)

    @property
    def ntfy_server(self) -> str:
        """The ntfy server's base URL (the topic URL without its last segment)."""
        return self.url.rsplit("/", 1)[0]

    @property
    def ntfy_topic(self) -> str:
        return self.url.rsplit("/", 1)[1]


def _refuse(message: str, name: str = "address") -> ValidationFailed:
    return ValidationFailed.for_field(name, message)


def parse(method_type: str, address: str, secret: str | None, *, settings: Settings) -> Destination:
    """The destination a request names, checked: the URL against the outbound rules, an ntfy
    topic against ntfy's rule, a token's characters. ValidationFailed on `address` or `secret`."""
    url = address.strip()
    if method_type == "pushover":  # not a URL: the user key the organization's application sends to
        if not PUSHOVER_KEY.match(url):
            raise _refuse("must be a Pushover user or group key: 30 letters and digits")
        if secret is not None:
            raise _refuse("a Pushover method takes no secret (the application token is the deployment's)", "secret")
        return Destination(url)
    try:
        # The resolver looked up per call, so tests can replace targets.default_resolve.
        targets.check_target(
            url,
            allow_local=targets.local_targets_allowed(settings=settings),
            resolve=targets.default_resolve,
            settings=settings,
        )
    except ValidationFailed as refused:
        # The same words, on this request's field: `url: must use https` becomes `address: ...`.
        raise _refuse(refused.message.removeprefix(f"{targets.FIELD}: ")) from None
    parts = urlsplit(url)
    if method_type == "ntfy":
        if parts.query or parts.fragment:
            raise _refuse("must be an ntfy topic URL without a query, e.g. https://ntfy.sh/my-pages")
        topic = (parts.path or "").rstrip("/").rsplit("/", 1)[-1]
        if not NTFY_TOPIC.match(topic):
            raise _refuse("must end with an ntfy topic: 1 to 64 letters, digits, '-' or '_' (https://ntfy.sh/my-pages)")
        url = url.rstrip("/")
    elif secret is not None:
        raise _refuse(f"only ntfy methods take a secret (an access token); a {method_type} URL is its own", "secret")
    token = None
    if secret is not None and secret.strip():
        token = secret.strip()
        if len(token) > SECRET_MAX or not _SECRET_CHARACTERS.match(token):
            raise _refuse(f"must be an access token of 1 to {SECRET_MAX} printable characters", "secret")
    return Destination(url, token)


def hint(method_type: str, destination: Destination) -> str:
    """What the API shows as the address: scheme, host and the URL's last characters."""
    tail = destination.url[-HINT_TAIL:]
    if method_type == "pushover":
        return f"\u2026{tail}"
    parts = urlsplit(destination.url)
    return f"{parts.scheme}://{parts.netloc}/\u2026{tail}"


def _context(user_key: str, contact_method_id: str) -> str:
    return f"contact-destination:{user_key}:{contact_method_id}"


def seal(destination: Destination, *, user_key: str, contact_method_id: str, settings: Settings) -> str:
    """The destination sealed for one method (a sealed value copied to another method does not open)."""
    plain = json.dumps({"url": destination.url, "token": destination.token})
    return secrets_box.seal(plain, context=_context(user_key, contact_method_id), settings=settings)


def unseal(sealed: str, *, user_key: str, contact_method_id: str, settings: Settings) -> Destination:
    document = json.loads(secrets_box.unseal(sealed, context=_context(user_key, contact_method_id), settings=settings))
    return Destination(str(document["url"]), document.get("token"))


def identity(method_type: str, destination: Destination, *, settings: Settings) -> str:
    """The (type, address) a duplicate check compares for a hook method: an HMAC of its URL."""
    key = settings.api_key_hmac_secret.encode()
    return hmac.new(key, f"contact-hook\n{method_type}\n{destination.url}".encode(), hashlib.sha256).hexdigest()[:32]
