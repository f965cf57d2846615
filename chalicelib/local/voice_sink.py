"""The local stage's voice provider: a Twilio Calls API sink, so calls show in the outbox.

POST /local/voice/2010-04-01/Accounts/{sid}/Calls.json (mounted by chalicelib/local/routes.py;
`make run` points the voice channel here) checks what Twilio would check first (HTTP Basic auth
for the account in the path, `To`, `From`, `Twiml`), keeps the call in the local outbox table
as channel "voice" (to, from, the TwiML and the words it says) and answers like Twilio: 201
with the call (`sid`, `status: queued`). Nothing is dialled. A refusal is Twilio's error body
(`code`, `message`, `more_info`, `status`) plus the `success`/`error` pair every error of this
app carries. `To` +15005550001 (Twilio's test number for an invalid destination) is always
refused with 21211, to show a provider failure.

Local-only: the local server mounts the route that calls it.
"""

from __future__ import annotations

import base64
import binascii
import re
import urllib.parse
import uuid
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from datetime import datetime
from email.utils import format_datetime
from typing import Any

from chalicelib import clock
from chalicelib.local import outbox_table
from chalicelib.local.outbox_item import OutboxItem

VOICE_CHANNEL = "voice"
API_VERSION = "2010-04-01"
SINK_PREFIX = "/local/voice"
FAILING_NUMBER = "+15005550001"
MAX_BODY_BYTES = 64 * 1024
MAX_ITEMS = 500
_PHONE = re.compile(r"^\+[1-9]\d{1,14}$")
_INCIDENT_NUMBER = re.compile(r"\bINC-\d{4}-\d{1,12}\b")


@dataclass(frozen=True)
class CallRequest:
    account_sid: str
    to: str
    from_number: str
    twiml: str
    spoken: str


@dataclass(frozen=True)
class Refusal:
    status: int
    code: int
    message: str

    def body(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "message": self.message,
            "more_info": f"https://www.twilio.com/docs/errors/{self.code}",
            "status": self.status,
            "success": False,
            "error": {"code": f"TWILIO_{self.code}", "message": self.message},
        }


@dataclass(frozen=True)
class RecordedCall:
    item_id: str
    to: str
    from_number: str
    twiml: str
    spoken: str
    sent_at: str
    incident_number: str | None


# ---------------------------------------------------------------- pure rules


def basic_user(authorization: str) -> str | None:
    """The user name of an HTTP Basic `Authorization` header that also carries a password."""
    scheme, _, encoded = authorization.partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        user, separator, password = base64.b64decode(encoded.strip(), validate=True).decode().partition(":")
    except (binascii.Error, UnicodeDecodeError):
        return None
    return user if separator and user and password else None


def spoken_text(twiml: str) -> str | None:
    """The words every `<Say>` of a TwiML document says, in order; None when it is not TwiML."""
    if "<!DOCTYPE" in twiml.upper() or "<!ENTITY" in twiml.upper():
        return None  # no entity expansion, ever
    try:
        root = ElementTree.fromstring(twiml)
    except ElementTree.ParseError:
        return None
    if root.tag != "Response":
        return None
    return " ".join(" ".join((say.text or "").split()) for say in root.iter("Say")).strip()


def check_call(*, account_sid: str, authorization: str, body: bytes) -> CallRequest | Refusal:
    """The call as Twilio would take it, or Twilio's refusal."""
    if basic_user(authorization) != account_sid:
        return Refusal(401, 20003, "Authenticate")
    if len(body) > MAX_BODY_BYTES:
        return Refusal(400, 21218, "The request is too large.")
    form = {key: values[-1] for key, values in urllib.parse.parse_qs(body.decode("utf-8", "replace")).items()}
    to, from_number, twiml = form.get("To", ""), form.get("From", ""), form.get("Twiml", "")
    if not _PHONE.match(to) or to == FAILING_NUMBER:
        return Refusal(400, 21211, f"Invalid 'To' Phone Number: {to[:32]}")
    if not _PHONE.match(from_number):
        return Refusal(400, 21212, f"Invalid 'From' Phone Number: {from_number[:32]}")
    if not twiml:
        return Refusal(400, 21205, "A Twiml parameter is required (this sink does not fetch Url).")
    spoken = spoken_text(twiml)
    if spoken is None:
        return Refusal(400, 12100, "Document parse failure: Twiml is not a TwiML <Response>.")
    return CallRequest(account_sid, to, from_number, twiml, spoken)


def call_answer(call: CallRequest, call_sid: str, now: datetime) -> dict[str, Any]:
    """Twilio's answer to a new call (the fields a client reads)."""
    return {
        "sid": call_sid,
        "account_sid": call.account_sid,
        "to": call.to,
        "from": call.from_number,
        "status": "queued",
        "direction": "outbound-api",
        "api_version": API_VERSION,
        "date_created": format_datetime(now, usegmt=True),
        "uri": f"/{API_VERSION}/Accounts/{call.account_sid}/Calls/{call_sid}.json",
    }


# ---------------------------------------------------------------- storage


def record_call(call: CallRequest, now: datetime) -> str:
    """Keep the call for the outbox; returns its call sid."""
    call_sid = "CA" + uuid.uuid4().hex
    found = _INCIDENT_NUMBER.search(call.twiml)
    outbox_table.record(
        OutboxItem(
            channel="voice",
            to=call.to,
            subject=None,
            text=call.spoken,
            sent_at=clock.isoformat(now),
            incident_number=found.group(0) if found else None,
            id=call_sid,
            voice={"from": call.from_number, "twiml": call.twiml},
        )
    )
    return call_sid


def _recorded(item: OutboxItem) -> RecordedCall:
    voice = item.voice or {}
    return RecordedCall(
        item_id=item.id,
        to=item.to,
        from_number=str(voice.get("from") or ""),
        twiml=str(voice.get("twiml") or ""),
        spoken=item.text,
        sent_at=item.sent_at or "",
        incident_number=item.incident_number,
    )


def recorded_calls(limit: int = MAX_ITEMS) -> list[RecordedCall]:
    """Newest first."""
    return [_recorded(item) for item in outbox_table.query(VOICE_CHANNEL, limit=limit)]


def find_call(call_sid: str) -> RecordedCall | None:
    """One recorded call by its sid (local only: GetItems on the outbox table)."""
    item = outbox_table.find(VOICE_CHANNEL, call_sid)
    return _recorded(item) if item is not None else None


def gather_action(twiml: str) -> str | None:
    """Where the call's `<Gather>` posts the key pressed; None when the call takes no key."""
    if spoken_text(twiml) is None:  # not TwiML (and no entity expansion)
        return None
    gather = ElementTree.fromstring(twiml).find("Gather")
    action = gather.get("action") if gather is not None else None
    return action or None
