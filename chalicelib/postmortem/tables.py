"""Postmortems, one item each, keyed by organization and postmortem id.

"Which postmortem does incident X have" is answered by a guard item in the unique-names table
(`postmortem-incident#<incident number>` -> postmortem id), claimed in the same transaction as
the postmortem: that claim is what keeps it to one postmortem per incident under racing creates.
"""

from __future__ import annotations

from pynamodb.attributes import JSONAttribute, UnicodeAttribute, UTCDateTimeAttribute, VersionAttribute

from chalicelib import aws
from chalicelib.store.model import TocsinModel


def incident_guard_key(incident_number: str) -> str:
    return f"postmortem-incident#{incident_number}"


@aws.register_model
class PostmortemRecord(TocsinModel):
    class Meta(TocsinModel.Meta):
        table_name = "postmortems"

    organization_id = UnicodeAttribute(hash_key=True)
    postmortem_id = UnicodeAttribute(range_key=True)
    postmortem_number = UnicodeAttribute()
    incident_number = UnicodeAttribute()
    level = UnicodeAttribute()
    status = UnicodeAttribute()
    summary = UnicodeAttribute(null=True)
    root_cause = UnicodeAttribute(null=True)
    resolution = UnicodeAttribute(null=True)
    contributing_factors = UnicodeAttribute(null=True)
    detection_path = UnicodeAttribute(null=True)
    monitoring_gaps = UnicodeAttribute(null=True)
    five_whys = UnicodeAttribute(null=True)
    executive_summary = UnicodeAttribute(null=True)
    prevented_recurrence = UnicodeAttribute(null=True)
    # Structured form (object or list), or a legacy HTML string for imported records.
    impact = JSONAttribute(null=True)
    timeline = JSONAttribute(null=True)
    action_items = JSONAttribute(null=True)
    response_timeline = JSONAttribute(null=True)
    # Rendered from the structured form on every write; for legacy records, whatever the import carried.
    impact_html = UnicodeAttribute(null=True)
    timeline_html = UnicodeAttribute(null=True)
    action_items_html = UnicodeAttribute(null=True)
    response_timeline_html = UnicodeAttribute(null=True)
    created_at = UTCDateTimeAttribute()
    updated_at = UTCDateTimeAttribute(null=True)
    created_by = UnicodeAttribute(null=True)
    imported = UnicodeAttribute(null=True)  # "legacy" for records written by the import operation
    version = VersionAttribute()
