"""Incident use cases: create and read. Commands on existing incidents live in commands.py."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from chalicelib import clock
from chalicelib.catalog import service as catalog
from chalicelib.directory import teams as directory_teams
from chalicelib.errors import ValidationFailed
from chalicelib.incident import repository
from chalicelib.incident.repository import IncidentWithTimeline
from chalicelib.incident.sla import due_at, require_complete
from chalicelib.incident.tables import IncidentRecord, TimelineRecord, incident_partition, list_partition
from chalicelib.incident.urgency import set_urgency
from chalicelib.incident.workflow import EVENT_CREATED
from chalicelib.incident.workflow_settings import incident_settings
from chalicelib.queue.messages import Message, publish
from chalicelib.settings import Settings
from chalicelib.severity import severity_or_default
from chalicelib.store import Transaction, counters

INCIDENT_CREATED = "incident.created"


def incident_number(year: int, sequence: int) -> str:
    return f"INC-{year}-{sequence:04d}"


def created_sort_key(created_at: datetime, number: str) -> str:
    return f"{clock.isoformat(created_at)}#{number}"


@dataclass(frozen=True)
class NewIncident:
    title: str
    service_keys: list[str]  # svc_ keys or SER-nnnnn ids; the incident records the keys
    description: str | None = None
    severity: str | None = None


@dataclass(frozen=True)
class PreparedIncident:
    """A validated, numbered incident and its `created` entry, not yet written: the caller may add
    its own items (an inbound alert, its dedup claim) to the unit of work that writes it."""

    record: IncidentRecord
    entry: TimelineRecord


def create_incident(
    *,
    organization_id: str,
    request: NewIncident,
    now: datetime,
    actor: str,
    source: dict[str, object] | None = None,
    known_services: dict[str, Any] | None = None,
    settings: Settings,
) -> IncidentRecord:
    """Validate against the directory and settings, number it, write it with its `created` entry.

    Round trips: services (one BatchGetItem), the team (GetItem), the counter (UpdateItem), the
    write (TransactWriteItems); the organization's settings come from a short cache.
    """
    prepared = prepare_incident(
        organization_id=organization_id,
        request=request,
        now=now,
        actor=actor,
        source=source,
        known_services=known_services,
        time_scale=settings.effective_time_scale,
    )
    return commit_new_incident(prepared, Transaction())


def prepare_incident(
    *,
    organization_id: str,
    request: NewIncident,
    now: datetime,
    actor: str,
    source: dict[str, object] | None = None,
    known_services: dict[str, Any] | None = None,
    time_scale: float,
) -> PreparedIncident:
    """Validate and number a new incident (the number is spent: a commit that fails leaves a gap)."""

    # A caller that already read the services (the webhook path) passes them: one read fewer.
    refs = request.service_keys
    found = known_services or catalog.services_by_ref(organization_id=organization_id, service_refs=refs)
    unknown = [ref for ref in refs if ref not in found or not found[ref].is_active]
    if unknown:
        raise ValidationFailed.for_fields(
            [{"field": "service_ids", "message": f"unknown or inactive service: {ref}"} for ref in unknown],
            "Some service_ids are not active services of this organization.",
        )
    service_keys = list(dict.fromkeys(found[ref].service_key for ref in refs))  # one service named both ways: once
    first_service = found[refs[0]]
    settings = incident_settings(organization_id=organization_id)
    severity = severity_or_default(request.severity, first_service.default_severity)
    target = require_complete(settings.sla, severity)  # the spec's 500 when settings are incomplete
    team = (
        directory_teams.get_team(organization_id=organization_id, team_id=first_service.team_id)
        if first_service.team_id
        else None
    )
    status = settings.workflow.initial_status
    sequence = counters.next_value(organization_id=organization_id, counter_name=f"incident#{now.year}")
    number = incident_number(now.year, sequence)
    record = IncidentRecord(
        incident_partition(organization_id, number),
        organization_id=organization_id,
        incident_number=number,
        title=request.title,
        description=request.description,
        status=status,
        status_category=settings.workflow.category_of(status) or "triggered",
        severity=severity,
        service_keys=service_keys,
        team_id=team.team_id if team else None,
        team_name=team.name if team else None,
        created_at=now,
        updated_at=now,
        created_by=actor,
        sla={
            "acknowledge_due_at": clock.isoformat(
                due_at(now, target.acknowledge_within_minutes or 0, scale=time_scale)
            ),
            "resolve_due_at": clock.isoformat(due_at(now, target.resolve_within_minutes or 0, scale=time_scale)),
        },
        source=source,
        alert_count=1 if source else None,
        last_alert_at=now if source else None,
        list_key=list_partition(organization_id, is_open=True),
        created_sort=created_sort_key(now, number),
    )
    # The first service's rule, as its default severity and team are (docs/INCIDENTS.md, "Urgency").
    set_urgency(record, first_service.urgency_rule, now)
    entry = repository.timeline_entry(
        record,
        event_type=EVENT_CREATED,
        now=now,
        title=f"Incident created: {request.title}",
        description=f"Severity {severity}; status {status}; urgency {record.urgency}.",
        user=actor,
    )
    return PreparedIncident(record, entry)


def commit_new_incident(prepared: PreparedIncident, unit: Transaction) -> IncidentRecord:
    """Write the prepared incident and its entry in `unit`, with whatever the caller put there, in
    one transaction (TransactionCancelled when it wrote nothing); then announce it."""
    record = prepared.record
    repository.commit(record, [prepared.entry], new=True, unit=unit)
    # After the write: assignment and notifications happen in the worker, never in the request.
    created: dict[str, object] = {"incident_number": record.incident_number}
    source = record.source
    if source and source.get("integration_id"):
        created["source_integration_id"] = str(source["integration_id"])  # outbound loop prevention
    publish(Message(INCIDENT_CREATED, record.organization_id, created))
    return record


def get_incident_detail(*, organization_id: str, incident_number: str) -> IncidentWithTimeline:
    return repository.get_with_timeline(organization_id, incident_number)
