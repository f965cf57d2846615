from __future__ import annotations

from pynamodb.attributes import NumberAttribute, TTLAttribute, UnicodeAttribute

from chalicelib import aws
from chalicelib.store.model import TocsinModel


@aws.register_model
class RateLimitWindowRecord(TocsinModel):
    """Hits of one bucket in one fixed window; expires after the window (TTL)."""

    class Meta(TocsinModel.Meta):
        table_name = "rate-limits"

    window_key = UnicodeAttribute(hash_key=True)  # <category>#<identity>#<window start>
    hits = NumberAttribute(default=0)
    expires_at = TTLAttribute(null=True)
