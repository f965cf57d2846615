"""Notify a person about an incident on channels, and record the outcome on its timeline.

`notify` is shared by the page operation and the escalation worker: it sends on each requested
channel (a channel never raises for a delivery problem) and writes the timeline entries in one
transaction: one `paged` entry naming the channels that delivered, and one
`notification_failed` entry per channel that did not.

The escalation worker retries a notification no channel delivered because a provider failed
(SES or Slack down): `notify(..., final_attempt=False)` then records nothing and raises
`NotSentYet`, so SQS redelivers the message; the final attempt records `notification_failed`.

`page` is the page operation (spec: POST /api/v1/incidents/{id}/page): 200 when any channel
delivered; 409 CONTACT_DETAILS_MISSING when every channel lacked contact details; 502
DELIVERY_FAILED otherwise (the provider failed on at least one channel and none delivered).
Both errors carry the per-channel deliveries in `details`.
"""

from __future__ import annotations

import logging
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from chalicelib import emf
from chalicelib.auth.principal import Principal
from chalicelib.catalog.service import get_services
from chalicelib.directory.users import find_user_by_email
from chalicelib.errors import ContactDetailsMissing, DeliveryFailed, RateLimited, ValidationFailed
from chalicelib.incident import repository
from chalicelib.incident.tables import IncidentRecord
from chalicelib.incident.urgency import urgency_of
from chalicelib.notification import page_budget, page_facts
from chalicelib.notification.channels import (
    CHANNEL_NAMES,
    Channel,
    ChannelName,
    DeliveryResult,
    Notification,
    Recipient,
    classify,
)
from chalicelib.notification.timeline_entries import record_outcome
from chalicelib.organization.service import organization_time_zone
from chalicelib.settings import Settings
from chalicelib.store import Transaction

logger = logging.getLogger("tocsin.notification")


class NotSentYet(Exception):
    """No channel delivered and a provider failed, on an attempt that is not the last: nothing
    was recorded; the caller retries (the worker raises, SQS redelivers)."""

    def __init__(self, results: Sequence[DeliveryResult]) -> None:
        codes = ", ".join(f"{result.channel}: {result.error_code}" for result in results)
        super().__init__(f"every channel failed, a provider among them ({codes}); retrying")
        self.results = list(results)


def should_retry(results: Sequence[DeliveryResult]) -> bool:
    """Nothing delivered and a provider failed: another attempt may succeed (missing contact
    details never will)."""
    return not any(result.sent for result in results) and any(result.provider_failure for result in results)


def default_channels(*, settings: Settings) -> dict[str, Channel]:
    from chalicelib.notification.email_ses import SesEmailChannel
    from chalicelib.notification.hooks import hook_channels
    from chalicelib.notification.slack import SlackChannel
    from chalicelib.notification.sms import SnsSmsChannel
    from chalicelib.notification.voice import TwilioVoiceChannel

    found: dict[str, Channel] = {
        "email": SesEmailChannel(settings=settings),
        "slack": SlackChannel(settings=settings),
        "sms": SnsSmsChannel(settings=settings),
        "voice": TwilioVoiceChannel(settings=settings),
    }
    found.update(hook_channels(settings=settings))
    return found


def console_url(incident_number: str, *, settings: Settings) -> str:
    """The incident's page in the responder console: the only link a notification carries (a
    browser cannot open the JSON API without a key)."""
    return f"{settings.app_url()}/incidents/{urllib.parse.quote(incident_number, safe='')}"


def service_name_of(incident: IncidentRecord) -> str | None:
    """The name of the incident's first service (one BatchGetItem, remembered for the rest of a
    queue message); None when it has none or it is gone."""
    keys = [str(key) for key in incident.service_keys or []][:1]
    if not keys:
        return None
    found = get_services(organization_id=incident.organization_id, service_keys=keys).get(keys[0])
    return found.name if found is not None else None


def build_notification(
    incident: IncidentRecord,
    message: str | None,
    now: datetime,
    *,
    service_name: str | None = None,
    time_zone: str | None = None,
    settings: Settings,
) -> Notification:
    """What a page about `incident` says to one person; `time_zone` is theirs (None: the organization's)."""
    return Notification(
        incident_number=incident.incident_number,
        title=incident.title,
        severity=incident.severity,
        urgency=urgency_of(incident),
        message=message.strip() if message and message.strip() else None,
        url=console_url(incident.incident_number, settings=settings),
        at=now,
        service_name=service_name,
        assigned_to=incident.assigned_name or incident.assigned_email or None,
        organization_id=incident.organization_id,
        description=(incident.description or "").strip() or None,
        labels=page_facts.incident_labels(incident, page_facts.LABELS_SHOWN),
        source_url=page_facts.source_link(incident),
        source_name=page_facts.source_name(incident),
        runbook_url=page_facts.runbook_link(incident),
        opened_at=incident.created_at,
        time_zone=time_zone or organization_time_zone(incident.organization_id),
    )


def notify(
    *,
    organization_id: str,
    incident: IncidentRecord,
    recipient: Recipient,
    channels: Sequence[str],
    message: str | None,
    now: datetime,
    actor: str,
    providers: Mapping[str, Channel] | None = None,
    final_attempt: bool = True,
    service_name: str | None = None,
    settings: Settings,
) -> list[DeliveryResult]:
    """Send on each channel (in the order given, each once) and record the outcome; one result per
    channel. Not on the `final_attempt`, a provider failure that left nothing delivered records
    nothing and raises NotSentYet (the caller retries). `service_name`: the caller's, when it
    read the service already; otherwise it is read here."""
    return notify_targets(
        incident=incident,
        recipient=recipient,
        targets=[Target(name, recipient) for name in dict.fromkeys(channels)],
        message=message,
        now=now,
        actor=actor,
        providers=providers,
        final_attempt=final_attempt,
        service_name=service_name,
        settings=settings,
    )


@dataclass(frozen=True)
class Target:
    """One send: a channel and the address to use on it (a contact method's, as a Recipient)."""

    channel: str
    address: Recipient


def notify_targets(
    *,
    incident: IncidentRecord,
    recipient: Recipient,
    targets: Sequence[Target],
    message: str | None,
    now: datetime,
    actor: str,
    providers: Mapping[str, Channel] | None = None,
    final_attempt: bool = True,
    service_name: str | None = None,
    also: Callable[[Transaction], None] | None = None,
    title_note: str | None = None,
    settings: Settings,
) -> list[DeliveryResult]:
    """`notify` for a person's contact methods: each target in order (two SMS numbers are two
    targets). `recipient` names the person on the timeline; `also` adds the caller's own items to
    the transaction that records the outcome (a delivery marked sent, in the same write);
    `title_note` ends the entries' titles in parentheses (why they were paged: "assigned by Bob")."""
    available = providers if providers is not None else default_channels(settings=settings)
    if service_name is None:
        service_name = service_name_of(incident)
    notification = build_notification(
        incident, message, now, service_name=service_name, time_zone=recipient.time_zone, settings=settings
    )
    for target in targets:
        if target.channel not in available:
            raise ValueError(f"unknown notification channel {target.channel!r}")
    # Every page passes the outbound budget, one charge per channel; past the burst, a digest.
    admissions = page_budget.admit(
        organization_id=incident.organization_id,
        incident_number=incident.incident_number,
        person=recipient,
        targets=targets,
        now=now,
        settings=settings,
    )
    results = []
    for target in targets:
        held = admissions.get(target.channel)
        if held is not None and held.digested is not None:
            results.append(held.digested)
        else:
            results.append(available[target.channel].send(notification, target.address))
    page_budget.settle(admissions, results)
    if not final_attempt and should_retry(results):
        raise NotSentYet(results)
    lines = (emf.notification_line(channel=r.channel, sent=r.sent, now=now) for r in results if not r.digested)
    emf.emit(lines, enabled=settings.emf_enabled)
    record_outcome(incident, recipient, notification, results, now=now, actor=actor, also=also, title_note=title_note)
    return results


# ---------------------------------------------------------------- the page operation


@dataclass(frozen=True)
class PageOutcome:
    incident_number: str
    channels: list[ChannelName]
    results: list[DeliveryResult]

    @property
    def sent(self) -> bool:
        return any(result.sent for result in self.results)


def deliveries_json(results: Sequence[DeliveryResult]) -> list[dict[str, Any]]:
    return [
        {"channel": result.channel, "sent": result.sent, "error_code": result.error_code, "message": result.message}
        for result in results
    ]


def page(
    *,
    organization_id: str,
    incident_number: str,
    email: str,
    channels: Sequence[str],
    message: str | None,
    now: datetime,
    principal: Principal,
    providers: Mapping[str, Channel] | None = None,
    settings: Settings,
) -> PageOutcome:

    wanted: list[ChannelName] = []
    for name in dict.fromkeys(channels):
        if name not in CHANNEL_NAMES:
            raise ValidationFailed.for_field("channels", f"must be one of {', '.join(CHANNEL_NAMES)}")
        wanted.append(name)
    if not wanted:
        raise ValidationFailed.for_field("channels", "at least one channel is required")

    incident = repository.get_incident(organization_id, incident_number)
    user = find_user_by_email(organization_id=organization_id, email=email)
    if user is None:
        raise ValidationFailed.for_field("email", "no person with this email in the organization")
    if not user.is_active:
        raise ValidationFailed.for_field("email", "this person is deactivated and cannot be paged")
    recipient = Recipient(user.user_id, user.name, user.email, user.slack_user_id, time_zone=user.time_zone)
    results = notify(
        organization_id=organization_id,
        incident=incident,
        recipient=recipient,
        channels=wanted,
        message=message,
        now=now,
        actor=principal.actor,
        providers=providers,
        settings=settings,
    )
    outcome = PageOutcome(incident.incident_number, wanted, results)
    verdict = classify(results)
    if verdict == "delivered":
        return outcome
    details = {"incident_number": outcome.incident_number, "channels": wanted, "deliveries": deliveries_json(results)}
    held = [result.retry_after or 1 for result in results if result.over_budget]
    if held:  # the outbound budget: this request caused it, so a 429 (the page is in their digest)
        raise RateLimited(
            f"{recipient.display_name} was paged as often as the outbound budget allows; this page is in their "
            "digest, which goes out when the window ends (Retry-After).",
            details=details,
            headers={"Retry-After": str(min(held))},
        )
    if verdict == "missing_contact":
        raise ContactDetailsMissing(
            f"{recipient.display_name} lacks the contact details for {', '.join(wanted)}; nothing was sent.",
            details=details,
        )
    raise DeliveryFailed(
        f"No channel delivered the page to {recipient.display_name}; the provider failed.", details=details
    )
