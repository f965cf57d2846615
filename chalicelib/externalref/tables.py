"""The import ledger: one item per (kind, vendor, vendor id) of an organization, in the
organization's partition, so listing an organization's entries is one Query and recording one is
one PutItem on its key (a second record of the same triple replaces the first)."""

from __future__ import annotations

from pynamodb.attributes import UnicodeAttribute, UTCDateTimeAttribute

from chalicelib import aws
from chalicelib.store.model import TocsinModel


@aws.register_model
class ExternalRefRecord(TocsinModel):
    class Meta(TocsinModel.Meta):
        table_name = "external-refs"

    organization_id = UnicodeAttribute(hash_key=True)
    ref_id = UnicodeAttribute(range_key=True)  # xref_<hex>, derived from kind, vendor and external id
    kind = UnicodeAttribute()  # team, user, schedule, ... (the configuration document's kinds)
    vendor = UnicodeAttribute()
    external_id = UnicodeAttribute()
    tocsin_id = UnicodeAttribute()
    recorded_at = UTCDateTimeAttribute()
