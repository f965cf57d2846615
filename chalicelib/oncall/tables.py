"""Schedules: one item per schedule in the organization's partition; the calendar feed finds its
schedule through the `ical-token-index` (a Query on the token, never a Scan).

Handoff notices: every schedule carries `notice_shard` + `next_notice_at` (when the handoff step
should look at it next; the boundary that look is about is `notice_boundary`), so the step finds
the due schedules with one Query on the sparse `notice-index`, however many schedules exist
(chalicelib.oncall.handoff_notices).

Layers and overrides are stored as JSON (`Schedule.to_dict()` forms). Every write checks and bumps
`version` (optimistic locking), so concurrent edits never lose one another.

Swap requests: one item per request in the organization's partition, keyed by schedule then
request (`<schedule_id>#<swap_id>`), so a schedule's requests are one Query on a key prefix. Every
write checks and bumps `version`; taking one also requires `status` open, in the same transaction
as the schedule's override. Items expire SWAP_KEPT_AFTER_END after their span ends.

Coverage watch: one item per schedule or policy whose coverage the check looks at
(chalicelib.oncall.coverage_watch), found through the sparse `coverage-due-index`.
"""

from __future__ import annotations

from datetime import timedelta

from pynamodb.attributes import (
    JSONAttribute,
    NumberAttribute,
    TTLAttribute,
    UnicodeAttribute,
    UnicodeSetAttribute,
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


SWAP_KEPT_AFTER_END = timedelta(days=90)


def swap_key(schedule_id: str, swap_id: str) -> str:
    return f"{schedule_id}#{swap_id}"


@aws.register_model
class SwapRequestRecord(TocsinModel):
    class Meta(TocsinModel.Meta):
        table_name = "swap-requests"

    organization_id = UnicodeAttribute(hash_key=True)
    swap_key = UnicodeAttribute(range_key=True)  # <schedule_id>#<swap_id>
    swap_id = UnicodeAttribute()
    schedule_id = UnicodeAttribute()
    requester_id = UnicodeAttribute()
    start = UTCDateTimeAttribute()
    end = UTCDateTimeAttribute()
    note = UnicodeAttribute(null=True)
    status = UnicodeAttribute()  # open | taken | withdrawn | expired
    created_at = UTCDateTimeAttribute()
    taken_by = UnicodeAttribute(null=True)
    taken_at = UTCDateTimeAttribute(null=True)
    override_id = UnicodeAttribute(null=True)
    withdrawn_at = UTCDateTimeAttribute(null=True)
    expired_at = UTCDateTimeAttribute(null=True)
    expires_at = TTLAttribute(null=True)
    version = VersionAttribute()


COVERAGE_SHARD = "coverage"


@aws.register_model
class CoverageWatchRecord(TocsinModel):
    class Meta(TocsinModel.Meta):
        table_name = "coverage-watch"

    organization_id = UnicodeAttribute(hash_key=True)
    subject = UnicodeAttribute(range_key=True)  # schedule#<id> | policy#<id>
    due_shard = UnicodeAttribute(null=True)  # COVERAGE_SHARD while watched (the sparse index)
    check_at = UTCDateTimeAttribute(null=True)  # when the check looks next
    noticed = UnicodeSetAttribute(null=True)  # the gap ids its owners were told of

    by_check_at: GlobalSecondaryIndex[CoverageWatchRecord] = global_index(
        "coverage-due-index", "due_shard", "check_at", range_type=UTCDateTimeAttribute, keys_only=True
    )

    @property
    def kind(self) -> str:
        return "policy" if self.subject.startswith("policy#") else "schedule"

    @property
    def subject_id(self) -> str:
        return self.subject.split("#", 1)[1]
