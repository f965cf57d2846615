"""Shift swaps and cover requests: ask, list, take, withdraw, expire (rules: chalicelib.oncall.swap_rules).

- Asking checks the span against the schedule's final shifts and the requester's open requests,
  writes the request, then publishes `oncall.swap_requested` (the schedule's other members are
  told, chalicelib.paging.swap_notices) and `oncall.swap_expiry`, delayed to the span's start
  (re-enqueued past SQS's 900 s): a request still open then expires and its requester is told.
- Taking writes, in one transaction, the request (condition: still open, and its version) and
  the schedule with the taker's override (its version): of two takers one wins; the other is
  told who took it (409). Then `oncall.swap_taken` tells the requester.
- Withdrawing is a conditional update (still open).

Only people who can respond (owners, admins, responders; active) ask, take or withdraw: the
acting person is the credential's (a session or a personal API key).
"""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import datetime
from typing import cast

from pynamodb.exceptions import DoesNotExist

from chalicelib import clock
from chalicelib.directory import rules
from chalicelib.directory.users import User, get_user
from chalicelib.errors import Conflict, Forbidden, NotFound
from chalicelib.oncall import coverage_watch
from chalicelib.oncall.notice_index import lead_of
from chalicelib.oncall.rotation import final_shifts
from chalicelib.oncall.schedule import Override
from chalicelib.oncall.service import (
    apply_to_record,
    get_record,
    get_schedule,
    new_override_id,
    prune_overrides,
    to_domain,
)
from chalicelib.oncall.swap_rules import (
    SwapRequest,
    SwapStatus,
    check_no_overlap,
    check_on_call,
    check_open,
    check_span,
    check_taker,
    open_first,
)
from chalicelib.oncall.tables import SWAP_KEPT_AFTER_END, ScheduleRecord, SwapRequestRecord, swap_key
from chalicelib.oncall.validation import validate_schedule
from chalicelib.queue.messages import MAX_DELAY_SECONDS, Message, publish
from chalicelib.store import RetryableConflict, Transaction, TransactionCancelled, absent, retry_on_conflict, update_if

SWAP_REQUESTED = "oncall.swap_requested"
SWAP_TAKEN = "oncall.swap_taken"
SWAP_EXPIRY = "oncall.swap_expiry"


def new_swap_id() -> str:
    return f"swp_{uuid.uuid4().hex[:20]}"


def _to_domain(record: SwapRequestRecord) -> SwapRequest:
    return SwapRequest(
        swap_id=record.swap_id,
        organization_id=record.organization_id,
        schedule_id=record.schedule_id,
        requester_id=record.requester_id,
        start=record.start,
        end=record.end,
        status=cast(SwapStatus, record.status),
        created_at=record.created_at,
        note=record.note,
        taken_by=record.taken_by,
        taken_at=record.taken_at,
        override_id=record.override_id,
        withdrawn_at=record.withdrawn_at,
        expired_at=record.expired_at,
        version=int(record.version or 0),
    )


def _not_found() -> NotFound:
    return NotFound("Swap request not found.")


def acting_person(organization_id: str, user_id: str | None) -> User:
    """The person a swap is made by: active, with a role that can respond; Forbidden otherwise."""
    if not user_id:
        raise Forbidden("Shift swaps are made by a person: sign in, or use a personal API key.")
    try:
        user = get_user(organization_id=organization_id, user_id=user_id)
    except NotFound:
        raise Forbidden("Shift swaps are made by a person of this organization.") from None
    if not rules.can_respond(user.role, user.is_active):
        raise Forbidden("Only people who can respond (owners, admins and responders) take part in shift swaps.")
    return user


def _get_record(organization_id: str, schedule_id: str, swap_id: str, *, consistent: bool = False) -> SwapRequestRecord:
    if not (rules.is_item_id(schedule_id) and rules.is_item_id(swap_id)):
        raise _not_found()
    try:
        return SwapRequestRecord.get(organization_id, swap_key(schedule_id, swap_id), consistent_read=consistent)
    except DoesNotExist:
        raise _not_found() from None


def _records(organization_id: str, schedule_id: str, now: datetime) -> list[SwapRequestRecord]:
    """The schedule's requests whose time to live has not run out (moto never expires them): one Query."""
    found = SwapRequestRecord.query(organization_id, SwapRequestRecord.swap_key.startswith(f"{schedule_id}#"))
    return [record for record in found if record.expires_at is None or record.expires_at > now]


def get_swap_request(*, organization_id: str, schedule_id: str, swap_id: str) -> SwapRequest:
    return _to_domain(_get_record(organization_id, schedule_id, swap_id))


def list_swap_requests(
    *, organization_id: str, schedule_id: str, now: datetime, status: SwapStatus | None = None
) -> list[SwapRequest]:
    """Open requests first (soonest first), then the others, newest first; 404 for an unknown schedule."""
    get_record(organization_id, schedule_id)
    found = [_to_domain(record) for record in _records(organization_id, schedule_id, now)]
    return open_first([r for r in found if status is None or r.status_at(now) == status], now)


def _expiry_message(request: SwapRequest) -> Message:
    payload = {"schedule_id": request.schedule_id, "swap_id": request.swap_id, "due": clock.isoformat(request.start)}
    return Message(SWAP_EXPIRY, request.organization_id, payload)


def publish_expiry(request: SwapRequest, now: datetime) -> None:
    """The expiry check, delayed until the span starts (at most SQS's 900 s: its consumer re-enqueues)."""
    wait = max(0, int((request.start - now).total_seconds()) + 1)
    publish(_expiry_message(request), delay_seconds=min(wait, MAX_DELAY_SECONDS))


def request_cover(
    *,
    organization_id: str,
    schedule_id: str,
    requester_id: str | None,
    start: datetime,
    end: datetime,
    now: datetime,
    note: str | None = None,
) -> SwapRequest:
    """Ask the schedule's other members to cover [start, end) of the requester's own shifts."""
    stored = get_schedule(organization_id=organization_id, schedule_id=schedule_id)
    person = acting_person(organization_id, requester_id)
    check_span(start, end, now)
    check_on_call(final_shifts(stored.schedule, start, end), person.user_id, start, end)
    existing = [_to_domain(record) for record in _records(organization_id, schedule_id, now)]
    check_no_overlap(existing, person.user_id, start, end, now)
    swap_id = new_swap_id()
    record = SwapRequestRecord(
        organization_id,
        swap_key(schedule_id, swap_id),
        swap_id=swap_id,
        schedule_id=schedule_id,
        requester_id=person.user_id,
        start=start,
        end=end,
        note=(note or "").strip() or None,
        status="open",
        created_at=now,
        expires_at=end + SWAP_KEPT_AFTER_END,
    )
    record.save(condition=absent(SwapRequestRecord))
    request = _to_domain(record)
    publish(Message(SWAP_REQUESTED, organization_id, {"schedule_id": schedule_id, "swap_id": swap_id}))
    publish_expiry(request, now)
    return request


def take_swap_request(
    *, organization_id: str, schedule_id: str, swap_id: str, taker_id: str | None, now: datetime
) -> tuple[SwapRequest, Override]:
    """The taker covers the span: the request is taken and their override written, both or neither."""
    taker = acting_person(organization_id, taker_id)

    def attempt() -> tuple[SwapRequest, Override]:
        record = _get_record(organization_id, schedule_id, swap_id, consistent=True)
        request = _to_domain(record)
        schedule_record = get_record(organization_id, schedule_id, consistent=True)
        schedule = to_domain(schedule_record).schedule
        check_taker(request, schedule, taker.user_id, now)
        override = Override(new_override_id(), taker.user_id, request.start, request.end)
        changed = prune_overrides(replace(schedule, overrides=(*schedule.overrides, override)), now)
        validate_schedule(changed)
        apply_to_record(schedule_record, changed, lead_of(schedule_record), now)
        transaction = Transaction()
        transaction.update(
            "request",
            record,
            [
                SwapRequestRecord.status.set("taken"),
                SwapRequestRecord.taken_by.set(taker.user_id),
                SwapRequestRecord.taken_at.set(now),
                SwapRequestRecord.override_id.set(override.override_id),
            ],
            SwapRequestRecord.status == "open",
        )
        transaction.put("schedule", schedule_record, ScheduleRecord.schedule_id.exists())
        try:
            transaction.commit()
        except TransactionCancelled as cancelled:
            if not cancelled.retryable:
                raise
            raise RetryableConflict() from cancelled  # the re-read says who won, or tries again
        taken = replace(
            request,
            status="taken",
            taken_by=taker.user_id,
            taken_at=now,
            override_id=override.override_id,
            version=request.version + 1,
        )
        return taken, override

    taken, override = retry_on_conflict(attempt, what="swap request")
    coverage_watch.mark_due(organization_id, "schedule", schedule_id, now)
    publish(Message(SWAP_TAKEN, organization_id, {"schedule_id": schedule_id, "swap_id": swap_id}))
    return taken, override


def withdraw_swap_request(
    *, organization_id: str, schedule_id: str, swap_id: str, actor_id: str | None, for_others: bool, now: datetime
) -> SwapRequest:
    """The requester (or, `for_others`, an owner or admin) withdraws an open request."""
    record = _get_record(organization_id, schedule_id, swap_id, consistent=True)
    request = _to_domain(record)
    if actor_id != request.requester_id and not for_others:
        raise Forbidden("Only the person who asked, an owner or an admin can withdraw a request.")
    check_open(request, now)
    changes = [SwapRequestRecord.status.set("withdrawn"), SwapRequestRecord.withdrawn_at.set(now)]
    if not update_if(record, changes, SwapRequestRecord.status == "open"):
        check_open(_to_domain(_get_record(organization_id, schedule_id, swap_id, consistent=True)), now)
        raise Conflict("The request changed meanwhile; read it again.")  # pragma: no cover
    return _to_domain(record)


def expire_swap_request(*, organization_id: str, schedule_id: str, swap_id: str, now: datetime) -> SwapRequest | None:
    """Mark an open request whose start has come expired. Answers the request when it is expired
    (now or by an earlier run: its requester is then told, once), else None (taken, withdrawn,
    gone, or not due)."""
    try:
        record = _get_record(organization_id, schedule_id, swap_id, consistent=True)
    except NotFound:
        return None
    request = _to_domain(record)
    if request.status == "expired":
        return request
    if request.status != "open" or request.start > now:
        return None
    changes = [SwapRequestRecord.status.set("expired"), SwapRequestRecord.expired_at.set(now)]
    if update_if(record, changes, SwapRequestRecord.status == "open"):
        return _to_domain(record)
    latest = _to_domain(_get_record(organization_id, schedule_id, swap_id, consistent=True))
    return latest if latest.status == "expired" else None
