"""The coverage check: owners are told, once per gap, that a schedule or policy pages nobody.

Every minute (`check-coverage` in app.py; locally the worker loop's ScheduleWorker) one Query on
the sparse `coverage-due-index` (chalicelib.oncall.coverage_watch) finds the schedules and
policies to look at: those written since the last look, and the others every CHECK_EVERY (6 h),
so a gap that comes within the 14-day horizon as days pass is found too. For each:

1. Read its watch item (consistent) and the subject; a subject deleted since is forgotten.
2. Its gaps over the check window (a day back to find when a gap on now began, 14 days ahead),
   those not over yet; each named by its start (`gap_id`, chalicelib.oncall.coverage).
3. The gaps whose id the item does not hold yet are new: one `oncall.coverage_notice` message per
   owner lists them. Owners: for a schedule, its team's members who are owners or admins; without a
   team (or none of them), the organization's owners and admins; for a policy, the organization's.
4. Settle the item: the current gap ids, and the next look CHECK_EVERY later (conditional on the
   `check_at` read). A schedule's look also marks the policies targeting it due: their coverage
   follows the schedule's.

Publishing comes before settling: a run that dies in between publishes again next time with the
same notice id (the new gaps' ids), which the consumer (chalicelib.paging.coverage_notices) sends
once per person.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from datetime import datetime

from chalicelib import clock
from chalicelib.directory.teams import get_team
from chalicelib.directory.users import User, get_users, list_users
from chalicelib.errors import NotFound
from chalicelib.escalation import service as policies
from chalicelib.escalation.coverage_read import policies_gaps
from chalicelib.oncall import coverage_watch
from chalicelib.oncall.coverage import carried_ids, check_window, gap_id
from chalicelib.oncall.coverage_read import load_gaps
from chalicelib.oncall.intervals import Span
from chalicelib.oncall.service import get_schedule
from chalicelib.oncall.tables import CoverageWatchRecord
from chalicelib.queue.messages import Message, publish

logger = logging.getLogger("tocsin.paging.coverage")

COVERAGE_NOTICE = "oncall.coverage_notice"
MAX_PER_RUN = 50
OWNER_ROLES = ("owner", "admin")


class CoverageCheckFailed(Exception):
    """Some subjects could not be checked; they stay due and the next run tries again."""


@dataclass
class CoverageRun:
    checked: int = 0
    notices: int = 0  # messages published
    lost: int = 0  # another run or a write moved the item first
    failed: int = 0

    def as_dict(self) -> dict[str, int]:
        return dict(vars(self))


@dataclass(frozen=True)
class Subject:
    kind: str
    subject_id: str
    name: str
    gaps: list[Span]
    levels: list[tuple[int, ...]]  # a policy's levels per gap
    team_id: str | None = None


def _owners(organization_id: str, team_id: str | None) -> list[User]:
    """The team's owners and admins, else the organization's (active ones)."""
    if team_id:
        try:
            members = get_team(organization_id=organization_id, team_id=team_id).member_ids
        except NotFound:
            members = []
        found = get_users(organization_id=organization_id, user_ids=members) if members else {}
        owners = [user for user in found.values() if user.is_active and user.role in OWNER_ROLES]
        if owners:
            return owners
    return [user for user in list_users(organization_id=organization_id, is_active=True) if user.role in OWNER_ROLES]


def _subject(organization_id: str, record: CoverageWatchRecord, window: Span, now: datetime) -> Subject | None:
    """The subject and its gaps not over yet, or None when it no longer exists."""
    try:
        if record.kind == "schedule":
            schedule = get_schedule(organization_id=organization_id, schedule_id=record.subject_id).schedule
            gaps = load_gaps(organization_id=organization_id, schedules=[schedule], window=window).gaps
            using = policies.policies_using_schedule(organization_id=organization_id, schedule_id=schedule.schedule_id)
            coverage_watch.mark_many_due(organization_id, "policy", using, now)
            spans = [span for span in gaps[schedule.schedule_id] if span[1] > now]
            return Subject("schedule", schedule.schedule_id, schedule.name, spans, [], schedule.team_id)
        policy = policies.get_policy(organization_id=organization_id, policy_id=record.subject_id).policy
        found = [
            gap
            for gap in policies_gaps(organization_id=organization_id, policies=[policy], window=window)[
                policy.policy_id
            ]
            if gap.end > now
        ]
        return Subject(
            "policy", policy.policy_id, policy.name, [(g.start, g.end) for g in found], [g.levels for g in found]
        )
    except NotFound:
        coverage_watch.forget(organization_id, "policy" if record.kind == "policy" else "schedule", record.subject_id)
        return None


def notice_id(organization_id: str, subject: str, new_ids: list[str]) -> str:
    digest = hashlib.sha256("\x00".join(sorted(new_ids)).encode()).hexdigest()[:16]
    return f"{organization_id}#{subject}#{digest}"


def check_one(organization_id: str, subject_key: str, now: datetime, run: CoverageRun) -> None:
    record = coverage_watch.read_watch(organization_id, subject_key)
    if record is None or record.check_at is None or record.check_at > now:
        run.lost += 1
        return
    window = check_window(now)
    subject = _subject(organization_id, record, window, now)
    if subject is None:
        return
    run.checked += 1
    ids = [gap_id(start, window[0]) for start, _ in subject.gaps]
    told = carried_ids(record.noticed or (), window[0])
    new = [index for index, found in enumerate(ids) if found not in told]
    if new:
        payload = {
            "kind": subject.kind,
            "subject_id": subject.subject_id,
            "name": subject.name,
            "notice_id": notice_id(organization_id, subject_key, [ids[i] for i in new]),
            "gaps": [[clock.isoformat(subject.gaps[i][0]), clock.isoformat(subject.gaps[i][1])] for i in new],
            "levels": [list(subject.levels[i]) for i in new] if subject.levels else [],
        }
        for owner in _owners(organization_id, subject.team_id):
            publish(Message(COVERAGE_NOTICE, organization_id, {**payload, "user_id": owner.user_id}))
            run.notices += 1
    settled = coverage_watch.settle(
        record, seen_check_at=record.check_at, next_at=now + coverage_watch.CHECK_EVERY, noticed=ids
    )
    if not settled:
        run.lost += 1


def check_due(*, now: datetime) -> CoverageRun:
    """Look at every due schedule and policy (at most MAX_PER_RUN; the rest next run)."""
    run = CoverageRun()
    for organization_id, subject_key in coverage_watch.due_watches(now, MAX_PER_RUN):
        try:
            check_one(organization_id, subject_key, now, run)
        except Exception:
            logger.exception(
                "coverage check failed", extra={"organization_id": organization_id, "subject": subject_key}
            )
            run.failed += 1
    return run
