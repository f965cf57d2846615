"""The one signer of tokens Tocsin hands out and reads back: `<version>.<base64url fields>.<base64url HMAC>`.

A token carries a few text fields (joined by a newline, never inside an id) and an HMAC-SHA256
over its version and body, keyed for one purpose (`purpose_key`), so a token signed for one use
(a page email's one-click link, an export's download link, an export's cursor) is never valid as
another. `unsign` answers the fields or raises `BadToken`; what the fields mean, and whether they
expired, is the caller's business. Pure: the caller hands in the secret it was given.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from collections.abc import Sequence

SEPARATOR = "\n"


class BadToken(Exception):
    """A token that is malformed, too long, of another version, or not signed with this key."""


def purpose_key(purpose: bytes, *, secret: str) -> bytes:
    """A key for `purpose` alone, derived from `secret` (API_KEY_HMAC_SECRET)."""
    return hmac.new(secret.encode(), purpose, hashlib.sha256).digest()


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _signature(version: str, body: str, key: bytes) -> str:
    return b64(hmac.new(key, version.encode() + b"." + body.encode("ascii"), hashlib.sha256).digest())


def sign(version: str, fields: Sequence[str], key: bytes) -> str:
    """The token (URL-, path- and header-safe)."""
    if any(SEPARATOR in field for field in fields):
        raise ValueError("a signed field may not contain a newline")
    body = b64(SEPARATOR.join(fields).encode("utf-8"))
    return f"{version}.{body}.{_signature(version, body, key)}"


def unsign(version: str, token: str, key: bytes, *, max_length: int, field_count: int) -> list[str]:
    """The fields of a token we signed with `key` under `version`; BadToken otherwise."""
    if len(token) > max_length:
        raise BadToken()
    parts = token.split(".")
    if len(parts) != 3 or parts[0] != version:
        raise BadToken()
    _, body, sent_signature = parts
    try:
        body.encode("ascii")
    except UnicodeEncodeError:
        raise BadToken() from None
    if not hmac.compare_digest(_signature(version, body, key).encode(), sent_signature.encode("utf-8")):
        raise BadToken()
    try:
        fields = unb64(body).decode("utf-8").split(SEPARATOR)
    except (binascii.Error, ValueError):
        raise BadToken() from None
    if len(fields) != field_count:
        raise BadToken()
    return fields
