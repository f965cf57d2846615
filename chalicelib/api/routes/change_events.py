"""Change events: PagerDuty's Change Events API drop-in (POST /v2/change/enqueue, outside the
envelope, PagerDuty's own answers) and the list for the console and scripts (GET /api/v1/change-events).

The drop-in has the same credential as /v2/enqueue (the body's routing key through the gate:
HTTPS, IP allow-list, size, the routing key's rate limit) and answers in the same PagerDuty error
family."""

from __future__ import annotations

from chalice.app import Response

from chalicelib.api import event_log
from chalicelib.api.error_render import ErrorFamily
from chalicelib.api.operation import CREDENTIAL_BUCKET, Call, OperationGroup
from chalicelib.api.routes.webhooks import json_answer
from chalicelib.api.routing_keys import ROUTING_KEY_IN_PAGERDUTY_BODY
from chalicelib.change.models import (
    ChangeEventListQuery,
    ChangeEventListV1,
    PagerDutyChangeAcceptedV1,
    PagerDutyChangeEventV1,
    change_event_v1,
)
from chalicelib.change.rules import parse_change_event
from chalicelib.change.service import list_changes, record_change
from chalicelib.eventlog.outcome import Outcome
from chalicelib.integration.gate import Admitted

api = OperationGroup(__name__, tag="change-events")
event_log.record_requests_of(ErrorFamily.PAGERDUTY)


@api.raw(
    "POST",
    "/v2/change/enqueue",
    operation_id="enqueuePagerDutyChangeEvent",
    credential=ROUTING_KEY_IN_PAGERDUTY_BODY,
    bucket=CREDENTIAL_BUCKET,
    family=ErrorFamily.PAGERDUTY,
    unexpected="The change event could not be processed; retry it.",
    body=PagerDutyChangeEventV1,
    summary="PagerDuty Change Events API drop-in",
    description="Answers exactly as PagerDuty does: 202 {status: 'success', message: 'Change event processed'}; "
    "400 {status: 'invalid event', message, errors} (an unknown routing key or service included); 429 when "
    "throttled. routing_key is a PagerDuty Events integration's routing key (the one /v2/enqueue takes). The "
    "change is recorded on the service payload.custom_details.service_id names, else on the integration's "
    "default service, and shows in the recent_changes of incidents opening on that service within the hour. "
    "A retried delivery (the same body) records nothing twice.",
    response=PagerDutyChangeAcceptedV1,
    status=202,
    errors=(400, 413, 429),
)
def enqueue_change(call: Call) -> Response:
    admitted: Admitted = call.credential
    integration = admitted.integration
    event = parse_change_event(call.raw_body)
    call.outcome = Outcome("accepted", action="change", title=event.summary)
    recorded = record_change(
        organization_id=integration.organization_id,
        integration_id=integration.integration_id,
        default_service_key=integration.default_service_key,
        event=event,
        now=call.now,
    )
    # A new change is "created"; the same content again (a retry) records nothing new.
    call.outcome = Outcome("deduplicated" if recorded.duplicate else "created", action="change", title=event.summary)
    return json_answer(202, PagerDutyChangeAcceptedV1().model_dump())


@api.operation(
    "GET",
    "/api/v1/change-events",
    operation_id="listChangeEvents",
    summary="List change events, newest first",
    description="Changes recorded from PagerDuty change events (POST /v2/change/enqueue) in the last 90 days, "
    "newest first by their timestamp; filter by service and an inclusive time range.",
    scope="incidents:read",
    query=ChangeEventListQuery,
    response=ChangeEventListV1,
    errors=(404,),
)
def list_change_events(call: Call) -> ChangeEventListV1:
    query: ChangeEventListQuery = call.query
    page = list_changes(
        organization_id=call.principal.organization_id,
        service_ref=query.service_id,
        since=query.since,
        until=query.until,
        limit=query.limit,
        offset=query.offset,
        now=call.now,
    )
    return ChangeEventListV1(
        items=[change_event_v1(record) for record in page.items],
        total=page.total,
        has_more=page.has_more,
        next_offset=page.next_offset,
    )
