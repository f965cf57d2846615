"""Consumers on the events queue for on-call: post-create work, escalation timers, notification
deliveries and the acknowledge-SLA breach check."""

from __future__ import annotations

import logging
from datetime import datetime

from chalicelib import clock
from chalicelib.auth.principal import Principal
from chalicelib.directory.users import get_user
from chalicelib.errors import AppError, NotFound
from chalicelib.escalation import steps
from chalicelib.incident import commands, repository
from chalicelib.incident.tables import IncidentRecord
from chalicelib.incident.workflow import EVENT_SLA_BREACHED
from chalicelib.notification import deliveries
from chalicelib.paging import escalation_runs, reach, wanted
from chalicelib.paging.on_call import primary_on_call
from chalicelib.queue.consumers import handles
from chalicelib.queue.messages import Message, due_in_seconds, publish
from chalicelib.settings import Settings

logger = logging.getLogger("tocsin.escalation")
SLA_CHECK = "sla.check"


def system_principal(organization_id: str, name: str) -> Principal:
    return Principal(organization_id=organization_id, credential_kind="system", scopes=frozenset(), display_name=name)


@handles("incident.created", first=True)
def on_incident_created(message: Message, settings: Settings) -> None:
    """After the 201: assign the service's primary on-call person, start escalating, watch the SLA."""
    now = clock.now()
    number = str(message.payload["incident_number"])
    try:
        incident = repository.get_incident(message.organization_id, number)
    except NotFound:
        return
    _auto_assign(incident, now)
    escalation_runs.begin(organization_id=message.organization_id, incident_number=number, now=now, settings=settings)
    due = (incident.sla or {}).get("acknowledge_due_at")
    if due:
        _schedule_sla_check(message.organization_id, number, str(due), now)


def _auto_assign(incident: IncidentRecord, now: datetime) -> None:

    service_keys = [str(key) for key in incident.service_keys or []]
    if not service_keys or incident.assigned_email or incident.acknowledged_at is not None:
        return  # someone took it already: never override a human's choice
    organization_id, incident_number = incident.organization_id, incident.incident_number
    person = primary_on_call(organization_id=organization_id, service_key=service_keys[0], now=now)
    if person is None or not person.email:
        return
    try:
        commands.update_incident(
            organization_id=organization_id,
            incident_number=incident_number,
            changes={"assigned_to": person.email},
            now=now,
            principal=system_principal(organization_id, "on-call auto-assignment"),
        )
    except AppError:
        logger.warning("auto-assignment skipped", extra={"incident_number": incident_number})


@handles(escalation_runs.ESCALATION_TIMER)
def on_escalation_timer(message: Message, settings: Settings) -> None:
    escalation_runs.on_timer(
        organization_id=message.organization_id,
        incident_number=str(message.payload["incident_number"]),
        token=str(message.payload["token"]),
        now=clock.now(),
        settings=settings,
    )


@handles(escalation_runs.DELIVER_NOTIFICATION)
def on_deliver_notification(message: Message, settings: Settings) -> None:
    """Send one person's notification once, and only while the incident still wants it: the
    delivery id is claimed under a check of the incident in the same write (chalicelib/paging/
    wanted.py), so a page racing a resolve or an acknowledge is skipped and recorded. When no
    channel delivered because SES or Slack failed, the claim is released and the consumer raises,
    so SQS redelivers; on the final receive (MAX_RECEIVE_COUNT) the failure is recorded as
    `notification_failed` on the incident's timeline and the message is done (not dead-lettered:
    a late redrive would page someone long after the fact)."""

    payload = message.payload
    delivery = str(payload["delivery_id"])
    now = clock.now()

    def page(incident: IncidentRecord) -> reach.PageResult:
        user = get_user(organization_id=message.organization_id, user_id=str(payload["user_id"]))
        paged = reach.Page.of(
            payload, incident_number=incident.incident_number, user_id=user.user_id, delivery_id=delivery
        )
        return reach.page_person(
            organization_id=message.organization_id,
            incident=incident,
            user=user,
            page=paged,
            now=now,
            final_attempt=message.final_attempt,
            settings=settings,
        )

    def settle(outcome: reach.PageResult) -> bool:
        if outcome == "later":  # only later steps: the page itself is done ("sent" and "unreachable"
            deliveries.mark_sent(delivery, now)  # were marked with their own timeline entries)
        return True

    try:
        wanted.send_while_wanted(
            organization_id=message.organization_id,
            incident_number=str(payload["incident_number"]),
            delivery_id=delivery,
            payload=payload,
            now=now,
            step=False,
            work=page,
            settle=settle,
        )
    except NotFound:
        return  # the incident or person is gone (the claim was released): nothing to retry


@handles(reach.RULE_STEP)
def on_rule_step(message: Message, settings: Settings) -> None:
    """A person's delayed notification-rule step came due: send it unless the incident was
    acknowledged or resolved (or its escalation replaced) meanwhile, checked in the same write
    as its claim (chalicelib/paging/wanted.py); once, like a page."""
    payload = message.payload
    now = clock.now()
    if reach.step_due_later(payload, message.organization_id, now):
        return

    def send(incident: IncidentRecord) -> bool:
        user = get_user(organization_id=message.organization_id, user_id=str(payload["user_id"]))
        if not user.is_active:
            return False
        return reach.send_step(
            organization_id=message.organization_id,
            incident=incident,
            user=user,
            payload=payload,
            now=now,
            final_attempt=message.final_attempt,
            settings=settings,
        )

    try:
        # Sent: marked with its record; nothing sent: released.
        wanted.send_while_wanted(
            organization_id=message.organization_id,
            incident_number=str(payload["incident_number"]),
            delivery_id=str(payload["delivery_id"]),
            payload=payload,
            now=now,
            step=True,
            work=send,
            settle=lambda sent: sent,
        )
    except NotFound:
        return


def _schedule_sla_check(organization_id: str, incident_number: str, due_at: str, now: datetime) -> None:
    delay = min(due_in_seconds(clock.parse(due_at), now), 900)
    publish(
        Message(SLA_CHECK, organization_id, {"incident_number": incident_number, "due_at": due_at}),
        delay_seconds=delay,
    )


@handles(SLA_CHECK)
def on_sla_check(message: Message, settings: Settings) -> None:
    """Not acknowledged in time: mark the breach, add `sla_breached`, notify the current level."""
    now = clock.now()
    number = str(message.payload["incident_number"])
    due_at = str(message.payload["due_at"])
    if now < clock.parse(due_at):
        _schedule_sla_check(message.organization_id, number, due_at, now)
        return

    def attempt() -> IncidentRecord | None:
        incident = repository.get_incident(message.organization_id, number)
        sla = dict(incident.sla or {})
        if incident.acknowledged_at is not None or escalation_runs.is_done(incident) or sla.get("acknowledge_breached"):
            return None
        sla["acknowledge_breached"] = True
        sla["acknowledge_met"] = False
        incident.sla = sla
        entry = repository.timeline_entry(
            incident,
            event_type=EVENT_SLA_BREACHED,
            now=now,
            user="sla",
            title="Acknowledge SLA breached",
            description=f"Not acknowledged by {due_at}.",
        )
        repository.commit(incident, [entry])
        return incident

    incident = repository.with_version_retries(attempt)
    if incident is None:
        return
    state = escalation_runs.state_of(incident)
    if state is not None:
        level = state.policy.levels[state.level_index]
        step = steps.Step(state.level, level.targets, None, state.token, state.repeats_done, state.sequence)
        escalation_runs.deliver_for_sla(incident, step, now)
