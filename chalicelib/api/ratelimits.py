"""Which rate-limit bucket a request falls in, and enforcing it."""

from __future__ import annotations

from datetime import datetime

from chalicelib.auth.principal import Principal
from chalicelib.errors import RateLimited
from chalicelib.ratelimit import service as ratelimit
from chalicelib.ratelimit.window import RateLimitDecision
from chalicelib.settings import get_settings


def _limit_for(category: str) -> int:
    settings = get_settings()
    return {
        "api_key": settings.rate_limit_api_key,
        "session": settings.rate_limit_session,
        "webhook": settings.rate_limit_webhook,
    }.get(category, settings.rate_limit_anonymous)


def charge(*, category: str, identity: str, now: datetime) -> RateLimitDecision:
    """Count one request; raise RATE_LIMITED (with the headers) when the window is spent."""
    decision = ratelimit.hit(
        category=category,
        identity=identity,
        limit=_limit_for(category),
        window_seconds=get_settings().rate_limit_window_seconds,
        now=now,
    )
    if not decision.allowed:
        raise RateLimited(headers=decision.headers())
    return decision


def charge_principal(principal: Principal, now: datetime) -> RateLimitDecision:
    return charge(category=principal.rate_limit_category, identity=principal.rate_limit_identity, now=now)


def charge_anonymous(source_ip: str, now: datetime) -> RateLimitDecision:
    """Requests without a valid credential share a per-address bucket, which also slows key guessing."""
    return charge(category="anonymous", identity=source_ip, now=now)
