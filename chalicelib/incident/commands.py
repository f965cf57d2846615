"""Commands on an existing incident: update, change status, acknowledge, comment.

Each is a read-modify-write of the incident item with its version checked, retried on a
conflict (repository.with_version_retries), so racing writers never lose an update.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from chalicelib import clock
from chalicelib.auth.principal import Principal
from chalicelib.directory.users import find_user_by_email, get_user
from chalicelib.errors import IncidentResolved, NotFound, ValidationFailed
from chalicelib.escalation.steps import stopped_state
from chalicelib.incident import repository
from chalicelib.incident import sla as sla_rules
from chalicelib.incident.tables import IncidentRecord, TimelineRecord, incident_partition, list_partition
from chalicelib.incident.urgency import recompute_urgency
from chalicelib.incident.workflow import (
    DONE_CATEGORIES,
    EVENT_ACKNOWLEDGED,
    EVENT_ASSIGNED,
    EVENT_COMMENT,
    EVENT_SEVERITY_CHANGED,
    EVENT_STATUS_CHANGED,
    EVENT_UPDATED,
    TransitionPlan,
    acknowledge_target,
    plan_transition,
)
from chalicelib.incident.workflow_settings import incident_settings
from chalicelib.queue.messages import Message, publish
from chalicelib.severity import parse_severity


def _publish(message_type: str, incident: IncidentRecord, principal: Principal, **extra: Any) -> None:
    payload = {"incident_number": incident.incident_number, **extra, **caused_by(principal)}
    publish(Message(message_type, incident.organization_id, payload))


def caused_by(principal: Principal) -> dict[str, str]:
    """Names the integration whose inbound webhook made the change, so outbound webhooks do not
    echo it back to that integration's tool (loop prevention)."""
    integration_id = principal.extra.get("integration_id") if principal.credential_kind == "integration" else None
    return {"source_integration_id": integration_id} if integration_id else {}


def update_incident(
    *, organization_id: str, incident_number: str, changes: dict[str, Any], now: datetime, principal: Principal
) -> IncidentRecord:
    actor = principal.actor
    assignee = None
    if changes.get("assigned_to"):
        assignee = _active_user_by_email(organization_id, str(changes["assigned_to"]))

    def attempt() -> tuple[IncidentRecord, list[TimelineRecord]]:
        incident = repository.get_incident(organization_id, incident_number)
        entries: list[TimelineRecord] = []
        updated_fields = []
        if "title" in changes and changes["title"] != incident.title:
            incident.title = changes["title"]
            updated_fields.append("title")
        if "description" in changes and changes["description"] != incident.description:
            incident.description = changes["description"]
            updated_fields.append("description")
        if updated_fields:
            entries.append(
                repository.timeline_entry(
                    incident,
                    event_type=EVENT_UPDATED,
                    now=now,
                    user=actor,
                    title=f"Updated {' and '.join(updated_fields)}",
                )
            )
        if "severity" in changes and changes["severity"] != incident.severity:
            previous, incident.severity = incident.severity, parse_severity(changes["severity"])
            urgency_before, urgency_after = recompute_urgency(incident, now)
            entries.append(
                repository.timeline_entry(
                    incident,
                    event_type=EVENT_SEVERITY_CHANGED,
                    now=now,
                    user=actor,
                    title=f"Severity changed from {previous} to {incident.severity}",
                    description=f"Urgency changed from {urgency_before} to {urgency_after}."
                    if urgency_before != urgency_after
                    else None,
                )
            )
        if "assigned_to" in changes:
            entries.extend(_assign(incident, assignee, now=now, actor=actor))
        if entries:
            incident.updated_at = now
            repository.commit(incident, entries)
        return incident, entries

    incident, entries = repository.with_version_retries(attempt)
    if any(e.event_type == EVENT_ASSIGNED for e in entries):
        assigned = (
            {"name": incident.assigned_name, "email": incident.assigned_email} if incident.assigned_email else None
        )
        _publish("incident.assigned", incident, principal, assigned_to=assigned, **_assignment(incident, principal))
    return incident


def _assignment(incident: IncidentRecord, principal: Principal) -> dict[str, Any]:
    """Who assigned whom, for the consumer that pages the assignee (chalicelib.paging.assignment).
    `assignment` names this write (the incident's version after it): a redelivered message pages once."""
    return {
        "assignment": f"v{incident.version}",
        "assigned_user_id": incident.assigned_user_id,
        "assigned_by": principal.name or principal.actor,
        "assigned_by_user_id": principal.user_id,
        "assigned_by_system": principal.credential_kind == "system",
    }


def _active_user_by_email(organization_id: str, email: str) -> Any:

    user = find_user_by_email(organization_id=organization_id, email=email)
    if user is None or not user.is_active:
        raise ValidationFailed.for_field("assigned_to", f"{email} is not an active user of this organization")
    return user


def _assign(incident: IncidentRecord, user: Any, *, now: datetime, actor: str) -> list[TimelineRecord]:
    new_email = user.email if user is not None else None
    if new_email == incident.assigned_email:
        return []
    incident.assigned_user_id = user.user_id if user is not None else None
    incident.assigned_name = user.name if user is not None else None
    incident.assigned_email = new_email
    title = f"Assigned to {user.name or user.email}" if user is not None else "Unassigned"
    return [repository.timeline_entry(incident, event_type=EVENT_ASSIGNED, now=now, user=actor, title=title)]


def change_status(
    *, organization_id: str, incident_number: str, status: str, comment: str | None, now: datetime, principal: Principal
) -> IncidentRecord:
    return move_status(
        organization_id=organization_id,
        incident_number=incident_number,
        status=status,
        comment=comment,
        now=now,
        principal=principal,
    ).incident


@dataclass(frozen=True)
class StatusMove:
    incident: IncidentRecord
    moved: bool  # False: the incident was in that status already (this call changed nothing)


def move_status(
    *, organization_id: str, incident_number: str, status: str, comment: str | None, now: datetime, principal: Principal
) -> StatusMove:
    """change_status, telling whether this call moved it: of two racing resolves, only the one
    whose write committed the move is told it did (the other finds it resolved: a no-op)."""
    actor = principal.actor
    workflow = incident_settings(organization_id=organization_id).workflow

    def attempt() -> tuple[IncidentRecord, TransitionPlan]:
        incident = repository.get_incident(organization_id, incident_number)
        plan = plan_transition(workflow, incident.status, status)
        if plan.no_op:
            return incident, plan
        incident.status = plan.to_status
        incident.status_category = plan.to_category or "active"
        done = incident.status_category in DONE_CATEGORIES
        incident.list_key = list_partition(organization_id, is_open=not done)
        if plan.resolves:
            incident.escalation = stopped_state(incident.escalation)
            incident.resolved_at = now
            incident.resolved_by_email = principal.email
            incident.resolved_by_name = principal.actor
            incident.sla = sla_rules.with_resolution(incident.sla, created_at=incident.created_at, resolved_at=now)
        if plan.reopens:
            incident.resolved_at = None
            incident.resolved_by_email = None
            incident.resolved_by_name = None
            incident.sla = sla_rules.without_resolution(incident.sla)
        incident.updated_at = now
        entry = repository.timeline_entry(
            incident,
            event_type=plan.event_type,
            now=now,
            user=actor,
            title=f"Status changed from {plan.from_status} to {plan.to_status}{_via(principal)}",
            description=comment,
            details={"from": plan.from_status, "to": plan.to_status, **_via_details(principal)},
        )
        repository.commit(incident, [entry])
        return incident, plan

    incident, plan = repository.with_version_retries(attempt)
    if not plan.no_op:
        _publish(
            "incident.status_changed",
            incident,
            principal,
            status=plan.to_status,
            previous_status=plan.from_status,
            category=plan.to_category,
            previous_category=plan.from_category,
        )
    return StatusMove(incident, moved=not plan.no_op)


@dataclass(frozen=True)
class AcknowledgeResult:
    incident: IncidentRecord
    newly_acknowledged: bool
    previous_status: str | None = None  # the status before acknowledging (it may have moved it)


def acknowledge(
    *, organization_id: str, incident_number: str, principal: Principal, now: datetime
) -> AcknowledgeResult:
    """Stamp once, assign the caller, record the SLA, move a triggered incident on. Idempotent.
    IncidentResolved (409) when the incident is resolved or closed: nothing is stamped, and the
    acknowledge SLA is never recorded as met after the fact."""
    workflow = incident_settings(organization_id=organization_id).workflow
    caller = _caller(principal)

    def attempt() -> AcknowledgeResult:
        incident = repository.get_incident(organization_id, incident_number)
        if incident.status_category in DONE_CATEGORIES:
            raise resolved_error(incident)
        if incident.acknowledged_at is not None:
            return AcknowledgeResult(incident, newly_acknowledged=False)
        actor = caller.email if caller is not None and caller.email else principal.actor
        incident.escalation = stopped_state(incident.escalation)
        incident.acknowledged_at = now
        incident.acknowledged_by = actor
        entries = [
            repository.timeline_entry(
                incident,
                event_type=EVENT_ACKNOWLEDGED,
                now=now,
                user=actor,
                title=f"Acknowledged by {actor}{_via(principal)}",
                details=_via_details(principal) or None,
            )
        ]
        sla = dict(incident.sla or {})
        if "acknowledge_due_at" in sla:
            sla["acknowledge_met"] = now <= clock.parse(sla["acknowledge_due_at"])
            sla["acknowledged_after_seconds"] = int((now - incident.created_at).total_seconds())
            incident.sla = sla
        if caller is not None:
            entries.extend(_assign(incident, caller, now=now, actor=actor))
        target = acknowledge_target(workflow, incident.status)
        previous_status = incident.status
        if target is not None and target != incident.status:
            entries.append(
                repository.timeline_entry(
                    incident,
                    event_type=EVENT_STATUS_CHANGED,
                    now=now,
                    user=actor,
                    title=f"Status changed from {incident.status} to {target}",
                    details={"from": incident.status, "to": target},
                )
            )
            incident.status = target
            incident.status_category = workflow.category_of(target) or "active"
        incident.updated_at = now
        repository.commit(incident, entries)
        return AcknowledgeResult(incident, newly_acknowledged=True, previous_status=previous_status)

    result = repository.with_version_retries(attempt)
    if result.newly_acknowledged:
        incident = result.incident
        _publish(
            "incident.acknowledged", incident, principal, previous_status=result.previous_status, status=incident.status
        )
    return result


def resolved_error(incident: IncidentRecord) -> IncidentResolved:
    """The 409 for acknowledging a resolved incident, saying who resolved it and when."""
    by = incident.resolved_by_name or incident.resolved_by_email
    when = clock.isoformat(incident.resolved_at) if incident.resolved_at is not None else None
    said = f"{incident.incident_number} is {incident.status}" + (f" (by {by})" if by else "")
    return IncidentResolved(
        f"{said}; a resolved incident cannot be acknowledged.",
        details={"status": incident.status, "resolved_at": when, "resolved_by": by},
    )


@dataclass(frozen=True)
class _Caller:
    user_id: str
    name: str | None
    email: str | None


def _via(principal: Principal) -> str:
    return f" via {principal.via}" if principal.via else ""


def _via_details(principal: Principal) -> dict[str, str]:
    return {"via": principal.via} if principal.via else {}


def _caller(principal: Principal) -> Any:
    """The person acknowledging: a personal key's or a session's user; a service account assigns nobody.

    Personal keys carry their owner's name and email, so no user lookup is needed; a session
    without an email claim is looked up."""
    if not principal.user_id:
        return None
    if principal.email:
        return _Caller(principal.user_id, principal.name, principal.email)

    try:
        user = get_user(organization_id=principal.organization_id, user_id=principal.user_id)
    except NotFound:
        return None
    return user if user.is_active else None


def add_comment(
    *, organization_id: str, incident_number: str, comment: str, now: datetime, principal: Principal
) -> TimelineRecord:
    actor = principal.actor

    placeholder = IncidentRecord(incident_partition(organization_id, incident_number))
    entry = repository.timeline_entry(
        placeholder, event_type=EVENT_COMMENT, now=now, user=actor, title="Comment", description=comment
    )
    repository.add_entry_if_incident_exists(organization_id, incident_number, entry)
    annotated = {"incident_number": incident_number, "comment": comment, **caused_by(principal)}
    publish(Message("incident.annotated", organization_id, annotated))
    return entry
