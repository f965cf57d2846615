from __future__ import annotations

from pynamodb.attributes import ListAttribute, UnicodeAttribute, UTCDateTimeAttribute
from pynamodb.indexes import GlobalSecondaryIndex

from chalicelib import aws
from chalicelib.store.indexes import global_index
from chalicelib.store.model import TocsinModel


@aws.register_model
class ApiKeyRecord(TocsinModel):
    """An API key, stored only as its HMAC-SHA256; the hash is the lookup key."""

    class Meta(TocsinModel.Meta):
        table_name = "api-keys"

    key_hash = UnicodeAttribute(hash_key=True)
    key_id = UnicodeAttribute()
    organization_id = UnicodeAttribute()
    name = UnicodeAttribute()
    kind = UnicodeAttribute()  # personal | service_account
    scopes = ListAttribute(of=UnicodeAttribute)
    user_id = UnicodeAttribute(null=True)
    user_email = UnicodeAttribute(null=True)  # a personal key's owner, so requests need no user lookup
    user_name = UnicodeAttribute(null=True)
    display_prefix = UnicodeAttribute()
    created_at = UTCDateTimeAttribute()
    created_by = UnicodeAttribute(null=True)
    revoked_at = UTCDateTimeAttribute(null=True)
    last_used_at = UTCDateTimeAttribute(null=True)

    by_organization: GlobalSecondaryIndex[ApiKeyRecord] = global_index(
        "organization-index", "organization_id", "key_id"
    )
