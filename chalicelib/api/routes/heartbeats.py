"""Heartbeats: the admin operations under /api/v1/heartbeats (integrations scopes), and the ping
URL /heartbeats/{token} (GET or POST, no bearer: the token is the credential), which answers
outside the envelope like the inbound webhooks and renders its errors in their body."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from chalice.app import Response

from chalicelib.api.capability_tokens import HEARTBEAT_PING_TOKEN
from chalicelib.api.error_render import ErrorFamily
from chalicelib.api.operation import CREDENTIAL_BUCKET, Call, OperationGroup
from chalicelib.api.resource import Resource
from chalicelib.catalog.service import Service, get_services
from chalicelib.heartbeat import service as heartbeats
from chalicelib.heartbeat.models import (
    HeartbeatCreate,
    HeartbeatIssuedV1,
    HeartbeatPatch,
    HeartbeatPingV1,
    HeartbeatV1,
)
from chalicelib.heartbeat.ping import Pinged, record_ping
from chalicelib.heartbeat.service import IssuedHeartbeat
from chalicelib.heartbeat.tables import HeartbeatRecord

api = OperationGroup(__name__, tag="heartbeats")

PING = "/heartbeats/{token}"
READ, WRITE = "integrations:read", "integrations:write"
_RULES = (
    "A monitor (a cron job, a backup script) pings the heartbeat's ping_url at least every interval_seconds. "
    "When no ping has come grace_seconds after it was due, an incident opens on the heartbeat's service "
    "(one per outage; maintenance windows and event rules apply as to any alert), and the next ping resolves "
    "it. A new heartbeat waits for its first ping the same way: it goes down when none comes in time."
)


def _services(organization_id: str, found: Iterable[HeartbeatRecord]) -> dict[str, Service]:
    return get_services(organization_id=organization_id, service_keys=[r.service_key for r in found])


def _heartbeats_v1(call: Call, found: Sequence[HeartbeatRecord]) -> list[HeartbeatV1]:
    services = _services(call.principal.organization_id, found)
    return [HeartbeatV1.of(record, services) for record in found]


def _issued_v1(call: Call, issued: IssuedHeartbeat) -> HeartbeatIssuedV1:
    """The heartbeat with its ping URL, shown in this answer only."""
    return HeartbeatIssuedV1.issued(issued, _services(call.principal.organization_id, [issued.record]))


beats = Resource(api, "/api/v1/heartbeats", "heartbeat_id", HeartbeatV1, _heartbeats_v1, read=READ, write=WRITE)
beats.create(
    "createHeartbeat",
    "Create a heartbeat; its ping URL is in this response only",
    HeartbeatCreate,
    beats.by_key(heartbeats.create_heartbeat, actor="created_by", with_settings=True),
    response=HeartbeatIssuedV1,
    present=_issued_v1,
    errors=(400, 409),
    description=_RULES + f" At most {heartbeats.MAX_HEARTBEATS} heartbeats per organization (409).",
)
beats.listing(
    "listHeartbeats",
    "List heartbeats, newest first (never their ping URLs)",
    lambda call, _: heartbeats.list_heartbeats(organization_id=call.principal.organization_id),
    errors=(),
)
beats.get("getHeartbeat", "Get a heartbeat", heartbeats.get_heartbeat)
beats.update(
    "updateHeartbeat",
    "Update a heartbeat (at least one field); enabled=false pauses it, true resumes it",
    HeartbeatPatch,
    heartbeats.update_heartbeat,
    description="A new interval or grace applies to the wait in progress. A heartbeat that is down stays "
    "down (paused or not) until a ping ends its outage. Send the version you read to make the change "
    "conditional: 409 when it was edited since (pings do not change the version).",
)
beats.act(
    "POST",
    "/regenerate",
    "regenerateHeartbeatUrl",
    "A new ping URL, in this response only; the old one answers 404 from now on",
    heartbeats.regenerate_ping_url,
    with_settings=True,
    response=HeartbeatIssuedV1,
    present=_issued_v1,
    errors=(404, 409),
)
beats.delete(
    "deleteHeartbeat",
    "Delete a heartbeat; its ping URL answers 404 (an open outage's incident stays open)",
    heartbeats.delete_heartbeat,
)


# --- the ping URL ----------------------------------------------------------------------------------

_PING_DESCRIPTION = (
    "The token in the URL is the credential (no Authorization header). Any body and query are ignored. "
    "200 with the heartbeat's status and when the next ping is expected; a paused heartbeat accepts the "
    "ping and ignores it (status paused). The ping after a missed one resolves the outage's incident. "
    "Errors, in the webhook body {success: false, error: {code, message}}: NOT_FOUND 404 (unknown token, "
    "a deleted heartbeat, or a regenerated URL), HTTPS_REQUIRED 403 (plain HTTP), RATE_LIMITED 429 "
    "(the webhook limit per heartbeat, 100 per minute by default)."
)
PING_ERRORS = (403, 404, 429, 503)


def _message(pinged: Pinged) -> str:
    if pinged.ignored:
        return "paused: the ping was accepted and ignored"
    if pinged.resolved_outages:
        return "recovered: the missed ping's outage is resolved"
    return "ping recorded"


def _ping(call: Call) -> Response:
    pinged = record_ping(record=call.credential, now=call.now, settings=call.settings)
    beat = pinged.beat
    body = HeartbeatPingV1(
        id=pinged.heartbeat_id,
        status=beat.status,
        last_ping_at=beat.last_ping_at,
        next_due_at=beat.next_due_at,
        message=_message(pinged),
    )
    return Response(
        body=json.dumps(body.model_dump(mode="json")),
        status_code=200,
        headers={"Content-Type": "application/json"},
    )


# GET or POST: whatever a monitor can send.
for method, operation_id, summary in (
    ("GET", "pingHeartbeat", "Ping a heartbeat"),
    ("POST", "pingHeartbeatByPost", "Ping a heartbeat (POST; the body is ignored)"),
):
    api.raw(
        method,
        PING,
        operation_id=operation_id,
        credential=HEARTBEAT_PING_TOKEN,
        bucket=CREDENTIAL_BUCKET,
        summary=summary,
        description=_PING_DESCRIPTION,
        response=HeartbeatPingV1,
        errors=PING_ERRORS,
        family=ErrorFamily.WEBHOOK,
    )(_ping)
