"""When an inbound SMS gets no reply: the loops a reply would feed.

Every inbound SMS is answered by an SMS, so an auto-responder on the other side ("I am away")
and Tocsin could text each other for ever, each reply paid for. No reply goes:
- to a sender that is not a phone number (a short code, an alphanumeric sender id), nor to
  Tocsin's own number;
- when the message was not understood (or came from an unknown number) and it repeats Tocsin's own
  words, or it is the same text as that number's last message within a day.
A reply that acted (`ack 42` from the person paged) is always answered, repeated or not; the
outbound budget bounds those (chalicelib/budget). The last message of each number is kept as a
digest (never its text) in the deliveries table for a day.
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta
from typing import Protocol

from chalicelib.budget.destinations import phone_key
from chalicelib.notification.deliveries import DeliveryRecord
from chalicelib.notification.sms import is_phone_number
from chalicelib.settings import Settings
from chalicelib.store import best_effort

LAST_INBOUND = "sms-in-last"
REMEMBER_FOR = timedelta(days=1)
NOT_A_PHONE = "the sender is not a phone number (a short code or a sender id)"
OWN_NUMBER = "the sender is Tocsin's own number"
ECHO = "the message repeats Tocsin's own words (an auto-responder)"
SAME_AGAIN = "the same text as this number's last message (an auto-responder loop)"


class Inbound(Protocol):
    @property
    def sender(self) -> str: ...

    @property
    def body(self) -> str: ...


def body_digest(body: str) -> str:
    """The text as a loop check compares it: case and spacing aside."""
    return hashlib.sha256(" ".join(body.lower().split()).encode()).hexdigest()


def echoes_tocsin(body: str) -> bool:
    """Every reply Tocsin sends names Tocsin or says what it changed; an auto-responder quoting it does too."""
    lowered = body.lower()
    return "tocsin" in lowered or "nothing was changed" in lowered


def why_not_reply(inbound: Inbound, *, acted: bool, now: datetime, settings: Settings) -> str | None:
    """Why this message gets no SMS back (None: it gets one)."""
    if not is_phone_number(inbound.sender):
        return NOT_A_PHONE
    own = settings.sms_origination_number
    if own and phone_key(own) == phone_key(inbound.sender):
        return OWN_NUMBER
    repeated = _same_as_last(inbound, now)
    if acted:
        return None
    if echoes_tocsin(inbound.body):
        return ECHO
    return SAME_AGAIN if repeated else None


def _same_as_last(inbound: Inbound, now: datetime) -> bool:
    """Whether the number's last message (within a day) said the same; this one is now the last."""
    key = f"{LAST_INBOUND}#{phone_key(inbound.sender)}"
    digest = body_digest(inbound.body)
    try:
        last = DeliveryRecord.get(key, consistent_read=True)
        fresh = last.expires_at is not None and last.expires_at > now
        repeated = fresh and last.body_digest == digest
    except DeliveryRecord.DoesNotExist:
        repeated = False
    record = DeliveryRecord(key, state=LAST_INBOUND, claimed_at=now, expires_at=now + REMEMBER_FOR, body_digest=digest)
    with best_effort("last inbound SMS"):
        record.save()
    return repeated
