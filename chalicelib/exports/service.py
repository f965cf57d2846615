"""One page of an export: read in order, filtered, and where the next page starts.

Incidents, alerts and notifications are read by Query on an organization+time index, oldest
first, in DynamoDB pages of READ_PAGE items, never more than the page needs (plus what filters
drop, at most MAX_EXAMINED_PER_ROW times the page size, after which a shorter page is answered
with its cursor): memory holds one page whatever the range. Shifts are computed one schedule at a
time from the schedules' final shifts (chalicelib.oncall.rotation.final_shifts: layers,
overrides and swaps applied), clipped to the range.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from chalicelib import clock
from chalicelib.alert.tables import AlertRecord
from chalicelib.exports import cursors
from chalicelib.exports.requests import ExportRequest
from chalicelib.exports.rows import ExportRow, alert_row, incident_row, notification_rows
from chalicelib.exports.shifts import shift_rows
from chalicelib.incident.tables import NOTIFICATION_SORT_PREFIX, IncidentRecord, TimelineRecord
from chalicelib.settings import Settings

READ_PAGE = 500
MAX_EXAMINED_PER_ROW = 10


@dataclass(frozen=True)
class ExportPage:
    rows: list[ExportRow]
    next_cursor: str | None


class _Reading:
    """A Query's records with the key of the last one taken (DynamoDB's LastEvaluatedKey form)."""

    def __init__(self, iterator: Any) -> None:
        self._iterator = iterator

    def __iter__(self) -> Iterator[Any]:
        return iter(self._iterator)

    @property
    def last_key(self) -> dict[str, Any] | None:
        key: dict[str, Any] | None = self._iterator.last_evaluated_key
        return key


def _query(request: ExportRequest, start: dict[str, Any] | None) -> _Reading:
    lo, hi = clock.isoformat(request.since), clock.isoformat(request.until)
    org = request.organization_id
    found: Any
    if request.kind == "incidents":
        condition = IncidentRecord.created_sort.between(lo, hi)
        found = IncidentRecord.by_organization_time.query(org, condition, last_evaluated_key=start, page_size=READ_PAGE)
    elif request.kind == "alerts":
        condition = AlertRecord.received_sort.between(lo, hi)
        found = AlertRecord.by_organization.query(org, condition, last_evaluated_key=start, page_size=READ_PAGE)
    else:
        prefix = NOTIFICATION_SORT_PREFIX
        condition = TimelineRecord.created_sort.between(prefix + lo, prefix + hi)
        found = TimelineRecord.notifications_by_time.query(
            org, condition, last_evaluated_key=start, page_size=READ_PAGE
        )
    return _Reading(found)


_TO_ROWS: dict[str, Callable[[Any], list[ExportRow]]] = {
    "incidents": lambda record: [incident_row(record)],
    "alerts": lambda record: [alert_row(record)],
    "notifications": notification_rows,
}


def _indexed_page(
    request: ExportRequest, start: dict[str, Any] | None, limit: int, *, settings: Settings
) -> ExportPage:
    reading = _query(request, start)
    to_rows = _TO_ROWS[request.kind]
    rows: list[ExportRow] = []
    for examined, record in enumerate(reading, start=1):
        rows.extend(row for row in to_rows(record) if request.keeps(row))
        if len(rows) >= limit or examined >= limit * MAX_EXAMINED_PER_ROW:
            last = reading.last_key
            return ExportPage(rows, cursors.encode(request, {"key": last}, settings=settings) if last else None)
    return ExportPage(rows, None)


def _shift_page(
    request: ExportRequest, position: dict[str, Any] | None, limit: int, *, settings: Settings
) -> ExportPage:
    rows: list[ExportRow] = []
    after = (str(position.get("schedule_id", "")), int(position.get("position", -1))) if position else None
    for schedule_id, index, row in _kept(request, shift_rows(request, after=after)):
        rows.append(row)
        if len(rows) >= limit:
            return ExportPage(
                rows, cursors.encode(request, {"schedule_id": schedule_id, "position": index}, settings=settings)
            )
    return ExportPage(rows, None)


def _kept(request: ExportRequest, found: Iterable[tuple[str, int, ExportRow]]) -> Iterator[tuple[str, int, ExportRow]]:
    return (item for item in found if request.keeps(item[2]))


def export_page(request: ExportRequest, *, cursor: str | None, limit: int, settings: Settings) -> ExportPage:
    """Rows of `request` from `cursor` (None: the first page), at most `limit` of them (a page
    may hold fewer, even none, and still have a next cursor; a notification's channels stay on
    one page, so it may hold a few more)."""
    position = cursors.decode(request, cursor, settings=settings) if cursor is not None else None
    if request.kind == "shifts":
        return _shift_page(request, position, limit, settings=settings)
    start = position.get("key") if position else None
    if start is not None and not _is_key(start):
        raise cursors.bad_cursor()
    return _indexed_page(request, start, limit, settings=settings)


def _is_key(value: Any) -> bool:
    """DynamoDB's key form: {"name": {"S": "..."}} (a signed cursor only ever holds ours)."""
    return isinstance(value, dict) and all(
        isinstance(v, dict) and set(v) == {"S"} and isinstance(v["S"], str) for v in value.values()
    )
