"""SMS through Amazon SNS: Publish to the person's phone number (E.164), as a transactional SMS.

The text is one SMS: at most 160 GSM-7 characters (the 7-bit alphabet every phone reads; one
character outside it would switch the whole message to UCS-2 and its 70-character segments).
`gsm7` makes any string fit that alphabet: typographic punctuation is replaced, accented letters
outside the alphabet lose their accent, anything else (emoji, most scripts) is dropped.
`page_text` is the page: `[SEV1] INC-2026-0042 Checkout 500s. Reply 4 to ack, 6 to resolve.`,
the title shortened with `...` when the whole would not fit. The reply codes are fixed here;
replies are read by a later issue.

A ClientError becomes `SNS_<Code>` (e.g. SNS_InvalidParameter, SNS_OptedOut), a connection
problem or timeout PROVIDER_ERROR; both are provider failures. No phone number: missing contact.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from typing import Any

from chalicelib import aws
from chalicelib.notification.channels import PROVIDER_ERROR, ChannelName, DeliveryResult, Notification, Recipient
from chalicelib.settings import get_settings

logger = logging.getLogger("tocsin.notification")

SMS_LIMIT = 160
REPLY_ACK = "4"
REPLY_RESOLVE = "6"
REPLY_HINT = f"Reply {REPLY_ACK} to ack, {REPLY_RESOLVE} to resolve."
ELLIPSIS = "..."  # "\u2026" is not in the GSM-7 alphabet
E164 = re.compile(r"^\+[1-9]\d{7,14}$")

# GSM 03.38: the basic alphabet (one septet each) and the extension table (escape + one: two).
_BASIC = frozenset(
    "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?"
    "¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà"
)
_EXTENSION = frozenset("^{}\\[~]|€")
_REPLACEMENTS = {
    "\u2018": "'",
    "\u2019": "'",
    "\u201a": "'",
    "\u201b": "'",
    "\u2032": "'",
    "`": "'",
    "\u00b4": "'",
    "\u201c": '"',
    "\u201d": '"',
    "\u201e": '"',
    "\u00ab": '"',
    "\u00bb": '"',
    "\u2033": '"',
    "\u2010": "-",
    "\u2011": "-",
    "\u2012": "-",
    "\u2013": "-",
    "\u2014": "-",
    "\u2015": "-",
    "\u2212": "-",
    "\u2022": "-",
    "\u00b7": "-",
    "\u2026": "...",
    "\u00d7": "x",
    "\u00e7": "c",  # the alphabet has the capital only
    # Letters NFKD does not split into a base letter and a mark.
    "\u0141": "L",
    "\u0142": "l",
    "\u0110": "D",
    "\u0111": "d",
    "\u0131": "i",
    "\u0152": "OE",
    "\u0153": "oe",
}
_SPACES = re.compile(r"\s+")


def gsm7(value: str) -> str:
    """`value` on one line in the GSM-7 alphabet: whitespace runs become one space, typographic
    punctuation its plain form, letters outside the alphabet their base letter; the rest is dropped."""
    kept: list[str] = []
    for character in _SPACES.sub(" ", value):
        if character in _BASIC or character in _EXTENSION:
            kept.append(character)
        elif character in _REPLACEMENTS:
            kept.append(_REPLACEMENTS[character])
        else:
            # NFKD splits "ő" into "o" and a combining mark, "ﬁ" into "fi", full-width letters into ASCII.
            kept.extend(part for part in unicodedata.normalize("NFKD", character) if part in _BASIC)
    return _SPACES.sub(" ", "".join(kept)).strip()


def septets(text: str) -> int:
    """The length of a GSM-7 text as a phone counts it (an extension character counts twice)."""
    return sum(2 if character in _EXTENSION else 1 for character in text)


def shorten(text: str, limit: int) -> str:
    """`text` in at most `limit` septets, ending in `...` when it had to be cut."""
    if septets(text) <= limit:
        return text
    budget = limit - len(ELLIPSIS)
    cut: list[str] = []
    used = 0
    for character in text:
        used += septets(character)
        if used > budget:
            break
        cut.append(character)
    return "".join(cut).rstrip(" .,;:-") + ELLIPSIS


def page_text(notification: Notification) -> str:
    """The page as one SMS: `[SEV1] INC-2026-0042 Checkout 500s. Reply 4 to ack, 6 to resolve.`"""
    head = gsm7(f"[{notification.severity}] {notification.incident_number}")
    title = gsm7(notification.title)
    if not title:
        return shorten(f"{head}. {REPLY_HINT}", SMS_LIMIT)
    room = SMS_LIMIT - septets(f"{head} . {REPLY_HINT}")
    title = shorten(title, max(room, len(ELLIPSIS)))
    end = "" if title.endswith((".", "!", "?")) else "."
    return shorten(f"{head} {title}{end} {REPLY_HINT}", SMS_LIMIT)


def is_phone_number(value: str | None) -> bool:
    return bool(value and E164.match(value))


class SnsSmsChannel:
    name: ChannelName = "sms"

    def __init__(self, client: Any | None = None) -> None:
        self._client = client

    def send(self, notification: Notification, recipient: Recipient) -> DeliveryResult:
        if not is_phone_number(recipient.phone):
            return DeliveryResult.contact_missing(self.name, "phone number")
        assert recipient.phone is not None
        return self.send_text(recipient.phone, page_text(notification))

    def send_text(self, phone: str, text: str) -> DeliveryResult:
        """One SMS to `phone` (E.164). The text is not logged: it may be a verification code."""
        from botocore.exceptions import BotoCoreError, ClientError

        settings = get_settings()
        attributes = {"AWS.SNS.SMS.SMSType": {"DataType": "String", "StringValue": "Transactional"}}
        if settings.sms_sender_id:
            attributes["AWS.SNS.SMS.SenderID"] = {"DataType": "String", "StringValue": settings.sms_sender_id}
        if settings.sms_origination_number:
            attributes["AWS.MM.SMS.OriginationNumber"] = {
                "DataType": "String",
                "StringValue": settings.sms_origination_number,
            }
        client = self._client or aws.client("sns")
        try:
            response = client.publish(PhoneNumber=phone, Message=text, MessageAttributes=attributes)
        except ClientError as error:
            code = str(error.response.get("Error", {}).get("Code") or "Unknown")
            logger.warning("SNS refused an SMS", extra={"error_code": code})
            return DeliveryResult.provider_failed(self.name, f"SNS_{code}", f"SNS refused the SMS: {code}.")
        except BotoCoreError as error:
            logger.warning("SNS unreachable", extra={"error": type(error).__name__})
            return DeliveryResult.provider_failed(self.name, PROVIDER_ERROR, f"SNS could not be reached: {error}")
        return DeliveryResult.delivered(self.name, str(response.get("MessageId") or "") or None)
