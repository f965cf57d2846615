"""The rollups' consumers on the events queue: each message adds one happening, once.

They follow the messages the incident commands, the escalation, the pager and the alert pipeline
publish after their writes; nothing is written on a request's path. A message whose incident is
gone adds nothing.
"""

from __future__ import annotations

from chalicelib import clock
from chalicelib.errors import NotFound
from chalicelib.incident import repository
from chalicelib.incident.tables import IncidentRecord
from chalicelib.insights import incident_happenings, rollups, writer
from chalicelib.insights.rollups import AlertFacts, Happening
from chalicelib.integration.outcomes import ALERT_AUTO_RESOLVED, ALERT_EVENT
from chalicelib.paging.reach import PAGE_SENT
from chalicelib.queue.consumers import handles
from chalicelib.queue.messages import Message
from chalicelib.settings import Settings

CONSUMER = "insights.rollups"


def _incident(message: Message) -> IncidentRecord | None:
    try:
        return repository.get_incident(message.organization_id, str(message.payload["incident_number"]))
    except NotFound:
        return None


def _add(happening: Happening | None) -> None:
    if happening is not None:
        writer.apply(happening, now=clock.now())


@handles("incident.created", name=f"{CONSUMER}.opened")
def on_created(message: Message, settings: Settings) -> None:
    incident = _incident(message)
    if incident is not None:
        _add(rollups.opened(incident.organization_id, incident_happenings.facts_of(incident)))


@handles("incident.acknowledged", name=f"{CONSUMER}.acknowledged")
def on_acknowledged(message: Message, settings: Settings) -> None:
    incident = _incident(message)
    if incident is not None:
        _add(incident_happenings.acknowledged(incident))


@handles("incident.status_changed", name=f"{CONSUMER}.status_changed")
def on_status_changed(message: Message, settings: Settings) -> None:
    """A resolution adds; a reopen takes away the resolution it undid (both name its time)."""
    resolved_at = incident_happenings.parse_time(message.payload.get("resolved_at"))
    undone_at = incident_happenings.parse_time(message.payload.get("reopened_resolved_at"))
    if resolved_at is None and undone_at is None:
        return
    incident = _incident(message)
    if incident is None:
        return
    if resolved_at is not None:
        by = str(message.payload["resolved_by"]) if message.payload.get("resolved_by") else None
        _add(incident_happenings.resolved(incident, resolved_at, resolved_by=by))
    if undone_at is not None:
        _add(incident_happenings.resolved(incident, undone_at, sign=-1))


@handles("incident.escalated", name=f"{CONSUMER}.escalated")
def on_escalated(message: Message, settings: Settings) -> None:
    incident = _incident(message)
    if incident is not None:
        _add(incident_happenings.escalated(incident))


@handles(PAGE_SENT, name=f"{CONSUMER}.paged")
def on_paged(message: Message, settings: Settings) -> None:
    payload = message.payload
    _add(
        rollups.paged(
            message.organization_id,
            delivery_id=str(payload["delivery_id"]),
            person=str(payload["user_id"]),
            channels=[str(channel) for channel in payload.get("channels") or ()],
            urgency=str(payload.get("urgency") or "high"),
            at=clock.parse(str(payload["sent_at"])),
            failed_channels=[str(channel) for channel in payload.get("failed_channels") or ()],
        )
    )


def alert_facts(message: Message) -> AlertFacts:
    payload = message.payload
    return AlertFacts(
        event_id=str(payload.get("event_id") or message.message_id),
        outcome=str(payload["outcome"]),
        at=clock.parse(str(payload["at"])),
        source=str(payload.get("source") or rollups.NO_VALUE),
        service_key=str(payload["service_key"]) if payload.get("service_key") else None,
        key=str(payload.get("key") or rollups.NO_VALUE),
        suppressed_by=str(payload["suppressed_by"]) if payload.get("suppressed_by") else None,
        events=int(payload.get("events") or 1),
    )


@handles(ALERT_EVENT, name=f"{CONSUMER}.alert_event")
def on_alert_event(message: Message, settings: Settings) -> None:
    _add(rollups.alert_event(message.organization_id, alert_facts(message)))


@handles(ALERT_AUTO_RESOLVED, name=f"{CONSUMER}.alert_auto_resolved")
def on_alert_auto_resolved(message: Message, settings: Settings) -> None:
    opened_at = clock.parse(str(message.payload["opened_at"]))
    _add(rollups.alert_auto_resolved(message.organization_id, alert_facts(message), opened_at=opened_at))
