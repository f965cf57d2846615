"""Pressing a key on a call the local voice sink received, as Twilio would report it.

Twilio posts the caller's key to the call's `<Gather action>` with form fields (`CallSid`,
`AccountSid`, `From`, `To`, `Digits`) and signs the request with the account's auth token
(`X-Twilio-Signature`). Here the same form is signed with the token the app's voice settings
hold (the local sink's, unless a real account is configured) and handed to the same check and
answer the public callback route runs (chalicelib/paging/voice_callback.py), so a local press
proves the whole path: the signature, Tocsin's token in the URL, the person and the action.

Local-only: the local server mounts the route that calls it.
"""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass
from datetime import datetime

from chalicelib.errors import NotFound
from chalicelib.local import voice_sink
from chalicelib.notification.voice_link import twilio_signature
from chalicelib.paging.voice_callback import answer_key
from chalicelib.settings import get_settings


@dataclass(frozen=True)
class Pressed:
    call_sid: str
    digits: str
    callback_url: str
    twiml: str  # what the app answered
    said: str  # the words of that answer


def press(*, call_sid: str, digits: str, now: datetime) -> Pressed:
    """Post `digits` to the call's callback, signed as Twilio signs it; the app's TwiML answer.
    Raises NotFound for an unknown call or one that takes no key, and whatever the callback
    refuses with (an expired URL is InvalidSignature, as for Twilio)."""
    call = voice_sink.find_call(call_sid)
    if call is None:
        raise NotFound(f"The local voice sink has no call {call_sid[:40]}.")
    action = voice_sink.gather_action(call.twiml)
    if action is None:
        raise NotFound("That call does not wait for a key.")
    credentials = get_settings().voice_credentials()
    auth_token = credentials[1] if credentials else ""
    form = [
        ("AccountSid", credentials[0] if credentials else ""),
        ("CallSid", call_sid),
        ("Digits", digits),
        ("From", call.from_number),
        ("To", call.to),
    ]
    query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(action).query, keep_blank_values=True))
    twiml = answer_key(
        query=query, form=form, signature=twilio_signature(auth_token, action, form), now=now, settings=get_settings()
    )
    return Pressed(call_sid, digits, action, twiml, voice_sink.spoken_text(twiml) or "")
