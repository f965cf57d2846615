"""Which rate-limit bucket a request falls in (the buckets themselves: chalicelib.ratelimit.buckets)."""

from __future__ import annotations

from datetime import datetime

from chalicelib.auth.principal import Principal
from chalicelib.ratelimit.buckets import charge
from chalicelib.ratelimit.window import RateLimitDecision

__all__ = ["charge", "charge_anonymous", "charge_principal", "charge_public_status", "charge_status_subscribe"]


def charge_principal(principal: Principal, now: datetime) -> RateLimitDecision:
    return charge(category=principal.rate_limit_category, identity=principal.rate_limit_identity, now=now)


def charge_anonymous(source_ip: str, now: datetime) -> RateLimitDecision:
    """Requests without a valid credential share a per-address bucket, which also slows key guessing."""
    return charge(category="anonymous", identity=source_ip, now=now)


def charge_public_status(source_ip: str, now: datetime) -> RateLimitDecision:
    """Public status reads have their own per-address bucket: failed API calls from the same address
    (an office's NAT) must not make the status page answer 429 during an outage."""
    return charge(category="public_status", identity=source_ip, now=now)


def charge_status_subscribe(source_ip: str, now: datetime) -> RateLimitDecision:
    """Subscribing may send an email: its own per-address bucket, far stricter than public reads."""
    return charge(category="status_subscribe", identity=source_ip, now=now)
