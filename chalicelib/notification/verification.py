"""Sends a contact method's verification code: the consumer of `contact.send_verification`.

The contact methods (chalicelib/contact) write the code's hash and publish this message after the
write; here the code goes out by SMS ("Your Tocsin verification code is 123456. It expires in 10
minutes."), by a call that reads it digit by digit, twice, or as a message to a webhook-style
method's URL (Teams, Mattermost, ntfy, Discord, Google Chat: the payload carries the URL sealed,
`sealed_destination`, opened only here). Payload (shared contract):
`{"user_id", "contact_method_id", "type": "sms" | "voice", "address": "+15551234567",
"code": "123456", "expires_at": "<ISO 8601 UTC>", "budget_charged": true}` (the request charged
the outbound budget: chalicelib/notification/gate.py).

Once per message: the delivery `verify#<contact_method_id>#<expires_at>` is claimed first (a
new code has a new expiry, so a resend is a new delivery). A provider failure releases the claim
and raises, so SQS delivers the message again; on its final receive the failure is logged and the
message is done. A code already expired, or a payload that cannot be sent, is dropped with a log
line. The code itself is never logged.
"""

from __future__ import annotations

import logging
import math
import re
from dataclasses import dataclass
from datetime import datetime

from chalicelib import clock
from chalicelib.contact import hooks as contact_hooks
from chalicelib.contact.tables import user_key
from chalicelib.notification import deliveries
from chalicelib.notification.channels import HOOK_CHANNELS, DeliveryResult
from chalicelib.notification.gate import CHARGED, send_within_budget
from chalicelib.notification.hooks import HookChannel
from chalicelib.notification.sms import SnsSmsChannel, is_phone_number
from chalicelib.notification.voice import TwilioVoiceChannel, say_twiml
from chalicelib.queue.consumers import handles
from chalicelib.queue.messages import Message
from chalicelib.settings import Settings

logger = logging.getLogger("tocsin.notification")

SEND_VERIFICATION = "contact.send_verification"
VERIFICATION_TYPES = ("sms", "voice", *HOOK_CHANNELS)
_CODE = re.compile(r"^\d{4,10}$")


@dataclass(frozen=True)
class VerificationRequest:
    user_id: str
    contact_method_id: str
    method_type: str
    address: str
    code: str
    expires_at: datetime
    sealed_destination: str | None = None  # a webhook-style method's URL, sealed (contact/hooks.py)

    def __repr__(self) -> str:  # the code stays out of every log line and traceback
        return f"VerificationRequest(contact_method_id={self.contact_method_id!r}, type={self.method_type!r})"

    @property
    def delivery_id(self) -> str:
        return f"verify#{self.contact_method_id}#{clock.isoformat(self.expires_at)}"


def parse_request(payload: dict[str, object]) -> VerificationRequest | None:
    """The payload as a request; None when it cannot be sent (logged by the caller)."""
    try:
        request = VerificationRequest(
            user_id=str(payload["user_id"]),
            contact_method_id=str(payload["contact_method_id"]),
            method_type=str(payload["type"]),
            address=str(payload["address"]),
            code=str(payload["code"]),
            expires_at=clock.parse(str(payload["expires_at"])),
            sealed_destination=str(payload["sealed_destination"]) if payload.get("sealed_destination") else None,
        )
    except (KeyError, ValueError, TypeError):
        return None
    if request.method_type not in VERIFICATION_TYPES:
        return None
    if request.method_type in HOOK_CHANNELS:
        if request.sealed_destination is None:
            return None
    elif not is_phone_number(request.address):
        return None
    if not _CODE.match(request.code) or not request.contact_method_id:
        return None
    return request


def minutes_left(expires_at: datetime, now: datetime) -> int:
    """Whole minutes until the code expires, rounded up (a code valid 9 min 30 s says 10)."""
    return max(1, math.ceil((expires_at - now).total_seconds() / 60))


def sms_text(code: str, minutes: int) -> str:
    unit = "minute" if minutes == 1 else "minutes"
    return f"Your Tocsin verification code is {code}. It expires in {minutes} {unit}."


def voice_speech(code: str, minutes: int) -> str:
    """The code digit by digit, twice."""
    digits = ", ".join(code)
    unit = "minute" if minutes == 1 else "minutes"
    return (
        f"This is Tocsin. Your verification code is {digits}. Again, your code is {digits}. "
        f"It expires in {minutes} {unit}. Goodbye."
    )


def hook_text(code: str, minutes: int) -> str:
    unit = "minute" if minutes == 1 else "minutes"
    return (
        f"Your Tocsin verification code is {code}. Type it in Tocsin to start receiving pages here. "
        f"It expires in {minutes} {unit}."
    )


def send_code(
    request: VerificationRequest, now: datetime, organization_id: str = "", *, settings: Settings
) -> DeliveryResult:
    minutes = minutes_left(request.expires_at, now)
    if request.sealed_destination is not None:
        destination = contact_hooks.unseal(
            request.sealed_destination,
            user_key=user_key(organization_id, request.user_id),
            contact_method_id=request.contact_method_id,
            settings=settings,
        )
        channel = HookChannel(request.method_type, settings=settings)
        return channel.send_text(
            destination.url, destination.token, "Tocsin verification code", hook_text(request.code, minutes)
        )
    if request.method_type == "sms":
        return SnsSmsChannel(settings=settings).send_text(request.address, sms_text(request.code, minutes))
    return TwilioVoiceChannel(settings=settings).call(request.address, say_twiml(voice_speech(request.code, minutes)))


def send_code_within_budget(
    request: VerificationRequest, organization_id: str, now: datetime, *, charged: bool, settings: Settings
) -> DeliveryResult:
    """The code through the outbound budget: the request that asked for it charged it already
    (`charged`); a message without that mark (queued before the budget) is charged here."""
    return send_within_budget(
        channel=request.method_type,
        destination=request.address,
        purpose="verification",
        organization_id=organization_id,
        user_id=request.user_id,
        now=now,
        deliver=lambda: send_code(request, now, organization_id, settings=settings),
        charged=charged,
        settings=settings,
    )


@handles(SEND_VERIFICATION)
def on_send_verification(message: Message, settings: Settings) -> None:
    now = clock.now()
    request = parse_request(message.payload)
    where = {"organization_id": message.organization_id, "message_id": message.message_id}
    if request is None:
        logger.warning("verification message dropped: it cannot be sent", extra=where)
        return
    where["contact_method_id"] = request.contact_method_id
    if request.expires_at <= now:
        logger.info("verification code expired before it was sent", extra=where)
        return
    deliveries.send_once(
        request.delivery_id,
        now,
        lambda: send_code_within_budget(
            request, message.organization_id, now, charged=message.payload.get(CHARGED) is True, settings=settings
        ),
        final_attempt=message.final_attempt,
        what="verification code",
        where=where,
    )
