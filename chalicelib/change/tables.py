"""Change events: one item per change, in its service's partition, sorted by time.

"Changes of service S between t0 and t1" (an incident's recent changes, the filtered list) is one
key-condition Query: partition `<organization_id>#<service_key>`, sort key `<timestamp>#<change id>`
(chalicelib.change.rules). The organization-wide list reads the `by-organization` index, keyed by
organization and the same sort key. Items expire 90 days after receipt (TTL; moto never expires
them, so reads skip expired items too).

A claim item (same table, its own partition `<organization_id>#claim#<fingerprint>`, outside the
index) is written in the same transaction as the change, on the condition that no live claim
exists: a retried delivery finds the claim and records nothing twice.
"""

from __future__ import annotations

from pynamodb.attributes import JSONAttribute, TTLAttribute, UnicodeAttribute, UTCDateTimeAttribute
from pynamodb.indexes import GlobalSecondaryIndex

from chalicelib import aws
from chalicelib.store.indexes import global_index
from chalicelib.store.model import TocsinModel

CLAIM_SORT_KEY = "claim"


@aws.register_model
class ChangeEventRecord(TocsinModel):
    class Meta(TocsinModel.Meta):
        table_name = "change-events"

    change_partition = UnicodeAttribute(hash_key=True)  # <organization_id>#<service_key>
    change_sort = UnicodeAttribute(range_key=True)  # <timestamp, fixed-width UTC>#<change id>
    organization_id = UnicodeAttribute()
    change_id = UnicodeAttribute()  # chg_<hex>, derived from the content (rules.change_id)
    service_key = UnicodeAttribute()
    service_id = UnicodeAttribute()  # SER-nnnnn, kept so lists need no service reads
    integration_id = UnicodeAttribute()
    summary = UnicodeAttribute()
    source = UnicodeAttribute(null=True)
    timestamp = UTCDateTimeAttribute()  # payload.timestamp, else when it was received
    links = JSONAttribute(default=list)  # [{"href", "text"}]
    custom_details = JSONAttribute(null=True)
    received_at = UTCDateTimeAttribute()
    expires_at = TTLAttribute()

    by_organization: GlobalSecondaryIndex[ChangeEventRecord] = global_index(
        "by-organization", "organization_id", "change_sort"
    )


@aws.register_model
class ChangeClaimRecord(TocsinModel):
    """The content of a delivered change, claimed so that a retry records nothing new."""

    class Meta(TocsinModel.Meta):
        table_name = "change-events"
        provisioned_by = "ChangeEventRecord"

    change_partition = UnicodeAttribute(hash_key=True)  # <organization_id>#claim#<fingerprint>
    change_sort = UnicodeAttribute(range_key=True, default=CLAIM_SORT_KEY)
    change_id = UnicodeAttribute()
    expires_at = TTLAttribute()
