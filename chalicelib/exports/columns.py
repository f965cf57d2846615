"""Every export's columns, in order: name, type and meaning. Pure data.

docs/EXPORTS.md lists the same columns (tests/unit/test_export_columns.py holds them equal), so
a column is described once here and once for readers. Types: `string`, `integer`, `number`
(decimal), `boolean`, `datetime` (RFC 3339 in UTC, milliseconds, `Z`), `list` (strings: `;`
between them in CSV, an array in NDJSON). An empty CSV cell is an NDJSON `null`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

ColumnType = Literal["string", "integer", "number", "boolean", "datetime", "list"]
ExportKind = Literal["incidents", "alerts", "notifications", "shifts"]
EXPORT_KINDS: tuple[ExportKind, ...] = ("incidents", "alerts", "notifications", "shifts")


@dataclass(frozen=True)
class Column:
    name: str
    type: ColumnType
    meaning: str


INCIDENT_COLUMNS: tuple[Column, ...] = (
    Column("incident_number", "string", "The incident's number, e.g. INC-2026-0042."),
    Column("title", "string", "The incident's title."),
    Column("status", "string", "Its status now (the organization's workflow names it)."),
    Column("status_category", "string", "The status's category now: triggered, acknowledged or resolved."),
    Column("severity", "string", "Its severity now, SEV0 (worst) to SEV4."),
    Column("urgency", "string", "high or low; empty for incidents stored before urgency existed."),
    Column("service_keys", "list", "The keys of the services it concerns."),
    Column("team_id", "string", "The team it belongs to, if any."),
    Column("team_name", "string", "That team's name when it was set."),
    Column("assigned_user_id", "string", "The person it is assigned to, if any."),
    Column("assigned_email", "string", "That person's email."),
    Column("created_at", "datetime", "When it opened. The export's range selects on this time."),
    Column("acknowledged_at", "datetime", "When it was first acknowledged; empty if never."),
    Column("acknowledged_by", "string", "Who acknowledged it (an email or a name)."),
    Column("resolved_at", "datetime", "When it was resolved; empty while it is not."),
    Column("resolved_by_email", "string", "Who resolved it."),
    Column("seconds_to_acknowledge", "integer", "acknowledged_at minus created_at, in whole seconds."),
    Column("seconds_to_resolve", "integer", "resolved_at minus created_at, in whole seconds."),
    Column("alert_count", "integer", "Alerts received for it, repeats included (0 for a manual incident)."),
    Column("source_integration_id", "string", "The integration whose alert opened it; empty for a manual one."),
)

ALERT_COLUMNS: tuple[Column, ...] = (
    Column("alert_id", "string", "The alert's id."),
    Column("first_received_at", "datetime", "When its first event arrived. The export's range selects on this time."),
    Column("last_received_at", "datetime", "When its latest event arrived."),
    Column("resolved_at", "datetime", "When it resolved; empty while it has not."),
    Column("status", "string", "triggered, resolved or suppressed."),
    Column("suppressed_by", "string", "Why it was suppressed: maintenance or event_rule; empty otherwise."),
    Column("severity", "string", "Its severity, SEV0 (worst) to SEV4."),
    Column("service_key", "string", "The service it was routed to."),
    Column("integration_id", "string", "The integration that received it; empty for a heartbeat's."),
    Column("integration_name", "string", "That integration's (or heartbeat's) name."),
    Column("integration_type", "string", "Its type (prometheus, datadog, custom, heartbeat...)."),
    Column("source", "string", "The monitoring source the payload named."),
    Column("dedup_key", "string", "The key repeats were deduplicated on."),
    Column("title", "string", "The alert's title."),
    Column("incident_number", "string", "The incident it opened or joined; empty if none."),
    Column("grouped", "boolean", "true when grouping added it to an incident another alert opened."),
    Column("event_count", "integer", "Events received for it (1 plus the deduplicated repeats)."),
)

NOTIFICATION_COLUMNS: tuple[Column, ...] = (
    Column("sent_at", "datetime", "When the page went out, was digested or failed. The range selects on it."),
    Column("incident_number", "string", "The incident the page was about."),
    Column("outcome", "string", "sent, digested (held for the person's digest by the budget) or failed."),
    Column("channel", "string", "email, sms, voice, slack, push...; empty when nothing could be tried."),
    Column("recipient_user_id", "string", "The person paged; empty when the timeline did not name them."),
    Column("recipient_name", "string", "Their name."),
    Column("recipient_email", "string", "Their email."),
    Column("urgency", "string", "The page's urgency: high or low."),
    Column("error_code", "string", "For a failure: why (CONTACT_DETAILS_MISSING, DELIVERY_FAILED...)."),
    Column("description", "string", "The timeline's words for it."),
)

SHIFT_COLUMNS: tuple[Column, ...] = (
    Column("schedule_id", "string", "The schedule."),
    Column("schedule_name", "string", "Its name."),
    Column("team_id", "string", "The schedule's team, if any."),
    Column("user_id", "string", "The person on call."),
    Column("user_name", "string", "Their name."),
    Column("user_email", "string", "Their email."),
    Column("source", "string", "layer (the rotation) or override."),
    Column("start", "datetime", "The shift's start, clipped to the range."),
    Column("end", "datetime", "The shift's end, clipped to the range."),
    Column("time_zone", "string", "The zone the hours below are counted in: the person's, else the organization's."),
    Column("hours", "number", "end minus start, in hours (2 decimals)."),
    Column("off_hours", "number", "Hours on a weekday outside 09:00-18:00 in time_zone."),
    Column("weekend_hours", "number", "Hours on a Saturday or Sunday in time_zone."),
)

COLUMNS: dict[ExportKind, tuple[Column, ...]] = {
    "incidents": INCIDENT_COLUMNS,
    "alerts": ALERT_COLUMNS,
    "notifications": NOTIFICATION_COLUMNS,
    "shifts": SHIFT_COLUMNS,
}
