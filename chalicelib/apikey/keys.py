"""API key format and hashing, pure.

Keys look like `tcs_<40 base62 characters>` (about 238 bits). Only
HMAC-SHA256(API_KEY_HMAC_SECRET, key) is stored, so rotating the secret
invalidates every key at once.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import string

KEY_PREFIX = "tcs_"
_ALPHABET = string.ascii_letters + string.digits
_BODY_LENGTH = 40


def generate_key() -> str:
    return KEY_PREFIX + "".join(secrets.choice(_ALPHABET) for _ in range(_BODY_LENGTH))


def derive_key(seed_secret: str, label: str) -> str:
    """A deterministic key (local demo data only): the same label gives the same key every run."""
    digest = hmac.new(seed_secret.encode(), label.encode(), hashlib.sha256).digest()
    body = "".join(_ALPHABET[b % len(_ALPHABET)] for b in digest + digest)[:_BODY_LENGTH]
    return KEY_PREFIX + body


def looks_like_key(credential: str) -> bool:
    if not credential.startswith(KEY_PREFIX):
        return False
    body = credential[len(KEY_PREFIX) :]
    return len(body) == _BODY_LENGTH and all(c in _ALPHABET for c in body)


def hash_key(hmac_secret: str, key: str) -> str:
    return hmac.new(hmac_secret.encode(), key.encode(), hashlib.sha256).hexdigest()


def display_prefix(key: str) -> str:
    """What listings show so a person can recognise a key without it being usable."""
    return key[: len(KEY_PREFIX) + 6]


def hashes_match(stored: str, computed: str) -> bool:
    return hmac.compare_digest(stored.encode(), computed.encode())
