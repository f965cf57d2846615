"""SMS through Amazon SNS: Publish to the person's phone number (E.164), as a transactional SMS.

The text is one SMS: at most 160 GSM-7 characters (the 7-bit alphabet every phone reads; one
character outside it would switch the whole message to UCS-2 and its 70-character segments).
`gsm7` makes any string fit that alphabet: typographic punctuation is replaced, accented letters
outside the alphabet lose their accent, anything else (emoji, most scripts) is dropped.
`page_text` is the page, three lines in one SMS (docs/PAGES.md):

    [SEV1] INC-2026-0042 Checkout: Checkout 500s.
    https://tocsin.example/app/incidents/INC-2026-0042
    Reply 4 to ack, 6 to resolve.

Severity, number and the reply words always fit; the console link is never cut (a cut link is
a wrong link): it is left out when it is longer than MAX_LINK; the service name is cut to
MAX_SERVICE and left out when the title would get less than MIN_TITLE; the title takes the rest,
shortened with `...`. The description, labels and other links do not fit one SMS: the email and
the console page have them. The reply codes are read by chalicelib/paging/sms_reply.py.

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
from chalicelib.settings import Settings

logger = logging.getLogger("tocsin.notification")

SMS_LIMIT = 160
MAX_LINK = 80  # septets: a console link longer than this leaves too little room for the title
MAX_SERVICE = 24
MIN_TITLE = 24
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


def _link_line(url: str) -> str | None:
    """The console link as its own line, when it is all GSM-7 and short enough to keep whole."""
    link = url.strip()
    if not link or gsm7(link) != link or septets(link) > MAX_LINK:
        return None
    return link


def page_text(notification: Notification) -> str:
    """The page as one SMS (at most 160 GSM-7 septets, newlines included)."""
    head = gsm7(f"[{notification.severity}] {notification.incident_number}")
    link = _link_line(notification.url)
    tail = f"\n{link}\n{REPLY_HINT}" if link else f" {REPLY_HINT}"
    if septets(head) + septets(tail) + 2 > SMS_LIMIT:  # an absurd number or severity: keep the reply words
        return shorten(f"{head}.", SMS_LIMIT - septets(f" {REPLY_HINT}")) + f" {REPLY_HINT}"
    title = gsm7(notification.title)
    service = shorten(gsm7(notification.service_name or ""), MAX_SERVICE)
    room = SMS_LIMIT - septets(f"{head} .{tail}")
    if service and room - septets(f"{service}: ") >= min(MIN_TITLE, max(septets(title), 1)):
        head, room = f"{head} {service}:", room - septets(f"{service}: ")
    if not title:
        return f"{head.rstrip(':')}.{tail}"
    title = shorten(title, max(room, len(ELLIPSIS)))
    end = "" if title.endswith((".", "!", "?")) else "."
    return shorten(f"{head} {title}{end}", SMS_LIMIT - septets(tail)) + tail


def is_phone_number(value: str | None) -> bool:
    return bool(value and E164.match(value))


class SnsSmsChannel:
    name: ChannelName = "sms"

    def __init__(self, client: Any | None = None, *, settings: Settings) -> None:
        self._client = client
        self._settings = settings

    def send(self, notification: Notification, recipient: Recipient) -> DeliveryResult:
        if not is_phone_number(recipient.phone):
            return DeliveryResult.contact_missing(self.name, "phone number")
        assert recipient.phone is not None
        return self.send_text(recipient.phone, page_text(notification))

    def send_text(self, phone: str, text: str) -> DeliveryResult:
        """One SMS to `phone` (E.164). The text is not logged: it may be a verification code."""
        from botocore.exceptions import BotoCoreError, ClientError

        settings = self._settings
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
