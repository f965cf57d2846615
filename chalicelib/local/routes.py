"""The local server's own routes: the built-in Slack and webhook sinks and the outbox of what was sent.

They are not in the API's route table (chalicelib/api/route_table.py): no deployed stage has them.
The local server mounts them at startup (`mount`, called by chalicelib/local/server.py) through
the same views as the table's routes, so they get the same middleware and envelope, and the
OpenAPI document lists them while they are mounted. Mounted outside the local stage (TOCSIN_STAGE
local or test), all of them still answer 404 NOT_FOUND in the error envelope, as an unknown route
would. None takes a credential: the local stage is bound to loopback and only its own processes
and its developer talk to it.

- POST /local/slack/api/chat.postMessage answers like Slack's Web API (200 with ok true or
  false) and keeps what it accepted; `make run` points SLACK_API_BASE_URL here. The Slack user
  id U_FAIL always fails with channel_not_found, to show a provider failure. chat.update and
  chat.postEphemeral (a Slack button click's answers) are kept the same way, their method as subject.
- POST /local/voice/2010-04-01/Accounts/{account_sid}/Calls.json answers like Twilio's Calls API
  (201 with the call, or Twilio's error) and keeps the call (chalicelib/local/voice_sink.py);
  `make run` points the voice channel here. To +15005550001 always fails with 21211.
- POST /local/voice/calls/{call_sid}/press presses a key on such a call: the callback Twilio would
  post, signed as Twilio signs it, answered by the app's own check and action
  (chalicelib/local/voice_press.py).
- POST /local/webhook-sink/{sink_name} receives outbound webhook deliveries (the demo
  subscription points at /local/webhook-sink/demo), keeps them and answers 204, or the status
  `?fail=` names (to watch retries).
- GET /local/outbox lists the emails and SMS SES and SNS accepted on the emulator, the Slack
  messages, calls and webhook requests the sinks received, newest first: each kept in the local
  outbox table when it was sent (chalicelib/local/outbox.py), so every filter is a key condition.
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Callable
from typing import Any

from chalice.app import Chalice, Request, Response
from pydantic import ValidationError as PydanticValidationError

from chalicelib import clock
from chalicelib.api import envelope, lazy, operation
from chalicelib.api.credential_kinds import PUBLIC
from chalicelib.api.error_render import ErrorFamily
from chalicelib.api.operation import NO_BUCKET, Call, Handler, OperationGroup, query_lists
from chalicelib.api.route_index import row_of
from chalicelib.api.route_table import RouteRow
from chalicelib.api.validation import single_values
from chalicelib.errors import AppError, NotFound, PayloadTooLarge, ValidationFailed
from chalicelib.json_body import JsonBodyError, read_json
from chalicelib.local import channel_routes, outbox, outbox_table, voice_press, voice_sink
from chalicelib.local import webhook_sink as sink
from chalicelib.local.models import (
    LocalOutboxResponseV1,
    SlackAnswerV1,
    SlackPostMessageV1,
    VoiceCallAnswerV1,
    VoicePressAnswerV1,
    VoicePressV1,
)
from chalicelib.local.outbox_item import CHANNELS as OUTBOX_ITEM_CHANNELS
from chalicelib.settings import get_settings

api = OperationGroup(__name__, tag="local")

SLACK_SINK_PATH = "/local/slack/api/chat.postMessage"
SLACK_UPDATE = "chat.update"
SLACK_EPHEMERAL = "chat.postEphemeral"
SLACK_UPDATE_PATH = f"/local/slack/api/{SLACK_UPDATE}"
SLACK_EPHEMERAL_PATH = f"/local/slack/api/{SLACK_EPHEMERAL}"
WEBHOOK_SINK_PATH = "/local/webhook-sink/{sink_name}"
VOICE_SINK_PATH = "/local/voice/2010-04-01/Accounts/{account_sid}/Calls.json"
VOICE_PRESS_PATH = "/local/voice/calls/{call_sid}/press"
OUTBOX_PATH = "/local/outbox"
OUTBOX_CHANNELS = OUTBOX_ITEM_CHANNELS
FAILING_SLACK_USER = "U_FAIL"
OUTBOX_QUERY = ("channel", "incident_number", "to", "limit")
MAX_LIMIT = 500


def local_route(
    method: str, path: str, *, family: ErrorFamily = ErrorFamily.API, **declared: Any
) -> Callable[[Handler], Handler]:
    """A local route: no credential and no bucket (the local stage is bound to loopback)."""
    return api.raw(method, path, credential=PUBLIC, bucket=NO_BUCKET, family=family, **declared)


def _not_here(request: Request) -> Response:
    path = (request.context or {}).get("path") or request.path
    return envelope.error_response(NotFound(f"No route matches {path}."))


def _slack(body: dict[str, Any]) -> Response:
    return Response(body=json.dumps(body), status_code=200, headers={"Content-Type": "application/json"})


def _arguments(request: Request) -> dict[str, Any] | None:
    """chat.postMessage arguments: a JSON body, or a form body (Slack accepts both)."""
    raw = request.raw_body or b""
    text = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else str(raw)
    content_type = str(request.headers.get("content-type") or "")
    if "application/x-www-form-urlencoded" in content_type:
        form: dict[str, Any] = {key: values[-1] for key, values in urllib.parse.parse_qs(text).items()}
        for name in ("blocks", "metadata"):
            if name in form:
                try:
                    form[name] = read_json(form[name], max_bytes=sink.MAX_BODY_BYTES)
                except JsonBodyError:
                    return None
        return form
    try:
        parsed = read_json(text, max_bytes=sink.MAX_BODY_BYTES)
    except JsonBodyError:
        return None
    return parsed if isinstance(parsed, dict) else None


def _accept_slack(request: Request, method: str) -> Response:
    """One Web API call to the sink: answered like Slack and kept for the outbox."""
    if not get_settings().is_local:
        return _not_here(request)
    authorization = str(request.headers.get("authorization") or "")
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return _slack({"ok": False, "error": "not_authed"})
    arguments = _arguments(request)
    if arguments is None:
        return _slack({"ok": False, "error": "invalid_json"})
    channel = arguments.get("channel")
    if not isinstance(channel, str) or not channel.strip() or channel == FAILING_SLACK_USER:
        return _slack({"ok": False, "error": "channel_not_found"})
    if method == SLACK_UPDATE and not isinstance(arguments.get("ts"), str):
        return _slack({"ok": False, "error": "message_not_found"})
    if method == SLACK_EPHEMERAL and not isinstance(arguments.get("user"), str):
        return _slack({"ok": False, "error": "user_not_in_channel"})
    text = arguments.get("text")
    blocks = arguments.get("blocks")
    if blocks is not None and not (isinstance(blocks, list) and all(isinstance(b, dict) for b in blocks)):
        return _slack({"ok": False, "error": "invalid_blocks_format"})  # Slack wants an array of objects
    if not (isinstance(text, str) and text) and not blocks:
        return _slack({"ok": False, "error": "no_text"})
    now = clock.now()
    # An ephemeral reply is seen by `user` only: the outbox lists it as sent to them.
    to = str(arguments["user"]) if method == SLACK_EPHEMERAL else channel
    item = outbox.record_slack_message(
        channel=to,
        text=text if isinstance(text, str) else "",
        blocks=blocks,
        metadata=arguments.get("metadata"),
        now=now,
        method=method,
    )
    ts = str(arguments["ts"]) if method == SLACK_UPDATE else f"{now.timestamp():.6f}"
    return _slack({"ok": True, "channel": channel, "ts": ts, "message": {"type": "message", "text": item.text}})


_SINK_ERRORS = (
    "Needs an `Authorization: Bearer <token>` header (any token). The channel U_FAIL always answers ok false, "
    "error channel_not_found; `blocks` other than an array of objects invalid_blocks_format. Outside the local "
    "stage: 404."
)


@local_route(
    "POST",
    SLACK_SINK_PATH,
    operation_id="localSlackPostMessage",
    summary="Local stage only: a Slack Web API chat.postMessage sink",
    description="Answers like Slack (HTTP 200 with ok true, or ok false and an error) and keeps the message "
    "for GET /local/outbox. " + _SINK_ERRORS,
    body=SlackPostMessageV1,
    response=SlackAnswerV1,
    errors=(404,),
)
def slack_post_message(call: Call) -> Response:
    return _accept_slack(call.request, "chat.postMessage")


@local_route(
    "POST",
    SLACK_UPDATE_PATH,
    operation_id="localSlackUpdate",
    summary="Local stage only: a Slack Web API chat.update sink",
    description="What a Slack button click does to the page (says who did what). Kept for GET /local/outbox "
    "with subject chat.update; `ts` is required (else ok false, message_not_found). " + _SINK_ERRORS,
    body=SlackPostMessageV1,
    response=SlackAnswerV1,
    errors=(404,),
)
def slack_update(call: Call) -> Response:
    return _accept_slack(call.request, SLACK_UPDATE)


@local_route(
    "POST",
    SLACK_EPHEMERAL_PATH,
    operation_id="localSlackPostEphemeral",
    summary="Local stage only: a Slack Web API chat.postEphemeral sink",
    description="A reply only the clicker sees (e.g. a Slack user not linked to Tocsin). Kept for GET "
    "/local/outbox as sent to `user`, with subject chat.postEphemeral; `user` is required. " + _SINK_ERRORS,
    body=SlackPostMessageV1,
    response=SlackAnswerV1,
    errors=(404,),
)
def slack_post_ephemeral(call: Call) -> Response:
    return _accept_slack(call.request, SLACK_EPHEMERAL)


def _outbox_query(request: Request) -> dict[str, Any]:
    params = query_lists(request)
    unknown = sorted(set(params) - set(OUTBOX_QUERY))
    if unknown:
        raise ValidationFailed.for_fields([{"field": name, "message": "unknown query parameter"} for name in unknown])
    values = {name: value for name, value in single_values(params).items() if value}
    channel = values.get("channel")
    if channel is not None and channel not in OUTBOX_CHANNELS:
        raise ValidationFailed.for_field("channel", f"must be one of {', '.join(OUTBOX_CHANNELS)}")
    limit_text = values.get("limit", "50")
    if not limit_text.isdigit() or not 1 <= int(limit_text) <= MAX_LIMIT:
        raise ValidationFailed.for_field("limit", f"must be an integer from 1 to {MAX_LIMIT}")
    return {
        "channel": channel,
        "incident_number": values.get("incident_number") or None,
        "to": values.get("to") or None,
        "limit": int(limit_text),
    }


@local_route(
    "GET",
    OUTBOX_PATH,
    operation_id="listLocalOutbox",
    summary="Local stage only: the emails, Slack messages, SMS, calls and webhook deliveries sent, newest first",
    description="Emails and SMS are those SES and SNS on the AWS emulator accepted, kept as they were sent (an "
    "SMS has no sent_at: they come after the others); Slack messages, voice calls and webhook deliveries are "
    "those the built-in sinks received (a Slack item carries its `blocks`; a call's text is what it says, "
    "`voice` has its TwiML; a webhook item's text is its raw body, `webhook` has its headers and whether its "
    "signature verified). "
    "Verification codes show as SMS or calls. Query parameters (all optional): channel (email, slack, sms, "
    "voice, webhook, teams, mattermost, ntfy, discord, google_chat or pushover), incident_number, to (an "
    "email address, Slack user id, phone number, webhook sink name or chat webhook URL), limit (1-500, default 50). "
    f"Each channel keeps its newest {outbox_table.KEEP_PER_CHANNEL:,} messages. "
    "Answers in the success "
    "envelope; outside the local stage: 404.",
    response=LocalOutboxResponseV1,
    errors=(404,),
)
def list_outbox(call: Call) -> Response:
    request = call.request
    if not get_settings().is_local:
        return _not_here(request)
    try:
        query = _outbox_query(request)
    except AppError as error:
        return envelope.error_response(error)
    items = outbox.list_outbox(**query)
    return envelope.success_response({"items": [item.as_json() for item in items], "total": len(items)})


@local_route(
    "POST",
    WEBHOOK_SINK_PATH,
    operation_id="localWebhookSink",
    summary="Local stage only: a receiver for outbound webhook deliveries",
    description="Keeps the request (headers, raw body, and whether X-Service-Signature verifies against the "
    "secret of a subscription of the event's organization whose URL points at this sink) for GET /local/outbox "
    "(channel webhook) and answers 204 with no body. `?fail=<status>` (200-599) answers that status instead, "
    "to watch a subscription retry. sink_name: 1-64 letters, digits, '.', '_' or '-'. Bodies over 256 KiB: "
    "413. Outside the local stage: 404.",
    status=204,
    errors=(400, 404, 413),
)
def webhook_sink(call: Call) -> Response:
    request = call.request
    if not get_settings().is_local:
        return _not_here(request)
    raw = request.raw_body or b""
    body = raw if isinstance(raw, bytes) else str(raw).encode()
    try:
        sink_name = sink.check_sink_name(call.path.get("sink_name", ""))
        status = sink.answer_status(query_lists(request))
        if len(body) > sink.MAX_BODY_BYTES:
            raise PayloadTooLarge(f"The sink keeps bodies up to {sink.MAX_BODY_BYTES} bytes.")
    except AppError as error:
        return envelope.error_response(error)
    headers = {str(name): str(value) for name, value in request.headers.items()}
    sink.receive(sink_name=sink_name, headers=headers, body=body, status=status, now=clock.now())
    if status == 204:
        return Response(body="", status_code=204, headers={})
    answer = {"sink": sink_name, "status": status, "note": "this sink was asked to answer this status (?fail=)"}
    return Response(body=json.dumps(answer), status_code=status, headers={"Content-Type": "application/json"})


@local_route(
    "POST",
    VOICE_SINK_PATH,
    operation_id="localVoiceCreateCall",
    summary="Local stage only: a Twilio Calls API sink for voice calls",
    description="Answers like Twilio's Calls API: 201 with the call (`sid`, `status: queued`) and keeps it for "
    "GET /local/outbox (channel voice). The body is form-encoded: To and From (E.164) and Twiml (a TwiML "
    "<Response>; Url is not fetched). Needs HTTP Basic auth whose user is the path's account sid (any "
    "password): else 401 with Twilio's code 20003. Other refusals are 400 with Twilio's code (To "
    "+15005550001 always fails with 21211). Errors carry Twilio's `code`, `message`, `more_info` and "
    "`status` and this app's `success`/`error`. Nothing is dialled. Outside the local stage: 404.",
    response=VoiceCallAnswerV1,
    status=201,
    errors=(401, 404),
    family=ErrorFamily.WEBHOOK,
)
def voice_create_call(call: Call) -> Response:
    request = call.request
    if not get_settings().is_local:
        return _not_here(request)
    raw = request.raw_body or b""
    checked = voice_sink.check_call(
        account_sid=call.path.get("account_sid", ""),
        authorization=str(request.headers.get("authorization") or ""),
        body=raw if isinstance(raw, bytes) else str(raw).encode(),
    )
    if isinstance(checked, voice_sink.Refusal):
        return _json(checked.status, checked.body())
    now = clock.now()
    call_sid = voice_sink.record_call(checked, now)
    return _json(201, voice_sink.call_answer(checked, call_sid, now))


@local_route(
    "POST",
    VOICE_PRESS_PATH,
    operation_id="localVoicePressKey",
    summary="Local stage only: press a key on a call the voice sink received",
    description="Posts the callback Twilio would post for the key (`Digits`, `CallSid`, `From`, `To`) to the "
    "call's Gather action, signed with X-Twilio-Signature as Twilio signs it, and answers what the app "
    "said back (its TwiML and the words). 4 acknowledges, 6 resolves, 8 escalates, as the person called. "
    "404 for an unknown call or one that takes no key; 401 when the callback is refused (its URL expired "
    "after an hour). Outside the local stage: 404.",
    body=VoicePressV1,
    response=VoicePressAnswerV1,
    errors=(400, 401, 404),
    family=ErrorFamily.WEBHOOK,
)
def voice_press_key(call: Call) -> Response:
    request = call.request
    if not get_settings().is_local:
        return _not_here(request)
    try:
        parsed = read_json(request.raw_body or b"", max_bytes=4096)
        wanted = VoicePressV1.model_validate(parsed)
    except JsonBodyError as problem:
        raise ValidationFailed(f"The body is not JSON: {problem.problem}.") from None
    except PydanticValidationError:
        raise ValidationFailed('The body must be {"digits": "4"}: one to four of 0-9, * and #.') from None
    pressed = voice_press.press(call_sid=call.path.get("call_sid", ""), digits=wanted.digits, now=clock.now())
    answer = VoicePressAnswerV1(
        call_sid=pressed.call_sid,
        digits=pressed.digits,
        callback_url=pressed.callback_url,
        twiml=pressed.twiml,
        said=pressed.said,
    )
    return _json(200, answer.model_dump(mode="json"))


def _json(status: int, body: dict[str, Any]) -> Response:
    return Response(body=json.dumps(body), status_code=status, headers={"Content-Type": "application/json"})


# ---------------------------------------------------------------- mounting


def local_rows() -> list[RouteRow]:
    """This module's operations, as rows like the route table's."""
    modules = (__name__, channel_routes.__name__)  # the chat and push sinks' routes too
    return [row_of(entry) for entry in operation.bound_operations() if entry.module in modules]


def mount(app: Chalice) -> None:
    """Add the /local routes to the app: the local server calls it before it serves (its route
    matcher reads the app's routes once, when it starts). Safe to call again."""
    lazy.mount_extra(app, local_rows())


def unmount(app: Chalice) -> None:
    """Take the /local routes off the app again (tests that mounted them for a while)."""
    lazy.unmount_extra(app, local_rows())
