"""Reaching one person about an incident the way they chose: their notification rules.

A page of a person (an escalation level, an acknowledge-SLA breach notice) runs the person's
rules for the incident's urgency (docs/CONTACTS.md):
- the steps at 0 minutes go out at once, in the worker that handles the page, as one
  notification with one timeline entry;
- each later step is a `notification.rule_step` message delayed by its minutes (TIME_SCALE
  applies locally; `publish` caps a delay at SQS's 900 s, so a step that arrives early
  re-enqueues itself for the rest). It carries the escalation's run token: when it comes due,
  it sends only if the incident is neither acknowledged nor resolved and the same escalation is
  still running, so acknowledging or resolving stops every pending step. That check is made in
  the same write as the step's claim, as for the page itself (chalicelib/paging/wanted.py).
Unverified methods are never paged. A person whose rules leave nothing to page for the urgency
is reached at their account email, so nobody goes unpaged by a misconfiguration; the timeline
says so.

Each step is sent once: its delivery id is claimed before sending, and marked sent in the same
transaction that writes the timeline entries.

The same machinery pages an incident's new assignee (chalicelib.paging.assignment) and the
organization's fallback contacts (chalicelib.paging.nobody): a page's `note` ends its timeline
titles ("Paged Ana Lima by sms (assigned by Bob)"), and an assignee's later steps go out only
while the incident is still assigned to them. A person with no way at all to be paged gets a
`notification_failed` entry saying so, rather than silence.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from chalicelib import clock
from chalicelib.contact.profile import ContactMethod, NotificationProfile, RuleStep
from chalicelib.contact.service import profile
from chalicelib.directory.users import User
from chalicelib.incident import repository
from chalicelib.incident.tables import IncidentRecord
from chalicelib.incident.urgency import urgency_of
from chalicelib.incident.workflow import EVENT_NOTIFICATION_FAILED, EVENT_PAGED
from chalicelib.notification import deliveries
from chalicelib.notification.channels import Recipient
from chalicelib.notification.service import Target, notify_targets
from chalicelib.paging.sms_reply import remember_page
from chalicelib.queue.messages import Message, due_in_seconds, publish
from chalicelib.settings import Settings
from chalicelib.store import Transaction

logger = logging.getLogger("tocsin.paging")
RULE_STEP = "notification.rule_step"
# After a page went out: the insights rollups count it for the person (docs/INSIGHTS.md).
PAGE_SENT = "notification.page_sent"


@dataclass(frozen=True)
class Page:
    """One person paged about one incident: what every step of theirs carries."""

    incident_number: str
    user_id: str
    delivery_id: str  # of the page; each step's is this plus its position
    reason: str
    run_token: str | None  # the escalation's; None for a page outside an escalation
    level: int | None = None
    service_name: str | None = None
    actor: str = "escalation"  # who the timeline says paged
    note: str | None = None  # ends the timeline titles: "assigned by Bob"
    assigned_to: str | None = None  # an assignee's page: later steps only while still assigned to them

    @classmethod
    def of(cls, payload: dict[str, Any], *, incident_number: str, user_id: str, delivery_id: str) -> Page:
        """A page (or one of its steps) as its queue message carries it."""
        return cls(
            incident_number=incident_number,
            user_id=user_id,
            delivery_id=delivery_id,
            reason=str(payload.get("reason") or ""),
            run_token=payload.get("run_token"),
            level=payload.get("level"),
            service_name=payload.get("service_name"),
            actor=str(payload.get("actor") or "escalation"),
            note=payload.get("note"),
            assigned_to=payload.get("assigned_to"),
        )

    def payload(self) -> dict[str, Any]:
        """What a later step's message carries of its page (besides its own method and time)."""
        return {
            "incident_number": self.incident_number,
            "user_id": self.user_id,
            "reason": self.reason,
            "run_token": self.run_token,
            "level": self.level,
            "service_name": self.service_name,
            "actor": self.actor,
            "note": self.note,
            "assigned_to": self.assigned_to,
        }


# What a page did: sent something now, left only later steps, or found no way to reach the person.
PageResult = Literal["sent", "later", "unreachable"]


def recipient_of(user: User) -> Recipient:
    return Recipient(user.user_id, user.name, user.email, user.slack_user_id, time_zone=user.time_zone)


def target_of(user: User, method: ContactMethod, organization_id: str, *, settings: Settings) -> Target:
    """The person's recipient with the method's address on the method's channel."""
    base = recipient_of(user)
    if method.type == "email":
        address = Recipient(base.user_id, base.name, method.address, None)
    elif method.type == "slack":
        address = Recipient(base.user_id, base.name, None, method.address)
    elif method.sealed_destination is not None:  # a webhook-style method: its URL, unsealed to send
        destination = method.destination(organization_id, user.user_id, settings=settings)
        assert destination is not None
        address = Recipient(
            base.user_id,
            base.name,
            None,
            None,
            time_zone=base.time_zone,
            contact_method_id=method.contact_method_id,
            hook_url=destination.url,
            hook_token=destination.token,
        )
    else:  # sms, voice: an E.164 number
        address = Recipient(base.user_id, base.name, None, None, phone=method.address)
    return Target(method.type, address)


def usable_steps(person: NotificationProfile, urgency: str) -> list[RuleStep]:
    """The steps that may page: verified methods only, by delay (the profile keeps them sorted)."""
    return [step for step in person.steps(urgency) if step.contact_method.verified]


def account_email_step(person: NotificationProfile) -> RuleStep | None:
    """The fallback when no step may page: the method that follows the account email."""
    for method in person.methods:
        if method.follows_account_email and method.verified:
            return RuleStep(method, 0)
    return None


def page_person(
    *,
    organization_id: str,
    incident: IncidentRecord,
    user: User,
    page: Page,
    now: datetime,
    final_attempt: bool,
    settings: Settings,
) -> PageResult:
    """Run the person's rules for the incident's urgency: later steps scheduled first (a retry of
    this page schedules them again; their claims keep that harmless), then the steps due now.
    "sent" when something was sent now (and the page's delivery marked sent with its record)."""
    person = profile(organization_id, user, now=now)
    urgency = urgency_of(incident)
    steps = usable_steps(person, urgency)
    note: str | None = None
    if not steps:
        fallback = account_email_step(person)
        if fallback is None:
            logger.warning("a person has no way to be paged", extra={"user_id": user.user_id})
            _say(incident, page, now, EVENT_NOTIFICATION_FAILED, f"Could not page {_name(user)}", _UNREACHABLE)
            return "unreachable"
        steps = [fallback]
        note = f"{_name(user)} has no verified {urgency}-urgency notification rules: paged by email."
    now_steps = [step for step in steps if step.delay_minutes == 0]
    for position, step in enumerate(steps):
        if step.delay_minutes > 0:
            _schedule_step(organization_id, page, step, position, now, settings=settings)
    if not now_steps:
        if page.note:  # an escalation's level says when it paged; an assignee's page says it here
            first = min(step.delay_minutes for step in steps)
            title = f"Paging {_name(user)} in {first} minute{'s' if first != 1 else ''}, by their notification rules"
            _say(incident, page, now, EVENT_PAGED, title, page.reason)
        return "later"
    reason = page.reason if note is None else f"{page.reason}. {note}"
    _send(
        organization_id,
        incident,
        user,
        [step.contact_method for step in now_steps],
        page,
        reason,
        page.delivery_id,
        now,
        final_attempt,
        settings=settings,
    )
    return "sent"


_UNREACHABLE = "No verified contact method and no verified account email: nothing could be sent."


def _name(user: User) -> str:
    return user.name or user.email or user.user_id


def _say(incident: IncidentRecord, page: Page, now: datetime, event_type: str, title: str, text: str) -> None:
    """A timeline entry about this page, written with its delivery marked sent (it is done)."""
    entry = repository.timeline_entry(
        incident,
        event_type=event_type,
        now=now,
        user=page.actor,
        title=f"{title} ({page.note})" if page.note else title,
        description=text or None,
    )
    repository.add_entries(incident, [entry], also=lambda tx: deliveries.mark_sent_in(tx, page.delivery_id, now))


def _schedule_step(
    organization_id: str, page: Page, step: RuleStep, position: int, now: datetime, *, settings: Settings
) -> None:
    due_at = now + clock.scaled(timedelta(minutes=step.delay_minutes), scale=settings.effective_time_scale)
    payload: dict[str, Any] = {
        **page.payload(),
        "contact_method_id": step.contact_method.contact_method_id,
        "delivery_id": f"{page.delivery_id}#step{position}",
        "due_at": clock.isoformat(due_at),
    }
    publish(Message(RULE_STEP, organization_id, payload), delay_seconds=due_in_seconds(due_at, now))


def _send(
    organization_id: str,
    incident: IncidentRecord,
    user: User,
    methods: list[ContactMethod],
    page: Page,
    reason: str,
    delivery_id: str,
    now: datetime,
    final_attempt: bool,
    *,
    settings: Settings,
) -> None:
    def mark_sent(transaction: Transaction) -> None:
        deliveries.mark_sent_in(transaction, delivery_id, now)

    results = notify_targets(
        incident=incident,
        recipient=recipient_of(user),
        targets=[target_of(user, method, organization_id, settings=settings) for method in methods],
        message=reason,
        now=now,
        actor=page.actor,
        final_attempt=final_attempt,
        service_name=page.service_name,
        also=mark_sent,
        title_note=page.note,
        settings=settings,
    )
    sent: dict[str, Any] = {
        "delivery_id": delivery_id,
        "incident_number": incident.incident_number,
        "user_id": user.user_id,
        "channels": [result.channel for result in results if result.sent],
        "failed_channels": [result.channel for result in results if not result.sent],
        "urgency": urgency_of(incident),
        "sent_at": clock.isoformat(now),
    }
    publish(Message(PAGE_SENT, organization_id, sent))
    for method in methods:
        if method.type == "sms":
            # What a reply to this SMS ("ack", "ack 42") refers to.
            remember_page(
                phone=method.address,
                organization_id=organization_id,
                incident_number=incident.incident_number,
                user_id=user.user_id,
                now=now,
            )


def step_due_later(payload: dict[str, Any], organization_id: str, now: datetime) -> bool:
    """An early arrival (a step more than 15 minutes out) re-enqueues itself for the rest."""
    due_at = clock.parse(str(payload["due_at"]))
    if now >= due_at:
        return False
    publish(Message(RULE_STEP, organization_id, dict(payload)), delay_seconds=due_in_seconds(due_at, now))
    return True


def send_step(
    *,
    organization_id: str,
    incident: IncidentRecord,
    user: User,
    payload: dict[str, Any],
    now: datetime,
    final_attempt: bool,
    settings: Settings,
) -> bool:
    """A due step: its method as it is now (removed or unverified since: nothing is sent).
    True when something was sent."""
    person = profile(organization_id, user, now=now)
    method = person.method(str(payload["contact_method_id"]))
    if method is None or not method.verified:
        return False
    page = Page.of(
        payload, incident_number=incident.incident_number, user_id=user.user_id, delivery_id=str(payload["delivery_id"])
    )
    _send(
        organization_id,
        incident,
        user,
        [method],
        page,
        page.reason,
        page.delivery_id,
        now,
        final_attempt,
        settings=settings,
    )
    return True
