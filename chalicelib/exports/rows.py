"""Stored records to export rows, in the columns' names (chalicelib.exports.columns). Pure."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from chalicelib import clock
from chalicelib.alert.tables import AlertRecord
from chalicelib.exports.formats import CellValue
from chalicelib.incident.tables import IncidentRecord, TimelineRecord

ExportRow = dict[str, CellValue]


def _time(moment: datetime | None) -> str | None:
    return clock.isoformat(moment) if moment is not None else None


def _seconds(since: datetime, until: datetime | None) -> int | None:
    return int((until - since).total_seconds()) if until is not None else None


def incident_row(record: IncidentRecord) -> ExportRow:
    source: dict[str, Any] = record.source or {}
    return {
        "incident_number": record.incident_number,
        "title": record.title,
        "status": record.status,
        "status_category": record.status_category,
        "severity": record.severity,
        "urgency": record.urgency,
        "service_keys": [str(key) for key in record.service_keys or []],
        "team_id": record.team_id,
        "team_name": record.team_name,
        "assigned_user_id": record.assigned_user_id,
        "assigned_email": record.assigned_email,
        "created_at": _time(record.created_at),
        "acknowledged_at": _time(record.acknowledged_at),
        "acknowledged_by": record.acknowledged_by,
        "resolved_at": _time(record.resolved_at),
        "resolved_by_email": record.resolved_by_email,
        "seconds_to_acknowledge": _seconds(record.created_at, record.acknowledged_at),
        "seconds_to_resolve": _seconds(record.created_at, record.resolved_at),
        "alert_count": int(record.alert_count or 0),
        "source_integration_id": source.get("integration_id"),
    }


def alert_row(record: AlertRecord) -> ExportRow:
    suppressed: dict[str, Any] = record.suppressed_by or {}
    return {
        "alert_id": record.alert_id,
        "first_received_at": _time(record.first_received_at),
        "last_received_at": _time(record.last_received_at),
        "resolved_at": _time(record.resolved_at),
        "status": record.status,
        "suppressed_by": suppressed.get("kind"),
        "severity": record.severity,
        "service_key": record.service_key,
        "integration_id": record.integration_id,
        "integration_name": record.integration_name,
        "integration_type": record.integration_type,
        "source": record.source,
        "dedup_key": record.dedup_key,
        "title": record.title,
        "incident_number": record.incident_number,
        "grouped": record.grouped == "joined",
        "event_count": int(record.event_count or 1),
    }


def notification_rows(entry: TimelineRecord) -> list[ExportRow]:
    """One row per channel of a notification entry: a page by email and SMS is two rows."""
    details: dict[str, Any] = entry.details or {}
    recipient: dict[str, Any] = details.get("recipient") or {}
    incident_number = entry.incident_key.rpartition("#")[2]
    base: ExportRow = {
        "sent_at": _time(entry.created_at),
        "incident_number": incident_number,
        "recipient_user_id": recipient.get("user_id"),
        "recipient_name": recipient.get("name"),
        "recipient_email": recipient.get("email"),
        "urgency": details.get("urgency"),
        "description": entry.title,
    }
    if entry.event_type == "notification_failed":
        return [
            {**base, "outcome": "failed", "channel": details.get("channel"), "error_code": details.get("error_code")}
        ]
    outcome = "digested" if details.get("digest") else "sent"
    channels: list[str] = list(details.get("channels") or [])
    if not channels:  # a note about a page that names no channel (paging later, by the rules)
        return []
    return [{**base, "outcome": outcome, "channel": channel, "error_code": None} for channel in channels]
