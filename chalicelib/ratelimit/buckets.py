"""The rate-limit buckets, their limits, and charging one.

api_key (per key), session (per user), webhook (per integration, verified deliveries),
webhook_unverified (per integration and address: deliveries whose signature failed),
anonymous (per address: requests without a valid credential), public_status (per address:
public status page reads), status_subscribe (per address: subscribing to a status page; an
IPv6 caller counted by its /64, chalicelib.addresses.caller_network, since one customer holds a
whole /64 and could otherwise send from a new address each time).

Which bucket a request counts against is the request pipeline's to decide (chalicelib.api.admission);
this module only counts.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from chalicelib.addresses import caller_network
from chalicelib.errors import RateLimited
from chalicelib.ratelimit import service as ratelimit
from chalicelib.ratelimit.window import RateLimitDecision
from chalicelib.settings import Settings

# Buckets whose identity is the caller's address and counted by its network.
PER_NETWORK = frozenset({"status_subscribe"})


def limit_for(category: str, *, settings: Settings) -> int:
    return {
        "api_key": settings.rate_limit_api_key,
        "session": settings.rate_limit_session,
        "webhook": settings.rate_limit_webhook,
        "webhook_unverified": settings.rate_limit_webhook_unverified,
        "public_status": settings.rate_limit_public_status,
        "status_subscribe": settings.rate_limit_status_subscribe,
    }.get(category, settings.rate_limit_anonymous)


@dataclass(frozen=True)
class Bucket:
    """One bucket: its category (which sets the limit) and whose it is (a key, a user, an address)."""

    category: str
    identity: str
    refusal: str | None = None  # what its 429 says; None: RATE_LIMITED's own message


def charge_bucket(bucket: Bucket, now: datetime, *, settings: Settings) -> RateLimitDecision:
    return charge(
        category=bucket.category, identity=bucket.identity, now=now, message=bucket.refusal, settings=settings
    )


def charge(
    *, category: str, identity: str, now: datetime, settings: Settings, message: str | None = None
) -> RateLimitDecision:
    """Count one request; raise RATE_LIMITED (with the headers) when the window is spent."""
    decision = ratelimit.hit(
        category=category,
        identity=caller_network(identity) if category in PER_NETWORK else identity,
        limit=limit_for(category, settings=settings),
        window_seconds=settings.rate_limit_window_seconds,
        now=now,
    )
    if not decision.allowed:
        raise RateLimited(message, headers=decision.headers())
    return decision
