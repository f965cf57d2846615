"""Keeping a schedule's place in the notice index (`notice-index` on the schedules table).

Every schedule write recomputes the plan from the schedule as written: the next boundary after
the write and when to look at it (`next_notice_at` = boundary - lead). One exception keeps a due
notice from being lost to an edit: when the boundary the record was waiting for is already due
(its notice time has passed, the step has not finished it yet), the search starts at that
boundary instead of at `now`; a notice the step did send is then sent again with the same
`notice_id`, which its consumer sends once.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from chalicelib.errors import ValidationFailed
from chalicelib.oncall.handoffs import LEAD_MINUTES_MAX, NoticePlan, next_notice
from chalicelib.oncall.schedule import Schedule
from chalicelib.oncall.tables import NOTICE_SHARD, ScheduleRecord

_TICK = timedelta(microseconds=1)  # the finest step of a stored time


def check_lead_minutes(lead_minutes: int) -> None:
    if isinstance(lead_minutes, bool) or not 0 <= lead_minutes <= LEAD_MINUTES_MAX:
        raise ValidationFailed.for_field("handoff_notice_lead_minutes", f"must be 0 to {LEAD_MINUTES_MAX} minutes")


def lead_of(record: ScheduleRecord) -> int:
    return int(record.handoff_notice_lead_minutes or 0)


def resume_after(record: ScheduleRecord) -> datetime | None:
    """Where the record's search for boundaries goes on from: just before the boundary it waits
    for, or (nothing within the horizon) the moment it looks again. None when not indexed."""
    if record.notice_boundary is not None:
        return record.notice_boundary - _TICK
    return record.next_notice_at


def apply_plan(record: ScheduleRecord, plan: NoticePlan) -> None:
    record.notice_shard = NOTICE_SHARD
    record.next_notice_at = plan.notice_at
    record.notice_boundary = plan.boundary


def plan_on_write(record: ScheduleRecord, schedule: Schedule, lead_minutes: int, now: datetime) -> None:
    """Set the index attributes for `schedule` being written at `now`. Call before changing the
    record's lead: whether its pending notice is due is judged by the lead it was planned with."""
    after = now
    pending = record.notice_boundary
    if pending is not None and pending - timedelta(minutes=lead_of(record)) <= now:
        after = min(now, pending - _TICK)
    apply_plan(record, next_notice(schedule, after, lead_minutes))
