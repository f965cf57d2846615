"""POST /api/v1/incidents/{id}/escalate: the next level of the service's escalation policy, now."""

from __future__ import annotations

from chalicelib.api.operation import Call, OperationGroup
from chalicelib.api.routes.incidents import ITEM, incident_number_of
from chalicelib.incident.models import EscalateResultV1
from chalicelib.paging import escalation_runs

api = OperationGroup(__name__, tag="incidents")


@api.operation(
    "POST",
    ITEM + "/escalate",
    operation_id="escalateIncident",
    summary="Escalate to the next level of the escalation policy now",
    description="Works on any incident not resolved or closed, acknowledged ones included: the next level "
    "(wrapping while the policy's repeat count allows) is notified now and its people's emails returned. "
    "With no next level, or on a resolved or closed incident, escalated is false and nobody is notified.",
    scope="incidents:write",
    response=EscalateResultV1,
    errors=(404,),
)
def escalate(call: Call) -> EscalateResultV1:
    outcome = escalation_runs.escalate(
        organization_id=call.principal.organization_id,
        incident_number=incident_number_of(call),
        actor=call.principal.actor,
        now=call.now,
        settings=call.settings,
    )
    return EscalateResultV1(
        incident_number=outcome.incident_number,
        escalated=outcome.escalated,
        notified_emails=outcome.notified_emails,
        current_level=outcome.current_level,
        next_level=outcome.next_level,
    )
