"""What a recorded request keeps of its headers and body (pure).

Headers: every header a sender sent (names in lower case) but its secrets. A credential
(Authorization, cookies, anything named like a token, secret, password or API key) shows as
"present"; a signature header as "valid" or "invalid" when it was checked, else "present": never
its value (a logged signature could be replayed inside its window). At most `MAX_HEADERS`, each
value cut to `MAX_HEADER_VALUE` characters.

Body: the first `BODY_LIMIT` bytes as text, `truncated` when there was more; `whole` only when
the text is what was received (not cut, valid UTF-8), the condition for a replay. A routing key
carried in the body (PagerDuty's top-level `routing_key`) is a credential: masked in place, its
first characters kept and the rest `*`, so the body keeps its length and its shape.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

BODY_LIMIT = 16 * 1024
MAX_HEADERS = 40
MAX_HEADER_VALUE = 512
PRESENT = "present"
KEY_HINT = 6  # characters of a routing key kept visible, as the integration's key_hint

SignatureState = Literal["valid", "invalid"]

_CREDENTIAL_NAMES = frozenset({"authorization", "proxy-authorization", "cookie", "set-cookie"})
_CREDENTIAL_WORDS = ("token", "secret", "password", "passwd", "api-key", "apikey", "api_key", "auth", "session")
_SIGNATURE_WORD = "signature"
# A JSON string value under "routing_key", escapes included (they keep their length when masked).
_ROUTING_KEY = re.compile(rb'("routing_key"\s*:\s*")((?:[^"\\]|\\.)*)"')


@dataclass(frozen=True)
class Body:
    text: str | None
    size: int
    truncated: bool
    whole: bool


def signature_state(stored: str | None) -> SignatureState | None:
    return "valid" if stored == "valid" else "invalid" if stored == "invalid" else None


def is_signature(name: str) -> bool:
    return _SIGNATURE_WORD in name.lower()


def is_credential(name: str) -> bool:
    lowered = name.lower()
    return lowered in _CREDENTIAL_NAMES or any(word in lowered for word in _CREDENTIAL_WORDS)


def kept_headers(headers: Mapping[str, str], signature: SignatureState | None) -> dict[str, str]:
    """The headers as recorded: secrets and signatures replaced by their state."""
    kept: dict[str, str] = {}
    for name, value in headers.items():
        if len(kept) >= MAX_HEADERS:
            break
        lowered = str(name).lower()
        if is_signature(lowered):
            kept[lowered] = signature or PRESENT
        elif is_credential(lowered):
            kept[lowered] = PRESENT
        else:
            kept[lowered] = str(value)[:MAX_HEADER_VALUE]
    return kept


def replayable_headers(recorded: Mapping[str, str]) -> dict[str, str]:
    """The recorded headers a replay sends again: not the secrets' and signatures' states."""
    return {name: value for name, value in recorded.items() if not (is_signature(name) or is_credential(name))}


def masked_routing_key(raw: bytes) -> bytes:
    """The body with every `"routing_key": "<value>"` masked in place (same length)."""

    def mask(found: re.Match[bytes]) -> bytes:
        value = found.group(2)
        return found.group(1) + value[:KEY_HINT] + b"*" * max(0, len(value) - KEY_HINT) + b'"'

    return _ROUTING_KEY.sub(mask, raw)


def bounded_body(received: bytes) -> Body:
    if not received:
        return Body(text=None, size=0, truncated=False, whole=True)
    raw = masked_routing_key(received)
    head = raw[:BODY_LIMIT]
    truncated = len(raw) > BODY_LIMIT
    try:
        text = head.decode("utf-8")
        exact = True
    except UnicodeDecodeError:
        # A cut through a character, or not UTF-8 at all: keep what reads, mark it not whole.
        text = head.decode("utf-8", errors="replace")
        exact = False
    return Body(text=text, size=len(received), truncated=truncated, whole=exact and not truncated)
