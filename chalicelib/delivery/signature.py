"""Tocsin's request signature (spec, Authentication > Webhooks 4), the same both ways: what a
customer signs when posting to a custom webhook, and what Tocsin signs when it posts to a
customer's URL (chalicelib/delivery/http_post.py). Pure.

    X-Service-Timestamp: <unix seconds>
    X-Service-Signature: sha256=<hex HMAC-SHA256(secret, f"{timestamp}." + raw body)>

Checking a received signature (its age, its form) is the inbound side's: chalicelib/integration/signing.py.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Final

SIGNATURE_HEADER: Final = "X-Service-Signature"
TIMESTAMP_HEADER: Final = "X-Service-Timestamp"
SIGNATURE_PREFIX: Final = "sha256="


def key_bytes(secret: str | bytes) -> bytes:
    if isinstance(secret, str):
        secret = secret.encode("utf-8")
    if not secret:
        raise ValueError("a signing secret must not be empty")
    return secret


def body_bytes(body: bytes | str) -> bytes:
    return body.encode("utf-8") if isinstance(body, str) else bytes(body)


def signature_hex(secret: str | bytes, timestamp: int | str, body: bytes | str) -> str:
    """Hex HMAC-SHA256 over f"{timestamp}." followed by the raw body."""
    message = f"{timestamp}.".encode() + body_bytes(body)
    return hmac.new(key_bytes(secret), message, hashlib.sha256).hexdigest()


def sign(secret: str | bytes, timestamp: int | str, body: bytes | str) -> str:
    """The X-Service-Signature header value: "sha256=<hex>"."""
    return SIGNATURE_PREFIX + signature_hex(secret, timestamp, body)


def signed_headers(secret: str | bytes, timestamp: int, body: bytes | str) -> dict[str, str]:
    """Both headers for a request body signed at `timestamp`."""
    return {TIMESTAMP_HEADER: str(timestamp), SIGNATURE_HEADER: sign(secret, timestamp, body)}
