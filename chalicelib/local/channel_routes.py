"""The local server's chat and push sink routes (mounted with chalicelib/local/routes.py's):

- POST /local/channel-sink/{channel}: where the local stage posts Teams, Mattermost, ntfy,
  Discord and Google Chat pages; kept in the outbox as sent, answered as the provider answers.
- POST /local/channel-sink/{channel}/messages/{message_id}/press `{"action": "acknowledge"}`:
  presses a kept message's button as the provider would (chalicelib/local/channel_sink.py).
"""

from __future__ import annotations

import json
import urllib.parse
from typing import Any

from chalice.app import Request, Response

from chalicelib import clock
from chalicelib.api import envelope
from chalicelib.api.credential_kinds import PUBLIC
from chalicelib.api.error_render import ErrorFamily
from chalicelib.api.operation import NO_BUCKET, Call, OperationGroup
from chalicelib.errors import NotFound, ValidationFailed
from chalicelib.json_body import JsonBodyError, read_json
from chalicelib.local import channel_sink
from chalicelib.notification.hooks import SENT_TO_HEADER
from chalicelib.settings import get_settings

api = OperationGroup(__name__, tag="local")

CHANNEL_SINK_PATH = "/local/channel-sink/{channel}"
CHANNEL_PRESS_PATH = "/local/channel-sink/{channel}/messages/{message_id}/press"
MAX_BODY_BYTES = 64 * 1024  # above every provider's own limit (Teams 28 KB, ntfy 4 KB of message)
ACTIONS = ("acknowledge", "resolve", "escalate")


def _not_here(request: Request) -> Response:
    path = (request.context or {}).get("path") or request.path
    return envelope.error_response(NotFound(f"No route matches {path}."))


def _json_body(request: Request, max_bytes: int) -> Any:
    try:
        return read_json(request.raw_body or b"", max_bytes=max_bytes)
    except JsonBodyError as problem:
        raise ValidationFailed(f"The body is not JSON: {problem.problem}.") from None


@api.raw(
    "POST",
    CHANNEL_SINK_PATH,
    credential=PUBLIC,
    bucket=NO_BUCKET,
    family=ErrorFamily.WEBHOOK,
    operation_id="localChannelSink",
    summary="Local stage only: the Teams, Mattermost, ntfy, Discord, Google Chat and Pushover provider",
    description="Keeps the JSON body exactly as posted for GET /local/outbox (channel = the type; `to` = "
    f"{SENT_TO_HEADER}, the URL it was meant for; `payload` = the body; `action_links` = its buttons) and "
    "answers as the provider does: ntfy 200 with the message, Teams 202, Discord 204, Google Chat 200, "
    "Mattermost 200 `ok`, Pushover 200 `{status: 1, request, receipt}` (a receipt for an emergency; its form "
    "is kept as an object). 400 when the body is not a JSON object. Outside the local stage: 404.",
    errors=(400, 404),
)
def channel_sink_receive(call: Call) -> Response:
    request = call.request
    if not get_settings().is_local:
        return _not_here(request)
    channel = call.path.get("channel", "")
    if channel == "pushover":  # Pushover's Messages API takes a form
        raw = request.raw_body or b""
        text = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else str(raw)
        body: Any = dict(urllib.parse.parse_qsl(text[:MAX_BODY_BYTES], keep_blank_values=True))
    else:
        body = _json_body(request, MAX_BODY_BYTES)
    sent_to = str(request.headers.get(SENT_TO_HEADER.lower()) or request.headers.get(SENT_TO_HEADER) or "")
    received = channel_sink.receive(channel=channel, sent_to=sent_to, body=body, now=clock.now())
    if received.answer is None:
        return Response(body="", status_code=received.status, headers={})
    if isinstance(received.answer, str):
        return Response(body=received.answer, status_code=received.status, headers={"Content-Type": "text/plain"})
    return Response(
        body=json.dumps(received.answer), status_code=received.status, headers={"Content-Type": "application/json"}
    )


@api.raw(
    "POST",
    CHANNEL_PRESS_PATH,
    credential=PUBLIC,
    bucket=NO_BUCKET,
    family=ErrorFamily.WEBHOOK,
    operation_id="localChannelPress",
    summary="Local stage only: press a button of a chat or push page the sink kept",
    description='Body `{"action": "acknowledge" | "resolve" | "escalate"}`. Plays the provider: a Mattermost '
    "button posts its integration context, an ntfy action button posts its URL, Pushover posts its "
    "acknowledgement callback (with the receipt the sink answered), a Teams, Discord or Google "
    "Chat link is confirmed as the person would on the page it opens. Answers 200 `{channel, message_id, "
    "action, done, message, incident_number, answer}` (answer: what the provider got back), 404 for an "
    "unknown message or button, and what the public route refuses with: 401 forged or expired, 409 used "
    "already. Outside the local stage: 404.",
    errors=(400, 401, 404, 409),
)
def channel_sink_press(call: Call) -> Response:
    request = call.request
    if not get_settings().is_local:
        return _not_here(request)
    wanted = _json_body(request, 1024)
    action = wanted.get("action") if isinstance(wanted, dict) else None
    if action not in ACTIONS:
        raise ValidationFailed.for_field("action", f"must be one of {', '.join(ACTIONS)}")
    pressed = channel_sink.press(
        channel=call.path.get("channel", ""), message_id=call.path.get("message_id", ""), action=action, now=call.now
    )
    answer = {
        "channel": pressed.channel,
        "message_id": pressed.message_id,
        "action": pressed.action,
        "done": pressed.outcome.done,
        "message": pressed.outcome.message,
        "incident_number": pressed.outcome.incident_number,
        "answer": pressed.answer,
    }
    return Response(body=json.dumps(answer), status_code=200, headers={"Content-Type": "application/json"})
