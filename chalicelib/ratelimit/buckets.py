"""The rate-limit buckets, their limits, and charging one.

api_key (per key), session (per user), webhook (per integration, verified deliveries),
webhook_unverified (per integration and address: deliveries whose signature failed),
anonymous (per address: requests without a valid credential), public_status (per address:
public status page reads), status_subscribe (per address: subscribing to a status page; an
IPv6 caller counted by its /64, chalicelib.addresses.caller_network, since one customer holds a
whole /64 and could otherwise send from a new address each time).
"""

from __future__ import annotations

from datetime import datetime

from chalicelib.addresses import caller_network
from chalicelib.errors import RateLimited
from chalicelib.ratelimit import service as ratelimit
from chalicelib.ratelimit.window import RateLimitDecision
from chalicelib.settings import get_settings

# Buckets whose identity is the caller's address and counted by its network.
PER_NETWORK = frozenset({"status_subscribe"})


def limit_for(category: str) -> int:
    settings = get_settings()
    return {
        "api_key": settings.rate_limit_api_key,
        "session": settings.rate_limit_session,
        "webhook": settings.rate_limit_webhook,
        "webhook_unverified": settings.rate_limit_webhook_unverified,
        "public_status": settings.rate_limit_public_status,
        "status_subscribe": settings.rate_limit_status_subscribe,
    }.get(category, settings.rate_limit_anonymous)


def charge(*, category: str, identity: str, now: datetime) -> RateLimitDecision:
    """Count one request; raise RATE_LIMITED (with the headers) when the window is spent."""
    decision = ratelimit.hit(
        category=category,
        identity=caller_network(identity) if category in PER_NETWORK else identity,
        limit=limit_for(category),
        window_seconds=get_settings().rate_limit_window_seconds,
        now=now,
    )
    if not decision.allowed:
        raise RateLimited(headers=decision.headers())
    return decision
