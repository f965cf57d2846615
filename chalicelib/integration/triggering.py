"""A trigger, from the delivery to its alert: event rules, maintenance, dedup, grouping.

0. A dedup key pointing at an alert with an open incident counts one more event on both: rules,
   maintenance and grouping decided when that alert was created.
1. The alert's service (its service_id hint, else the integration's default) and its facts. A hint
   naming no active service falls back to the integration's active default, with a warning
   (`IngestResult.warnings`); without one the delivery is refused.
2. Event rules (chalicelib.eventrule): drop ends it here; suppress, severity, route_to_service
   and notes shape the alert. Rules past their time budget decide nothing and say so in
   `IngestResult.warnings`.
3. A service in a maintenance window suppresses it.
4. A dedup key pointing at a suppressed alert counts one more event on it while it is still
   suppressed (maintenance over: the event is a new alert that pages).
5. Otherwise a new alert: suppressed (no incident); or, when the service groups alerts and its
   group's incident is open and in its window, joining that incident; or opening a new incident.

Every new alert is one transaction with its dedup claim (and its incident or group slot); of N
racing deliveries one wins each claim and the others retry, finding it. The per-event path reads
and writes by key only (GetItem, UpdateItem, TransactWriteItems), never a Query of a growing table.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime

from chalicelib.alert import joining
from chalicelib.alert import repository as alert_repository
from chalicelib.alert.repository import AlertDraft
from chalicelib.alert.tables import SUPPRESSED, TRIGGERED, AlertGroupRecord, AlertRecord
from chalicelib.catalog.grouping import group_key, joins, window_end
from chalicelib.catalog.service import Service, find_service
from chalicelib.errors import AppError, InvalidPayload
from chalicelib.eventrule.decide import decide
from chalicelib.eventrule.facts import AlertFacts, RuleDecision
from chalicelib.incident import repository
from chalicelib.incident import service as incidents
from chalicelib.incident.tables import IncidentRecord
from chalicelib.integration.claims import DEDUP_LABEL, claim_key, dedup_id, read_claim
from chalicelib.integration.normalized import NormalizedAlert
from chalicelib.integration.origin import AlertOrigin
from chalicelib.integration.tables import AlertDedupRecord
from chalicelib.integration.timeline import publish_alert_entry
from chalicelib.maintenance.in_effect import window_in_effect
from chalicelib.settings import Settings
from chalicelib.severity import severity_or_default
from chalicelib.store import Transaction, TransactionCancelled

CLAIM_ATTEMPTS = 8


@dataclass(frozen=True)
class IngestResult:
    incident: IncidentRecord | None
    created: bool
    deduplicated: bool
    note: str | None = None
    alert: AlertRecord | None = None
    suppressed: bool = False
    dropped: bool = False
    grouped: bool = False
    dropped_by: tuple[str, ...] = ()  # the event rules that dropped it
    # What ingesting said beside the answer (a service that fell back to the default, ...): the
    # webhook answer's `warnings` lists them after the parser's, and the event log records them.
    warnings: tuple[str, ...] = ()

    @property
    def outcome(self) -> str:
        """What became of the event, for the inbound metrics (chalicelib.emf.inbound_line)."""
        if self.dropped or self.suppressed:
            return "dropped" if self.dropped else "suppressed"
        if self.created or self.grouped:
            return "created" if self.created else "grouped"
        return "deduplicated" if self.deduplicated else "ignored"


@dataclass(frozen=True)
class Shaped:
    """The alert as rules and maintenance left it."""

    draft: AlertDraft
    service: Service
    decision: RuleDecision
    warnings: tuple[str, ...] = ()


def trigger(origin: AlertOrigin, alert: NormalizedAlert, now: datetime, *, settings: Settings) -> IngestResult:
    key = dedup_id(origin, alert.dedup_key) if alert.dedup_key else None
    claim = read_claim(key) if key else None
    if claim is not None and claim.incident_number is not None:
        # The key's alert has an incident: one more event on it. Rules, maintenance and grouping
        # decided when the alert was created; its later events only update it.
        counted = _count_on_open(origin, claim, alert, now)
        if counted is not None:
            return counted
    shaped = shape(origin, alert, now)
    result = _trigger_shaped(origin, shaped, alert, now, key, claim, settings=settings)
    return dataclasses.replace(result, warnings=(*shaped.warnings, *result.warnings)) if shaped.warnings else result


def _trigger_shaped(
    origin: AlertOrigin,
    shaped: Shaped,
    alert: NormalizedAlert,
    now: datetime,
    key: str | None,
    claim: AlertDedupRecord | None,
    *,
    settings: Settings,
) -> IngestResult:
    if shaped.decision.dropped:
        rules = ", ".join(shaped.decision.matched_rule_ids)
        return IngestResult(
            None,
            created=False,
            deduplicated=False,
            dropped=True,
            note=f"dropped by event rule {rules}",
            dropped_by=tuple(shaped.decision.matched_rule_ids),
        )
    for attempt in range(CLAIM_ATTEMPTS):
        if attempt:
            claim = read_claim(key) if key else None
            if claim is not None and claim.incident_number is not None:
                counted = _count_on_open(origin, claim, alert, now)
                if counted is not None:
                    return counted
        if claim is not None and claim.incident_number is None and shaped.draft.suppressed_by is not None:
            counted = _count_on_suppressed(origin, claim, now)
            if counted is not None:
                return counted
        try:
            return _new_alert(origin, shaped, alert, now, (key, claim) if key else None, settings=settings)
        except TransactionCancelled as cancelled:
            if not cancelled.failed or cancelled.failed & {DEDUP_LABEL, joining.GROUP_LABEL}:
                continue  # lost a race for the key or the group (or met contention): read again
            raise
    raise AppError("The alert's incident is changing too fast; retry the delivery.")


def shape(origin: AlertOrigin, alert: NormalizedAlert, now: datetime) -> Shaped:
    service, warnings = _service(origin, alert.service_hint)
    labels = alert_repository.labels_of(alert.metadata)
    facts = AlertFacts(
        title=alert.title,
        source=alert.source,
        severity=alert.severity,
        service_id=service.service_id,
        integration_type=origin.integration_type,
        labels=labels,
        service_key=service.service_key,
    )
    decision = decide(organization_id=origin.organization_id, integration_id=origin.integration_id, facts=facts)
    notes = list(decision.notes)
    if decision.route_to_service and decision.route_to_service != service.service_id:
        routed = find_service(organization_id=origin.organization_id, service_ref=decision.route_to_service)
        if routed is not None and routed.is_active:
            service = routed
        else:
            notes.append(f"Not routed to {decision.route_to_service}: no such active service.")
    window = window_in_effect(organization_id=origin.organization_id, service_key=service.service_key, now=now)
    suppressed_by: dict[str, object] | None = None
    if window is not None:
        suppressed_by = {"kind": "maintenance", "window_id": window.window_id}
    elif decision.suppressed:
        suppressed_by = {"kind": "event_rule", "rule_ids": list(decision.matched_rule_ids)}
    draft = AlertDraft(
        organization_id=origin.organization_id,
        origin_id=origin.origin_id,
        integration_id=origin.integration_id,
        integration_name=origin.name,
        integration_type=origin.integration_type,
        source=alert.source,
        dedup_key=alert.dedup_key,
        title=alert.title,
        description=alert.description,
        source_url=alert.source_url,
        severity=severity_or_default(decision.severity or alert.severity, service.default_severity),
        service_key=service.service_key,
        service_id=service.service_id,
        labels=labels,
        details=alert.details,
        runbook_url=alert.runbook_url,
        suppressed_by=suppressed_by,
        rule_notes={"rule_ids": list(decision.matched_rule_ids), "notes": notes} if decision.matched_rule_ids else None,
    )
    # The rules' own warnings (evaluation past its time budget) follow the service's: the sender
    # and the event log learn why its rules did not apply.
    return Shaped(draft, service, dataclasses.replace(decision, notes=tuple(notes)), (*warnings, *decision.warnings))


def _service(origin: AlertOrigin, hint: str | None) -> tuple[Service, tuple[str, ...]]:
    """The service the alert names (`hint`), else the integration's default. A hint naming no
    active service goes to the default with a warning, when the default is active: the alert
    still pages someone who owns the integration, and the sender learns its service_id is wrong."""
    named = _active(origin, hint) if hint else None
    if named is not None:
        return named, ()
    default = _active(origin, origin.default_service_key) if origin.default_service_key else None
    if hint:
        if default is None:
            raise InvalidPayload(f"Unknown or inactive service {hint!r} in this organization.")
        warning = f"Unknown or inactive service {hint!r}; routed to the integration's default service {default.name!r}."
        return default, (warning,)
    if default is not None:
        return default, ()
    if origin.default_service_key:
        raise InvalidPayload(f"Unknown or inactive service {origin.default_service_key!r} in this organization.")
    raise InvalidPayload(
        "No service for this alert: add a service_id tag or label (SER-xxxxx), or set the integration's "
        "default service."
    )


def _active(origin: AlertOrigin, reference: str) -> Service | None:
    service = find_service(organization_id=origin.organization_id, service_ref=reference)
    return service if service is not None and service.is_active else None


def _count_on_open(
    origin: AlertOrigin, claim: AlertDedupRecord, alert: NormalizedAlert, now: datetime
) -> IngestResult | None:
    """One more event on the key's alert and its incident; None when either is over (a new alert follows)."""
    organization_id, incident_number = origin.organization_id, str(claim.incident_number)
    counted: AlertRecord | None = None
    if claim.alert_id is not None:  # absent on a claim from before alerts were records
        counted = alert_repository.count_occurrence(organization_id, claim.alert_id, status=TRIGGERED, now=now)
        if counted is None:
            return None  # resolved: a trigger with its key again is a new alert
    hit = repository.record_alert(organization_id, incident_number, now=now, summary=alert.summary)
    if hit is None:
        if claim.alert_id is not None:
            # Its incident closed and the alert had not heard yet: it is over too.
            alert_repository.withdraw_occurrence(organization_id, claim.alert_id, now=now)
        return None
    count = int(counted.event_count) if counted is not None else int(hit.alert_count or 0)
    publish_alert_entry(origin, hit.incident_number, alert, now, count=count)
    return IngestResult(hit, created=False, deduplicated=True, alert=counted)


def _count_on_suppressed(origin: AlertOrigin, claim: AlertDedupRecord, now: datetime) -> IngestResult | None:
    """One more event on the key's suppressed alert (still suppressed now); None when it is over."""
    if claim.alert_id is None:
        return None
    counted = alert_repository.count_occurrence(origin.organization_id, claim.alert_id, status=SUPPRESSED, now=now)
    if counted is None:
        return None
    return IngestResult(None, created=False, deduplicated=True, alert=counted, suppressed=True)


def _new_alert(
    origin: AlertOrigin,
    shaped: Shaped,
    alert: NormalizedAlert,
    now: datetime,
    claim: tuple[str, AlertDedupRecord | None] | None,
    *,
    settings: Settings,
) -> IngestResult:
    draft = shaped.draft
    alert_id = alert_repository.new_alert_id()
    if draft.suppressed_by is not None:
        record = alert_repository.build_record(draft, alert_id=alert_id, now=now, incident_number=None, grouped=False)
        transaction = Transaction()
        joining.put_alert(transaction, record)
        if claim is not None:
            claim_key(transaction, claim, alert_id=alert_id, incident_number=None, now=now)
        transaction.commit()
        return IngestResult(None, created=False, deduplicated=False, alert=record, suppressed=True)
    grouping = shaped.service.alert_grouping
    values: dict[str, str | None] = {
        "title": draft.title,
        "source": draft.source,
        "severity": draft.severity,
        "integration_type": draft.integration_type,
        "dedup_key": draft.dedup_key,
    }
    group = group_key(grouping, values=values, labels=draft.labels)
    if group is None:
        return _open_incident(origin, shaped, alert, now, alert_id, claim, group_slot=None, settings=settings)
    slot_id = joining.group_id(origin.organization_id, draft.service_key, group)
    slot = joining.read_group(slot_id)
    if slot is not None and joins(slot.window_ends_at, now):
        joined = _join(origin, shaped, alert, now, alert_id, claim, slot.incident_number)
        if joined is not None:
            return joined
    return _open_incident(
        origin,
        shaped,
        alert,
        now,
        alert_id,
        claim,
        group_slot=(slot_id, slot, window_end(grouping, now)),
        settings=settings,
    )


def _join(
    origin: AlertOrigin,
    shaped: Shaped,
    alert: NormalizedAlert,
    now: datetime,
    alert_id: str,
    claim: tuple[str, AlertDedupRecord | None] | None,
    incident_number: str,
) -> IngestResult | None:
    """The new alert joins the group's open incident; None when that incident is closed."""
    organization_id = origin.organization_id
    record = alert_repository.build_record(
        shaped.draft, alert_id=alert_id, now=now, incident_number=incident_number, grouped=True
    )
    transaction = Transaction()
    joining.count_on_incident(
        transaction, organization_id=organization_id, incident_number=incident_number, now=now, summary=alert.summary
    )
    joining.put_alert(transaction, record)
    if claim is not None:
        claim_key(transaction, claim, alert_id=alert_id, incident_number=incident_number, now=now)
    try:
        transaction.commit()
    except TransactionCancelled as cancelled:
        if joining.INCIDENT_LABEL in cancelled.failed and DEDUP_LABEL not in cancelled.failed:
            return None
        raise
    incident = repository.get_incident(organization_id, incident_number)
    publish_alert_entry(origin, incident_number, alert, now, grouped=True, count=int(incident.alert_count or 0))
    return IngestResult(incident, created=False, deduplicated=False, alert=record, grouped=True)


def _open_incident(
    origin: AlertOrigin,
    shaped: Shaped,
    alert: NormalizedAlert,
    now: datetime,
    alert_id: str,
    claim: tuple[str, AlertDedupRecord | None] | None,
    group_slot: tuple[str, AlertGroupRecord | None, datetime | None] | None,
    *,
    settings: Settings,
) -> IngestResult:
    draft, service = shaped.draft, shaped.service
    description = alert.description
    if shaped.decision.notes:
        description = "\n\n".join([*((description and [description]) or []), *shaped.decision.notes])
    prepared = incidents.prepare_incident(
        organization_id=origin.organization_id,
        request=incidents.NewIncident(
            title=alert.title,
            service_keys=[service.service_key],
            description=description[:10_000] if description else None,
            severity=draft.severity,
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
            "details": alert.details,
            "runbook_url": alert.runbook_url,
            "alert_id": alert_id,
        },
        known_services={service.service_key: service},
        time_scale=settings.effective_time_scale,
    )
    # One unit of work: the incident, the alert that opened it, its dedup claim and group slot.
    number = prepared.record.incident_number
    prepared.record.open_alerts = 1
    unit = Transaction()
    record = alert_repository.build_record(draft, alert_id=alert_id, now=now, incident_number=number, grouped=False)
    joining.put_alert(unit, record)
    if claim is not None:
        claim_key(unit, claim, alert_id=alert_id, incident_number=number, now=now)
    if group_slot is not None:
        slot_id, previous, window_ends_at = group_slot
        joining.claim_group(
            unit, slot_id=slot_id, previous=previous, incident_number=number, now=now, window_ends_at=window_ends_at
        )
    incident = incidents.commit_new_incident(prepared, unit)
    return IngestResult(incident, created=True, deduplicated=False, alert=record)
