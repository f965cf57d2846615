"""Reading the rollups back: one Query per month partition of a dimension kind, on the range of
hours (its cost is the range's hours times the values they hold, never the history)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from chalicelib.insights import periods, rollups
from chalicelib.insights.incident_metrics import HourItem
from chalicelib.insights.tables import RollupRecord


def month_starts(span: periods.Range) -> list[datetime]:
    start = span.since.astimezone(UTC).replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    found = []
    while start < span.until:
        found.append(start)
        start = (start + timedelta(days=32)).replace(day=1)
    return found


def hour_items(organization_id: str, kind: str, span: periods.Range) -> list[HourItem]:
    low = rollups.hour_label(span.since)
    high = rollups.hour_label(span.until - timedelta(hours=1)) + "#\uffff"
    items: list[HourItem] = []
    for month in month_starts(span):
        partition = rollups.partition(organization_id, kind, month)
        for record in RollupRecord.query(partition, RollupRecord.slot.between(low, high)):
            hour, _, value = record.slot.partition("#")
            items.append(HourItem(rollups.parse_hour(hour), value, record.counters()))
    return items


def totals(organization_id: str) -> dict[str, dict[str, int]]:
    """The all-time totals (`<kind>#<value>` -> counters): one Query, as many items as the
    organization has services x severities, channels and outcomes."""
    return {record.slot: record.counters() for record in RollupRecord.query(rollups.total_partition(organization_id))}
