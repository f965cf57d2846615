"""The alert lists: one index Query (by incident, by service, or by organization), newest first.

Lists are read off the request path of deliveries, so a Query here is fine; each reads one
partition of one index, narrowed by the time range on its sort key.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

from chalicelib import clock
from chalicelib.alert.models import DEFAULT_DAYS, AlertListQuery, IncidentAlertQuery
from chalicelib.alert.tables import AlertRecord, incident_ref, service_ref
from chalicelib.pagination import Page, paginate

__all__ = ["AlertRecord", "Page", "incident_alerts", "list_alerts", "triggered_alerts"]


def list_alerts(
    *, organization_id: str, query: AlertListQuery, service_key: str | None, now: datetime
) -> Page[AlertRecord]:
    since, until = query.since, query.until
    if since is None and until is None:
        since = now - timedelta(days=DEFAULT_DAYS)
    condition = _time_range(since, until)
    found: Iterator[AlertRecord]
    if query.incident_number:
        found = AlertRecord.by_incident.query(
            incident_ref(organization_id, query.incident_number), condition, scan_index_forward=False
        )
    elif service_key:
        found = AlertRecord.by_service.query(
            service_ref(organization_id, service_key), condition, scan_index_forward=False
        )
    else:
        found = AlertRecord.by_organization.query(organization_id, condition, scan_index_forward=False)
    matches = [
        record
        for record in found
        if (not query.status or record.status in query.status)
        and (service_key is None or record.service_key == service_key)
    ]
    return paginate(matches, limit=query.limit, offset=query.offset)


def incident_alerts(*, organization_id: str, incident_number: str, query: IncidentAlertQuery) -> Page[AlertRecord]:
    found = AlertRecord.by_incident.query(incident_ref(organization_id, incident_number), scan_index_forward=False)
    matches = [record for record in found if not query.status or record.status in query.status]
    return paginate(matches, limit=query.limit, offset=query.offset)


def triggered_alerts(*, organization_id: str, incident_number: str) -> list[AlertRecord]:
    return [
        record
        for record in AlertRecord.by_incident.query(incident_ref(organization_id, incident_number))
        if record.status == "triggered"
    ]


def _time_range(since: datetime | None, until: datetime | None) -> Any:
    # received_sort is "<ISO time>#<alert id>": "#" < "~", so "~" closes an inclusive upper bound.
    sort_key = AlertRecord.received_sort
    if since is not None and until is not None:
        return sort_key.between(clock.isoformat(since), clock.isoformat(until) + "~")
    if since is not None:
        return sort_key >= clock.isoformat(since)
    if until is not None:
        return sort_key <= clock.isoformat(until) + "~"
    return None
