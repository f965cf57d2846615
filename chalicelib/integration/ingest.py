"""Turn a normalized alert into alert and incident changes: trigger, acknowledge, resolve, note.

A trigger goes through chalicelib.integration.triggering (rules, maintenance, dedup, grouping).
The other actions find the alert through its dedup key's claim:
- resolve: the alert resolves; its incident resolves when that was its last triggered alert;
- acknowledge: the alert's incident is acknowledged;
- note (e.g. CloudWatch INSUFFICIENT_DATA): a timeline entry on the alert's incident.
A resolved incident is never reopened by a trigger: the key's next trigger is a new alert.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime

from chalicelib import emf
from chalicelib.alert import joining
from chalicelib.alert import repository as alert_repository
from chalicelib.alert.tables import RESOLVED, SUPPRESSED, TRIGGERED, AlertRecord
from chalicelib.errors import AppError, NotFound
from chalicelib.incident import commands, repository
from chalicelib.incident.tables import IncidentRecord
from chalicelib.incident.workflow import resolution_target
from chalicelib.incident.workflow_settings import incident_settings
from chalicelib.integration.claims import dedup_id, read_claim
from chalicelib.integration.normalized import NormalizedAlert
from chalicelib.integration.origin import AlertOrigin
from chalicelib.integration.outcomes import publish_auto_resolved, publish_trigger_outcome
from chalicelib.integration.timeline import publish_alert_entry
from chalicelib.integration.triggering import IngestResult, trigger
from chalicelib.settings import Settings
from chalicelib.store import Transaction, TransactionCancelled, conditional
from chalicelib.store.failures import ConditionFailed

__all__ = ["IngestResult", "dedup_id", "ingest"]

NO_ALERT = "no open incident for this alert"


def ingest(origin: AlertOrigin, alert: NormalizedAlert, *, now: datetime, settings: Settings) -> IngestResult:
    result = _ingest(origin, alert, now=now, settings=settings)
    emf.emit(
        [emf.inbound_line(source=origin.integration_type, outcome=result.outcome, now=now)],
        enabled=settings.emf_enabled,
    )
    return result


def _ingest(origin: AlertOrigin, alert: NormalizedAlert, *, now: datetime, settings: Settings) -> IngestResult:
    if alert.action == "trigger":
        result = trigger(origin, alert, now, settings=settings)
        publish_trigger_outcome(origin, alert, result, now)
        if alert.status_hint == "investigating" and result.incident is not None:
            result = dataclasses.replace(result, incident=_move(origin, result.incident, "investigating", now))
        return result
    claim = read_claim(dedup_id(origin, alert.dedup_key)) if alert.dedup_key else None
    if claim is None:
        return IngestResult(None, created=False, deduplicated=False, note=NO_ALERT)
    if alert.action == "resolve":
        return resolve_alert(origin, alert_id=claim.alert_id, incident_number=claim.incident_number, now=now)
    if alert.action == "acknowledge":
        return acknowledge_alert(origin, incident_number=claim.incident_number, now=now)
    incident = _incident_of(origin, claim.incident_number)
    if incident is None:
        return IngestResult(None, created=False, deduplicated=False, note=_no_incident(claim.incident_number))
    publish_alert_entry(origin, incident.incident_number, alert, now)
    return IngestResult(incident, created=False, deduplicated=True)


def _no_incident(incident_number: str | None) -> str:
    return "the alert is suppressed: it has no incident" if incident_number is None else NO_ALERT


def acknowledge_alert(origin: AlertOrigin, *, incident_number: str | None, now: datetime) -> IngestResult:
    """Acknowledge an alert's incident (`incident_number`: the alert's); what an acknowledge with its key does."""
    incident = _incident_of(origin, incident_number)
    if incident is None:
        return IngestResult(None, created=False, deduplicated=False, note=_no_incident(incident_number))
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


def resolve_alert(
    origin: AlertOrigin, *, alert_id: str | None, incident_number: str | None, now: datetime
) -> IngestResult:
    """Resolve one alert, and its incident when it was the incident's last triggered alert; what a
    resolve with its key does (`alert_id` None: a claim from before alerts were records)."""
    organization_id = origin.organization_id
    alert = alert_repository.get_alert(organization_id, alert_id) if alert_id else None
    if alert is None or alert.incident_number is None:
        if alert is not None and alert.status == SUPPRESSED:
            resolved = _resolve_suppressed(alert, now)
            return IngestResult(None, created=False, deduplicated=True, alert=resolved, suppressed=True)
        # A claim from before alerts were records: resolve its incident as before.
        incident = _incident_of(origin, incident_number)
        if incident is None:
            return IngestResult(None, created=False, deduplicated=False, note=NO_ALERT)
        return _resolve_incident(origin, incident, now, alert=None)
    if alert.status == TRIGGERED:
        transaction = Transaction()
        transaction.update(
            joining.ALERT_LABEL, alert, alert_repository.resolve_actions(now), AlertRecord.status == TRIGGERED
        )
        joining.release_from_incident(
            transaction, organization_id=organization_id, incident_number=alert.incident_number
        )
        try:
            transaction.commit()
            alert.status, alert.resolved_at = RESOLVED, now
            publish_auto_resolved(origin, alert, now)
        except TransactionCancelled as cancelled:
            if not cancelled.failed:
                raise AppError("The alert is changing too fast; retry the delivery.") from cancelled
            alert = alert_repository.get_alert(organization_id, alert.alert_id) or alert  # resolved meanwhile
    incident = _incident_of(origin, incident_number)
    if incident is None:
        return IngestResult(None, created=False, deduplicated=True, alert=alert, note=NO_ALERT)
    if (incident.open_alerts or 0) > 0:
        others = int(incident.open_alerts or 0)
        note = f"alert resolved; {others} other alert{'s' if others != 1 else ''} of the incident still triggered"
        return IngestResult(incident, created=False, deduplicated=True, alert=alert, note=note)
    return _resolve_incident(origin, incident, now, alert=alert)


def _resolve_suppressed(alert: AlertRecord, now: datetime) -> AlertRecord:
    try:
        with conditional():
            alert.update(actions=alert_repository.resolve_actions(now), condition=AlertRecord.status == SUPPRESSED)
    except ConditionFailed:
        return alert_repository.get_alert(alert.organization_id, alert.alert_id) or alert
    return alert


def _resolve_incident(
    origin: AlertOrigin, incident: IncidentRecord, now: datetime, *, alert: AlertRecord | None
) -> IngestResult:
    target = resolution_target(incident_settings(organization_id=origin.organization_id).workflow, incident.status)
    if target is None:
        return IngestResult(incident, created=False, deduplicated=True, alert=alert, note="already resolved")
    return IngestResult(_move(origin, incident, target, now), created=False, deduplicated=True, alert=alert)


def _incident_of(origin: AlertOrigin, incident_number: str | None) -> IncidentRecord | None:
    if incident_number is None:
        return None
    try:
        return repository.get_incident(origin.organization_id, incident_number)
    except NotFound:
        return None


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
