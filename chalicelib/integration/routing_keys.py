"""Routing keys: 32 lowercase hex characters (the length PagerDuty integration keys have), stored
only as a keyed hash."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets

ROUTING_KEY_PATTERN = re.compile(r"^[0-9a-f]{32}$")


def generate_routing_key() -> str:
    return secrets.token_hex(16)


def derive_routing_key(seed_secret: str, label: str) -> str:
    """Deterministic keys for local demo data only."""
    return hmac.new(seed_secret.encode(), f"routing:{label}".encode(), hashlib.sha256).hexdigest()[:32]


def looks_like_routing_key(value: str) -> bool:
    return bool(ROUTING_KEY_PATTERN.match(value))


def hash_routing_key(hmac_secret: str, routing_key: str) -> str:
    # Labelled, so a routing key's hash can never collide with an API key's.
    return hmac.new(hmac_secret.encode(), f"routing:{routing_key}".encode(), hashlib.sha256).hexdigest()


def generate_secret() -> str:
    return "whsec_" + secrets.token_urlsafe(32)
