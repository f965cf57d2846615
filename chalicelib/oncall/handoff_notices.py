"""Handoff notices: the scheduled step that tells people they go on call or come off call.

Every minute (`send-handoff-notices` in app.py; locally the worker loop's ScheduleWorker) one
Query on the sparse notice index finds the schedules whose `next_notice_at` has come, however
many schedules exist (never a Scan). For each:

1. Read it (a consistent GetItem; a schedule deleted since the Query is skipped).
2. Nothing within the horizon, or the boundary is more than MAX_LATENESS past (the step did not
   run for a while): plan the next look without notices. One conditional update.
3. Otherwise claim the boundary: a conditional update, on the `next_notice_at` and version read,
   moves `next_notice_at` LEASE ahead. Of two concurrent runs one wins; the other skips it.
4. Publish one `oncall.handoff_notice` per person who comes off call or goes on call.
5. Advance to the following boundary, conditional on the claim still standing.

The claim comes before the publishes, so concurrent runs publish a boundary once. When a publish
fails, or the run dies between 3 and 5, the claim runs out after LEASE and a later run publishes
the boundary again: a message carries a stable `notice_id` (schedule_id#at#user_id#kind), which
its consumer sends once, so a person is never told twice. A schedule edit made while a boundary
is due replans from that boundary (chalicelib.oncall.notice_index): same notice ids again.

None of these updates bumps the schedule's version (store.update_unversioned_if): an editor who
sends the version they read is not refused over the step's bookkeeping. TIME_SCALE does not
apply: handoffs are wall-clock events.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from pynamodb.exceptions import DoesNotExist
from pynamodb.expressions.condition import Condition

from chalicelib.directory.users import get_users
from chalicelib.oncall.fields import format_moment
from chalicelib.oncall.handoff_text import render_notice
from chalicelib.oncall.handoffs import Handoff, NoticePlan, changes_at, next_notice
from chalicelib.oncall.notice_index import resume_after
from chalicelib.oncall.service import StoredSchedule, to_domain
from chalicelib.oncall.tables import NOTICE_SHARD, ScheduleRecord
from chalicelib.queue.messages import Message, publish
from chalicelib.store import update_unversioned_if

logger = logging.getLogger("tocsin.oncall.handoffs")

HANDOFF_NOTICE = "oncall.handoff_notice"
MAX_LATENESS = timedelta(hours=1)
LEASE = timedelta(minutes=5)
# Boundaries one schedule may go through in one run (a long lead over an hourly rotation makes
# many due at once); the rest wait for the next run.
MAX_BOUNDARIES_PER_RUN = 24


@dataclass
class NoticeRun:
    boundaries: int = 0  # boundaries whose notices were published
    published: int = 0  # messages
    late: int = 0  # boundaries passed over: more than MAX_LATENESS past
    lost: int = 0  # another run or an edit moved the schedule first
    failed: int = 0  # schedules that failed (publishing, reading, writing); retried later

    def as_dict(self) -> dict[str, int]:
        return dict(vars(self))


def notice_id(schedule_id: str, handoff: Handoff) -> str:
    return f"{schedule_id}#{format_moment(handoff.at)}#{handoff.user_id}#{handoff.kind}"


def notice_message(stored: StoredSchedule, handoff: Handoff, person_zone: str | None = None) -> Message:
    """The `oncall.handoff_notice` message for one person at one boundary. Its words show times in
    the person's own zone when they chose one, else in the schedule's (the zone is always named)."""
    schedule = stored.schedule
    words = render_notice(handoff, schedule_name=schedule.name, time_zone=person_zone or schedule.time_zone)
    payload: dict[str, Any] = {
        "user_id": handoff.user_id,
        "schedule_id": schedule.schedule_id,
        "schedule_name": schedule.name,
        "kind": handoff.kind,
        "at": format_moment(handoff.at),
        "shift_ends_at": format_moment(handoff.shift_ends_at) if handoff.shift_ends_at is not None else None,
        "time_zone": schedule.time_zone,
        "notice_id": notice_id(schedule.schedule_id, handoff),
        "subject": words.subject,
        "text": words.text,
        "short_text": words.short_text,
    }
    return Message(HANDOFF_NOTICE, stored.organization_id, payload)


def send_due_notices(*, now: datetime) -> NoticeRun:
    """Publish the notices of every boundary due by `now` and plan each schedule's next one."""
    run = NoticeRun()
    for key in ScheduleRecord.by_next_notice.query(NOTICE_SHARD, ScheduleRecord.next_notice_at <= now):
        try:
            record = ScheduleRecord.get(key.organization_id, key.schedule_id, consistent_read=True)
        except DoesNotExist:
            continue  # deleted since the index was read
        try:
            for _ in range(MAX_BOUNDARIES_PER_RUN):
                if record.next_notice_at is None or record.next_notice_at > now or not _step(record, now, run):
                    break
        except Exception:  # one schedule's failure holds up no other; a claimed boundary is retried after LEASE
            logger.exception("handoff notices failed", extra={"schedule_id": key.schedule_id})
            run.failed += 1
    if run.published or run.late or run.failed:
        logger.info("handoff notices", extra=run.as_dict())
    return run


def _step(record: ScheduleRecord, now: datetime, run: NoticeRun) -> bool:
    """Handle the look `record` is due for; True when it moved on (the record holds the result)."""
    stored = to_domain(record)
    schedule, lead = stored.schedule, stored.handoff_notice_lead_minutes
    boundary = record.notice_boundary
    read = (ScheduleRecord.next_notice_at == record.next_notice_at) & (ScheduleRecord.version == record.version)
    if boundary is None or now - boundary > MAX_LATENESS:
        if boundary is not None:
            run.late += 1
        after = max(resume_after(record) or now, now - MAX_LATENESS)
        return _advance(record, next_notice(schedule, after, lead), read, run)
    if not update_unversioned_if(record, [ScheduleRecord.next_notice_at.set(now + LEASE)], read):
        run.lost += 1
        return False
    claim = (
        (ScheduleRecord.next_notice_at == record.next_notice_at)
        & (ScheduleRecord.notice_boundary == boundary)
        & (ScheduleRecord.version == record.version)
    )
    handoffs = changes_at(schedule, boundary)
    people = get_users(organization_id=stored.organization_id, user_ids=[handoff.user_id for handoff in handoffs])
    messages = [
        notice_message(stored, handoff, people[handoff.user_id].time_zone if handoff.user_id in people else None)
        for handoff in handoffs
    ]
    for message in messages:
        publish(message)  # a failure leaves the claim standing: a run after LEASE publishes again
    run.boundaries += 1
    run.published += len(messages)
    return _advance(record, next_notice(schedule, boundary, lead), claim, run)


def _advance(record: ScheduleRecord, plan: NoticePlan, condition: Condition, run: NoticeRun) -> bool:
    actions = [
        ScheduleRecord.next_notice_at.set(plan.notice_at),
        ScheduleRecord.notice_boundary.set(plan.boundary)
        if plan.boundary is not None
        else ScheduleRecord.notice_boundary.remove(),
    ]
    if not update_unversioned_if(record, actions, condition):
        run.lost += 1
        return False
    return True


class HandoffNoticesFailed(Exception):
    """Raised after a run in which some schedule failed, so the function's error alarm sees it."""
