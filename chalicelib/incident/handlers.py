"""Consumers of incident messages on the events queue."""

from __future__ import annotations

from chalicelib import clock, emf
from chalicelib.errors import NotFound
from chalicelib.incident import repository
from chalicelib.incident.tables import TIMELINE_PREFIX, TimelineRecord, incident_partition
from chalicelib.incident.workflow import DONE_CATEGORIES, EVENT_ALERT_RECEIVED
from chalicelib.queue.consumers import handles
from chalicelib.queue.messages import Message
from chalicelib.settings import Settings
from chalicelib.store import put_if_absent


@handles("incident.alert_received")
def write_alert_entry(message: Message, settings: Settings) -> None:
    """The timeline entry of a deduplicated alert. Keyed by the message id, so a redelivered
    message writes nothing twice."""
    payload = message.payload
    received_at = clock.parse(str(payload["received_at"]))
    entry = TimelineRecord(
        incident_partition(message.organization_id, str(payload["incident_number"])),
        f"{TIMELINE_PREFIX}{clock.isoformat(received_at)}#{message.message_id}",
        event_type=EVENT_ALERT_RECEIVED,
        title=payload.get("title"),
        description=payload.get("description"),
        user=payload.get("user"),
        created_at=received_at,
    )
    put_if_absent(entry)  # False for a redelivery: the entry is there already


def _incident_event(message: Message) -> emf.IncidentEvent | None:
    """What a message means for the incident metrics: opened, acknowledged, resolved, or nothing."""
    if message.message_type == "incident.created":
        return "opened"
    if message.message_type == "incident.acknowledged":
        return "acknowledged"
    payload = message.payload
    was_open = payload.get("previous_category") not in DONE_CATEGORIES
    if message.message_type == "incident.status_changed" and was_open and payload.get("category") in DONE_CATEGORIES:
        return "resolved"
    return None


@handles("incident.created", name="incident.metrics")
@handles("incident.acknowledged", name="incident.metrics")
@handles("incident.status_changed", name="incident.metrics")
def log_incident_metrics(message: Message, settings: Settings) -> None:
    """One EMF line per incident opened, acknowledged or resolved (chalicelib.emf), when on."""
    event = _incident_event(message)
    if event is None or not settings.emf_enabled:
        return  # nothing read when the line would not be written
    try:
        incident = repository.get_incident(message.organization_id, str(message.payload["incident_number"]))
    except NotFound:
        return
    until = {"opened": None, "acknowledged": incident.acknowledged_at, "resolved": incident.resolved_at}[event]
    seconds = (until - incident.created_at).total_seconds() if until is not None else None
    service = str(incident.service_keys[0]) if incident.service_keys else None
    now = clock.now()
    emf.emit(
        [emf.incident_line(event, service=service, severity=incident.severity, now=now, seconds=seconds)],
        enabled=settings.emf_enabled,
    )
