"""Escalation policies: ordered levels of targets (users, schedules) with delays, and a repeat count."""

from __future__ import annotations

from chalicelib.api.operation import Call, OperationGroup
from chalicelib.catalog import service as catalog
from chalicelib.escalation import service
from chalicelib.escalation.coverage_read import policies_gaps
from chalicelib.escalation.models import EscalationPolicyCreate, EscalationPolicyPatch, EscalationPolicyV1
from chalicelib.escalation.service import StoredPolicy
from chalicelib.oncall.coverage import coverage_window
from chalicelib.oncall.models import DeletedV1
from chalicelib.pagination import Page, PageQuery, paginate

api = OperationGroup(__name__, tag="escalation-policies")

BASE = "/api/v1/escalation-policies"
ITEM = BASE + "/{policy_id}"
_POLICY_RULES = (
    "When an incident triggers, its service's policy is snapshotted onto it and level 1 is notified; unless "
    "it is acknowledged or resolved, each next level is notified after the current level's delay_minutes "
    "(1 to 1440). After the last level the policy starts over at level 1 repeat_count (0 to 9) more times. "
    "Targets: active users of the organization who can respond (owners, admins, responders: a viewer or a "
    "deactivated person is a 400 naming the target), or its schedules (whoever is on call at the time). "
    "Answers carry coverage_gaps: the spans of the next 14 days in which a level reaches nobody."
)


def present(call: Call, found: list[StoredPolicy]) -> list[EscalationPolicyV1]:
    """The policies with their coverage gaps over the next 14 days (two reads for all of them)."""
    gaps = policies_gaps(
        organization_id=call.principal.organization_id,
        policies=[stored.policy for stored in found],
        window=coverage_window(call.now),
    )
    return [EscalationPolicyV1.of(stored, gaps[stored.policy_id]) for stored in found]


def present_one(call: Call, stored: StoredPolicy) -> EscalationPolicyV1:
    return present(call, [stored])[0]


@api.operation(
    "GET",
    BASE,
    operation_id="listEscalationPolicies",
    summary="List escalation policies, newest first",
    scope="oncall:read",
    query=PageQuery,
    response=Page[EscalationPolicyV1],
    errors=(400,),
)
def list_policies(call: Call) -> Page[EscalationPolicyV1]:
    query: PageQuery = call.query
    found = service.list_policies(organization_id=call.principal.organization_id)
    page = paginate(found, limit=query.limit, offset=query.offset)
    return Page[EscalationPolicyV1](
        items=present(call, page.items), total=page.total, has_more=page.has_more, next_offset=page.next_offset
    )


@api.operation(
    "POST",
    BASE,
    operation_id="createEscalationPolicy",
    summary="Create an escalation policy; services point at it by escalation_policy_id",
    scope="oncall:write",
    body=EscalationPolicyCreate,
    response=EscalationPolicyV1,
    status=201,
    errors=(400,),
    description=_POLICY_RULES,
)
def create_policy(call: Call) -> EscalationPolicyV1:
    body: EscalationPolicyCreate = call.body
    stored = service.create_policy(
        organization_id=call.principal.organization_id,
        name=body.name,
        levels=body.domain_levels(),
        repeat_count=body.repeat_count,
        now=call.now,
    )
    return present_one(call, stored)


@api.operation(
    "GET",
    ITEM,
    operation_id="getEscalationPolicy",
    summary="Get an escalation policy",
    scope="oncall:read",
    response=EscalationPolicyV1,
    errors=(404,),
)
def get_policy(call: Call) -> EscalationPolicyV1:
    return present_one(
        call, service.get_policy(organization_id=call.principal.organization_id, policy_id=call.path["policy_id"])
    )


@api.operation(
    "PATCH",
    ITEM,
    operation_id="updateEscalationPolicy",
    summary="Update an escalation policy (at least one field; levels replaces every level)",
    scope="oncall:write",
    body=EscalationPolicyPatch,
    response=EscalationPolicyV1,
    errors=(400, 404, 409),
    description=_POLICY_RULES + " Incidents already escalating keep the snapshot they started with. Send the "
    "version you read to make the change conditional: 409 when the policy changed since.",
)
def update_policy(call: Call) -> EscalationPolicyV1:
    body: EscalationPolicyPatch = call.body
    stored = service.update_policy(
        organization_id=call.principal.organization_id,
        policy_id=call.path["policy_id"],
        now=call.now,
        expected_version=body.version,
        **body.domain_changes(),
    )
    return present_one(call, stored)


@api.operation(
    "DELETE",
    ITEM,
    operation_id="deleteEscalationPolicy",
    summary="Delete an escalation policy (409 naming the services that point at it)",
    scope="oncall:write",
    response=DeletedV1,
    errors=(404, 409),
)
def delete_policy(call: Call) -> DeletedV1:
    policy_id, organization_id = call.path["policy_id"], call.principal.organization_id
    used_by = catalog.services_of_policy(organization_id=organization_id, policy_id=policy_id)
    service.delete_policy(
        organization_id=organization_id,
        policy_id=policy_id,
        used_by_services=[s.service_key for s in used_by],
        service_names=[s.name for s in used_by],
    )
    return DeletedV1(id=policy_id, deleted=True)
