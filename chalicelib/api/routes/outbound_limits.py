"""The organization's outbound limits: what may leave per destination, person and organization (admin)."""

from __future__ import annotations

from chalicelib.api.operation import Call, OperationGroup
from chalicelib.budget import organization_limits
from chalicelib.budget.models import OutboundLimitsPatch, OutboundLimitsV1

api = OperationGroup(__name__, tag="settings")

PATH = "/api/v1/settings/limits"


@api.operation(
    "GET",
    PATH,
    operation_id="getOutboundLimits",
    summary="The outbound budget's limits in effect for the organization",
    description="Every message Tocsin sends (SMS, calls, emails, Slack) is counted per destination, per person "
    "and per organization in sliding windows; a page past a person's burst joins their digest, any other "
    "message past a limit is refused (a 429 with Retry-After when a request caused it). Each limit shows the "
    "value in effect, the deployment's value and whether the owner lowered it.",
    scope="admin",
    response=OutboundLimitsV1,
)
def get_limits(call: Call) -> OutboundLimitsV1:
    return OutboundLimitsV1.of(organization_limits.views(call.principal.organization_id, settings=call.settings))


@api.operation(
    "PATCH",
    PATH,
    operation_id="updateOutboundLimits",
    summary="Lower some outbound limits for the organization (or put them back)",
    description="Each value must be from 1 to the deployment's value (an operator raises that: BUDGET_<NAME>, "
    "docs/DEPLOY.md); null puts a limit back to the deployment's. The two limits on replies to unknown numbers "
    "are the deployment's and cannot be set here. A bad name or value is a 400 naming limits.<name>.",
    scope="admin",
    body=OutboundLimitsPatch,
    response=OutboundLimitsV1,
    errors=(400, 409),
)
def update_limits(call: Call) -> OutboundLimitsV1:
    body: OutboundLimitsPatch = call.body
    views = organization_limits.lower(
        organization_id=call.principal.organization_id, changes=body.limits, settings=call.settings
    )
    return OutboundLimitsV1.of(views)
