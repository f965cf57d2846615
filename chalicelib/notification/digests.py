"""Page digests: the pages a person got past their burst, collected and sent as one message.

A page the budget's burst refuses (chalicelib/notification/page_budget.py) is included in the
person's digest for that channel and burst window: one item in the deliveries table,
`digest#<organization>#<person>#<channel>#<window start>#<batch>`, whose incident numbers and
addresses are string sets (an atomic ADD: racing pages, and a retried one, are each listed once).
The write that finds the digest unpublished publishes one `notification.page_digest` message,
delayed to the end of the window (scaled like every wait the workers schedule: clock.scaled).

When it comes due the digest is sealed (no page joins it after that; one that tries starts the
next batch) and sent once (the delivery `<digest key>#sent`, chalicelib/notification/deliveries.py),
listing only the incidents still unacknowledged and unresolved, high urgency first
(chalicelib/notification/digest_text.py), through the outbound budget like any message.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, cast

from chalicelib import clock
from chalicelib.budget.rules import window_start
from chalicelib.directory.users import get_user
from chalicelib.errors import NotFound
from chalicelib.incident.tables import INCIDENT_SORT_KEY, IncidentRecord, incident_partition
from chalicelib.incident.urgency import urgency_of
from chalicelib.incident.workflow import DONE_CATEGORIES
from chalicelib.notification import deliveries, digest_text
from chalicelib.notification.channels import ChannelName, DeliveryResult
from chalicelib.notification.deliveries import KEEP_FOR, DeliveryRecord
from chalicelib.notification.notices import send_notice
from chalicelib.queue.consumers import handles
from chalicelib.queue.messages import Message, due_in_seconds, publish
from chalicelib.settings import Settings
from chalicelib.store import best_effort, update_if

logger = logging.getLogger("tocsin.notification")

PAGE_DIGEST = "notification.page_digest"
OPEN = "digest"
SEALED = "digest-sealed"
MAX_BATCHES = 20  # sealed digests of one window a page may pass over (only a scaled clock makes more than one)


@dataclass(frozen=True)
class DigestSlot:
    key: str
    due_at: datetime


def burst_window(now: datetime, *, settings: Settings) -> tuple[int, datetime]:
    """The burst window `now` is in: its start (epoch seconds) and its end."""
    seconds = settings.budget_page_burst_minutes * 60
    start = window_start(now.timestamp(), seconds)
    return start, datetime.fromtimestamp(start + seconds, UTC)


def include(
    *,
    organization_id: str,
    user_id: str,
    channel: str,
    addresses: Sequence[str],
    incident_number: str,
    now: datetime,
    settings: Settings,
) -> DigestSlot:
    """Add the incident to the person's digest for this channel and window; publish the digest's
    message if no write has yet. When it goes out."""
    start, end = burst_window(now, settings=settings)
    due_at = now + clock.scaled(end - now, scale=settings.effective_time_scale)
    key = ""
    for batch in range(MAX_BATCHES):
        key = f"digest#{organization_id}#{user_id}#{channel}#{start}#{batch}"
        record = DeliveryRecord(key)
        actions = [
            DeliveryRecord.state.set(OPEN),
            DeliveryRecord.claimed_at.set(DeliveryRecord.claimed_at | now),
            DeliveryRecord.expires_at.set(now + KEEP_FOR),
            DeliveryRecord.organization_id.set(organization_id),
            DeliveryRecord.user_id.set(user_id),
            DeliveryRecord.channel.set(channel),
            DeliveryRecord.digest_incidents.add({incident_number}),
            DeliveryRecord.digest_addresses.add(set(addresses)),
        ]
        if not update_if(record, actions, DeliveryRecord.state.does_not_exist() | (DeliveryRecord.state == OPEN)):
            continue  # sealed: it went out already (a scaled clock); start the next batch
        if not record.digest_published:
            payload = {"digest_key": key, "user_id": user_id, "channel": channel, "due_at": clock.isoformat(due_at)}
            publish(Message(PAGE_DIGEST, organization_id, payload), delay_seconds=due_in_seconds(due_at, now))
            with best_effort("digest published mark"):
                record.update(actions=[DeliveryRecord.digest_published.set(True)])
        return DigestSlot(key, due_at)
    logger.warning("page digest: every batch of the window is sealed", extra={"digest_key": key})
    return DigestSlot(key, due_at)


def still_open(incident: IncidentRecord) -> bool:
    return incident.acknowledged_at is None and incident.status_category not in DONE_CATEGORIES


def _open_incidents(organization_id: str, numbers: Sequence[str]) -> list[IncidentRecord]:
    keys = [(incident_partition(organization_id, number), INCIDENT_SORT_KEY) for number in sorted(numbers)]
    return [incident for incident in IncidentRecord.batch_get(keys) if still_open(incident)]


def _entry(incident: IncidentRecord) -> digest_text.DigestEntry:
    return digest_text.DigestEntry(
        incident.incident_number, incident.title, incident.severity, urgency_of(incident), incident.created_at
    )


def send_digest(key: str, organization_id: str, now: datetime, *, settings: Settings) -> DeliveryResult | None:
    """Seal the digest and send it to each of its addresses; None when there is nothing to send
    (no such digest, every incident acknowledged or resolved since, the person gone)."""
    record = DeliveryRecord(key)
    if not update_if(record, [DeliveryRecord.state.set(SEALED)], DeliveryRecord.state.exists()):
        return None
    incidents = _open_incidents(organization_id, sorted(record.digest_incidents or ()))
    where = {"digest_key": key, "listed": len(incidents)}
    if not incidents:
        logger.info("page digest: nothing left to tell (acknowledged or resolved since)", extra=where)
        return None
    try:
        user = get_user(organization_id=organization_id, user_id=str(record.user_id))
    except NotFound:
        return None
    if not user.is_active:
        return None
    words = digest_text.notice(
        [_entry(incident) for incident in incidents],
        recipient_name=user.name,
        url=f"{settings.app_url()}/incidents",
        now=now,
    )
    results = [
        send_notice(
            cast(ChannelName, str(record.channel)),
            address,
            words,
            organization_id=organization_id,
            user_id=user.user_id,
            now=now,
            purpose="digest",
            settings=settings,
        )
        for address in sorted(record.digest_addresses or ())
    ]
    sent = [result for result in results if result.sent]
    return sent[0] if sent else (results[-1] if results else None)


@handles(PAGE_DIGEST)
def on_page_digest(message: Message, settings: Settings) -> None:
    now = clock.now()
    payload: dict[str, Any] = message.payload
    due_at = clock.parse(str(payload["due_at"]))
    if now < due_at - timedelta(seconds=1):  # SQS caps a delay at 900 s: wait out the rest
        publish(Message(PAGE_DIGEST, message.organization_id, dict(payload)), delay_seconds=due_in_seconds(due_at, now))
        return
    key = str(payload["digest_key"])
    deliveries.send_once(
        f"{key}#sent",
        now,
        lambda: send_digest(key, message.organization_id, now, settings=settings),
        final_attempt=message.final_attempt,
        what="page digest",
        where={"organization_id": message.organization_id, "digest_key": key},
    )
