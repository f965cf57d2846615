"""POST /api/v1/incidents/{id}/page: notify one person now, on the channels asked for."""

from __future__ import annotations

from chalicelib.api.operation import Call, OperationGroup
from chalicelib.api.routes.incidents import ITEM, incident_number_of
from chalicelib.incident.models import DeliveryV1, PageRequest, PageResultV1

api = OperationGroup(__name__, tag="incidents")


@api.operation(
    "POST",
    ITEM + "/page",
    operation_id="pageIncident",
    summary="Page a person about the incident by email and/or Slack",
    description="Sends a real notification (email through SES, Slack as a direct message from the bot); "
    "the notification shows the incident's urgency (from its service's urgency rule). The channels are the "
    "ones asked for, whatever the person's notification rules say (those drive escalation pages). "
    "The person is found by email among the organization's users (an unknown email is a 400 on field email). "
    "200 when at least one "
    "channel delivered, with per-channel results (sent is true); 409 CONTACT_DETAILS_MISSING when every "
    "channel failed because the person lacks its contact details (an email address, a Slack user id); 502 "
    "DELIVERY_FAILED when no channel delivered and the provider failed on at least one. Both errors list the "
    "per-channel deliveries in error.details.deliveries. Every notification and failure is a timeline entry "
    "(paged, notification_failed). Pages pass the outbound budget (GET /api/v1/settings/limits): past a "
    "person's burst on a channel (5 pages in 10 minutes by default) the page joins their digest for that "
    "channel, sent when the window ends; when that leaves nothing delivered the answer is 429 RATE_LIMITED "
    "with Retry-After (the deliveries in error.details, error_code PAGE_DIGESTED).",
    scope="incidents:write",
    body=PageRequest,
    response=PageResultV1,
    errors=(404, 409, 429, 502),
)
def page_incident(call: Call) -> PageResultV1:
    from chalicelib.notification import service

    body: PageRequest = call.body
    outcome = service.page(
        organization_id=call.principal.organization_id,
        incident_number=incident_number_of(call),
        email=body.email,
        channels=list(body.channels),
        message=body.message,
        now=call.now,
        principal=call.principal,
        settings=call.settings,
    )
    return PageResultV1(
        incident_number=outcome.incident_number,
        sent=outcome.sent,
        channels=outcome.channels,
        deliveries=[
            DeliveryV1(channel=r.channel, sent=r.sent, error_code=r.error_code, message=r.message)
            for r in outcome.results
        ],
    )
