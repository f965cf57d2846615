"""Event rules: the organization's ordered list and each integration's, list/create/get/update
(move)/delete, and a dry run against a sample alert. Reads need integrations:read, writes
integrations:write. An integration's list answers 404 for an integration the organization lacks."""

from __future__ import annotations

from chalicelib.api.idempotent import IDEMPOTENT
from chalicelib.api.operation import Call, Idempotent, OperationGroup
from chalicelib.catalog.service import find_service
from chalicelib.directory.rules import normalize_service_id
from chalicelib.eventrule import service
from chalicelib.eventrule.evaluate import evaluate
from chalicelib.eventrule.facts import AlertFacts
from chalicelib.eventrule.models import (
    EventRuleCreate,
    EventRulePatch,
    EventRuleTest,
    EventRuleV1,
    RuleDecisionV1,
)
from chalicelib.eventrule.regex import MAX_PROGRAM_SIZE
from chalicelib.eventrule.rules import MAX_INSTRUCTIONS_PER_LIST, MAX_MATCHES_PER_LIST, MAX_RULES
from chalicelib.integration import admin
from chalicelib.oncall.models import DeletedV1
from chalicelib.pagination import Page, PageQuery, paginate

api = OperationGroup(__name__, tag="event-rules")

ORG_LIST = "/api/v1/event-rules"
ORG_ITEM = ORG_LIST + "/{rule_id}"
INTEGRATION_LIST = "/api/v1/integrations/{integration_id}/event-rules"
INTEGRATION_ITEM = INTEGRATION_LIST + "/{rule_id}"
READ, WRITE = "integrations:read", "integrations:write"
SEMANTICS = (
    "The integration's list runs first, then the organization's. Within a list the first matching rule "
    "wins, unless it says continue; drop ends all evaluation; the first matched rule that sets severity "
    "or route_to_service decides it; notes accumulate. Conditions: equals and contains ignore case, "
    "matches is an RE2 pattern."
)
CREATE_RULES = (
    f"At most {MAX_RULES} rules per list (409). 400 for an op without a value (or exists with one), an invalid "
    "pattern, no action, drop with another action, an unknown route_to_service, or a position past the end; "
    f"and, naming the condition, a pattern over {MAX_PROGRAM_SIZE} RE2 instructions or one that takes the "
    f"list past {MAX_MATCHES_PER_LIST} matches conditions or {MAX_INSTRUCTIONS_PER_LIST} instructions in all. "
)


def _integration(call: Call) -> str:
    """The path's integration, 404 when the organization has none such."""
    integration_id = call.path["integration_id"]
    admin.get_integration(organization_id=call.principal.organization_id, integration_id=integration_id)
    return integration_id


def _list(call: Call, integration_id: str | None) -> Page[EventRuleV1]:
    rules = service.list_rules(organization_id=call.principal.organization_id, integration_id=integration_id)
    shown = [EventRuleV1.of(service.PlacedRule(rule, index), integration_id) for index, rule in enumerate(rules)]
    return paginate(shown, limit=call.query.limit, offset=call.query.offset)


# Keys are kept per list (the integration's, or the organization's: no integration_id in the path),
# the payload as the client spelled it (`continue`).
ONCE_PER_LIST = Idempotent(place="integration_id", by_alias=True)


def _create(call: Call, integration_id: str | None) -> EventRuleV1:
    body: EventRuleCreate = call.body
    placed = service.create_rule(
        organization_id=call.principal.organization_id,
        integration_id=integration_id,
        now=call.now,
        conditions=[condition.as_input() for condition in body.conditions],
        actions=body.actions.as_actions(),
        continues=body.continue_,
        description=body.description,
        position=body.position,
    )
    return EventRuleV1.of(placed, integration_id)


def _get(call: Call, integration_id: str | None) -> EventRuleV1:
    placed = service.get_rule(
        organization_id=call.principal.organization_id, integration_id=integration_id, rule_id=call.path["rule_id"]
    )
    return EventRuleV1.of(placed, integration_id)


def _update(call: Call, integration_id: str | None) -> EventRuleV1:
    body: EventRulePatch = call.body
    placed = service.update_rule(
        organization_id=call.principal.organization_id,
        integration_id=integration_id,
        rule_id=call.path["rule_id"],
        now=call.now,
        expected_version=body.version,
        **body.domain_changes(),
    )
    return EventRuleV1.of(placed, integration_id)


def _delete(call: Call, integration_id: str | None) -> DeletedV1:
    rule_id = call.path["rule_id"]
    service.delete_rule(
        organization_id=call.principal.organization_id, integration_id=integration_id, rule_id=rule_id, now=call.now
    )
    return DeletedV1(id=rule_id, deleted=True)


# --- the organization's list -----------------------------------------------------------------------


@api.operation(
    "GET",
    ORG_LIST,
    operation_id="listEventRules",
    summary="The organization's event rules, in the order they run",
    scope=READ,
    query=PageQuery,
    response=Page[EventRuleV1],
    description=SEMANTICS,
)
def list_org_rules(call: Call) -> Page[EventRuleV1]:
    return _list(call, None)


@api.operation(
    "POST",
    ORG_LIST,
    operation_id="createEventRule",
    headers=("Idempotency-Key",),
    summary="Add an event rule to the organization's list",
    scope=WRITE,
    body=EventRuleCreate,
    response=EventRuleV1,
    status=201,
    errors=(400, 409),
    description=f"{IDEMPOTENT} {CREATE_RULES}{SEMANTICS}",
    idempotent=ONCE_PER_LIST,
)
def create_org_rule(call: Call) -> EventRuleV1:
    return _create(call, None)


@api.operation(
    "POST",
    ORG_LIST + "/test",
    operation_id="testEventRules",
    summary="Dry run: what the rules decide for a sample alert (nothing is recorded)",
    # Write, not read: a dry run spends as much CPU as an event, and a viewer must not spend it at will.
    scope=WRITE,
    body=EventRuleTest,
    response=RuleDecisionV1,
    errors=(404,),
    description="Runs the organization's list, and first the integration's when integration_id is given "
    "(404 when the organization has no such integration). Needs integrations:write: it costs what an event "
    "costs. Past the evaluation's time budget the answer is the decision of no rule, with a warning. " + SEMANTICS,
)
def dry_run_rules(call: Call) -> RuleDecisionV1:
    body: EventRuleTest = call.body
    organization_id = call.principal.organization_id
    if body.integration_id is not None:
        admin.get_integration(organization_id=organization_id, integration_id=body.integration_id)
    lists = [service.list_rules(organization_id=organization_id, integration_id=body.integration_id)]
    if body.integration_id is not None:
        lists.append(service.list_rules(organization_id=organization_id))
    named = find_service(organization_id=organization_id, service_ref=body.service_id) if body.service_id else None
    facts = AlertFacts(
        title=body.title,
        source=body.source,
        severity=body.severity,
        service_id=named.service_id if named else normalize_service_id(body.service_id) if body.service_id else None,
        integration_type=body.integration_type,
        labels=dict(body.labels),
        service_key=named.service_key if named else None,
    )
    decision = evaluate(lists, facts)
    return RuleDecisionV1(
        dropped=decision.dropped,
        suppressed=decision.suppressed,
        severity=decision.severity,
        route_to_service=decision.route_to_service,
        notes=list(decision.notes),
        matched_rule_ids=list(decision.matched_rule_ids),
        warnings=list(decision.warnings),
    )


@api.operation(
    "GET",
    ORG_ITEM,
    operation_id="getEventRule",
    summary="Get an event rule",
    scope=READ,
    response=EventRuleV1,
    errors=(404,),
)
def get_org_rule(call: Call) -> EventRuleV1:
    return _get(call, None)


@api.operation(
    "PATCH",
    ORG_ITEM,
    operation_id="updateEventRule",
    summary="Change an event rule or move it (position) within the list",
    scope=WRITE,
    body=EventRulePatch,
    response=EventRuleV1,
    errors=(400, 404, 409),
    description="conditions and actions replace the rule's whole list/object. Send the version you read "
    "to make the change conditional (409 when the rule changed since). " + CREATE_RULES,
)
def update_org_rule(call: Call) -> EventRuleV1:
    return _update(call, None)


@api.operation(
    "DELETE",
    ORG_ITEM,
    operation_id="deleteEventRule",
    summary="Delete an event rule",
    scope=WRITE,
    response=DeletedV1,
    errors=(404,),
)
def delete_org_rule(call: Call) -> DeletedV1:
    return _delete(call, None)


# --- an integration's list ---------------------------------------------------------------------------


@api.operation(
    "GET",
    INTEGRATION_LIST,
    operation_id="listIntegrationEventRules",
    summary="An integration's event rules, in the order they run (before the organization's)",
    scope=READ,
    query=PageQuery,
    response=Page[EventRuleV1],
    errors=(404,),
    description=SEMANTICS,
)
def list_integration_rules(call: Call) -> Page[EventRuleV1]:
    return _list(call, _integration(call))


@api.operation(
    "POST",
    INTEGRATION_LIST,
    operation_id="createIntegrationEventRule",
    headers=("Idempotency-Key",),
    summary="Add an event rule to an integration's list",
    scope=WRITE,
    body=EventRuleCreate,
    response=EventRuleV1,
    status=201,
    errors=(400, 404, 409),
    description=f"{IDEMPOTENT} {CREATE_RULES}{SEMANTICS}",
    idempotent=ONCE_PER_LIST,
)
def create_integration_rule(call: Call) -> EventRuleV1:
    return _create(call, _integration(call))


@api.operation(
    "GET",
    INTEGRATION_ITEM,
    operation_id="getIntegrationEventRule",
    summary="Get an event rule of an integration",
    scope=READ,
    response=EventRuleV1,
    errors=(404,),
)
def get_integration_rule(call: Call) -> EventRuleV1:
    return _get(call, _integration(call))


@api.operation(
    "PATCH",
    INTEGRATION_ITEM,
    operation_id="updateIntegrationEventRule",
    summary="Change an integration's event rule or move it within the list",
    scope=WRITE,
    body=EventRulePatch,
    response=EventRuleV1,
    errors=(400, 404, 409),
    description="As updateEventRule, on the integration's list.",
)
def update_integration_rule(call: Call) -> EventRuleV1:
    return _update(call, _integration(call))


@api.operation(
    "DELETE",
    INTEGRATION_ITEM,
    operation_id="deleteIntegrationEventRule",
    summary="Delete an event rule of an integration",
    scope=WRITE,
    response=DeletedV1,
    errors=(404,),
)
def delete_integration_rule(call: Call) -> DeletedV1:
    return _delete(call, _integration(call))
