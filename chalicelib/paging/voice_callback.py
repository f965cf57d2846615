"""A key pressed on a page call: Twilio posts the form (`Digits`, `CallSid`, ...) to the callback
URL the call carried (notification/voice_link.py). We check Twilio's signature (the request came
from the provider) and our token in the URL (we built it, for this person and incident, and it
has not expired), then act for the person called through `paging.respond` (channel "voice") and
answer TwiML that says what happened, or why not.

A request that fails either check is refused (InvalidSignature, 401) and changes nothing. Past
the checks every answer is TwiML (200): Twilio reads a non-2xx answer to the caller as "an
application error", which tells the person nothing.

Each key press acts once (chalicelib/paging/action_once.py), by Twilio's `CallSid` and `Digits`
with our token: the same signed request posted again changes nothing and is answered what the
first was.
"""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from collections.abc import Mapping, Sequence
from datetime import datetime

from chalicelib.directory.users import get_user
from chalicelib.errors import InvalidSignature, NotFound
from chalicelib.notification.voice import KEYS_SPEECH, say_twiml, speakable
from chalicelib.notification.voice_link import (
    KEY_ACTIONS,
    CallbackTarget,
    build_callback_url,
    requested_url,
    signature_matches,
    target_from_query,
    token_key,
)
from chalicelib.paging import action_once
from chalicelib.paging.respond import Action, respond
from chalicelib.settings import Settings

GATHER_TIMEOUT_SECONDS = 10


def keys_twiml(speech: str, action_url: str) -> str:
    """Say `speech` and wait for one more key (after a key that does nothing)."""
    response = ElementTree.Element("Response")
    gather = ElementTree.SubElement(
        response,
        "Gather",
        {"numDigits": "1", "timeout": str(GATHER_TIMEOUT_SECONDS), "action": action_url, "method": "POST"},
    )
    say = ElementTree.SubElement(gather, "Say")
    say.text = speakable(speech, 1000)
    goodbye = ElementTree.SubElement(response, "Say")
    goodbye.text = "No key was pressed. Goodbye."
    return ElementTree.tostring(response, encoding="unicode")


def answer_key(
    *, query: Mapping[str, str], form: Sequence[tuple[str, str]], signature: str, now: datetime, settings: Settings
) -> str:
    """The TwiML answer to one callback; raises InvalidSignature when it is not genuine."""
    target = verify_callback(query=query, form=form, signature=signature, now=now, settings=settings)
    return answer_press(target, form, now, settings=settings)


def verify_callback(
    *, query: Mapping[str, str], form: Sequence[tuple[str, str]], signature: str, now: datetime, settings: Settings
) -> CallbackTarget:
    """Both checks (Twilio's signature, our token in the URL): the person and incident called, or
    InvalidSignature. The callback route's credential (chalicelib.api.provider_signatures)."""
    credentials = settings.voice_credentials()
    if credentials is None:
        raise InvalidSignature("No voice provider is configured, so no callback can be verified.")
    auth_token = credentials[1]
    if not signature_matches(auth_token, requested_url(settings.public_base_url, query), form, signature):
        raise InvalidSignature("The X-Twilio-Signature header is missing or does not verify.")
    target = target_from_query(query, token_key(settings.api_key_hmac_secret), now)
    if target is None:
        raise InvalidSignature("The callback URL was not issued by Tocsin for this call, or it has expired.")
    return target


def answer_press(target: CallbackTarget, form: Sequence[tuple[str, str]], now: datetime, *, settings: Settings) -> str:
    """The TwiML answer to the key pressed on a verified callback (`verify_callback`)."""
    key = token_key(settings.api_key_hmac_secret)
    try:
        person = get_user(organization_id=target.organization_id, user_id=target.user_id)
    except NotFound:
        return say_twiml("Your Tocsin account was not found. Nothing was changed. Goodbye.")
    digits = dict(form).get("Digits", "").strip()
    action: Action | None = KEY_ACTIONS.get(digits)
    if action is None:
        heard = f"Key {digits[:4]} does nothing." if digits else "No key was heard."
        return keys_twiml(f"{heard} {KEYS_SPEECH}", build_callback_url(settings.public_base_url, target, key))
    chosen: Action = action
    # The verified token's contents stand for the token (the same call, person and incident).
    token = f"{target.organization_id}/{target.incident_number}/{target.user_id}/{target.expires}"
    press = action_once.action_id("voice", token, dict(form).get("CallSid", ""), digits)
    outcome = action_once.once(
        press,
        now,
        lambda: respond(
            organization_id=target.organization_id,
            incident_number=target.incident_number,
            action=chosen,
            person=person,
            channel="voice",
            now=now,
            settings=settings,
        ),
    )
    return say_twiml(f"{outcome.message} Goodbye.")
