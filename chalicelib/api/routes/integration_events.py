"""An integration's event log: every request it received and what became of it (the list, one
event in full), and the replay of a refused one (chalicelib.api.event_replay)."""

from __future__ import annotations

from chalicelib.api.event_replay import replay_event
from chalicelib.api.operation import Call, OperationGroup, Result
from chalicelib.eventlog import replay, service
from chalicelib.eventlog.models import (
    EventListQuery,
    IntegrationEventPageV1,
    IntegrationEventSummaryV1,
    IntegrationEventV1,
)

api = OperationGroup(__name__, tag="integrations")
EVENTS = "/api/v1/integrations/{integration_id}/events"
EVENT = EVENTS + "/{event_id}"
READ, WRITE = "integrations:read", "integrations:write"

_LOG = (
    "Every request to the integration (its webhook URL and the older paths, the PagerDuty Events and change "
    "events drop-ins, SNS), kept 30 days: time, source address, headers (credentials and signatures only as "
    "present, valid or invalid), the first 16 KiB of the body, and what became of it. A request whose routing "
    "key names no integration is in no log. Bounded per integration: each minute keeps the first 30 deliveries "
    "in full, then one record of the rest (count: how many), and at most one request refused at the door "
    "(revoked, HTTPS, address, size, signature) per 10 seconds."
)


@api.operation(
    "GET",
    EVENTS,
    operation_id="listIntegrationEvents",
    summary="An integration's event log, newest first",
    description=_LOG
    + " Filters: outcome (repeatable), since, until. A filtered page may hold fewer than limit events while "
    "next_cursor is not null (a call reads a bounded part of the log).",
    scope=READ,
    query=EventListQuery,
    response=IntegrationEventPageV1,
    errors=(400, 404),
)
def list_events(call: Call) -> IntegrationEventPageV1:
    query: EventListQuery = call.query
    page = service.list_events(
        organization_id=call.principal.organization_id,
        integration_id=call.path["integration_id"],
        now=call.now,
        outcomes=query.outcome or (),
        since=query.since,
        until=query.until,
        limit=query.limit,
        cursor=query.cursor,
    )
    return IntegrationEventPageV1(
        items=[IntegrationEventSummaryV1.of(record) for record in page.items], next_cursor=page.next_cursor
    )


@api.operation(
    "GET",
    EVENT,
    operation_id="getIntegrationEvent",
    summary="One event of an integration's log, in full",
    description=_LOG,
    scope=READ,
    response=IntegrationEventV1,
    errors=(404,),
)
def get_event(call: Call) -> IntegrationEventV1:
    found = service.get_event(
        organization_id=call.principal.organization_id,
        integration_id=call.path["integration_id"],
        event_id=call.path["event_id"],
        now=call.now,
    )
    return IntegrationEventV1.detail(found.event, replay.why_not_replay(found.event, found.integration))


@api.operation(
    "POST",
    EVENT + "/replay",
    operation_id="replayIntegrationEvent",
    summary="Replay a refused event: what a fresh delivery of its body and headers would do now",
    description=(
        "The recorded body and headers go through the same checks (but the signature) and the same parse and "
        "ingest as a new delivery, as of now (after the integration's default service, allow-list or event "
        "rules were fixed); the result is recorded as a new event (replay_of) and answered, 201, whatever it "
        "was (refused again included). 409 with the reason when the event may not be replayed: only refused "
        "events (a replay never doubles an alert); not one refused for its signature, nor one whose signature "
        "a signed integration never checked (a replay must not bypass a signature); not one whose body was "
        "over 16 KiB; not one replayed already (replay the newest of its replays); not on a revoked integration."
    ),
    scope=WRITE,
    response=IntegrationEventV1,
    status=201,
    errors=(404, 409),
)
def replay_one(call: Call) -> Result:
    found = replay_event(
        organization_id=call.principal.organization_id,
        integration_id=call.path["integration_id"],
        event_id=call.path["event_id"],
        principal=call.principal,
        now=call.now,
        settings=call.settings,
    )
    return Result(IntegrationEventV1.detail(found.event, replay.why_not_replay(found.event, found.integration)), 201)
