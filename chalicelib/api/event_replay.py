"""Replaying a refused event of an integration's log: what a fresh delivery of the same body and
headers would do now, recorded as a new event (`replay_of`).

The recorded request goes again through the route it came by: its credential kind's `readmit`
(the gate's checks as of now, from the recorded address and headers, without the signature:
chalicelib.api.routing_keys) and then its very handler (parse and ingest, chalicelib.api.routes),
its errors rendered in its family as the pipeline would. Which events may be replayed, and the
claim that replays one at most once: chalicelib.eventlog.replay.
"""

from __future__ import annotations

import importlib
from datetime import datetime
from typing import Any

from chalice.app import Request

from chalicelib.api.admission import Admission
from chalicelib.api.credential_kinds import Inbound
from chalicelib.api.error_render import render
from chalicelib.api.event_log import answer_of
from chalicelib.api.operation import BoundOperation, bound
from chalicelib.api.pipeline import call_of, unexpected_error
from chalicelib.api.route_table import ROUTES
from chalicelib.auth.principal import Principal
from chalicelib.errors import AppError, Conflict
from chalicelib.eventlog import capture, replay, service, slots
from chalicelib.eventlog.outcome import Outcome
from chalicelib.eventlog.tables import IntegrationEventRecord
from chalicelib.settings import Settings


def replay_event(
    *,
    organization_id: str,
    integration_id: str,
    event_id: str,
    principal: Principal,
    now: datetime,
    settings: Settings,
) -> service.FoundEvent:
    """The new event the replay recorded; 409 (with the reason) when the event may not be replayed."""
    found = service.get_event(
        organization_id=organization_id, integration_id=integration_id, event_id=event_id, now=now
    )
    event, integration = found.event, found.integration
    entry = _route_of(event)
    reason = replay.why_not_replay(event, integration)
    if reason is None and (entry is None or entry.operation.credential.readmit is None):
        reason = "This event's route no longer takes deliveries; it cannot be replayed."
    if reason is not None:
        raise Conflict(reason)
    assert entry is not None
    if not replay.claim(event, now):
        raise Conflict("This event is being replayed right now, or was just replayed.")
    try:
        request = _request_of(event)
        answer = _deliver(entry, Inbound(request, {}, now, settings), integration, principal)
        received = service.Received(
            integration_id=integration.integration_id,
            organization_id=organization_id,
            operation_id=event.operation_id,
            method=event.method,
            route=event.route,
            source_address=event.source_address,
            headers=dict(event.headers or {}),
            body=_body_of(event),
            received_at=now,
            signature=capture.signature_state(event.signature),  # what was checked when it came: the replay checks none
        )
        replayed = service.record(received, answer, slots.replay_slot(now), replay_of=event.event_id)
    except BaseException:
        replay.release(event)
        raise
    if replayed.outcome == "failed":
        replay.release(event)  # our failure (5xx): the event may be replayed again, as a sender retries
    else:
        replay.settle(event, replayed.event_id)
    return service.FoundEvent(replayed, integration)


def _route_of(event: IntegrationEventRecord) -> BoundOperation | None:
    """The operation of the route the event came by (its module imported if not yet)."""
    entry = bound(event.method, event.route)
    if entry is None:
        row = next((r for r in ROUTES if (r.method, r.path) == (event.method, event.route)), None)
        if row is not None:
            importlib.import_module(row.module)
            entry = bound(event.method, event.route)
    return entry


def _deliver(entry: BoundOperation, inbound: Inbound, integration: Any, principal: Principal) -> service.Answer:
    operation = entry.operation
    admission = Admission(inbound, principal=principal)
    call = None
    error: AppError | None = None
    try:
        readmit = operation.credential.readmit
        assert readmit is not None
        admission.credential = readmit(inbound, integration).subject
        call = call_of(admission)
        response = entry.handler(call)
    except AppError as refused:
        error = refused
    except Exception as unexpected:
        error = unexpected_error(operation.operation_id, unexpected, message=operation.unexpected)
    if error is not None:
        response = render(operation.family, error, {}, app_url=inbound.settings.app_url())
    handled: Outcome | None = call.outcome if call is not None else None
    return answer_of(response, error, handled)


def _body_of(event: IntegrationEventRecord) -> bytes:
    return (event.body or "").encode()


def _request_of(event: IntegrationEventRecord) -> Request:
    """The recorded request as the route's handler reads it: headers (not the credentials' and
    signatures' states), body, method, source address."""
    return Request(
        {
            "multiValueQueryStringParameters": None,
            "headers": capture.replayable_headers(dict(event.headers or {})),
            "pathParameters": {},
            "requestContext": {
                "httpMethod": event.method,
                "resourcePath": event.route,
                "identity": {"sourceIp": event.source_address},
            },
            "body": event.body or "",
            "isBase64Encoded": False,
            "stageVariables": None,
        }
    )
