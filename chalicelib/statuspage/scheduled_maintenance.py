"""Maintenance windows and the scheduler that moves them on their scheduled times.

An open window (scheduled or in progress) carries `due_shard` + `due_at` = its next transition
time, so the scheduler finds due windows with one Query on the sparse due index, however many
windows exist. An in-progress window carries `active_key` (its components show
under_maintenance). Every write is conditional on the version read: two overlapping scheduler
runs, or a run racing an operator's cancel, move a window once. A write that makes the window
start or stop holding components records that in their history (chalicelib/statuspage/history.py)
in the same transaction.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from types import EllipsisType

from pynamodb.exceptions import DoesNotExist

from chalicelib import clock
from chalicelib.errors import Conflict
from chalicelib.settings import Settings
from chalicelib.statuspage import history, rules
from chalicelib.statuspage.announcements import announce_maintenance
from chalicelib.statuspage.repository import get_item, load_structure, page_not_found
from chalicelib.statuspage.structure import check_components
from chalicelib.statuspage.tables import DUE_SHARD, MAINTENANCE_PREFIX, StatusPageItem
from chalicelib.store import RetryableConflict, retry_on_conflict

logger = logging.getLogger("tocsin.statuspage.maintenance")


def _apply_status(item: StatusPageItem, status: str, now: datetime) -> None:
    """Set the status and the index keys that follow from it."""
    item.status = status
    item.active_key = item.item_key if status == "in_progress" else None
    due = rules.next_due_at(status, start=item.scheduled_start, end=item.scheduled_end)
    item.due_shard = DUE_SHARD if due is not None else None
    item.due_at = f"{clock.isoformat(due)}#{item.page_id}#{item.item_key}" if due is not None else None
    item.updated_at = now


def _save(item: StatusPageItem, held_before: frozenset[str], now: datetime) -> bool:
    """Conditional save, with the history of the components it starts or stops holding (one
    transaction); False when another writer changed the item first."""
    return history.save_with_history(item, history.maintenance_marks(item, held_before, now))


def create_window(
    *,
    page_id: str,
    title: str,
    scheduled_start: datetime,
    scheduled_end: datetime,
    component_ids: list[str],
    now: datetime,
    settings: Settings,
) -> StatusPageItem:
    scheduled_start, scheduled_end = scheduled_start.astimezone(UTC), scheduled_end.astimezone(UTC)
    rules.check_window(scheduled_start, scheduled_end)
    structure = load_structure(page_id)
    if structure is None:
        raise page_not_found()
    item = StatusPageItem(
        page_id,
        MAINTENANCE_PREFIX + rules.new_id("mnt", now),
        name=title,
        scheduled_start=scheduled_start,
        scheduled_end=scheduled_end,
        component_ids=check_components(structure, component_ids),
        created_at=now,
    )
    # A window created with its start already passed begins (or ends) at once.
    _apply_status(
        item, rules.due_maintenance_status("scheduled", start=scheduled_start, end=scheduled_end, now=now), now
    )
    if not _save(item, frozenset(), now):  # a fresh random id: only a duplicate delivery of this very write gets here
        raise Conflict("The maintenance window could not be created; retry.")
    announce_maintenance(
        page_id, item, previous_status=None, now=now, settings=settings
    )  # after the write: the page's subscribers
    return item


def get_window(*, page_id: str, maintenance_id: str) -> StatusPageItem:
    return get_item(page_id, MAINTENANCE_PREFIX, maintenance_id, "mnt", "Maintenance window")


def update_window(
    *,
    page_id: str,
    maintenance_id: str,
    now: datetime,
    title: str | EllipsisType = ...,
    scheduled_start: datetime | EllipsisType = ...,
    scheduled_end: datetime | EllipsisType = ...,
    component_ids: list[str] | EllipsisType = ...,
    status: str | EllipsisType = ...,
    settings: Settings,
) -> StatusPageItem:
    """Retitle, reschedule, change components, or move (start early, complete, cancel). A final
    window (completed, cancelled) accepts only a new title."""
    affected: list[str] | None = None
    if component_ids is not ...:
        structure = load_structure(page_id)
        if structure is None:
            raise page_not_found()
        affected = check_components(structure, component_ids)

    previous: list[str] = []  # the status the winning attempt moved from
    times_moved: list[bool] = []  # whether it changed the window's start or end

    def attempt() -> StatusPageItem:
        item = get_window(page_id=page_id, maintenance_id=maintenance_id)
        current = item.status or "scheduled"
        previous[:] = [current]
        held_before = history.held_components(current, item.component_ids)
        times_before = (item.scheduled_start, item.scheduled_end)
        if scheduled_start is not ... or scheduled_end is not ... or affected is not None:
            rules.check_reschedulable(current)
        if status is not ... and status != current:
            rules.check_maintenance_move(current, status)
        if title is not ...:
            item.name = title
        if scheduled_start is not ...:
            item.scheduled_start = scheduled_start.astimezone(UTC)
        if scheduled_end is not ...:
            item.scheduled_end = scheduled_end.astimezone(UTC)
        rules.check_window(item.scheduled_start, item.scheduled_end)
        if affected is not None:
            item.component_ids = affected
        times_moved[:] = [(item.scheduled_start, item.scheduled_end) != times_before]
        _apply_status(item, status if status is not ... else current, now)
        if not _save(item, held_before, now):
            raise RetryableConflict()
        return item

    item = retry_on_conflict(attempt, what="maintenance window")
    announce_maintenance(
        page_id, item, previous_status=previous[0], now=now, times_moved=times_moved[0], settings=settings
    )
    return item


def list_windows(*, page_id: str) -> list[StatusPageItem]:
    """Newest first; one Query on the page's windows."""
    return list(
        StatusPageItem.query(page_id, StatusPageItem.item_key.startswith(MAINTENANCE_PREFIX), scan_index_forward=False)
    )


@dataclass(frozen=True)
class SchedulerRun:
    started: int
    completed: int
    skipped: int  # changed by someone else between the Query and the write


def run_scheduler(*, now: datetime, settings: Settings) -> SchedulerRun:
    """Move every due window: one Query on the due index, then one conditional write per window."""
    started = completed = skipped = 0
    horizon = clock.isoformat(now) + "#~"  # '~' sorts after every page id: every key due by now
    for key in StatusPageItem.due_index.query(DUE_SHARD, StatusPageItem.due_at <= horizon):
        try:
            item = StatusPageItem.get(key.page_id, key.item_key, consistent_read=True)
        except DoesNotExist:
            skipped += 1  # its page was deleted
            continue
        if item.status not in rules.OPEN_MAINTENANCE_STATUSES:
            skipped += 1
            continue
        target = rules.due_maintenance_status(
            item.status or "", start=item.scheduled_start, end=item.scheduled_end, now=now
        )
        if target == item.status:
            skipped += 1  # rescheduled later since the index entry was read
            continue
        previous = item.status
        held_before = history.held_components(item.status, item.component_ids)
        _apply_status(item, target, now)
        if not _save(item, held_before, now):
            skipped += 1
            continue
        announce_maintenance(item.page_id, item, previous_status=previous, now=now, settings=settings)
        if target == "in_progress":
            started += 1
        else:
            completed += 1
    if started or completed:
        logger.info("maintenance windows moved", extra={"started": started, "completed": completed})
    return SchedulerRun(started, completed, skipped)
