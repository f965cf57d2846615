"""Telling a status page's subscribers about a public change, in two steps on the events queue.

1. Fan-out (`status_page.incident_updated`, `status_page.maintenance_changed`): one Query of the
   page's confirmed subscribers (`begins_with SUB#`, keys and component choice only), the ones
   the change concerns (notice_content.wants), and one `status_page.notice_batch` message per
   BATCH_SIZE of them. No notice is sent here, so one invocation never sends thousands.
2. A batch: the subscribers read again (one consistent BatchGetItem: one who left or changed
   their components since the fan-out is not told), then per subscriber a claim
   `SENT#<notice_id>#<subscriber_id>`, written only if absent, before anything is sent:
   - email: the notice through SES (notice_email), under the claim (chalicelib/delivery/claims.py,
     `run_once`). A refusal that a retry cannot fix is recorded on the claim; a passing failure
     (throttled, unreachable) releases the claim and the batch fails, so SQS delivers it again
     and only the unsent are tried (on its final receive, the failure is recorded instead).
   - webhook: the claim is the delivery record (body fixed now) and a first-attempt message goes
     to notice_webhooks, which signs, retries and address-checks as outbound subscriptions do
     (chalicelib/delivery/attempts.py, `begin` and `run`).

Never twice: a redelivered fan-out publishes the same batches, a redelivered batch finds its
claims. A worker that dies between claiming and SES's answer leaves the claim in `sending`:
that subscriber misses the notice rather than risk getting it twice.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from chalicelib import clock
from chalicelib.delivery import attempts
from chalicelib.delivery.claims import Claim, run_once
from chalicelib.delivery.schedule import OnceStep, Verdict, after_once
from chalicelib.queue.messages import Message, publish
from chalicelib.settings import Settings
from chalicelib.statuspage.announcements import (
    STATUS_PAGE_INCIDENT_UPDATED_MESSAGE,
    STATUS_PAGE_MAINTENANCE_CHANGED_MESSAGE,
)
from chalicelib.statuspage.repository import item_id, load_structure
from chalicelib.store import update_if
from chalicelib.subscriber import links, notice_email
from chalicelib.subscriber.notice_content import (
    Notice,
    UnreadableNotice,
    chunks,
    notice_from_dict,
    notice_to_dict,
    read_notice,
    wants,
    webhook_body,
)
from chalicelib.subscriber.notice_webhooks import WEBHOOK_DELIVER, FollowerWebhook
from chalicelib.subscriber.tables import (
    CONFIRMED,
    EMAIL,
    SUBSCRIBER_PREFIX,
    WEBHOOK,
    SubscriberItem,
    notice_key,
    subscriber_key,
)

# WEBHOOK_DELIVER: the message type of the first attempts a batch publishes.
__all__ = ["BATCH_SIZE", "NOTICE_BATCH", "WEBHOOK_DELIVER", "BatchResult", "NoticesNotSent", "fan_out", "send_batch"]
logger = logging.getLogger("tocsin.subscriber")
NOTICE_BATCH = "status_page.notice_batch"
BATCH_SIZE = 50
CLAIM_LIFETIME = timedelta(days=30)
_KINDS = {STATUS_PAGE_INCIDENT_UPDATED_MESSAGE: "incident", STATUS_PAGE_MAINTENANCE_CHANGED_MESSAGE: "maintenance"}


class NoticesNotSent(RuntimeError):
    """Some emails of a batch met a passing SES failure: SQS delivers the batch again."""


@dataclass(frozen=True)
class BatchResult:
    emailed: int = 0
    webhooks_queued: int = 0
    already_claimed: int = 0
    skipped: int = 0  # gone, unconfirmed, or no longer interested
    refused: int = 0
    to_retry: int = 0


# ---------------------------------------------------------------- 1. fan-out


def unsubscribe_url(notice: Notice, subscriber_id: str, *, settings: Settings) -> str:
    return links.link_url(
        notice.slug, links.SubscriberLink("unsubscribe", notice.page_id, subscriber_id), settings=settings
    )


def interested_subscribers(notice: Notice) -> list[str]:
    """Confirmed subscribers the change concerns, in key order: one Query (paged by DynamoDB)."""
    found = SubscriberItem.query(
        notice.page_id,
        SubscriberItem.item_key.startswith(SUBSCRIBER_PREFIX),
        filter_condition=SubscriberItem.status == CONFIRMED,
        attributes_to_get=["item_key", "component_ids", "status", "confirmed_at"],
    )
    changed_at = _moment(notice.occurred_at)
    return [
        item.item_key.removeprefix(SUBSCRIBER_PREFIX)
        for item in found
        if wants(item.component_ids, notice.component_ids) and not _confirmed_after(item, changed_at)
    ]


def _moment(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def _confirmed_after(item: SubscriberItem, changed_at: datetime | None) -> bool:
    """A follower hears the changes made after it confirmed, not one it confirmed while the change
    waited in the queue (nor, with the demo's history, outages from weeks before). Compared to the
    millisecond, the precision of `occurred_at`: a change made in the same instant is heard."""
    if changed_at is None or item.confirmed_at is None:
        return False
    confirmed_at = item.confirmed_at.replace(microsecond=item.confirmed_at.microsecond // 1000 * 1000)
    return confirmed_at > changed_at


def fan_out(message: Message) -> int:
    """Publish the batches of a public change; returns how many."""
    try:
        notice = read_notice(
            kind=_KINDS[message.message_type],
            message_id=message.message_id,
            occurred_at=message.occurred_at,
            payload=message.payload,
        )
    except UnreadableNotice:
        logger.warning("unreadable public change dropped", extra={"message_type": message.message_type})
        return 0
    batches = 0
    for subscriber_ids in chunks(interested_subscribers(notice), BATCH_SIZE):
        payload = {"notice": notice_to_dict(notice), "subscriber_ids": subscriber_ids}
        publish(Message(NOTICE_BATCH, message.organization_id, payload))
        batches += 1
    if batches:
        logger.info("subscriber notices fanned out", extra={"notice_id": notice.notice_id, "batches": batches})
    return batches


# ---------------------------------------------------------------- 2. one batch


def send_batch(message: Message, *, now: datetime | None = None, settings: Settings) -> BatchResult:
    notice = notice_from_dict(message.payload["notice"])
    subscriber_ids = [str(s) for s in message.payload.get("subscriber_ids") or []]
    moment = now or clock.now()
    structure = load_structure(notice.page_id)
    if structure is None:
        return BatchResult(skipped=len(subscriber_ids))  # the page is gone, and its subscribers with it
    names = {item_id(c): c.name or "" for c in structure.components}
    keys = [(notice.page_id, subscriber_key(s)) for s in subscriber_ids]
    subscribers = {item.subscriber_id: item for item in SubscriberItem.batch_get(keys, consistent_read=True)}
    counts = dict.fromkeys(("emailed", "webhooks_queued", "already_claimed", "skipped", "refused", "to_retry"), 0)
    for subscriber_id in subscriber_ids:
        subscriber = subscribers.get(subscriber_id)
        confirmed = subscriber is not None and subscriber.status == CONFIRMED
        if subscriber is None or not confirmed or not wants(subscriber.component_ids, notice.component_ids):
            counts["skipped"] += 1
            continue
        if subscriber.kind == WEBHOOK and subscriber.url:
            queued = _queue_webhook(message.organization_id, notice, subscriber, moment, settings=settings)
            counts["webhooks_queued" if queued else "already_claimed"] += 1
        elif subscriber.kind in (EMAIL, None) and subscriber.email:
            subscribed_to = [names[c] for c in subscriber.component_ids or [] if c in names]
            counts[
                _email(notice, subscriber, subscribed_to, moment, final=message.final_attempt, settings=settings)
            ] += 1
        else:
            counts["skipped"] += 1
    result = BatchResult(**counts)
    if result.to_retry:
        raise NoticesNotSent(f"{result.to_retry} notice(s) of {notice.notice_id} to send again")
    return result


def _notice_claim(notice: Notice, subscriber: SubscriberItem, now: datetime, **fields: Any) -> SubscriberItem:
    """The claim `SENT#<notice_id>#<subscriber_id>`, written only if absent. It carries no kind,
    email or status, so nothing that counts subscribers by those can mistake it for one."""
    return SubscriberItem(
        notice.page_id,
        notice_key(notice.notice_id, subscriber.subscriber_id or ""),
        subscriber_id=subscriber.subscriber_id,
        organization_id=subscriber.organization_id,
        notice_id=notice.notice_id,
        event_type=notice.event_type,
        created_at=now,
        updated_at=now,
        expires_at=now + CLAIM_LIFETIME,
        **fields,
    )


_VERDICTS: dict[str, Verdict] = {"sent": "delivered", "retry": "retryable", "refused": "final"}
_COUNTED: dict[OnceStep, str] = {"done": "emailed", "retry": "to_retry", "give_up": "refused"}


def _email(
    notice: Notice,
    subscriber: SubscriberItem,
    subscribed_to: list[str],
    now: datetime,
    *,
    final: bool,
    settings: Settings,
) -> str:
    """One subscriber's email: claimed, sent, recorded. The BatchResult field it counts towards.
    A worker that dies between the claim and SES's answer leaves the claim in `sending` (no
    takeover): that subscriber misses the notice rather than risk getting it twice."""
    s = SubscriberItem
    record = _notice_claim(notice, subscriber, now, delivery_status="sending")
    claim = Claim(record, in_progress=s.delivery_status == "sending", what="a notice claim")

    def send() -> tuple[notice_email.SendOutcome, OnceStep]:
        outcome = notice_email.send_notice(
            notice,
            to=subscriber.email or "",
            unsubscribe_url=unsubscribe_url(notice, subscriber.subscriber_id or "", settings=settings),
            subscribed_to=subscribed_to,
            organization_id=subscriber.organization_id,
            settings=settings,
        )
        return outcome, after_once(_VERDICTS[outcome.result], final_attempt=final)

    def settle(sent: tuple[notice_email.SendOutcome, OnceStep]) -> bool:
        outcome, step = sent
        if step == "done":
            update_if(record, [s.delivery_status.set("sent"), s.attempts.set(1), s.updated_at.set(clock.now())])
        elif step == "give_up":
            failed = [s.delivery_status.set("failed"), s.last_error.set(outcome.detail or "refused")]
            update_if(record, [*failed, s.updated_at.set(clock.now())])
        return step != "retry"  # not sent yet: the redelivered batch may claim it again

    done = run_once(claim, send, settle)
    return "already_claimed" if done is None else _COUNTED[done.result[1]]


def _queue_webhook(
    organization_id: str, notice: Notice, subscriber: SubscriberItem, now: datetime, *, settings: Settings
) -> bool:
    """Write the delivery (the claim) and publish its first attempt; True when this run wrote it.
    A delivery already written and never attempted is published again (the earlier run may have
    stopped in between; the attempt's own claim keeps that from posting twice)."""
    subscriber_id = subscriber.subscriber_id or ""
    body = webhook_body(notice, unsubscribe_url=unsubscribe_url(notice, subscriber_id, settings=settings))
    fields = {"url": subscriber.url, "body": body, "delivery_status": "pending", "attempts": 0, "next_attempt_at": now}
    delivery = FollowerWebhook(organization_id, notice.page_id, notice.notice_id, subscriber_id)
    return attempts.begin(delivery, _notice_claim(notice, subscriber, now, **fields)).created


def handle_change(message: Message, settings: Settings) -> None:
    fan_out(message)


def handle_batch(message: Message, settings: Settings) -> None:
    send_batch(message, settings=settings)
