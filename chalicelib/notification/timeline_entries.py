"""What a notification leaves on the incident's timeline: one `paged` entry naming the channels
that delivered, one entry for a page held in a digest, one `notification_failed` entry per channel
that did not deliver; written in one transaction (chalicelib/notification/service.py sends)."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Sequence
from datetime import datetime

from chalicelib.incident import repository
from chalicelib.incident.tables import IncidentRecord, TimelineRecord
from chalicelib.incident.workflow import EVENT_NOTIFICATION_FAILED, EVENT_PAGED
from chalicelib.notification.channels import CHANNEL_LABELS, DeliveryResult, Notification, Recipient
from chalicelib.store import RetryableConflict, Transaction, TransactionCancelled, retry_on_conflict

logger = logging.getLogger("tocsin.notification")
# How a "Paged ... by" title names a channel: the first four as they always were, the chat and
# push channels by their product's name ("Paged Ana by Teams").
PAGED_BY = {name: label for name, label in CHANNEL_LABELS.items() if name not in ("email", "slack", "sms", "voice")}
RECORD_ATTEMPTS = 3
RECORD_BACKOFF_SECONDS = 0.05


def timeline_entries(
    incident: IncidentRecord,
    recipient: Recipient,
    notification: Notification,
    results: Sequence[DeliveryResult],
    *,
    now: datetime,
    actor: str,
    title_note: str | None = None,
) -> list[TimelineRecord]:
    who = recipient.display_name
    why = f" ({title_note})" if title_note else ""
    person = {"user_id": recipient.user_id, "name": recipient.name, "email": recipient.email}
    entries: list[TimelineRecord] = []
    entry = functools.partial(repository.timeline_entry, incident, now=now, user=actor)
    delivered = [result.channel for result in results if result.sent]
    digested = list(dict.fromkeys(result.channel for result in results if result.digested))
    if digested:
        entries.append(
            entry(
                event_type=EVENT_PAGED,
                title=f"Included {who} in their {', '.join(digested)} digest{why}",
                description=next(result.message for result in results if result.digested),
                details={"recipient": person, "channels": digested, "urgency": notification.urgency, "digest": True},
            )
        )
    if delivered:
        entries.append(
            entry(
                event_type=EVENT_PAGED,
                title=f"Paged {who} by {', '.join(PAGED_BY.get(name, name) for name in delivered)}{why}",
                description=notification.message,
                details={"recipient": person, "channels": delivered, "urgency": notification.urgency},
            )
        )
    for result in results:
        if result.sent or result.digested:
            continue
        entries.append(
            entry(
                event_type=EVENT_NOTIFICATION_FAILED,
                title=f"{CHANNEL_LABELS.get(result.channel, result.channel)} notification to {who} failed{why}",
                description=f"{result.error_code}: {result.message}",
                details={
                    "recipient": person,
                    "channel": result.channel,
                    "error_code": result.error_code,
                    "missing_contact": result.missing_contact,
                    "provider_failure": result.provider_failure,
                },
            )
        )
    return entries


def record_outcome(
    incident: IncidentRecord,
    recipient: Recipient,
    notification: Notification,
    results: Sequence[DeliveryResult],
    *,
    now: datetime,
    actor: str,
    also: Callable[[Transaction], None] | None = None,
    title_note: str | None = None,
) -> None:
    """All entries in one transaction, on condition that the incident still exists.

    The notifications are out already, so a transient failure (a transaction conflict with a
    concurrent change of the incident) is retried here rather than failing the caller, whose
    retry would send again.
    """
    entries = timeline_entries(incident, recipient, notification, results, now=now, actor=actor, title_note=title_note)
    if not entries:
        return

    def attempt() -> None:
        try:
            repository.add_entries(incident, entries, also=also)
        except TransactionCancelled as cancelled:
            logger.warning("retrying the notification timeline entries", extra={"contention": cancelled.contention})
            raise RetryableConflict() from cancelled

    retry_on_conflict(attempt, what="incident timeline", attempts=RECORD_ATTEMPTS, base_delay=RECORD_BACKOFF_SECONDS)
