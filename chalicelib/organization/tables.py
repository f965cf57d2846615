from __future__ import annotations

from pynamodb.attributes import JSONAttribute, UnicodeAttribute, UTCDateTimeAttribute, VersionAttribute

from chalicelib import aws
from chalicelib.store.model import TocsinModel


@aws.register_model
class OrganizationRecord(TocsinModel):
    class Meta(TocsinModel.Meta):
        table_name = "organizations"

    organization_id = UnicodeAttribute(hash_key=True)
    name = UnicodeAttribute()
    created_at = UTCDateTimeAttribute()
    # Incident settings; null means the defaults in docs/INCIDENTS.md.
    workflow = JSONAttribute(null=True)
    sla_settings = JSONAttribute(null=True)
    # An IANA zone name; null means UTC (chalicelib.organization.service).
    time_zone = UnicodeAttribute(null=True)
    # Who is paged when an incident's escalation reaches nobody (chalicelib.paging.fallback); null: nobody.
    paging_settings = JSONAttribute(null=True)
    # Outbound limits the owner lowered ({name: value}, chalicelib.budget); null: the deployment's.
    outbound_limits = JSONAttribute(null=True)
    version = VersionAttribute()
