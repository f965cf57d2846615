"""Schedules: one item per schedule in the organization's partition; the calendar feed finds its
schedule through the `ical-token-index` (a Query on the token, never a Scan).

Handoff notices: every schedule carries `notice_shard` + `next_notice_at` (when the handoff step
should look at it next; the boundary that look is about is `notice_boundary`), so the step finds
the due schedules with one Query on the sparse `notice-index`, however many schedules exist
(chalicelib.oncall.handoff_notices).

Layers and overrides are stored as JSON (`Schedule.to_dict()` forms). Every write checks and bumps
`version` (optimistic locking), so concurrent edits never lose one another.
"""

from __future__ import annotations

from pynamodb.attributes import (
    JSONAttribute,
    NumberAttribute,
    UnicodeAttribute,
    UTCDateTimeAttribute,
    VersionAttribute,
)
from pynamodb.indexes import GlobalSecondaryIndex

from chalicelib import aws
from chalicelib.store.indexes import global_index
from chalicelib.store.model import TocsinModel

# One partition of the notice index holds every schedule: the step reads only the due ones.
NOTICE_SHARD = "handoff"


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
    handoff_notice_lead_minutes = NumberAttribute(null=True)  # absent: 0
    # The notice index (sparse; see the module docstring). Not bumping `version` when only these move.
    notice_shard = UnicodeAttribute(null=True)
    next_notice_at = UTCDateTimeAttribute(null=True)
    notice_boundary = UTCDateTimeAttribute(null=True)  # None: nothing within the horizon, look again
    version = VersionAttribute()

    by_ical_token: GlobalSecondaryIndex[ScheduleRecord] = global_index("ical-token-index", "ical_token")
    by_next_notice: GlobalSecondaryIndex[ScheduleRecord] = global_index(
        "notice-index", "notice_shard", "next_notice_at", range_type=UTCDateTimeAttribute, keys_only=True
    )
