"""The Opsgenie Alert API drop-in under /v2/ (the path Opsgenie clients append to their base URL):
create an alert, acknowledge, close or add a note to one, read one, read what a request became,
and ping a heartbeat by name. The credential is an Opsgenie integration's key in
`Authorization: GenieKey <key>` (chalicelib.api.genie_keys); answers and errors are Opsgenie's own
bodies (`{result, took, requestId}`; errors in the Opsgenie family, chalicelib.api.error_render).
The use cases are chalicelib.opsgenie.service's."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

from chalice.app import Response
from pydantic import BaseModel

from chalicelib.api.context import elapsed_seconds
from chalicelib.api.credential_kinds import source_ip
from chalicelib.api.error_render import ErrorFamily
from chalicelib.api.genie_keys import GENIE_KEY
from chalicelib.api.operation import CREDENTIAL_BUCKET, Call, Handler, OperationGroup, query_lists
from chalicelib.integration.gate import Admitted
from chalicelib.integration.parsers.opsgenie import parse_action, parse_create
from chalicelib.opsgenie import service
from chalicelib.opsgenie.models import (
    OpsgenieAcceptedV1,
    OpsgenieActionV1,
    OpsgenieAlertAnswerV1,
    OpsgenieCreateAlertV1,
    OpsgenieIdentifierQuery,
    OpsgenieNoteV1,
    OpsgenieRequestStatusAnswerV1,
    OpsgenieRequestStatusV1,
)

api = OperationGroup(__name__, tag="opsgenie")

ALERTS = "/v2/alerts"
ALERT = ALERTS + "/{identifier}"
REQUEST = ALERTS + "/requests/{request_id}"
PING = "/v2/heartbeats/{name}/ping"
ERRORS = (400, 401, 403, 413, 422, 429, 503)
PROCESSED = "Request will be processed"
PONG = "PONG - Heartbeat received"
UNEXPECTED = "The request could not be processed; retry it."

_KEY = (
    "The credential is an Opsgenie integration's key, sent as `Authorization: GenieKey <key>` (the integration's "
    "routing_key, shown once when it is created): a tool that calls Opsgenie's Alert API switches by changing only "
    "its base URL and its key. Errors are Opsgenie's `{message, took, requestId}` (and `errors`, naming each "
    "invalid field, on a 422): 400 a body that is not a JSON object; 401 no key, an unknown key or a revoked "
    "integration's; 403 another type of integration's key, plain HTTP, an address off the allow-list; 413 over "
    "256 KiB; 422 invalid fields; 429 over the integration's rate limit (Retry-After)."
)
_ACTION = (
    "The alert is named by the path's identifier: its id (identifierType=id, the default), its tiny id (tiny) or "
    "its alias (alias: the alert that alias names now in this integration, the open one else the latest). 202 "
    "with a requestId, as Opsgenie answers: an alert that does not exist is reported by the request's status "
    "(GET /v2/alerts/requests/{request_id}: isSuccess false, 'Alert does not exist'). A note in the body is "
    "added to the alert's incident as a comment; user names who acted on the timeline. "
)


def _json(status: int, body: dict[str, Any]) -> Response:
    headers: dict[str, str | list[str]] = {"Content-Type": "application/json"}
    return Response(body=json.dumps(body, default=str), status_code=status, headers=headers)


def _accepted(request_id: str, result: str = PROCESSED) -> Response:
    answer = OpsgenieAcceptedV1(result=result, took=round(elapsed_seconds(), 3), request_id=request_id)
    return _json(202, answer.model_dump(mode="json", by_alias=True))


def _path(call: Call, name: str) -> str:
    """A path parameter as sent before encoding: clients encode an alias's or a name's `/` and spaces
    (`%2F`, `%20`). API Gateway hands parameters decoded; the local stack (chalice's gateway) as sent:
    decoding here makes both agree (a decoded value rarely holds a `%` and two hex digits)."""
    return unquote(call.path[name])


def _identifier_type(call: Call) -> str | None:
    values = query_lists(call.request).get("identifierType")
    return values[0] if values else None


@api.raw(
    "POST",
    ALERTS,
    operation_id="createOpsgenieAlert",
    credential=GENIE_KEY,
    bucket=CREDENTIAL_BUCKET,
    family=ErrorFamily.OPSGENIE,
    unexpected=UNEXPECTED,
    body=OpsgenieCreateAlertV1,
    summary="Opsgenie Alert API drop-in: create an alert",
    description="Opens or updates an alert through the same pipeline as every inbound alert (event rules, "
    "maintenance windows, dedup, grouping) and answers Opsgenie's 202. priority P1-P5 is the severity (P1 SEV0, "
    "P2 SEV1, P3 SEV2, P4 SEV3, P5 SEV4; P3 when absent); alias is the dedup key (an open alert with the same "
    "alias counts one more occurrence); tags are labels, details are details; the alert's service is "
    "details.service_id or a service_id:SER-nnnnn tag, else the integration's default service. " + _KEY,
    response=OpsgenieAcceptedV1,
    status=202,
    errors=ERRORS,
)
def create_alert(call: Call) -> Response:
    admitted: Admitted = call.credential
    request_id = service.new_request_id()
    create = parse_create(call.raw_body)
    service.create_alert(
        integration=admitted.integration,
        create=create,
        source_ip=source_ip(call.request),
        request_id=request_id,
        now=call.now,
        settings=call.settings,
    )
    return _accepted(request_id)


def _act(call: Call, action: service.Action) -> Response:
    admitted: Admitted = call.credential
    request_id = service.new_request_id()
    body = parse_action(call.raw_body, note_required=action == "note")
    service.act(
        integration=admitted.integration,
        identifier=_path(call, "identifier"),
        identifier_type=_identifier_type(call),
        action=action,
        body=body,
        request_id=request_id,
        now=call.now,
    )
    return _accepted(request_id)


def _action_operation(
    path: str, operation_id: str, summary: str, body: type[BaseModel], description: str, *, body_optional: bool = True
) -> Callable[[Handler], Handler]:
    return api.raw(
        "POST",
        path,
        operation_id=operation_id,
        credential=GENIE_KEY,
        bucket=CREDENTIAL_BUCKET,
        family=ErrorFamily.OPSGENIE,
        unexpected=UNEXPECTED,
        body=body,
        body_optional=body_optional,  # Opsgenie's clients send none when there is no user, source or note
        query=OpsgenieIdentifierQuery,
        summary=summary,
        description=description + _ACTION + _KEY,
        response=OpsgenieAcceptedV1,
        status=202,
        errors=ERRORS,
    )


@_action_operation(
    ALERT + "/acknowledge",
    "acknowledgeOpsgenieAlert",
    "Opsgenie Alert API drop-in: acknowledge an alert",
    OpsgenieActionV1,
    "Acknowledges the alert's incident (its escalation stops). ",
)
def acknowledge_alert(call: Call) -> Response:
    return _act(call, "acknowledge")


@_action_operation(
    ALERT + "/close",
    "closeOpsgenieAlert",
    "Opsgenie Alert API drop-in: close an alert",
    OpsgenieActionV1,
    "Resolves the alert, and its incident when it was the incident's last triggered alert. ",
)
def close_alert(call: Call) -> Response:
    return _act(call, "close")


@_action_operation(
    ALERT + "/notes",
    "addOpsgenieAlertNote",
    "Opsgenie Alert API drop-in: add a note to an alert",
    OpsgenieNoteV1,
    "Adds the note (required) to the alert's incident as a comment. ",
    body_optional=False,
)
def add_note(call: Call) -> Response:
    return _act(call, "note")


@api.raw(
    "GET",
    ALERT,
    operation_id="getOpsgenieAlert",
    credential=GENIE_KEY,
    bucket=CREDENTIAL_BUCKET,
    family=ErrorFamily.OPSGENIE,
    unexpected=UNEXPECTED,
    query=OpsgenieIdentifierQuery,
    summary="Opsgenie Alert API drop-in: an alert, as Opsgenie shows one",
    description="The alert named by its id (identifierType=id, the default), tiny id or alias, in Opsgenie's "
    "shape: status open or closed (its incident resolved), acknowledged (its incident acknowledged), priority (its "
    "severity), count, tags, details, and what the create sent. 404 when no alert has the identifier. " + _KEY,
    response=OpsgenieAlertAnswerV1,
    errors=(*ERRORS, 404),
)
def get_alert(call: Call) -> Response:
    admitted: Admitted = call.credential
    alert = service.alert_of(
        integration=admitted.integration,
        identifier=_path(call, "identifier"),
        identifier_type=_identifier_type(call),
        now=call.now,
    )
    answer = OpsgenieAlertAnswerV1(data=alert, took=round(elapsed_seconds(), 3), request_id=service.new_request_id())
    return _json(200, answer.model_dump(mode="json", by_alias=True))


@api.raw(
    "GET",
    REQUEST,
    operation_id="getOpsgenieRequestStatus",
    credential=GENIE_KEY,
    bucket=CREDENTIAL_BUCKET,
    family=ErrorFamily.OPSGENIE,
    unexpected=UNEXPECTED,
    summary="Opsgenie Alert API drop-in: what a request became",
    description="What the create, acknowledge, close or add-note request with this requestId became (kept 7 days; "
    "any request of the organization): isSuccess, status in words, the alert's id and alias. Opsgenie's clients "
    "poll it after a 202. 404 for a request it does not know. " + _KEY,
    response=OpsgenieRequestStatusAnswerV1,
    errors=(*ERRORS, 404),
)
def get_request_status(call: Call) -> Response:
    admitted: Admitted = call.credential
    found = service.request_status(integration=admitted.integration, request_id=_path(call, "request_id"), now=call.now)
    status = OpsgenieRequestStatusV1(
        success=found.success,
        action=found.action,
        processed_at=found.processed_at,
        integration_id=found.integration_id,
        is_success=found.success,
        status=found.status,
        alert_id=found.alert_id or "",
        alias=found.alias or "",
    )
    answer = OpsgenieRequestStatusAnswerV1(data=status, took=round(elapsed_seconds(), 3), request_id=found.request_id)
    return _json(200, answer.model_dump(mode="json", by_alias=True))


def _ping(call: Call) -> Response:
    admitted: Admitted = call.credential
    service.ping_heartbeat(
        integration=admitted.integration, name=_path(call, "name"), now=call.now, settings=call.settings
    )
    return _accepted(service.new_request_id(), PONG)


_PING = (
    "Pings the organization's heartbeat of that name (each, if several share it) as its own ping URL does; a "
    "paused one accepts the ping and ignores it. 202 `PONG - Heartbeat received`; 404 when no heartbeat has the "
    "name. " + _KEY
)


@api.raw(
    "GET",
    PING,
    operation_id="pingOpsgenieHeartbeat",
    credential=GENIE_KEY,
    bucket=CREDENTIAL_BUCKET,
    family=ErrorFamily.OPSGENIE,
    unexpected=UNEXPECTED,
    summary="Opsgenie Heartbeat API drop-in: ping a heartbeat by name",
    description=_PING,
    response=OpsgenieAcceptedV1,
    status=202,
    errors=(*ERRORS, 404),
)
def ping_heartbeat(call: Call) -> Response:
    return _ping(call)


@api.raw(
    "POST",
    PING,
    operation_id="pingOpsgenieHeartbeatByPost",
    credential=GENIE_KEY,
    bucket=CREDENTIAL_BUCKET,
    family=ErrorFamily.OPSGENIE,
    unexpected=UNEXPECTED,
    summary="Opsgenie Heartbeat API drop-in: ping a heartbeat by name (POST)",
    description=_PING + " Any body is ignored.",
    response=OpsgenieAcceptedV1,
    status=202,
    errors=(*ERRORS, 404),
)
def ping_heartbeat_by_post(call: Call) -> Response:
    return _ping(call)
