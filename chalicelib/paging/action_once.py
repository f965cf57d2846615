"""Every action taken from a page happens once (docs/PAGE_ACTIONS.md, "Once per action").

A Slack click, a key pressed on a call (and the later channels' callbacks) each carry an id of
that one action: Slack's `action_ts` and `trigger_id` (or, without them, the signed body itself),
Twilio's `CallSid` and `Digits` with Tocsin's token of the call. The action is claimed by that id
through the delivery kernel (chalicelib/delivery/claims.py, a notification-deliveries record
`action#<channel>#<sha256>`, kept two days: longer than any signature or call URL lives), and the
first answer is stored with the claim. A replay of the same request, however many times and
however close together, changes nothing and is answered what the first was (`Outcome.replay`
True: the channel also skips its own side effects, such as updating the Slack message); one
arriving while the first is still acting is told so. An action that failed unexpectedly
releases its claim, so the provider's retry acts.

SMS replies are claimed the same way per inbound message (chalicelib/paging/sms_reply.py) and
email links per link (chalicelib/notification/email_links.py).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import asdict
from datetime import datetime, timedelta

from chalicelib.delivery.claims import Claim, run_once
from chalicelib.notification.deliveries import CLAIM_LEASE, DeliveryRecord
from chalicelib.paging.respond import Outcome

KEEP_FOR = timedelta(days=2)
ACTING = "acting"
DONE = "done"
IN_FLIGHT = "This action is being carried out already; nothing more was done."


def action_id(channel: str, *parts: str) -> str:
    """The claim's key for one action on `channel`, from the request's own ids (hashed: they are
    provider data of any length)."""
    digest = hashlib.sha256("\x00".join(parts).encode("utf-8", errors="replace")).hexdigest()
    return f"action#{channel}#{digest}"


def _claim(key: str, now: datetime) -> Claim:
    return Claim(
        DeliveryRecord(key, state=ACTING, claimed_at=now, expires_at=now + KEEP_FOR),
        in_progress=DeliveryRecord.state == ACTING,
        takeover=(DeliveryRecord.state == ACTING) & (DeliveryRecord.claimed_at < now - CLAIM_LEASE),
        what="an action from a page",
    )


def once(key: str, now: datetime, act: Callable[[], Outcome]) -> Outcome:
    """`act()` the first time `key` is seen; afterwards the first answer, marked as a replay."""

    def settle(outcome: Outcome) -> bool:
        answer = asdict(outcome) | {"replay": False}
        DeliveryRecord(key, state=DONE, claimed_at=now, expires_at=now + KEEP_FOR, answer=answer).save()
        return True

    done = run_once(_claim(key, now), act, settle)
    if done is not None:
        return done.result
    return first_answer(key)


def first_answer(key: str) -> Outcome:
    """What the first request with this key was answered (marked as a replay)."""
    try:
        record = DeliveryRecord.get(key, consistent_read=True)
    except DeliveryRecord.DoesNotExist:
        record = None
    answer = record.answer if record is not None and record.state == DONE else None
    if not isinstance(answer, dict):
        return Outcome(False, IN_FLIGHT, replay=True)
    number = answer.get("incident_number")
    return Outcome(
        bool(answer.get("done")),
        str(answer.get("message") or ""),
        str(number) if number is not None else None,
        replay=True,
    )
