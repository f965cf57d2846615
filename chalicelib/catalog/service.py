"""Services: what incidents are raised against. Keyed by the public `svc_` key; `SER-nnnnn` via the LSI."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from types import EllipsisType

from pynamodb.exceptions import DoesNotExist
from pynamodb.expressions.update import Action

from chalicelib.catalog.grouping import NO_GROUPING, AlertGrouping, check_grouping, grouping_from_dict
from chalicelib.catalog.urgency import DEFAULT_RULE, UrgencyRule, check_rule, rule_from_dict
from chalicelib.directory import rules
from chalicelib.directory.tables import ServiceRecord
from chalicelib.directory.teams import get_team
from chalicelib.errors import Conflict, InvalidSeverity, NotFound, ValidationFailed
from chalicelib.escalation.service import load_policy
from chalicelib.store import (
    RetryableConflict,
    Transaction,
    TransactionCancelled,
    assign,
    claim_unique,
    counters,
    owner_of,
    release_unique,
    retry_on_conflict,
    scope,
)

SERVICE_COUNTER = "service"


@dataclass(frozen=True)
class Service:
    service_key: str
    service_id: str
    organization_id: str
    name: str
    description: str | None
    team_id: str | None
    default_severity: str | None
    escalation_policy_id: str | None
    is_active: bool
    created_at: datetime
    urgency_rule: UrgencyRule = DEFAULT_RULE
    alert_grouping: AlertGrouping = NO_GROUPING


def _to_domain(record: ServiceRecord) -> Service:
    return Service(
        service_key=record.service_key,
        service_id=record.service_id,
        organization_id=record.organization_id,
        name=record.name,
        description=record.description,
        team_id=record.team_id,
        default_severity=record.default_severity,
        escalation_policy_id=record.escalation_policy_id,
        is_active=bool(record.is_active),
        created_at=record.created_at,
        urgency_rule=rule_from_dict(record.urgency_rule),
        alert_grouping=grouping_from_dict(record.alert_grouping),
    )


def _name_guard(name: str) -> str:
    return rules.guard_key(rules.SERVICE_NAME_GUARD, rules.name_key(name))


def _duplicate_name(name: str) -> Conflict:
    return Conflict(
        f"A service named '{name}' already exists in this organization.",
        details={"fields": [{"field": "name", "message": "already in use"}]},
    )


def _check_severity(value: str | None) -> str | None:
    if value is not None and not rules.is_severity(value):
        raise InvalidSeverity(
            "default_severity must be one of SEV0, SEV1, SEV2, SEV3, SEV4.",
            details={"fields": [{"field": "default_severity", "message": "must be one of SEV0 to SEV4"}]},
        )
    return value


def _check_team(organization_id: str, team_id: str | None) -> str | None:
    if team_id is None:
        return None
    try:
        get_team(organization_id=organization_id, team_id=team_id)
    except NotFound:
        raise ValidationFailed.for_field("team_id", "no such team in this organization") from None
    return team_id


def _check_policy_id(organization_id: str, value: str | None) -> str | None:
    if value is None:
        return None
    if not rules.is_item_id(value):
        raise ValidationFailed.for_field("escalation_policy_id", "is not a valid id")

    if load_policy(organization_id=organization_id, policy_id=value) is None:
        raise ValidationFailed.for_field("escalation_policy_id", "no such escalation policy in this organization")
    return value


def create_service(
    *,
    organization_id: str,
    name: str,
    now: datetime,
    description: str | None = None,
    team_id: str | None = None,
    default_severity: str | None = None,
    service_key: str | None = None,
    escalation_policy_id: str | None = None,
    urgency_rule: UrgencyRule | None = None,
    alert_grouping: AlertGrouping | None = None,
) -> Service:
    """A new service gets a random `svc_` key (unless one is given) and the next `SER-nnnnn` id.

    Without an urgency rule it gets the default one (severity_based, no support hours)."""
    clean_name = rules.clean_name(name)
    clean_description = rules.clean_description(description)
    _check_severity(default_severity)
    rule = check_rule(urgency_rule or DEFAULT_RULE)
    grouping = check_grouping(alert_grouping or NO_GROUPING)
    _check_policy_id(organization_id, escalation_policy_id)
    if service_key is not None and not rules.is_service_key(service_key):
        raise ValidationFailed.for_field("service_key", "must be svc_ followed by 10 characters a-z or 0-9")
    _check_team(organization_id, team_id)
    # Cheap early answer for the common duplicate; the transaction below is what guarantees it.
    if owner_of(organization_id=organization_id, unique_key=_name_guard(clean_name)) is not None:
        raise _duplicate_name(clean_name)
    service_id = rules.format_service_id(
        counters.next_value(organization_id=organization_id, counter_name=SERVICE_COUNTER)
    )

    def attempt() -> Service:
        record = ServiceRecord(
            organization_id,
            service_key or rules.new_service_key(),
            service_id=service_id,
            name=clean_name,
            description=clean_description,
            team_id=team_id,
            default_severity=default_severity,
            escalation_policy_id=escalation_policy_id,
            urgency_rule=rule.to_dict(),
            alert_grouping=grouping.to_dict(),
            is_active=True,
            created_at=now,
        )
        tx = Transaction()
        tx.put("service", record, condition=ServiceRecord.service_key.does_not_exist())
        claim_unique(tx, "guard", organization_id, _name_guard(clean_name), record.service_key)
        try:
            tx.commit()
        except TransactionCancelled as cancelled:
            if "guard" in cancelled.failed:
                raise _duplicate_name(clean_name) from None
            if "service" in cancelled.failed and service_key is not None:
                raise Conflict(
                    f"Service key {service_key} is already in use.",
                    details={"fields": [{"field": "service_key", "message": "already in use"}]},
                ) from None
            if cancelled.retryable:
                raise RetryableConflict() from None  # a generated key collided, or contention: draw again
            raise
        return _to_domain(record)

    return retry_on_conflict(attempt, what="service")


def _not_found() -> NotFound:
    return NotFound("Service not found.")


def _get_record(organization_id: str, service_ref: str, *, consistent: bool = False) -> ServiceRecord:
    """`service_ref` is a `svc_` key (GetItem) or a `SER-nnnnn` id (Query on the LSI)."""
    if rules.is_service_key(service_ref):
        try:
            return ServiceRecord.get(organization_id, service_ref, consistent_read=consistent)
        except DoesNotExist:
            raise _not_found() from None
    service_id = rules.normalize_service_id(service_ref)
    if rules.is_service_id(service_id) and len(service_id) <= 20:
        query = ServiceRecord.by_service_id.query(
            organization_id, ServiceRecord.service_id == service_id, consistent_read=consistent, limit=1
        )
        for record in query:
            return record
    raise _not_found()


def get_service(*, organization_id: str, service_ref: str) -> Service:
    return _to_domain(_get_record(organization_id, service_ref))


def find_service(*, organization_id: str, service_ref: str) -> Service | None:
    try:
        return get_service(organization_id=organization_id, service_ref=service_ref)
    except NotFound:
        return None


def services_by_ref(*, organization_id: str, service_refs: list[str]) -> dict[str, Service]:
    """The services `service_refs` name (svc_ keys or SER-nnnnn ids, as given), keyed by the
    reference; unknown ones are absent. Keys in one BatchGetItem, each id one Query on the index."""
    found = get_services(organization_id=organization_id, service_keys=service_refs)
    for ref in rules.unique_in_order(service_refs):
        if ref not in found and not rules.is_service_key(ref):
            service = find_service(organization_id=organization_id, service_ref=ref)
            if service is not None:
                found[ref] = service
    return found


def get_services(*, organization_id: str, service_keys: list[str]) -> dict[str, Service]:
    """The given services in one BatchGetItem (per 100 keys), keyed by service key; unknown keys are absent."""
    wanted = [key for key in rules.unique_in_order(service_keys) if rules.is_service_key(key)]
    if not wanted:
        return {}
    return scope.remembered_many("service", organization_id, wanted, lambda keys: _read_services(organization_id, keys))


def _read_services(organization_id: str, service_keys: list[str]) -> dict[str, Service]:
    found = ServiceRecord.batch_get([(organization_id, key) for key in service_keys])
    return {record.service_key: _to_domain(record) for record in found}


def list_services(*, organization_id: str, is_active: bool | None = None, team_id: str | None = None) -> list[Service]:
    """Newest first; one Query on the organization's partition."""
    found = [
        _to_domain(record)
        for record in ServiceRecord.query(organization_id)
        if (is_active is None or bool(record.is_active) == is_active) and (team_id is None or record.team_id == team_id)
    ]
    return sorted(found, key=lambda s: (s.created_at, s.service_id), reverse=True)


def update_service(
    *,
    organization_id: str,
    service_ref: str,
    now: datetime,
    name: str | EllipsisType = ...,
    description: str | EllipsisType | None = ...,
    team_id: str | EllipsisType | None = ...,
    default_severity: str | EllipsisType | None = ...,
    is_active: bool | EllipsisType = ...,
    escalation_policy_id: str | EllipsisType | None = ...,
    urgency_rule: UrgencyRule | EllipsisType = ...,
    alert_grouping: AlertGrouping | EllipsisType = ...,
) -> Service:
    """Change only the arguments given (`...` means unchanged); a rename moves the name guard atomically."""
    actions: list[Action] = [assign(ServiceRecord.updated_at, now)]
    if description is not ...:
        actions.append(assign(ServiceRecord.description, rules.clean_description(description)))
    if default_severity is not ...:
        actions.append(assign(ServiceRecord.default_severity, _check_severity(default_severity)))
    if is_active is not ...:
        actions.append(assign(ServiceRecord.is_active, bool(is_active)))
    if escalation_policy_id is not ...:
        actions.append(
            assign(ServiceRecord.escalation_policy_id, _check_policy_id(organization_id, escalation_policy_id))
        )
    if team_id is not ...:
        actions.append(assign(ServiceRecord.team_id, _check_team(organization_id, team_id)))
    if urgency_rule is not ...:
        # Open incidents keep the urgency (and the rule) they were opened under (docs/INCIDENTS.md, "Urgency").
        actions.append(assign(ServiceRecord.urgency_rule, check_rule(urgency_rule).to_dict()))
    if alert_grouping is not ...:
        # An incident already grouping alerts keeps its window; new groups follow the new rule.
        actions.append(assign(ServiceRecord.alert_grouping, check_grouping(alert_grouping).to_dict()))
    new_name = rules.clean_name(name) if name is not ... else None
    service_key = _get_record(organization_id, service_ref).service_key

    def attempt() -> Service:
        record = _get_record(organization_id, service_key, consistent=True)
        all_actions = list(actions)
        tx = Transaction()
        condition = ServiceRecord.service_key.exists()
        if new_name is not None and new_name != record.name:
            all_actions.append(assign(ServiceRecord.name, new_name))
            # The name condition turns a concurrent rename into a retry instead of a stray guard.
            condition &= ServiceRecord.name == record.name
            if rules.name_key(new_name) != rules.name_key(record.name):
                claim_unique(tx, "new-guard", organization_id, _name_guard(new_name), service_key)
                release_unique(tx, "old-guard", organization_id, _name_guard(record.name), service_key)
        tx.update("service", record, all_actions, condition=condition)
        try:
            tx.commit()
        except TransactionCancelled as cancelled:
            if "new-guard" in cancelled.failed:
                raise _duplicate_name(str(new_name)) from None
            if cancelled.retryable:
                raise RetryableConflict() from None
            raise
        return _to_domain(_get_record(organization_id, service_key, consistent=True))

    return retry_on_conflict(attempt, what="service")


def services_of_policy(*, organization_id: str, policy_id: str) -> list[Service]:
    """The services (active or not) pointing at the policy. One Query."""
    return [
        service
        for service in list_services(organization_id=organization_id)
        if service.escalation_policy_id == policy_id
    ]


def services_using_policy(*, organization_id: str, policy_id: str) -> list[str]:
    """Service keys of the services (active or not) pointing at the policy. One Query."""
    return [service.service_key for service in services_of_policy(organization_id=organization_id, policy_id=policy_id)]
