"""Replies to an SMS page: `4`, `ack`, `ack 42` acknowledge; `6`, `resolve`, `resolve 42` resolve.

The number is the incident's short code: the sequence at the end of the incident number the SMS
carried (`INC-2026-0042` -> `42`). Without one, the reply is about the latest incident paged to
that phone. Each SMS page leaves two small records keyed by the phone number (the latest page,
and the page under its short code) in the deliveries table, kept a week like the delivery ids;
a reply reads them with GetItem, never a Scan.

Who replied: the sender must be a verified SMS contact method (the address index of contact
methods). The page record names the organization and the person paged; a phone shared by two
verified people acts for the one who was paged. The organization never comes from the message.
The sender gets one SMS back saying what happened or why not, unless that would feed a loop (a
short code, our own words echoed, the same text again: chalicelib/paging/sms_loops.py) or pass the
outbound budget: a number that is no verified contact gets at most one reply a day, and all such
numbers together at most 20 an hour (chalicelib/budget). Each inbound message (`inboundMessageId`)
is acted on once, so an SNS retry neither acts nor replies twice.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from chalicelib.contact.service import owners_of_phone
from chalicelib.directory.users import get_user
from chalicelib.errors import InvalidPayload, NotFound
from chalicelib.notification import deliveries
from chalicelib.notification.deliveries import KEEP_FOR, DeliveryRecord
from chalicelib.notification.gate import send_within_budget
from chalicelib.notification.sms import SMS_LIMIT, SnsSmsChannel, gsm7, is_phone_number, shorten
from chalicelib.paging import sms_loops
from chalicelib.paging.respond import Action, respond
from chalicelib.settings import Settings
from chalicelib.store import best_effort

logger = logging.getLogger("tocsin.paging")

SMS_PAGE_STATE = "sms-page"
_WORDS: dict[str, Action] = {
    "4": "acknowledge",
    "ack": "acknowledge",
    "acknowledge": "acknowledge",
    "6": "resolve",
    "resolve": "resolve",
}
# "ack", "ACK 42", "ack #42", "ack INC-2026-0042", "4 42"; trailing punctuation is forgiven.
_REPLY = re.compile(r"^(?P<word>[a-z0-9]+)(?:\s+#?(?:inc-\d{4}-)?(?P<code>\d{1,9}))?[\s.!]*$", re.IGNORECASE)
HELP = "Reply 4 or ack to acknowledge, 6 or resolve to resolve; add the incident's number, e.g. ack 42."
NOT_VERIFIED = "This number is not a verified Tocsin SMS contact; nothing was changed."


@dataclass(frozen=True)
class Reply:
    action: Action
    code: str | None  # the short code named, or None: the latest page


@dataclass(frozen=True)
class InboundSms:
    """The fields of AWS's two-way SMS message that the reply needs."""

    message_id: str
    sender: str  # originationNumber, E.164
    body: str


@dataclass(frozen=True)
class PagedIncident:
    organization_id: str
    incident_number: str
    user_id: str


def read_reply(text: str) -> Reply | None:
    """The action and short code a reply asks for; None when it is not one of the forms."""
    match = _REPLY.match(text.strip())
    if match is None:
        return None
    action = _WORDS.get(match.group("word").lower())
    if action is None:
        return None
    code = match.group("code")
    return Reply(action, str(int(code)) if code else None)


def short_code(incident_number: str) -> str:
    """`INC-2026-0042` -> `42`: the number a reply may name."""
    return str(int(incident_number.rsplit("-", 1)[-1]))


def read_inbound(message: str) -> InboundSms:
    """AWS's two-way SMS JSON (the SNS Message) -> InboundSms; INVALID_PAYLOAD when it is not one."""
    try:
        data: Any = json.loads(message)
    except ValueError:
        raise InvalidPayload("The SNS Message is not the JSON of an inbound SMS.") from None
    if not isinstance(data, dict):
        raise InvalidPayload("The SNS Message is not the JSON of an inbound SMS.")
    problems = [
        f"'{key}' is required in an inbound SMS and must be a string."
        for key in ("originationNumber", "messageBody", "inboundMessageId")
        if not isinstance(data.get(key), str)
    ]
    if problems:
        raise InvalidPayload.from_problems(problems)
    return InboundSms(message_id=data["inboundMessageId"], sender=data["originationNumber"], body=data["messageBody"])


def _page_key(phone: str, code: str | None) -> str:
    return f"sms-page#{phone}" if code is None else f"sms-page#{phone}#{code}"


def remember_page(*, phone: str, organization_id: str, incident_number: str, user_id: str, now: datetime) -> None:
    """Record that `phone` was paged for the incident (the latest page, and under its short code).
    Best effort: a page is never failed for it (a reply without a record is told so)."""
    for code in (None, short_code(incident_number)):
        record = DeliveryRecord(
            _page_key(phone, code),
            state=SMS_PAGE_STATE,
            claimed_at=now,
            expires_at=now + KEEP_FOR,
            organization_id=organization_id,
            incident_number=incident_number,
            user_id=user_id,
        )
        with best_effort("sms page record"):
            record.save()


def recall_page(phone: str, code: str | None, now: datetime) -> PagedIncident | None:
    try:
        record = DeliveryRecord.get(_page_key(phone, code), consistent_read=True)
    except DeliveryRecord.DoesNotExist:
        return None
    if record.state != SMS_PAGE_STATE or not (record.organization_id and record.incident_number and record.user_id):
        return None
    if record.expires_at is not None and record.expires_at <= now:  # TTL deletes lazily
        return None
    return PagedIncident(str(record.organization_id), str(record.incident_number), str(record.user_id))


@dataclass(frozen=True)
class Answer:
    """What to tell the sender; `sender` is (organization, person) when the number is a verified
    SMS contact, None for an unknown number; `acted`: the reply was understood and acted on."""

    text: str
    sender: tuple[str, str] | None = None
    acted: bool = False


def answer(inbound: InboundSms, now: datetime, *, settings: Settings) -> str:
    """Act on the reply if the sender may, and return what to tell them."""
    return decide(inbound, now, settings=settings).text


def decide(inbound: InboundSms, now: datetime, *, settings: Settings) -> Answer:
    """Act on the reply if the sender may; what to tell them and who they are."""
    if not is_phone_number(inbound.sender):
        return Answer(NOT_VERIFIED)
    owners = owners_of_phone(method_type="sms", address=inbound.sender)
    if not owners:
        return Answer(NOT_VERIFIED)
    known = (owners[0][0], owners[0][1])
    reply = read_reply(inbound.body)
    if reply is None:
        return Answer(f"Tocsin did not understand that. {HELP}", known)
    paged = recall_page(inbound.sender, reply.code, now)
    if paged is None:
        if reply.code is not None:
            return Answer(
                f"No incident {reply.code} was paged to this number in the last week; nothing was changed.", known
            )
        return Answer("No incident was paged to this number in the last week; nothing was changed.", known)
    in_organization = [user_id for organization_id, user_id, _ in owners if organization_id == paged.organization_id]
    # A number shared by several people acts for the one who was paged; one no longer verified
    # (removed or changed since the page) acts for nobody.
    if paged.user_id not in in_organization:
        return Answer(NOT_VERIFIED)
    try:
        person = get_user(organization_id=paged.organization_id, user_id=paged.user_id)
    except NotFound:
        return Answer(NOT_VERIFIED)
    outcome = respond(
        organization_id=paged.organization_id,
        incident_number=paged.incident_number,
        action=reply.action,
        person=person,
        channel="sms",
        now=now,
        settings=settings,
    )
    return Answer(outcome.message, (paged.organization_id, paged.user_id), acted=True)


@dataclass(frozen=True)
class Handled:
    """An inbound SMS answered: what it was told, and whether an SMS went back (`withheld`: why not)."""

    text: str
    replied: bool
    withheld: str | None = None


def handle_inbound(
    inbound: InboundSms, now: datetime, channel: SnsSmsChannel | None = None, *, settings: Settings
) -> str | None:
    """Answer one inbound SMS once and text the answer back (as `handle`); the answer, or None when
    this message was handled before (an SNS retry): nothing is done or sent again."""
    handled = handle(inbound, now, channel, settings=settings)
    return handled.text if handled is not None else None


def handle(
    inbound: InboundSms, now: datetime, channel: SnsSmsChannel | None = None, *, settings: Settings
) -> Handled | None:
    """Answer one inbound SMS once, and text the answer back unless that would feed a loop or pass
    the outbound budget (chalicelib/paging/sms_loops.py). None for an SNS retry of a message
    handled before: nothing is done or sent again."""
    claim_id = f"sms-in#{inbound.message_id}"

    def answered(_: Answer) -> bool:
        deliveries.mark_sent(claim_id, now)
        return True

    done = deliveries.once(claim_id, now, lambda: decide(inbound, now, settings=settings), answered)
    if done is None:
        return None
    decided = done.result
    text = shorten(gsm7(decided.text), SMS_LIMIT)
    why = sms_loops.why_not_reply(inbound, acted=decided.acted, now=now, settings=settings)
    if why is not None:
        logger.info("no SMS reply", extra={"why": why})
        return Handled(decided.text, False, why)
    organization_id, user_id = decided.sender or (None, None)
    result = send_within_budget(
        channel="sms",
        destination=inbound.sender,
        purpose="reply" if decided.sender else "unknown_sender_reply",
        organization_id=organization_id,
        user_id=user_id,
        now=now,
        deliver=lambda: (channel or SnsSmsChannel(settings=settings)).send_text(inbound.sender, text),
        settings=settings,
    )
    if result.sent:
        return Handled(decided.text, True)
    logger.warning("the reply SMS was not sent", extra={"error_code": result.error_code})
    return Handled(decided.text, False, result.message)
