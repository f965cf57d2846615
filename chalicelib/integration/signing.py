"""Webhook signatures: the custom webhook's (ours) and Sentry's. Pure; `now` is passed in.

Custom webhook (spec, Authentication > Webhooks 4):
    X-Service-Timestamp: <unix seconds>
    X-Service-Signature: sha256=<hex HMAC-SHA256(secret, f"{timestamp}." + raw body)>
Accepted while the timestamp is at most 300 s old and at most 60 s ahead (both edges inclusive).
Sentry: Sentry-Hook-Signature = lowercase hex HMAC-SHA256(client secret, raw body), no prefix.

Always verify the raw body bytes as received; re-serialised JSON does not match.

The custom webhook's signature is the one Tocsin signs its own POSTs with: it is computed in
chalicelib/delivery/signature.py (`sign`, `signed_headers`, named here too for the inbound side's
callers and tests); this module checks a received one.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import re
from collections.abc import Mapping
from datetime import datetime
from typing import Final

from chalicelib.delivery.signature import (
    SIGNATURE_HEADER,
    SIGNATURE_PREFIX,
    TIMESTAMP_HEADER,
    body_bytes,
    key_bytes,
    sign,
    signature_hex,
    signed_headers,
)
from chalicelib.errors import InvalidSignature, SignatureExpired
from chalicelib.integration.normalized import get_header

__all__ = [
    "MAX_AGE_SECONDS",
    "MAX_FUTURE_SECONDS",
    "SENTRY_SIGNATURE_HEADER",
    "SIGNATURE_HEADER",
    "SIGNATURE_PREFIX",
    "TIMESTAMP_HEADER",
    "sentry_signature",
    "sign",
    "signature_hex",
    "signed_headers",
    "verify_custom",
    "verify_sentry",
]

MAX_AGE_SECONDS: Final = 300
MAX_FUTURE_SECONDS: Final = 60
SENTRY_SIGNATURE_HEADER: Final = "Sentry-Hook-Signature"

_HEX_DIGEST_RE: Final = re.compile(r"[0-9a-fA-F]{64}")
_TIMESTAMP_RE: Final = re.compile(r"[0-9]{1,12}")


def _seconds(now: datetime | float) -> int:
    if isinstance(now, datetime):
        if now.tzinfo is None:
            raise ValueError("now must be timezone-aware")
        return math.floor(now.timestamp())
    return math.floor(now)


# --- custom webhook --------------------------------------------------------------------------------


def verify_custom(
    secret: str | bytes,
    headers: Mapping[str, str] | None,
    body: bytes | str,
    *,
    now: datetime | float,
) -> int:
    """Check a signed custom webhook; returns the signed timestamp (unix seconds).

    INVALID_SIGNATURE: a header missing or malformed, or the HMAC does not match.
    SIGNATURE_EXPIRED: authentic, but the timestamp is more than 300 s old or 60 s ahead.
    """
    raw_signature = get_header(headers, SIGNATURE_HEADER)
    raw_timestamp = get_header(headers, TIMESTAMP_HEADER)
    if not raw_signature:
        raise InvalidSignature(f"Missing {SIGNATURE_HEADER} header; this webhook requires signed requests.")
    if not raw_timestamp:
        raise InvalidSignature(f"Missing {TIMESTAMP_HEADER} header; this webhook requires signed requests.")
    if not _TIMESTAMP_RE.fullmatch(raw_timestamp):
        raise InvalidSignature(f"{TIMESTAMP_HEADER} must be a Unix time in whole seconds (digits only).")
    prefix, digest = raw_signature[: len(SIGNATURE_PREFIX)], raw_signature[len(SIGNATURE_PREFIX) :]
    if prefix.lower() != SIGNATURE_PREFIX or not _HEX_DIGEST_RE.fullmatch(digest):
        raise InvalidSignature(f"{SIGNATURE_HEADER} must look like sha256=<64 hex characters>.")
    expected = signature_hex(secret, raw_timestamp, body)
    if not hmac.compare_digest(expected, digest.lower()):
        raise InvalidSignature(
            f"{SIGNATURE_HEADER} does not match the request body and timestamp for this webhook's signing secret."
        )
    timestamp = int(raw_timestamp)
    age = _seconds(now) - timestamp
    if age > MAX_AGE_SECONDS:
        raise SignatureExpired(
            f"{TIMESTAMP_HEADER} is {age} s old; signed requests are accepted for {MAX_AGE_SECONDS} s."
        )
    if -age > MAX_FUTURE_SECONDS:
        raise SignatureExpired(
            f"{TIMESTAMP_HEADER} is {-age} s in the future; at most {MAX_FUTURE_SECONDS} s of clock skew is allowed."
        )
    return timestamp


# --- Sentry -----------------------------------------------------------------------------------------


def sentry_signature(client_secret: str | bytes, body: bytes | str) -> str:
    """Sentry-Hook-Signature for `body`: lowercase hex HMAC-SHA256 keyed with the client secret."""
    return hmac.new(key_bytes(client_secret), body_bytes(body), hashlib.sha256).hexdigest()


def verify_sentry(client_secret: str | bytes, headers: Mapping[str, str] | None, body: bytes | str) -> None:
    """Check Sentry-Hook-Signature over the raw body; INVALID_SIGNATURE when missing or wrong."""
    received = get_header(headers, SENTRY_SIGNATURE_HEADER)
    if not received:
        raise InvalidSignature(
            f"Missing {SENTRY_SIGNATURE_HEADER} header; this integration has a client secret configured."
        )
    if not _HEX_DIGEST_RE.fullmatch(received):
        raise InvalidSignature(f"{SENTRY_SIGNATURE_HEADER} must be 64 hex characters.")
    if not hmac.compare_digest(sentry_signature(client_secret, body), received.lower()):
        raise InvalidSignature(
            f"{SENTRY_SIGNATURE_HEADER} does not match the request body for this integration's client secret."
        )
