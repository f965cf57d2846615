"""Component history: every change of what a component shows, kept for the uptime figures.

Two kinds of item, both `HIST#<ISO time>#<hst id>` in the page's partition (see tables.py):
- `change = "status"`: the component's own status moved from `previous_status` (none when the
  component was created) to `status`: component create and PATCH, and incidents' updates that
  set component statuses;
- `change = "maintenance_began" | "maintenance_ended"`: a maintenance window started or
  stopped holding the components in `component_ids` (`under_maintenance` is derived from in-progress windows, never
  stored on the component, so its history is the windows' moves: start, complete, cancel, a
  change of an in-progress window's components).

Every history item is written in the SAME transaction as the change it records (`save_with_history`),
so a failed or retried write leaves neither or both. The time comes first in the sort key, so
the last 90 days of the whole page are one Query whose cost grows with the changes in that
period, not with the page's age.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from chalicelib import clock
from chalicelib.statuspage import rules
from chalicelib.statuspage.tables import HISTORY_PREFIX, StatusPageItem
from chalicelib.statuspage.uptime import MaintenanceMark, StatusChange
from chalicelib.store import Transaction, TransactionCancelled, save_if

STATUS_CHANGE = "status"
MAINTENANCE_BEGAN = "maintenance_began"
MAINTENANCE_ENDED = "maintenance_ended"
_AFTER_EVERY_TIME = "~"  # sorts after any ISO time


def _key(now: datetime) -> str:
    # The hst id strictly increases within a process, so two changes at one instant keep their order.
    return f"{HISTORY_PREFIX}{clock.isoformat(now)}#{rules.new_id('hst', now)}"


def status_change(
    page_id: str, component_id: str, *, previous: str | None, status: str, now: datetime
) -> StatusPageItem:
    return StatusPageItem(
        page_id,
        _key(now),
        change=STATUS_CHANGE,
        component_id=component_id,
        previous_status=previous,
        status=status,
        created_at=now,
    )


def held_components(status: str | None, component_ids: Iterable[str] | None) -> frozenset[str]:
    """The components a window holds in `status`: its components while in progress, else none."""
    return frozenset(component_ids or ()) if status == "in_progress" else frozenset()


def maintenance_marks(window: StatusPageItem, held_before: frozenset[str], now: datetime) -> list[StatusPageItem]:
    """At most two items: the components the window stops holding with this write, and those it
    starts holding (one item each, naming them all: a window may hold 100 components and a
    transaction takes 100 items)."""
    held_after = held_components(window.status, window.component_ids)
    maintenance_id = window.item_key.rsplit("#", 1)[-1]
    marks = []
    for change, component_ids in (
        (MAINTENANCE_ENDED, held_before - held_after),
        (MAINTENANCE_BEGAN, held_after - held_before),
    ):
        if component_ids:
            marks.append(
                StatusPageItem(
                    window.page_id,
                    _key(now),
                    change=change,
                    component_ids=sorted(component_ids),
                    maintenance_id=maintenance_id,
                    scheduled_start=window.scheduled_start,
                    created_at=now,
                )
            )
    return marks


def save_with_history(item: StatusPageItem, history: list[StatusPageItem]) -> bool:
    """Save `item` (conditional on its version, as `save_if`) and put the history items in the
    same transaction. False when another writer changed the item first: nothing was written."""
    if not history:
        return save_if(item)
    tx = Transaction()
    tx.put("item", item)
    for index, entry in enumerate(history):
        tx.put(f"history-{index}", entry)  # a new item: conditional on its absence (its version)
    try:
        tx.commit()
    except TransactionCancelled as cancelled:
        if cancelled.retryable:
            return False
        raise
    return True


def load_since(page_id: str, since: datetime) -> list[StatusPageItem]:
    """Every history item of the page from `since` on, oldest first: one Query on the partition."""
    return list(
        StatusPageItem.query(
            page_id,
            StatusPageItem.item_key.between(
                f"{HISTORY_PREFIX}{clock.isoformat(since)}", f"{HISTORY_PREFIX}{_AFTER_EVERY_TIME}"
            ),
        )
    )


def changes_by_component(items: Iterable[StatusPageItem]) -> dict[str, list[StatusChange]]:
    found: dict[str, list[StatusChange]] = {}
    for item in items:
        if item.change == STATUS_CHANGE and item.component_id and item.status:
            found.setdefault(item.component_id, []).append(
                StatusChange(item.created_at, item.previous_status, item.status)
            )
    return found


def marks_by_component(items: Iterable[StatusPageItem]) -> dict[str, list[MaintenanceMark]]:
    found: dict[str, list[MaintenanceMark]] = {}
    for item in items:
        if item.change not in (MAINTENANCE_BEGAN, MAINTENANCE_ENDED) or not item.maintenance_id:
            continue
        for component_id in item.component_ids or []:
            found.setdefault(component_id, []).append(
                MaintenanceMark(
                    item.created_at,
                    item.maintenance_id,
                    component_id,
                    begins=item.change == MAINTENANCE_BEGAN,
                    scheduled_start=item.scheduled_start,
                )
            )
    return found
