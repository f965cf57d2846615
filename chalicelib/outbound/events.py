"""Outbound events: which events a domain message means, and the JSON body each one sends. Pure.

A domain message (`incident.created`, `incident.status_changed`, ...) becomes one or more events:
`incident.created` is `incident.triggered`; a status change is `incident.status_changed`, plus
`incident.resolved` when it leaves the open categories and `incident.reopened` when it comes
back; an acknowledge that also moved the status is `incident.acknowledged` plus
`incident.status_changed`. The event id is derived from the message id and the event type, so a
redelivered message means the same events with the same ids (receivers deduplicate on it).

Body: {"id", "type", "occurred_at", "organization": {"id", "name"}, "data": {...}}. An incident
event's data also carries what a responder needs besides the incident (docs/PAGES.md): `service`
({service_key, name} or null), `labels` (the alert's, up to 20), and `links` ({console, source,
runbook}: the console page, the alert's source and runbook, null when absent).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

INCIDENT_TRIGGERED: Final = "incident.triggered"
INCIDENT_ACKNOWLEDGED: Final = "incident.acknowledged"
INCIDENT_ESCALATED: Final = "incident.escalated"
INCIDENT_STATUS_CHANGED: Final = "incident.status_changed"
INCIDENT_RESOLVED: Final = "incident.resolved"
INCIDENT_REOPENED: Final = "incident.reopened"
INCIDENT_ANNOTATED: Final = "incident.annotated"
INCIDENT_ASSIGNED: Final = "incident.assigned"
POSTMORTEM_PUBLISHED: Final = "postmortem.published"
STATUS_PAGE_INCIDENT_UPDATED: Final = "status_page.incident_updated"

EVENT_TYPES: tuple[str, ...] = (
    INCIDENT_TRIGGERED,
    INCIDENT_ACKNOWLEDGED,
    INCIDENT_ESCALATED,
    INCIDENT_STATUS_CHANGED,
    INCIDENT_RESOLVED,
    INCIDENT_REOPENED,
    INCIDENT_ANNOTATED,
    INCIDENT_ASSIGNED,
    POSTMORTEM_PUBLISHED,
    STATUS_PAGE_INCIDENT_UPDATED,
)
ALL_EVENTS: Final = "*"  # a subscription's event_types ["*"]: every type, present and future

# The domain messages the fan-out follows (published after the write by their domains).
DOMAIN_MESSAGE_TYPES: tuple[str, ...] = (
    "incident.created",
    "incident.acknowledged",
    "incident.escalated",
    "incident.status_changed",
    "incident.assigned",
    "incident.annotated",
    POSTMORTEM_PUBLISHED,
    STATUS_PAGE_INCIDENT_UPDATED,
)

SyncStatus = Literal["investigating", "identified", "monitoring", "resolved"]
SYNC_STATUSES: tuple[SyncStatus, ...] = ("investigating", "identified", "monitoring", "resolved")
_DONE_CATEGORIES = frozenset({"resolved", "closed"})


def sync_status(status: str, category: str | None) -> SyncStatus:
    """The external tool's status (investigating, identified, monitoring, resolved) for ours.

    Any resolved- or closed-category status is `resolved`. An open status named like one of the
    tool's keeps its name; any other open status (the triggered `new`, or an organization's own
    active statuses) is `investigating`: the incident is open and nobody has said more. A status
    the workflow no longer lists (category None) counts as open, as the workflow treats it.
    """
    if category in _DONE_CATEGORIES:
        return "resolved"
    for name in SYNC_STATUSES[:3]:
        if status == name:
            return name
    return "investigating"


def subscribes_to(event_types: set[str] | frozenset[str], event_type: str) -> bool:
    return ALL_EVENTS in event_types or event_type in event_types


def event_id(message_id: str, event_type: str) -> str:
    """Same domain message and type -> same id, on every redelivery and for every subscription."""
    return "evt_" + hashlib.sha256(f"{message_id}:{event_type}".encode()).hexdigest()[:32]


@dataclass(frozen=True)
class PlannedEvent:
    """One event a domain message means, before it is addressed to a subscription."""

    event_type: str
    event_id: str
    occurred_at: str
    incident_number: str | None  # incident events: the fan-out reads this incident once
    data: dict[str, Any] = field(default_factory=dict)  # per-type fields besides the incident
    # The status this event reports, for the sync mapping (None: the incident's current status).
    status: str | None = None
    category: str | None = None
    # Set when an inbound webhook of this integration caused the change (loop prevention).
    source_integration_id: str | None = None

    @property
    def delivery_key(self) -> str:
        return f"{self.occurred_at}#{self.event_id}"

    @property
    def is_incident_event(self) -> bool:
        return self.incident_number is not None and self.event_type.startswith("incident.")


def plan_events(
    *, message_type: str, message_id: str, occurred_at: str, payload: Mapping[str, Any]
) -> list[PlannedEvent]:
    """The events a domain message means, in order; [] for a message no event follows."""
    planner = _Planner(message_id, occurred_at, payload)
    if message_type == POSTMORTEM_PUBLISHED:
        # Their producers present the objects (PostmortemV1; the public page and incident).
        return [
            planner.event(
                message_type,
                {"postmortem": payload.get("postmortem"), "incident_number": planner.number},
                incident=False,
            )
        ]
    if message_type == STATUS_PAGE_INCIDENT_UPDATED:
        data = {"status_page": payload.get("status_page"), "incident": payload.get("incident")}
        return [planner.event(message_type, data, incident=False)]
    if planner.number is None:
        return []
    if message_type == "incident.created":
        return [planner.event(INCIDENT_TRIGGERED)]
    if message_type == "incident.assigned":
        return [planner.event(INCIDENT_ASSIGNED, {"assigned_to": payload.get("assigned_to")})]
    if message_type == "incident.annotated":
        return [planner.event(INCIDENT_ANNOTATED, {"comment": payload.get("comment")})]
    if message_type == "incident.escalated":
        return [planner.event(INCIDENT_ESCALATED, {"level": payload.get("level")})]
    if message_type == "incident.acknowledged":
        events = [planner.event(INCIDENT_ACKNOWLEDGED)]
        previous, status = payload.get("previous_status"), payload.get("status")
        if previous is not None and status is not None and previous != status:
            events.append(planner.status_event(INCIDENT_STATUS_CHANGED))
        return events
    if message_type == "incident.status_changed":
        events = [planner.status_event(INCIDENT_STATUS_CHANGED)]
        if "previous_category" in payload and "category" in payload:
            was_open = payload["previous_category"] not in _DONE_CATEGORIES
            now_open = payload["category"] not in _DONE_CATEGORIES
            if was_open and not now_open:
                events.append(planner.status_event(INCIDENT_RESOLVED))
            elif now_open and not was_open:
                events.append(planner.status_event(INCIDENT_REOPENED))
        return events
    return []


class _Planner:
    """Builds the events of one domain message (same id source, time and cause for each)."""

    def __init__(self, message_id: str, occurred_at: str, payload: Mapping[str, Any]) -> None:
        self.message_id = message_id
        self.occurred_at = occurred_at
        self.payload = payload
        self.number = _optional_str(payload.get("incident_number"))
        self.source = _optional_str(payload.get("source_integration_id"))

    def event(
        self,
        event_type: str,
        data: dict[str, Any] | None = None,
        *,
        incident: bool = True,
        status: str | None = None,
        category: str | None = None,
    ) -> PlannedEvent:
        return PlannedEvent(
            event_type=event_type,
            event_id=event_id(self.message_id, event_type),
            occurred_at=self.occurred_at,
            incident_number=self.number if incident else None,
            data=data or {},
            status=status,
            category=category,
            source_integration_id=self.source,
        )

    def status_event(self, event_type: str) -> PlannedEvent:
        status = _optional_str(self.payload.get("status"))
        data = {"previous_status": _optional_str(self.payload.get("previous_status")), "status": status}
        category = _optional_str(self.payload.get("category"))
        return self.event(event_type, data, status=status, category=category)


def _optional_str(value: Any) -> str | None:
    return str(value) if value is not None and value != "" else None


def event_document(
    event: PlannedEvent,
    *,
    organization_id: str,
    organization_name: str,
    incident: Mapping[str, Any] | None,
    incident_category: str | None,
    include_sync_status: bool,
    responder: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The event as sent. `incident` is IncidentV1 as JSON; `include_sync_status` for sync targets;
    `responder` the incident's service, labels and links (`responder_fields`)."""
    data: dict[str, Any] = {}
    if event.is_incident_event:
        data["incident"] = dict(incident) if incident is not None else None
        if responder is not None:
            data.update(responder)
    data.update(event.data)
    if include_sync_status and event.is_incident_event and incident is not None:
        current = str(incident.get("status") or "")
        status = event.status if event.status is not None else current
        # A message without a category (published before categories were added) reports the
        # incident's category when the incident still has that status.
        category = event.category if event.category is not None or status != current else incident_category
        data["sync_status"] = sync_status(status, category)
    return {
        "id": event.event_id,
        "type": event.event_type,
        "occurred_at": event.occurred_at,
        "organization": {"id": organization_id, "name": organization_name},
        "data": data,
    }


def responder_fields(
    *,
    service: tuple[str, str] | None,
    labels: tuple[tuple[str, str], ...],
    console_url: str,
    source_url: str | None,
    runbook_url: str | None,
) -> dict[str, Any]:
    """An incident event's `service`, `labels` and `links` (service: its key and name)."""
    return {
        "service": {"service_key": service[0], "name": service[1]} if service is not None else None,
        "labels": dict(labels),
        "links": {"console": console_url, "source": source_url, "runbook": runbook_url},
    }


def event_body(document: Mapping[str, Any]) -> str:
    """The exact JSON every attempt sends (and signs): compact, keys in document order."""
    return json.dumps(document, separators=(",", ":"), ensure_ascii=False)
