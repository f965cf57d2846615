"""Escalation at run time: start it when an incident triggers, advance it on timers, escalate by
hand, and stop it on acknowledge or resolve.

The state lives on the incident item (`escalation`, written with the incident's version check),
so acknowledging and stopping are one write. Timers are SQS messages delayed up to 900 s that
carry the state's token; a timer whose token is no longer current does nothing. Notifications go
out as one message per person, each with a delivery id the worker claims before sending.

Each level's targets are resolved before the commit that records it, so the same commit stores
who was reached (`paging`) or, when nobody was, says so and why and pages the organization's
fallback contacts (chalicelib.paging.nobody). A service without a policy is decided once, at begin.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from chalicelib import clock
from chalicelib.catalog.service import Service, get_services
from chalicelib.directory.users import User
from chalicelib.escalation import service as policies
from chalicelib.escalation import steps
from chalicelib.escalation.steps import EscalationState, Step
from chalicelib.incident import repository
from chalicelib.incident.tables import IncidentRecord
from chalicelib.incident.workflow import DONE_CATEGORIES, EVENT_ESCALATED
from chalicelib.notification.service import service_name_of
from chalicelib.paging import nobody
from chalicelib.paging.nobody import Decision
from chalicelib.paging.on_call import reach_level, resolve_level_targets
from chalicelib.queue.messages import Message, publish
from chalicelib.settings import Settings

ESCALATION_TIMER = "escalation.timer"
DELIVER_NOTIFICATION = "notification.deliver"
INCIDENT_ESCALATED = "incident.escalated"


@dataclass(frozen=True)
class EscalateOutcome:
    incident_number: str
    escalated: bool
    notified_emails: list[str]
    current_level: int | None
    next_level: int | None


def state_of(incident: IncidentRecord) -> EscalationState | None:
    return EscalationState.from_dict(incident.escalation) if incident.escalation else None


def is_done(incident: IncidentRecord) -> bool:
    return incident.status_category in DONE_CATEGORIES


def stopped_escalation(incident: IncidentRecord) -> dict[str, Any] | None:
    """The incident's escalation with automatic steps stopped (acknowledge, resolve)."""
    return steps.stopped_state(incident.escalation)


def _service_of(incident: IncidentRecord) -> Service | None:
    keys = [str(key) for key in incident.service_keys or []][:1]
    found = get_services(organization_id=incident.organization_id, service_keys=keys) if keys else {}
    return found.get(keys[0]) if keys else None


def _policy_for(incident: IncidentRecord) -> tuple[steps.EscalationPolicy | None, str]:
    """The service's policy, or None and why there is none (the reason nobody is paged)."""
    service = _service_of(incident)
    if service is None:
        return None, "The incident's service no longer exists."
    if not service.escalation_policy_id:
        return None, f"Service {service.name} has no escalation policy."
    policy = policies.load_policy(organization_id=incident.organization_id, policy_id=service.escalation_policy_id)
    if policy is None or not policy.levels:
        return None, f"The escalation policy of service {service.name} no longer exists."
    return policy, ""


def _decide(incident: IncidentRecord, policy_name: str, step: Step, now: datetime) -> tuple[list[User], Decision]:
    """Who the step's level reaches now and, when that is nobody, the nobody-to-page decision."""
    reach = reach_level(organization_id=incident.organization_id, targets=list(step.targets), now=now)
    if reach.people:
        return reach.people, nobody.reached(step.level)
    reason = nobody.level_reason(policy_name, step.level, reach)
    return [], nobody.nobody_to_page(incident, now=now, level=step.level, reason=reason)


def begin(*, organization_id: str, incident_number: str, now: datetime, settings: Settings) -> Step | None:
    """Snapshot the service's policy onto a new incident and notify level 1 (idempotent). Without a
    policy, or when level 1 reaches nobody, say so and page the fallback contacts."""

    def attempt() -> tuple[IncidentRecord, Step | None, list[User], Decision] | None:
        incident = repository.get_incident(organization_id, incident_number)
        if incident.escalation or incident.paging or is_done(incident) or incident.acknowledged_at is not None:
            return None
        policy, why_none = _policy_for(incident)
        if policy is None:
            decision = nobody.nobody_to_page(incident, now=now, level=None, reason=why_none)
            incident.paging = decision.paging
            repository.commit(incident, decision.entries)
            return incident, None, [], decision
        state, step = steps.start(policy, now, uuid.uuid4().hex, settings=settings)
        people, decision = _decide(incident, policy.name, step, now)
        incident.escalation = state.to_dict()
        incident.paging = decision.paging
        entry = repository.timeline_entry(
            incident, event_type=EVENT_ESCALATED, now=now, user="escalation", title="Escalation started: level 1"
        )
        repository.commit(incident, [entry, *decision.entries])
        return incident, step, people, decision

    started = repository.with_version_retries(attempt)
    if started is None:
        return None
    incident, step, people, decision = started
    if step is None:
        _deliver_fallback(incident, decision, nobody.NO_POLICY_SEQUENCE, level=None)
        return None
    _deliver(incident, step, now, people=people)
    _deliver_fallback(incident, decision, step.sequence, level=step.level)
    _schedule_timer(incident, state_of(incident), now)
    return step


def on_timer(
    *, organization_id: str, incident_number: str, token: str, now: datetime, settings: Settings
) -> Step | None:
    def attempt() -> tuple[IncidentRecord, Step | None, bool, list[User], Decision | None]:
        incident = repository.get_incident(organization_id, incident_number)
        state = state_of(incident)
        if state is None or is_done(incident) or not steps.timer_is_current(state, token):
            return incident, None, False, [], None
        moved, step = steps.advance(state, now, token, settings=settings)
        if moved == state:
            return incident, None, True, [], None  # early: re-enqueue the remainder
        incident.escalation = moved.to_dict()
        entries = []
        people: list[User] = []
        decision = None
        if step is not None:
            entries.append(
                repository.timeline_entry(
                    incident,
                    event_type=EVENT_ESCALATED,
                    now=now,
                    user="escalation",
                    title=f"Escalated to level {step.level} (not acknowledged in time)",
                )
            )
            people, decision = _decide(incident, state.policy.name, step, now)
            incident.paging = decision.paging
            entries.extend(decision.entries)
        repository.commit(incident, entries)
        return incident, step, True, people, decision

    incident, step, reschedule, people, decision = repository.with_version_retries(attempt)
    if step is not None:
        _deliver(incident, step, now, people=people)
        if decision is not None:
            _deliver_fallback(incident, decision, step.sequence, level=step.level)
        _publish_escalated(incident, step, "timeout")
    if reschedule:
        _schedule_timer(incident, state_of(incident), now)
    return step


def escalate(
    *, organization_id: str, incident_number: str, actor: str, now: datetime, settings: Settings
) -> EscalateOutcome:
    """Manual escalate (docs/ONCALL.md, "Escalation policies"): the next level now, also when
    acknowledged; 200 either way."""

    def attempt() -> tuple[IncidentRecord, Step | None, list[User], Decision | None]:
        incident = repository.get_incident(organization_id, incident_number)
        state = state_of(incident)
        if state is None or is_done(incident):
            return incident, None, [], None
        moved, step = steps.escalate_now(state, now, uuid.uuid4().hex, settings=settings)
        if step is None:
            return incident, None, [], None
        incident.escalation = moved.to_dict()
        people, decision = _decide(incident, state.policy.name, step, now)
        incident.paging = decision.paging
        entry = repository.timeline_entry(
            incident, event_type=EVENT_ESCALATED, now=now, user=actor, title=f"Escalated by hand to level {step.level}"
        )
        repository.commit(incident, [entry, *decision.entries])
        return incident, step, people, decision

    incident, step, people, decision = repository.with_version_retries(attempt)
    state = state_of(incident)
    current, following = steps.current_and_next_level(state) if state is not None else (None, None)
    if step is None or decision is None:
        return EscalateOutcome(incident_number, False, [], current, following if state is not None else None)
    emails = _deliver(incident, step, now, people=people)
    emails += _deliver_fallback(incident, decision, step.sequence, level=step.level)
    _publish_escalated(incident, step, "manual")
    _schedule_timer(incident, state, now)
    return EscalateOutcome(incident_number, True, emails, current, following)


def _publish_escalated(incident: IncidentRecord, step: Step, reason: str) -> None:
    """A level was paged by a timer or by hand (outbound webhooks send incident.escalated)."""
    payload = {"incident_number": incident.incident_number, "level": step.level, "reason": reason}
    publish(Message(INCIDENT_ESCALATED, incident.organization_id, payload))


def deliver_for_sla(incident: IncidentRecord, step: Step, now: datetime) -> list[str]:
    """The SLA breach notice to the current level (its own delivery ids: not the level's page)."""
    return _deliver(incident, step, now, reason="Acknowledge SLA breached", suffix="sla")


def _deliver(
    incident: IncidentRecord,
    step: Step,
    now: datetime,
    reason: str | None = None,
    suffix: str = "",
    people: list[User] | None = None,
) -> list[str]:
    """One notification message per person of the level (each runs that person's notification
    rules: chalicelib/paging/reach.py); returns their emails. `people`: the level's, when the
    caller resolved them already."""

    if people is None:
        people = resolve_level_targets(organization_id=incident.organization_id, targets=list(step.targets), now=now)
    suffixed = {person.user_id: delivery_id(incident, step.sequence, person.user_id) + suffix for person in people}
    return _publish_pages(incident, people, suffixed, reason or f"Escalation level {step.level}", step.level)


def _deliver_fallback(incident: IncidentRecord, decision: Decision, sequence: int, *, level: int | None) -> list[str]:
    """Page the fallback contacts a nobody-to-page decision chose (none: nothing); their emails."""
    if not decision.fallback or decision.reason is None:
        return []
    ids = {
        person.user_id: delivery_id(incident, sequence, f"fallback#{person.user_id}") for person in decision.fallback
    }
    return _publish_pages(incident, decision.fallback, ids, nobody.fallback_reason(decision.reason), level)


def _publish_pages(
    incident: IncidentRecord, people: list[User], delivery_ids: dict[str, str], reason: str, level: int | None
) -> list[str]:
    state = state_of(incident)
    service_name = service_name_of(incident)  # read already by this message: the page need not read it again
    emails = []
    for person in people:
        if person.email:
            emails.append(person.email)
        publish(
            Message(
                DELIVER_NOTIFICATION,
                incident.organization_id,
                {
                    "incident_number": incident.incident_number,
                    "user_id": person.user_id,
                    "level": level,
                    "delivery_id": delivery_ids[person.user_id],
                    "reason": reason,
                    "run_token": state.run_token if state is not None else None,
                    # Decided on an acknowledged incident (escalated by hand): an acknowledge does not stop it.
                    "acknowledged": incident.acknowledged_at is not None,
                    "service_name": service_name,
                },
            )
        )
    return emails


def delivery_id(incident: IncidentRecord, sequence: int, user_id: str) -> str:
    return f"{incident.organization_id}#{incident.incident_number}#{sequence}#{user_id}"


def _schedule_timer(incident: IncidentRecord, state: EscalationState | None, now: datetime) -> None:
    if state is None:
        return
    delay = steps.delay_seconds(state, now)
    if delay is None:
        return
    publish(
        Message(
            ESCALATION_TIMER,
            incident.organization_id,
            {"incident_number": incident.incident_number, "token": state.token, "scheduled_at": clock.isoformat(now)},
        ),
        delay_seconds=delay,
    )
