"""Opaque, tamper-evident cursors for the public listings.

A cursor names the last item of the page served (its sort key), bound to the status page and
to the listing, and signed: a garbage, altered or foreign cursor is refused (400), never used.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac

from chalicelib.errors import ValidationFailed

_SIGNATURE_BYTES = 12


def _signature(secret: str, scope: str, item_key: str) -> bytes:
    message = f"status-cursor\n{scope}\n{item_key}".encode()
    return hmac.new(secret.encode(), message, hashlib.sha256).digest()[:_SIGNATURE_BYTES]


def encode_cursor(*, secret: str, scope: str, item_key: str) -> str:
    raw = _signature(secret, scope, item_key) + item_key.encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str, *, secret: str, scope: str, prefix: str) -> str:
    """The sort key the cursor names; 400 unless it was made by `encode_cursor` for this scope."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        signature, item_key = raw[:_SIGNATURE_BYTES], raw[_SIGNATURE_BYTES:].decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise _invalid() from None
    if not item_key.startswith(prefix) or not hmac.compare_digest(signature, _signature(secret, scope, item_key)):
        raise _invalid()
    return item_key


def _invalid() -> ValidationFailed:
    return ValidationFailed.for_field("cursor", "not a cursor this listing issued")
