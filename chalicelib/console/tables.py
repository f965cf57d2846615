from __future__ import annotations

from pynamodb.attributes import TTLAttribute, UnicodeAttribute, UTCDateTimeAttribute

from chalicelib import aws
from chalicelib.store.model import TocsinModel


@aws.register_model
class ConsoleSessionRecord(TocsinModel):
    """One signed-in browser. The cookie holds a random token; only its SHA-256 is stored, so a
    leaked table does not sign anyone in."""

    class Meta(TocsinModel.Meta):
        table_name = "console-sessions"

    session_hash = UnicodeAttribute(hash_key=True)
    organization_id = UnicodeAttribute()
    user_id = UnicodeAttribute()
    csrf_token = UnicodeAttribute()
    created_at = UTCDateTimeAttribute()
    last_seen_at = UTCDateTimeAttribute()
    expires_at = TTLAttribute()  # the absolute expiry; moto never expires items, so reads check it
