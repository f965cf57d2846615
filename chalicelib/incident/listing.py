"""GET /api/v1/incidents: Query the list index by open/closed partition, filter, page.

The default list (no status filter) reads only the organization's open partition: its cost
follows the number of open incidents, never the history. A status filter that names a
resolved or closed status also reads the closed partition; created_after/created_before
narrow that read with the index's sort key, other filters are applied to what was read.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from chalicelib import clock
from chalicelib.incident.models import IncidentListQuery
from chalicelib.incident.tables import IncidentRecord, list_partition
from chalicelib.incident.urgency import urgency_of
from chalicelib.incident.workflow import Workflow, validate_status_filter
from chalicelib.incident.workflow_settings import incident_settings


@dataclass(frozen=True)
class IncidentPage:
    items: list[IncidentRecord]
    total: int
    has_more: bool
    next_offset: int | None
    items_read: int  # what the Queries returned, for the scaling benchmark


def list_incidents(*, organization_id: str, query: IncidentListQuery) -> IncidentPage:
    workflow = incident_settings(organization_id=organization_id).workflow
    statuses = validate_status_filter(workflow, query.status) if query.status else None
    read = 0
    matches: list[IncidentRecord] = []
    for is_open in _partitions(workflow, statuses):
        for record in _query_partition(organization_id, is_open, query.created_after, query.created_before):
            read += 1
            if _matches(record, query, statuses):
                matches.append(record)
    matches.sort(key=lambda r: (r.created_at, r.incident_number), reverse=True)
    window = matches[query.offset : query.offset + query.limit]
    has_more = query.offset + len(window) < len(matches)
    return IncidentPage(
        items=window,
        total=len(matches),
        has_more=has_more,
        next_offset=query.offset + len(window) if has_more else None,
        items_read=read,
    )


def _partitions(workflow: Workflow, statuses: list[str] | None) -> list[bool]:
    if not statuses:
        return [True]  # the spec's default: only incidents still in progress
    wanted = {workflow.is_open(name) for name in statuses}
    return sorted(wanted, reverse=True)


def _query_partition(
    organization_id: str, is_open: bool, after: datetime | None, before: datetime | None
) -> Iterator[IncidentRecord]:
    condition: Any = None
    sort_key = IncidentRecord.created_sort
    # created_sort is "<ISO time>#<number>": "#" < "~", so "~" closes an inclusive upper bound.
    if after is not None and before is not None:
        condition = sort_key.between(clock.isoformat(after), clock.isoformat(before) + "~")
    elif after is not None:
        condition = sort_key >= clock.isoformat(after)
    elif before is not None:
        condition = sort_key <= clock.isoformat(before) + "~"
    yield from IncidentRecord.by_list.query(
        list_partition(organization_id, is_open), range_key_condition=condition, scan_index_forward=False
    )


def _matches(record: IncidentRecord, query: IncidentListQuery, statuses: list[str] | None) -> bool:
    if statuses and record.status not in statuses:
        return False
    if query.severity and record.severity not in query.severity:
        return False
    if query.urgency and urgency_of(record) not in query.urgency:
        return False
    if query.team_name and (record.team_name or "").lower() != query.team_name.lower():
        return False
    if query.assigned_to and (record.assigned_email or "").lower() != query.assigned_to:
        return False
    if query.resolved_by and (record.resolved_by_email or "").lower() != query.resolved_by:
        return False
    if query.created_after and record.created_at < query.created_after:
        return False
    if query.created_before and record.created_at > query.created_before:
        return False
    if query.resolved_after and (record.resolved_at is None or record.resolved_at < query.resolved_after):
        return False
    return not (query.resolved_before and (record.resolved_at is None or record.resolved_at > query.resolved_before))
