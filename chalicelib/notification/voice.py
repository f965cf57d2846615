"""Voice calls through Twilio's Calls API (or a provider speaking the same API).

`POST {base}/2010-04-01/Accounts/{AccountSid}/Calls.json`, form-encoded `To`, `From` and
`Twiml` (the call's instructions inline), HTTP Basic auth with the account SID and auth token.
Twilio answers 201 with the call as JSON (`sid`, `status: queued`); a refusal is a 4xx whose
JSON body carries Twilio's numeric error `code` (VOICE_<code>, e.g. VOICE_21211 for an invalid
number, VOICE_20003 for bad credentials). Any other HTTP error, a timeout or an unreadable
answer is VOICE_UNAVAILABLE; missing settings outside the local stage VOICE_NOT_CONFIGURED. All
are provider failures. The auth token is never logged nor put in a result message.

The page call reads the incident (severity, service, number digit by digit in groups, title, the
first sentence of its description without web addresses: docs/PAGES.md) and gathers one key:
4 acknowledge, 6 resolve, 8 escalate, posted to `{public_base_url}/integrations/voice/
callback` with the incident, the organization, the person called and our own token in the URL
(notification/voice_link.py; answered by paging/voice_callback.py). Every value goes into the
TwiML through ElementTree, which escapes it; characters XML cannot carry are removed first.
"""

from __future__ import annotations

import base64
import http.client
import json
import logging
import re
import unicodedata
import urllib.error
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ElementTree
from datetime import datetime
from typing import Any

from chalicelib import clock
from chalicelib.notification.channels import ChannelName, DeliveryResult, Notification, Recipient
from chalicelib.notification.page_facts import first_sentence
from chalicelib.notification.sms import is_phone_number
from chalicelib.notification.voice_link import (
    PRESS_ACK,
    PRESS_ESCALATE,
    PRESS_RESOLVE,
    CallbackTarget,
    build_callback_url,
    expiry_for,
    token_key,
)
from chalicelib.settings import Settings

logger = logging.getLogger("tocsin.notification")

UNAVAILABLE = "VOICE_UNAVAILABLE"
NOT_CONFIGURED = "VOICE_NOT_CONFIGURED"
MAX_ANSWER_BYTES = 1 << 20
GATHER_TIMEOUT_SECONDS = 10
MAX_SPOKEN_TITLE = 200
MAX_SPOKEN_SERVICE = 60
MAX_SPOKEN_DESCRIPTION = 200
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_SPACES = re.compile(r"\s+")
_SEVERITY = re.compile(r"^SEV(\d)$")


# ---------------------------------------------------------------- what is said (pure)


def speakable(value: str, limit: int = MAX_SPOKEN_TITLE) -> str:
    """One line a speech engine reads well: no control characters, no emoji or other symbols."""
    text = _NOT_XML.sub(" ", value)
    text = "".join(ch for ch in text if unicodedata.category(ch) not in ("So", "Cs", "Co", "Cn"))
    text = _SPACES.sub(" ", text).strip()
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


def spoken_digits(value: str) -> str:
    """`INC-2026-0042` -> `I N C, 2 0 2 6, 0 0 4 2`: each character on its own, groups apart."""
    groups = [group for group in re.split(r"[^A-Za-z0-9]+", value) if group]
    return ", ".join(" ".join(group) for group in groups)


def spoken_severity(severity: str) -> str:
    match = _SEVERITY.match(severity.strip().upper())
    return f"severity {match.group(1)}" if match else speakable(severity, 20)


KEYS_SPEECH = f"Press {PRESS_ACK} to acknowledge, {PRESS_RESOLVE} to resolve, {PRESS_ESCALATE} to escalate."


def _sentence(text: str) -> str:
    return text if text.endswith((".", "!", "?")) else f"{text}."


def page_speech(notification: Notification, *, keys: bool = True) -> str:
    """`This is Tocsin. A severity 1 incident on Checkout, number I N C, ...: Checkout 500s. Error
    rate above 5 percent. Press 4 ...`: what a voice can say, no links."""
    title = speakable(notification.title) or "no title"
    service = speakable(notification.service_name or "", MAX_SPOKEN_SERVICE)
    on_service = f" on {service}" if service else ""
    speech = (
        f"This is Tocsin. A {spoken_severity(notification.severity)} incident{on_service}, "
        f"number {spoken_digits(notification.incident_number)}: {title}."
    )
    detail = speakable(first_sentence(notification.description, MAX_SPOKEN_DESCRIPTION) or "")
    if detail:
        speech += f" {_sentence(detail)}"
    return f"{speech} {KEYS_SPEECH}" if keys else speech


def callback_url(*, organization_id: str, incident_number: str, user_id: str, now: datetime, settings: Settings) -> str:
    """Where the call posts the key pressed: signed by us for this person and incident, for an hour."""
    target = CallbackTarget(organization_id, incident_number, user_id, expiry_for(now))
    return build_callback_url(settings.public_base_url, target, token_key(settings.api_key_hmac_secret))


def page_twiml(notification: Notification, action_url: str) -> str:
    """`<Response><Gather numDigits="1" ...><Say>...</Say></Gather><Say>Goodbye.</Say></Response>`;
    the message is said twice before the call gives up waiting for a key."""
    response = ElementTree.Element("Response")
    gather = ElementTree.SubElement(
        response,
        "Gather",
        {
            "numDigits": "1",
            "timeout": str(GATHER_TIMEOUT_SECONDS),
            "action": _NOT_XML.sub("", action_url),
            "method": "POST",
        },
    )
    say = ElementTree.SubElement(gather, "Say", {"loop": "2"})
    say.text = page_speech(notification)
    goodbye = ElementTree.SubElement(response, "Say")
    goodbye.text = "No key was pressed. Goodbye."
    return ElementTree.tostring(response, encoding="unicode")


def say_twiml(speech: str, *, times: int = 1) -> str:
    """A call that only speaks: `<Response><Say loop="n">...</Say></Response>`."""
    response = ElementTree.Element("Response")
    say = ElementTree.SubElement(response, "Say", {"loop": str(times)} if times > 1 else {})
    say.text = speakable(speech, 1000)
    return ElementTree.tostring(response, encoding="unicode")


# ---------------------------------------------------------------- the provider


class TwilioVoiceChannel:
    name: ChannelName = "voice"

    def __init__(
        self,
        base_url: str | None = None,
        credentials: tuple[str, str, str] | None = None,
        timeout: float | None = None,
        *,
        settings: Settings,
    ) -> None:
        self._settings = settings
        self._base_url = base_url
        self._credentials = credentials  # (account SID, auth token, from number)
        self._timeout = timeout

    def send(self, notification: Notification, recipient: Recipient) -> DeliveryResult:
        if not is_phone_number(recipient.phone):
            return DeliveryResult.contact_missing(self.name, "phone number")
        assert recipient.phone is not None
        if notification.organization_id is None:  # nobody to act for: the call only speaks
            return self.call(recipient.phone, say_twiml(page_speech(notification, keys=False), times=2))
        action_url = callback_url(
            organization_id=notification.organization_id,
            incident_number=notification.incident_number,
            user_id=recipient.user_id,
            now=clock.now(),
            settings=self._settings,
        )
        return self.call(recipient.phone, page_twiml(notification, action_url))

    def call(self, phone: str, twiml: str) -> DeliveryResult:
        """Place one call to `phone` (E.164) that follows `twiml`. Neither is logged."""
        settings = self._settings
        credentials = self._credentials or settings.voice_credentials()
        if credentials is None:
            return DeliveryResult.provider_failed(self.name, NOT_CONFIGURED, "No voice provider is configured.")
        account_sid, auth_token, from_number = credentials
        base_url = (self._base_url or settings.voice_api_url()).rstrip("/")
        timeout = self._timeout if self._timeout is not None else settings.voice_timeout_seconds
        basic = base64.b64encode(f"{account_sid}:{auth_token}".encode()).decode()
        request = urllib.request.Request(
            f"{base_url}/2010-04-01/Accounts/{urllib.parse.quote(account_sid, safe='')}/Calls.json",
            data=urllib.parse.urlencode({"To": phone, "From": from_number, "Twiml": twiml}).encode(),
            headers={
                "Authorization": f"Basic {basic}",
                "Content-Type": "application/x-www-form-urlencoded",
                "Accept": "application/json",
            },
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                raw = response.read(MAX_ANSWER_BYTES)
        except urllib.error.HTTPError as error:
            return self._refused(error)
        except (OSError, http.client.HTTPException) as error:  # URLError, timeouts, resets
            reason = getattr(error, "reason", None) or error
            logger.warning("voice provider unreachable", extra={"error": type(error).__name__})
            return DeliveryResult.provider_failed(
                self.name, UNAVAILABLE, f"The voice provider could not be reached: {reason}."
            )
        answer = _json_object(raw)
        sid = answer.get("sid") if answer else None
        if not isinstance(sid, str) or not sid:
            return DeliveryResult.provider_failed(self.name, UNAVAILABLE, "The voice provider's answer was not a call.")
        return DeliveryResult.delivered(self.name, sid)

    def _refused(self, error: urllib.error.HTTPError) -> DeliveryResult:
        try:
            answer = _json_object(error.read(MAX_ANSWER_BYTES))
        except (OSError, http.client.HTTPException):
            answer = None
        code = answer.get("code") if answer else None
        if 400 <= error.code < 500 and isinstance(code, int) and not isinstance(code, bool):
            text = str(answer.get("message") or code) if answer else str(code)
            logger.warning("voice provider refused a call", extra={"status": error.code, "provider_code": code})
            return DeliveryResult.provider_failed(
                self.name, f"VOICE_{code}", f"The voice provider refused the call: {text[:300]}"
            )
        logger.warning("voice provider answered an HTTP error", extra={"status": error.code})
        return DeliveryResult.provider_failed(self.name, UNAVAILABLE, f"The voice provider answered HTTP {error.code}.")


def _json_object(raw: bytes) -> dict[str, Any] | None:
    try:
        answer = json.loads(raw)
    except ValueError:
        return None
    return answer if isinstance(answer, dict) else None
