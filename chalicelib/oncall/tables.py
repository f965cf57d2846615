"""Schedules: one item per schedule in the organization's partition; the calendar feed finds its
schedule through the `ical-token-index` (a Query on the token, never a Scan).

Layers and overrides are stored as JSON (`Schedule.to_dict()` forms). Every write checks and bumps
`version` (optimistic locking), so concurrent edits never lose one another.
"""

from __future__ import annotations

from pynamodb.attributes import JSONAttribute, UnicodeAttribute, UTCDateTimeAttribute, VersionAttribute
from pynamodb.indexes import AllProjection, GlobalSecondaryIndex

from chalicelib import aws
from chalicelib.store.model import TocsinModel


class SchedulesByIcalToken(GlobalSecondaryIndex["ScheduleRecord"]):
    class Meta:
        index_name = "ical-token-index"
        projection = AllProjection()

    ical_token = UnicodeAttribute(hash_key=True)


@aws.register_model
class ScheduleRecord(TocsinModel):
    class Meta(TocsinModel.Meta):
        table_name = "schedules"

    organization_id = UnicodeAttribute(hash_key=True)
    schedule_id = UnicodeAttribute(range_key=True)
    name = UnicodeAttribute()
    team_id = UnicodeAttribute(null=True)
    time_zone = UnicodeAttribute()
    layers = JSONAttribute()  # [Layer.to_dict()], lowest first
    overrides = JSONAttribute(null=True)  # [Override.to_dict()]; long-finished ones are pruned on write
    ical_token = UnicodeAttribute()  # random; the secret in the calendar feed URL
    created_at = UTCDateTimeAttribute()
    updated_at = UTCDateTimeAttribute(null=True)
    version = VersionAttribute()

    by_ical_token = SchedulesByIcalToken()
