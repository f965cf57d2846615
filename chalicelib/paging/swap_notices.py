"""Tells people about swap requests (chalicelib.oncall.swaps publishes the messages):

- `oncall.swap_requested`: each other member of the schedule's layers who can respond is told,
  through their low-urgency rules (the first verified step; else their verified account email:
  chalicelib.paging.handoffs `method_for`), while the request is still open;
- `oncall.swap_taken`: the requester is told who covers them;
- `oncall.swap_expiry` (delayed to the span's start; re-enqueued while early): a request still
  open is marked expired and its requester told.

Each notice is sent once: its delivery id (`swap#<swap_id>#asked#<user_id>`, `...#taken`,
`...#expired`) is claimed before sending, so a redelivered message (a provider failure raises,
SQS retries) sends only what was not sent.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from chalicelib import clock
from chalicelib.directory import rules
from chalicelib.directory.users import User, get_users, zone_of
from chalicelib.errors import NotFound
from chalicelib.notification import deliveries
from chalicelib.notification.channels import DeliveryResult
from chalicelib.notification.deliveries import NotSentYet
from chalicelib.notification.notices import Notice, schedule_url, send_notice
from chalicelib.oncall import swaps
from chalicelib.oncall.service import StoredSchedule, get_schedule
from chalicelib.oncall.swap_rules import SwapRequest, members_of
from chalicelib.oncall.swap_text import SwapNoticeKind, render_swap_notice
from chalicelib.paging.handoffs import method_for
from chalicelib.queue.consumers import handles
from chalicelib.queue.messages import MAX_DELAY_SECONDS, Message, publish
from chalicelib.settings import Settings

logger = logging.getLogger("tocsin.paging")


def _name(user: User | None) -> str:
    return (user.name or user.email or user.user_id) if user is not None else "Someone"


def _tell(
    kind: SwapNoticeKind,
    request: SwapRequest,
    stored: StoredSchedule,
    people: dict[str, User],
    recipient: User,
    now: datetime,
    message: Message,
    *,
    settings: Settings,
) -> None:
    """One notice to one person, once (its delivery id)."""
    suffix = f"#{recipient.user_id}" if kind == "asked" else ""
    delivery_id = f"swap#{request.swap_id}#{kind}{suffix}"
    where: dict[str, Any] = {"organization_id": request.organization_id, "swap_id": request.swap_id, "kind": kind}

    def send() -> DeliveryResult | None:
        if not recipient.is_active:
            return None
        method = method_for(request.organization_id, recipient, now)
        if method is None:
            logger.warning("swap notice: the person has no verified method to be told by", extra=where)
            return None
        zone = zone_of(recipient)
        words = render_swap_notice(
            kind,
            request,
            schedule_name=stored.schedule.name,
            time_zone=zone,
            requester_name=_name(people.get(request.requester_id)),
            taker_name=_name(people.get(request.taken_by)) if request.taken_by else None,
        )
        notice = Notice(
            subject=words.subject,
            text=words.text,
            short_text=words.short_text,
            recipient_name=recipient.name,
            url=schedule_url(request.schedule_id, settings=settings) + "#swaps",
            link_label="Open the schedule",
            sent_at=now,
            time_zone=zone,
        )
        return send_notice(method.type, method.address, notice, settings=settings)

    deliveries.send_once(delivery_id, now, send, final_attempt=message.final_attempt, what="swap notice", where=where)


def _load(message: Message) -> tuple[SwapRequest, StoredSchedule] | None:
    payload = message.payload
    try:
        where = {"organization_id": message.organization_id, "schedule_id": str(payload["schedule_id"])}
        request = swaps.get_swap_request(**where, swap_id=str(payload["swap_id"]))
        return request, get_schedule(**where)
    except (KeyError, NotFound):
        logger.info(
            "swap notice dropped: the request or its schedule is gone", extra={"message_id": message.message_id}
        )
        return None


@handles(swaps.SWAP_REQUESTED)
def on_swap_requested(message: Message, settings: Settings) -> None:
    now = clock.now()
    loaded = _load(message)
    if loaded is None or not loaded[0].is_open(now):
        return
    request, stored = loaded
    wanted = [member for member in members_of(stored.schedule) if member != request.requester_id]
    people = get_users(organization_id=request.organization_id, user_ids=[request.requester_id, *wanted])
    failed: NotSentYet | None = None
    for member in wanted:
        person = people.get(member)
        if person is None or not rules.can_respond(person.role, person.is_active):
            continue
        try:
            _tell("asked", request, stored, people, person, now, message, settings=settings)
        except NotSentYet as error:  # the others are still told; SQS retries the rest
            failed = error
    if failed is not None:
        raise failed


def _tell_requester(
    kind: SwapNoticeKind, request: SwapRequest, stored: StoredSchedule, message: Message, *, settings: Settings
) -> None:
    wanted = [request.requester_id, *([request.taken_by] if request.taken_by else [])]
    people = get_users(organization_id=request.organization_id, user_ids=wanted)
    requester = people.get(request.requester_id)
    if requester is not None:
        _tell(kind, request, stored, people, requester, clock.now(), message, settings=settings)


@handles(swaps.SWAP_TAKEN)
def on_swap_taken(message: Message, settings: Settings) -> None:
    loaded = _load(message)
    if loaded is not None and loaded[0].status == "taken":
        _tell_requester("taken", *loaded, message, settings=settings)


@handles(swaps.SWAP_EXPIRY)
def on_swap_expiry(message: Message, settings: Settings) -> None:
    now = clock.now()
    payload = message.payload
    try:
        due = clock.parse(str(payload["due"]))
        schedule_id, swap_id = str(payload["schedule_id"]), str(payload["swap_id"])
    except (KeyError, ValueError):
        logger.warning("swap expiry dropped: unreadable", extra={"message_id": message.message_id})
        return
    if now < due:  # SQS delays at most 900 s: wait on
        again = Message(message.message_type, message.organization_id, dict(payload))
        publish(again, delay_seconds=min(int((due - now).total_seconds()) + 1, MAX_DELAY_SECONDS))
        return
    expired = swaps.expire_swap_request(
        organization_id=message.organization_id, schedule_id=schedule_id, swap_id=swap_id, now=now
    )
    if expired is None:
        return
    try:
        stored = get_schedule(organization_id=message.organization_id, schedule_id=schedule_id)
    except NotFound:
        return
    _tell_requester("expired", expired, stored, message, settings=settings)
