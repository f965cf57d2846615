"""Who is on call now, per service (the spec's OnCallV1)."""

from __future__ import annotations

from chalicelib.api.operation import Call, OperationGroup
from chalicelib.paging import on_call
from chalicelib.paging.models import OnCallQuery, OnCallV1

api = OperationGroup(__name__, tag="on-call")


@api.operation(
    "GET",
    "/api/v1/on-call/current",
    operation_id="getCurrentOnCall",
    summary="Who is on call now for every active service, with coverage",
    scope="oncall:read",
    query=OnCallQuery,
    response=OnCallV1,
    errors=(400, 409),
    description="Per active service (newest first): its team, and the engineers its escalation policy reaches "
    "now, level by level (role primary for level 1, secondary for 2, tertiary for 3, then quaternary, quinary, "
    "level_<n>); a schedule target contributes whoever it has on call now, with the schedule's name and the "
    "shift's start and end. primary_on_call is the first level-1 engineer. has_coverage: someone at any level "
    "is on call now; a service without a policy has none. coverage_percentage is rounded down (0 with no "
    "services). team_name filters by the team's whole name, case-insensitively; a service without a team "
    'reports team_name "". Deactivated users are never listed. The 409 is listed by the interface '
    "specification; this read does not produce it.",
)
def current_on_call(call: Call) -> OnCallV1:
    query: OnCallQuery = call.query
    view = on_call.current_on_call(
        organization_id=call.principal.organization_id, now=call.now, team_name=query.team_name
    )
    return OnCallV1.of(view)
