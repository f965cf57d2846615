from __future__ import annotations

from pynamodb.attributes import UnicodeAttribute, UTCDateTimeAttribute

from chalicelib import aws
from chalicelib.tables import TocsinModel


@aws.register_model
class OrganizationRecord(TocsinModel):
    class Meta(TocsinModel.Meta):
        table_name = "organizations"

    organization_id = UnicodeAttribute(hash_key=True)
    name = UnicodeAttribute()
    created_at = UTCDateTimeAttribute()
