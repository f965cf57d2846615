"""Acting on an incident where the page landed: a Slack button, an SMS reply, a key pressed on a
call, an email link. Every channel ends here, so each does exactly what the API's acknowledge,
status change and escalate do (the same commands, timeline entries, stopped escalation and rule
steps, outbound events), with the person's own permissions, and the timeline names the channel
("Acknowledged by ana@example.com via Slack").

The channel has already proved who the person is (a Slack user linked to them, a verified phone
number, a signed call or link); `respond` is told the directory user and never trusts an
organization named by the request alone. It never raises for the person's mistakes: the
`Outcome` says what happened, or why not, in words the channel can send back.

Of two channels acting at once, only the one whose write changed the incident is told it did;
the other is told who did it first and when ("INC-2026-0042 was already resolved by Ana at
14:05 UTC."), read from the incident as that write left it. Acknowledging a resolved incident is
refused in the same words and changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from chalicelib import clock
from chalicelib.auth.principal import Principal
from chalicelib.auth.scopes import ROLE_SCOPES, ROLES
from chalicelib.directory.users import User
from chalicelib.errors import AppError, IncidentResolved
from chalicelib.incident import commands
from chalicelib.incident.tables import IncidentRecord
from chalicelib.incident.workflow_settings import incident_settings
from chalicelib.paging import escalation_runs
from chalicelib.settings import Settings

Action = Literal["acknowledge", "resolve", "escalate"]
ACTIONS: tuple[Action, ...] = ("acknowledge", "resolve", "escalate")
# How the timeline names each channel.
CHANNELS = {
    "slack": "Slack",
    "sms": "SMS",
    "voice": "a phone call",
    "email": "an email link",
    "teams": "Microsoft Teams",
    "mattermost": "Mattermost",
    "ntfy": "ntfy",
    "discord": "Discord",
    "google_chat": "Google Chat",
    "pushover": "Pushover",
}
WRITE_SCOPE = "incidents:write"


@dataclass(frozen=True)
class Outcome:
    done: bool  # False: nothing changed (not allowed, unknown incident, nothing to do)
    message: str  # what to tell the person, one line
    incident_number: str | None = None
    replay: bool = False  # the answer stored for an earlier identical request (chalicelib/paging/action_once.py)


def principal_for(person: User, organization_id: str, channel: str) -> Principal:
    """The person as the directory says now, acting through `channel` (a key of CHANNELS)."""
    role = person.role if person.role in ROLE_SCOPES else ROLES[-1]
    return Principal(
        organization_id=organization_id,
        credential_kind="channel",
        scopes=ROLE_SCOPES[role],
        user_id=person.user_id,
        role=role,
        email=person.email,
        name=person.name,
        display_name=person.email or person.name,
        via=CHANNELS[channel],
    )


def resolved_status(organization_id: str) -> str:
    """The workflow's status for "resolve": `resolved` when it has one, else its first resolved-category status."""
    workflow = incident_settings(organization_id=organization_id).workflow
    if "resolved" in workflow.status_names:
        return "resolved"
    return next(name for name in workflow.status_names if workflow.category_of(name) == "resolved")


def respond(
    *,
    organization_id: str,
    incident_number: str,
    action: Action,
    person: User,
    channel: str,
    now: datetime,
    settings: Settings,
) -> Outcome:
    if not person.is_active:
        return Outcome(False, "Your Tocsin account is deactivated; nothing was changed.", incident_number)
    principal = principal_for(person, organization_id, channel)
    if WRITE_SCOPE not in principal.scopes:
        return Outcome(False, f"Your role ({principal.role}) can view incidents but not change them.", incident_number)
    try:
        if action == "acknowledge":
            result = commands.acknowledge(
                organization_id=organization_id, incident_number=incident_number, principal=principal, now=now
            )
            if not result.newly_acknowledged:
                return Outcome(False, already_acknowledged(result.incident), incident_number)
            return Outcome(True, f"{incident_number} acknowledged by {principal.actor}.", incident_number)
        if action == "resolve":
            move = commands.move_status(
                organization_id=organization_id,
                incident_number=incident_number,
                status=resolved_status(organization_id),
                comment=None,
                now=now,
                principal=principal,
            )
            if not move.moved:
                return Outcome(False, already_resolved(move.incident), incident_number)
            return Outcome(True, f"{incident_number} resolved by {principal.actor}.", incident_number)
        outcome = escalation_runs.escalate(
            organization_id=organization_id,
            incident_number=incident_number,
            actor=f"{principal.actor} via {principal.via}",
            now=now,
            settings=settings,
        )
        if not outcome.escalated:
            return Outcome(False, f"{incident_number}: there is no further level to escalate to.", incident_number)
        return Outcome(True, f"{incident_number} escalated by {principal.actor}.", incident_number)
    except IncidentResolved as resolved:
        facts = resolved.details if isinstance(resolved.details, dict) else {}
        at = clock.parse(str(facts["resolved_at"])) if facts.get("resolved_at") else None
        words = (
            f"{incident_number} was already {facts.get('status') or 'resolved'}{_by_at(facts.get('resolved_by'), at)}."
        )
        return Outcome(False, words, incident_number)
    except AppError as error:
        return Outcome(False, f"{incident_number}: {error.message}", incident_number)


def _by_at(by: str | None, at: datetime | None) -> str:
    """Who and when, as much as is known: " by Ana at 14:05 UTC"."""
    said = f" by {by}" if by else ""
    return said + (f" at {at.astimezone(UTC):%H:%M} UTC" if at is not None else "")


def already_acknowledged(incident: IncidentRecord) -> str:
    by_at = _by_at(incident.acknowledged_by, incident.acknowledged_at)
    return f"{incident.incident_number} was already acknowledged{by_at}."


def already_resolved(incident: IncidentRecord) -> str:
    by = incident.resolved_by_name or incident.resolved_by_email
    return f"{incident.incident_number} was already {incident.status}{_by_at(by, incident.resolved_at)}."
