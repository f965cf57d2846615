"""Escalation policies: ordered levels of targets (users, schedules) with delays, and a repeat count."""

from __future__ import annotations

from collections.abc import Sequence

from chalicelib.api.operation import Call, OperationGroup
from chalicelib.api.resource import Resource
from chalicelib.catalog import service as catalog
from chalicelib.escalation import service
from chalicelib.escalation.coverage_read import policies_gaps
from chalicelib.escalation.models import EscalationPolicyCreate, EscalationPolicyPatch, EscalationPolicyV1
from chalicelib.escalation.service import StoredPolicy
from chalicelib.oncall.coverage import coverage_window

api = OperationGroup(__name__, tag="escalation-policies")


def present(call: Call, found: Sequence[StoredPolicy]) -> list[EscalationPolicyV1]:
    """The policies with their coverage gaps over the next 14 days (two reads for all of them)."""
    gaps = policies_gaps(
        organization_id=call.principal.organization_id,
        policies=[stored.policy for stored in found],
        window=coverage_window(call.now),
    )
    return [EscalationPolicyV1.of(stored, gaps[stored.policy_id]) for stored in found]


policies = Resource(
    api,
    "/api/v1/escalation-policies",
    "policy_id",
    EscalationPolicyV1,
    present,
    read="oncall:read",
    write="oncall:write",
)
_POLICY_RULES = (
    "When an incident triggers, its service's policy is snapshotted onto it and level 1 is notified; unless "
    "it is acknowledged or resolved, each next level is notified after the current level's delay_minutes "
    "(1 to 1440). After the last level the policy starts over at level 1 repeat_count (0 to 9) more times. "
    "Targets: active users of the organization who can respond (owners, admins, responders: a viewer or a "
    "deactivated person is a 400 naming the target), or its schedules (whoever is on call at the time). "
    "Answers carry coverage_gaps: the spans of the next 14 days in which a level reaches nobody."
)


def _delete(*, organization_id: str, policy_id: str) -> None:
    used_by = catalog.services_of_policy(organization_id=organization_id, policy_id=policy_id)
    service.delete_policy(
        organization_id=organization_id,
        policy_id=policy_id,
        used_by_services=[s.service_key for s in used_by],
        service_names=[s.name for s in used_by],
    )


policies.listing(
    "listEscalationPolicies",
    "List escalation policies, newest first",
    lambda call, _: service.list_policies(organization_id=call.principal.organization_id),
)
policies.create(
    "createEscalationPolicy",
    "Create an escalation policy; services point at it by escalation_policy_id",
    EscalationPolicyCreate,
    policies.by_key(service.create_policy),
    description=_POLICY_RULES,
)
policies.get("getEscalationPolicy", "Get an escalation policy", service.get_policy)
policies.update(
    "updateEscalationPolicy",
    "Update an escalation policy (at least one field; levels replaces every level)",
    EscalationPolicyPatch,
    service.update_policy,
    description=_POLICY_RULES + " Incidents already escalating keep the snapshot they started with. Send the "
    "version you read to make the change conditional: 409 when the policy changed since.",
)
policies.delete(
    "deleteEscalationPolicy",
    "Delete an escalation policy (409 naming the services that point at it)",
    _delete,
    errors=(404, 409),
)
