"""Rate limiting kept in DynamoDB so it holds across Lambda instances: one UpdateItem per hit."""

from __future__ import annotations

from datetime import UTC, datetime

from chalicelib.ratelimit.tables import RateLimitWindowRecord
from chalicelib.ratelimit.window import RateLimitDecision, window_for


def hit(*, category: str, identity: str, limit: int, window_seconds: int, now: datetime) -> RateLimitDecision:
    epoch = now.timestamp()
    window = window_for(epoch, window_seconds)
    record = RateLimitWindowRecord(f"{category}#{identity}#{window.start}")
    record.update(
        actions=[
            RateLimitWindowRecord.hits.add(1),
            # Kept a window past its end so a clock skew between instances never resets early.
            RateLimitWindowRecord.expires_at.set(
                RateLimitWindowRecord.expires_at | datetime.fromtimestamp(window.reset_at + window_seconds, UTC)
            ),
        ]
    )
    return RateLimitDecision(
        category=category, limit=limit, hits=int(record.hits), reset_at=window.reset_at, now_epoch=epoch
    )
