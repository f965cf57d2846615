from __future__ import annotations

from pynamodb.attributes import NumberAttribute, TTLAttribute, UnicodeAttribute, UTCDateTimeAttribute

from chalicelib import aws
from chalicelib.store.model import TocsinModel


@aws.register_model
class IdempotencyRecord(TocsinModel):
    """One Idempotency-Key of one organization and operation: in progress, then the stored response."""

    class Meta(TocsinModel.Meta):
        table_name = "idempotency"

    record_key = UnicodeAttribute(hash_key=True)  # <organization_id>#<operation>#<key>
    state = UnicodeAttribute()  # in_progress | completed
    payload_hash = UnicodeAttribute()
    lease_expires_at = UTCDateTimeAttribute()  # an in-progress claim older than this may be taken over
    response_status = NumberAttribute(null=True)
    response_body = UnicodeAttribute(null=True)
    expires_at = TTLAttribute()  # 24 h; moto never expires TTL items, so reads check it too
