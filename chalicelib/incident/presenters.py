"""Incident records to API models."""

from __future__ import annotations

from collections.abc import Sequence

from chalicelib import clock
from chalicelib.incident.models import (
    AssigneeV1,
    IncidentDetailV1,
    IncidentPagingV1,
    IncidentSlaV1,
    IncidentV1,
    RecentChangeV1,
    TeamRefV1,
    TimelineEntryV1,
    TimelineMetaV1,
)
from chalicelib.incident.paging_status import view_of
from chalicelib.incident.repository import IncidentWithTimeline
from chalicelib.incident.tables import IncidentRecord, TimelineRecord
from chalicelib.incident.urgency import urgency_of


def incident_v1(record: IncidentRecord) -> IncidentV1:
    return IncidentV1(**_fields(record))


def _fields(record: IncidentRecord) -> dict[str, object]:
    assigned = (
        AssigneeV1(name=record.assigned_name, email=record.assigned_email)
        if record.assigned_email or record.assigned_name
        else None
    )
    sla = record.sla or {}
    source = record.source if isinstance(record.source, dict) else {}
    return {
        "incident_number": record.incident_number,
        "title": record.title,
        "description": record.description,
        "status": record.status,
        "severity": record.severity,
        "assigned_to": assigned,
        "team": TeamRefV1(name=record.team_name) if record.team_name else None,
        "created_at": record.created_at,
        "acknowledged_at": record.acknowledged_at,
        "resolved_at": record.resolved_at,
        "service_keys": [str(key) for key in record.service_keys or []],
        "resolved_by": AssigneeV1(name=record.resolved_by_name, email=record.resolved_by_email)
        if record.resolved_at is not None
        else None,
        "sla": IncidentSlaV1(
            acknowledge_due_at=clock.parse(sla["acknowledge_due_at"]) if sla.get("acknowledge_due_at") else None,
            acknowledge_met=sla.get("acknowledge_met"),
            resolve_due_at=clock.parse(sla["resolve_due_at"]) if sla.get("resolve_due_at") else None,
            resolve_met=sla.get("resolve_met"),
        )
        if sla
        else None,
        "urgency": urgency_of(record),
        "source_url": _text(source.get("source_url")),
        "runbook_url": _text(source.get("runbook_url")),
    }


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def timeline_entry_v1(entry: TimelineRecord) -> TimelineEntryV1:
    return TimelineEntryV1(
        event_type=entry.event_type,
        title=entry.title,
        description=entry.description,
        user=entry.user,
        created_at=entry.created_at,
    )


def paging_v1(record: IncidentRecord) -> IncidentPagingV1:
    view = view_of(record)
    return IncidentPagingV1(
        status=view.status, reason=view.reason, level=view.level, fallback_contacts=list(view.fallback_contacts)
    )


def incident_detail_v1(found: IncidentWithTimeline, recent_changes: Sequence[RecentChangeV1] = ()) -> IncidentDetailV1:
    return IncidentDetailV1(
        **_fields(found.incident),
        paging=paging_v1(found.incident),
        timeline=[timeline_entry_v1(entry) for entry in found.timeline],
        timeline_meta=TimelineMetaV1(has_more=found.has_more),
        details=_details(found.incident),
        recent_changes=list(recent_changes),
    )


def _details(record: IncidentRecord) -> dict[str, object]:
    details = record.source.get("details") if isinstance(record.source, dict) else None
    return dict(details) if isinstance(details, dict) else {}
