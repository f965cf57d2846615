"""Which schedules and policies the coverage check looks at next, and the gaps it told of.

One item per schedule or policy (`coverage-watch`, chalicelib.oncall.tables, key: organization, `schedule#<id>` or
`policy#<id>`). Every write of a schedule or a policy marks its item due now (`mark_due`, one
UpdateItem after the write; a policy's schedules changing marks the policy from the check), and the
check (chalicelib.paging.coverage_check, every minute) finds the due items with one Query on the
sparse `coverage-due-index`, however many exist, and looks again CHECK_EVERY later: a gap that
comes within the 14-day horizon as days pass is found within that time.

`noticed` holds the ids of the gaps the subject's owners were told of (chalicelib.oncall.coverage
`gap_id`), so each gap is told once. The check settles an item with a conditional update on the
`check_at` it read: of two concurrent runs one settles it, and a notice published twice carries
the same delivery id, which its consumer sends once.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Literal

from pynamodb.exceptions import DoesNotExist

from chalicelib.oncall.tables import COVERAGE_SHARD, CoverageWatchRecord
from chalicelib.store import best_effort, update_unversioned_if

SubjectKind = Literal["schedule", "policy"]
CHECK_EVERY = timedelta(hours=6)
MAX_NOTICED = 200  # ids kept per subject (a schedule with more gaps than that is told of the first ones)


def subject_key(kind: SubjectKind, subject_id: str) -> str:
    return f"{kind}#{subject_id}"


def mark_due(organization_id: str, kind: SubjectKind, subject_id: str, now: datetime) -> None:
    """Look at the subject at the next check (creates its item; keeps what was told)."""
    record = CoverageWatchRecord(organization_id, subject_key(kind, subject_id))
    record.update(actions=[CoverageWatchRecord.due_shard.set(COVERAGE_SHARD), CoverageWatchRecord.check_at.set(now)])


def mark_many_due(organization_id: str, kind: SubjectKind, subject_ids: Iterable[str], now: datetime) -> None:
    for subject_id in dict.fromkeys(subject_ids):
        mark_due(organization_id, kind, subject_id, now)


def forget(organization_id: str, kind: SubjectKind, subject_id: str) -> None:
    """The subject was deleted: nothing to look at any more."""
    with best_effort("forget a coverage watch"):
        CoverageWatchRecord(organization_id, subject_key(kind, subject_id)).delete()


def due_watches(now: datetime, limit: int) -> list[tuple[str, str]]:
    """(organization_id, subject) of the items due by `now`, earliest first: one Query."""
    found = CoverageWatchRecord.by_check_at.query(
        COVERAGE_SHARD, CoverageWatchRecord.check_at <= now, limit=limit, scan_index_forward=True
    )
    return [(record.organization_id, record.subject) for record in found]


def read_watch(organization_id: str, subject: str) -> CoverageWatchRecord | None:
    try:
        return CoverageWatchRecord.get(organization_id, subject, consistent_read=True)
    except DoesNotExist:
        return None


def settle(record: CoverageWatchRecord, *, seen_check_at: datetime, next_at: datetime, noticed: Iterable[str]) -> bool:
    """Remember `noticed` and look again at `next_at`; False (what was told still remembered) when
    another run settled it first or a write marked it due again since it was read: that write's
    check comes next."""
    kept = sorted(set(noticed))[:MAX_NOTICED]
    remember = CoverageWatchRecord.noticed.set(set(kept)) if kept else CoverageWatchRecord.noticed.remove()
    exists = CoverageWatchRecord.subject.exists()
    if update_unversioned_if(
        record,
        [remember, CoverageWatchRecord.check_at.set(next_at)],
        exists & (CoverageWatchRecord.check_at == seen_check_at),
    ):
        return True
    update_unversioned_if(record, [remember], exists)  # keep the record of what was told either way
    return False
