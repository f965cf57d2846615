"""Turn a normalized alert into incident changes: open, deduplicate, acknowledge, resolve, note.

Dedup: `AlertDedupRecord` points a source's dedup key at an incident. A trigger whose key
points at an open incident counts an occurrence on it (a dedup hit: GetItem + UpdateItem).
Otherwise a new incident is created in a transaction that also claims the key, conditioned on
the claim being unchanged since we read it; of N racing deliveries exactly one creates, the
others find the claim and count a hit. A resolved incident is never reopened by a trigger.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from pynamodb.exceptions import DoesNotExist

from chalicelib import aws, clock
from chalicelib.catalog.service import Service, find_service
from chalicelib.errors import AppError, InvalidPayload, NotFound
from chalicelib.incident import commands, repository
from chalicelib.incident import service as incidents
from chalicelib.incident.settings import incident_settings
from chalicelib.incident.tables import IncidentRecord
from chalicelib.incident.workflow import resolution_target
from chalicelib.integration.alert import NormalizedAlert
from chalicelib.integration.origin import AlertOrigin
from chalicelib.integration.tables import AlertDedupRecord
from chalicelib.queue.messages import Message, publish
from chalicelib.store import Transaction, TransactionCancelled

DEDUP_LIFETIME = timedelta(days=90)
CLAIM_ATTEMPTS = 6
ALERT_RECEIVED = "incident.alert_received"
# The dedup claim's label in the incident's create transaction.
DEDUP_LABEL = "dedup"


@dataclass(frozen=True)
class IngestResult:
    incident: IncidentRecord | None
    created: bool
    deduplicated: bool
    note: str | None = None


def dedup_id(origin: AlertOrigin, key: str) -> str:
    return f"{origin.organization_id}#{origin.origin_id}#{key}"


def ingest(origin: AlertOrigin, alert: NormalizedAlert, *, now: datetime) -> IngestResult:
    if alert.action == "trigger":
        result = _trigger(origin, alert, now)
        if alert.status_hint == "investigating" and result.incident is not None:
            moved = _move(origin, result.incident, "investigating", now)
            result = IngestResult(moved, result.created, result.deduplicated)
        return result
    incident = _current_incident(origin, alert)
    if incident is None:
        return IngestResult(None, created=False, deduplicated=False, note="no open incident for this alert")
    if alert.action == "resolve":
        target = resolution_target(incident_settings(organization_id=origin.organization_id).workflow, incident.status)
        if target is None:
            return IngestResult(incident, created=False, deduplicated=True, note="already resolved")
        return IngestResult(_move(origin, incident, target, now), created=False, deduplicated=True)
    if alert.action == "acknowledge":
        if not incident_settings(organization_id=origin.organization_id).workflow.is_open(incident.status):
            # Acknowledging a resolved alert is accepted and ignored (as PagerDuty does).
            return IngestResult(incident, created=False, deduplicated=True, note="already resolved")
        acknowledged = commands.acknowledge(
            organization_id=origin.organization_id,
            incident_number=incident.incident_number,
            principal=origin.principal,
            now=now,
        )
        return IngestResult(acknowledged.incident, created=False, deduplicated=True)
    # A note (e.g. CloudWatch INSUFFICIENT_DATA): a timeline entry on the open incident.
    _publish_alert_entry(origin, incident.incident_number, alert, now)
    return IngestResult(incident, created=False, deduplicated=True)


def _trigger(origin: AlertOrigin, alert: NormalizedAlert, now: datetime) -> IngestResult:
    if alert.dedup_key is None:
        return IngestResult(_create(origin, alert, now, claim=None), created=True, deduplicated=False)
    key = dedup_id(origin, alert.dedup_key)
    for _ in range(CLAIM_ATTEMPTS):
        claim = _read_claim(key)
        if claim is not None:
            hit = repository.record_alert(origin.organization_id, claim.incident_number, now=now, summary=alert.summary)
            if hit is not None:
                _publish_alert_entry(origin, hit.incident_number, alert, now)
                return IngestResult(hit, created=False, deduplicated=True)
        try:
            created = _create(origin, alert, now, claim=(key, claim))
        except TransactionCancelled as cancelled:
            if DEDUP_LABEL in cancelled.failed:
                continue  # another delivery opened it first: count ours on that one
            raise
        return IngestResult(created, created=True, deduplicated=False)
    raise AppError("The alert's incident is changing too fast; retry the delivery.")


def _read_claim(key: str) -> AlertDedupRecord | None:
    aws.bind_tables()
    try:
        return AlertDedupRecord.get(key, consistent_read=True)
    except DoesNotExist:
        return None


def _create(
    origin: AlertOrigin,
    alert: NormalizedAlert,
    now: datetime,
    claim: tuple[str, AlertDedupRecord | None] | None,
) -> IncidentRecord:
    service = _service(origin, alert)

    def claim_key(transaction: Transaction, incident: IncidentRecord) -> None:
        if claim is None:
            return
        key, previous = claim
        unchanged = (
            AlertDedupRecord.dedup_id.does_not_exist()
            if previous is None
            else AlertDedupRecord.incident_number == previous.incident_number
        )
        transaction.put(
            DEDUP_LABEL,
            AlertDedupRecord(
                key, incident_number=incident.incident_number, updated_at=now, expires_at=now + DEDUP_LIFETIME
            ),
            unchanged,
        )

    return incidents.create_incident(
        organization_id=origin.organization_id,
        request=incidents.NewIncident(
            title=alert.title,
            service_keys=[service.service_key],
            description=alert.description,
            severity=alert.severity,
        ),
        now=now,
        actor=origin.principal.actor,
        source={
            "integration_id": origin.integration_id,
            "integration_type": origin.integration_type,
            "source": alert.source,
            "dedup_key": alert.dedup_key,
            "source_url": alert.source_url,
            "metadata": alert.metadata,
        },
        before_write=claim_key,
        known_services={service.service_key: service},
    )


def _service(origin: AlertOrigin, alert: NormalizedAlert) -> Service:

    reference = alert.service_hint or origin.default_service_key
    if reference:
        service = find_service(organization_id=origin.organization_id, service_ref=reference)
        if service is None or not service.is_active:
            raise InvalidPayload(f"Unknown or inactive service {reference!r} in this organization.")
        return service
    raise InvalidPayload(
        "No service for this alert: add a service_id tag or label (SER-xxxxx), or set the integration's "
        "default service."
    )


def _current_incident(origin: AlertOrigin, alert: NormalizedAlert) -> IncidentRecord | None:
    if alert.dedup_key is None:
        return None
    claim = _read_claim(dedup_id(origin, alert.dedup_key))
    if claim is None:
        return None
    try:
        incident = repository.get_incident(origin.organization_id, claim.incident_number)
    except NotFound:
        return None
    return incident


def _move(origin: AlertOrigin, incident: IncidentRecord, status: str, now: datetime) -> IncidentRecord:
    if incident.status == status:
        return incident
    try:
        return commands.change_status(
            organization_id=origin.organization_id,
            incident_number=incident.incident_number,
            status=status,
            comment=f"by {origin.name}",
            now=now,
            principal=origin.principal,
        )
    except AppError:
        # The organization's workflow may not allow the move from where the incident is; the
        # alert itself was still recorded, so the delivery succeeds.
        return repository.get_incident(origin.organization_id, incident.incident_number)


def _publish_alert_entry(origin: AlertOrigin, number: str, alert: NormalizedAlert, now: datetime) -> None:
    publish(
        Message(
            ALERT_RECEIVED,
            origin.organization_id,
            {
                "incident_number": number,
                "title": f"Alert received: {alert.summary}"[:200],
                "description": alert.description[:2000] if alert.description else None,
                "user": origin.principal.actor,
                "received_at": clock.isoformat(now),
                "action": alert.action,
            },
        )
    )
