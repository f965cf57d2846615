"""Escalation policies: create, read, list, update (optimistic locking), delete (refused while in use).

A policy's targets must exist in the organization when it is written: users (active ones whose
role can respond: owner, admin, responder) and schedules. Every write marks the policy's
coverage to be checked (chalicelib.oncall.coverage_watch). Services point at a policy by
`escalation_policy_id`; deleting a policy a service still names is a 409. Every write checks and
bumps the record's version: a PATCH naming the version it read gets a 409 when someone wrote in
between; without one the update re-reads and re-applies.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from types import EllipsisType

from pynamodb.exceptions import DoesNotExist

from chalicelib.directory import rules
from chalicelib.directory.users import get_users
from chalicelib.errors import Conflict, NotFound, ValidationFailed
from chalicelib.escalation.steps import EscalationPolicy, Level, validate_policy
from chalicelib.escalation.tables import EscalationPolicyRecord
from chalicelib.oncall import coverage_watch
from chalicelib.oncall.tables import ScheduleRecord
from chalicelib.store import RetryableConflict, delete_if, retry_on_conflict, save_if, scope


@dataclass(frozen=True)
class StoredPolicy:
    """A policy as stored: the pure `EscalationPolicy` and its record's metadata."""

    policy: EscalationPolicy
    organization_id: str
    version: int
    created_at: datetime
    updated_at: datetime | None

    @property
    def policy_id(self) -> str:
        return self.policy.policy_id


def new_policy_id() -> str:
    return f"pol_{uuid.uuid4().hex}"


def _to_domain(record: EscalationPolicyRecord) -> StoredPolicy:
    policy = EscalationPolicy.from_dict(
        {
            "policy_id": record.policy_id,
            "name": record.name,
            "levels": record.levels or [],
            "repeat_count": int(record.repeat_count or 0),
        }
    )
    return StoredPolicy(policy, record.organization_id, int(record.version or 0), record.created_at, record.updated_at)


def _not_found() -> NotFound:
    return NotFound("Escalation policy not found.")


def _stale(expected: int, current: int) -> Conflict:
    return Conflict(
        f"The escalation policy changed since version {expected}; it is now at version {current}. "
        "Read it again and reapply your change.",
        details={"expected_version": expected, "current_version": current},
    )


RESPONDERS_ONLY = "only owners, admins and responders can be paged"


def check_targets(*, organization_id: str, levels: Sequence[Level]) -> None:
    """ValidationFailed (details.fields) unless every user target is an active user of the
    organization who can respond (owner, admin, responder: a viewer cannot acknowledge a page)
    and every schedule target one of its schedules. One BatchGet each."""
    user_ids = [t.id for level in levels for t in level.targets if t.kind == "user"]
    schedule_ids = [t.id for level in levels for t in level.targets if t.kind == "schedule"]
    users = get_users(organization_id=organization_id, user_ids=user_ids) if user_ids else {}
    wanted = [s for s in rules.unique_in_order(schedule_ids) if rules.is_item_id(s)]
    schedules: set[str] = set()
    if wanted:
        found = ScheduleRecord.batch_get([(organization_id, s) for s in wanted], attributes_to_get=["schedule_id"])
        schedules = {record.schedule_id for record in found}
    problems: list[dict[str, str]] = []
    for index, level in enumerate(levels):
        for number, target in enumerate(level.targets):
            where = f"levels.{index}.targets.{number}.id"
            if target.kind == "user":
                user = users.get(target.id)
                if user is None:
                    problems.append({"field": where, "message": "no such user in this organization"})
                elif not user.is_active:
                    problems.append({"field": where, "message": "the user is deactivated"})
                elif not rules.can_respond(user.role, user.is_active):
                    who = user.name or user.email or user.user_id
                    problems.append({"field": where, "message": f"{who} is a {user.role}: {RESPONDERS_ONLY}"})
            elif target.kind == "schedule" and target.id not in schedules:
                problems.append({"field": where, "message": "no such schedule in this organization"})
    if problems:
        raise ValidationFailed.for_fields(problems, "The escalation policy names unknown targets.")


def _validated(policy: EscalationPolicy) -> EscalationPolicy:
    validate_policy(policy)
    return policy


def create_policy(
    *, organization_id: str, name: str, levels: Sequence[Level], now: datetime, repeat_count: int = 0
) -> StoredPolicy:
    policy = _validated(EscalationPolicy(new_policy_id(), rules.clean_name(name), tuple(levels), repeat_count))
    check_targets(organization_id=organization_id, levels=policy.levels)
    record = EscalationPolicyRecord(
        organization_id,
        policy.policy_id,
        name=policy.name,
        levels=[level.to_dict() for level in policy.levels],
        repeat_count=policy.repeat_count,
        created_at=now,
    )
    record.save(condition=EscalationPolicyRecord.policy_id.does_not_exist())
    coverage_watch.mark_due(organization_id, "policy", policy.policy_id, now)
    return _to_domain(record)


def _get_record(organization_id: str, policy_id: str, *, consistent: bool = False) -> EscalationPolicyRecord:
    if not rules.is_item_id(policy_id):
        raise _not_found()
    try:
        return EscalationPolicyRecord.get(organization_id, policy_id, consistent_read=consistent)
    except DoesNotExist:
        raise _not_found() from None


def get_policy(*, organization_id: str, policy_id: str) -> StoredPolicy:
    return _to_domain(_get_record(organization_id, policy_id))


def get_policies(*, organization_id: str, policy_ids: Sequence[str]) -> dict[str, StoredPolicy]:
    """Several policies in one BatchGetItem (per 100), keyed by id; unknown ids are absent."""
    wanted = [p for p in rules.unique_in_order(list(policy_ids)) if rules.is_item_id(p)]
    if not wanted:
        return {}
    found = EscalationPolicyRecord.batch_get([(organization_id, p) for p in wanted])
    return {record.policy_id: _to_domain(record) for record in found}


def list_policies(*, organization_id: str) -> list[StoredPolicy]:
    """Newest first; one Query on the organization's partition."""
    found = [_to_domain(record) for record in EscalationPolicyRecord.query(organization_id)]
    return sorted(found, key=lambda p: (p.created_at, p.policy_id), reverse=True)


def load_policy(*, organization_id: str, policy_id: str) -> EscalationPolicy | None:
    """The policy (to snapshot onto an incident), or None when it no longer exists. One GetItem."""

    def read() -> EscalationPolicy | None:
        try:
            return get_policy(organization_id=organization_id, policy_id=policy_id).policy
        except NotFound:
            return None

    return scope.remembered(("policy", organization_id, policy_id), read)


def update_policy(
    *,
    organization_id: str,
    policy_id: str,
    now: datetime,
    expected_version: int | None = None,
    name: str | EllipsisType = ...,
    levels: Sequence[Level] | EllipsisType = ...,
    repeat_count: int | EllipsisType = ...,
) -> StoredPolicy:
    """Change only the arguments given (`...` means unchanged); `expected_version` makes it conditional."""
    new_name = rules.clean_name(name) if name is not ... else None
    if levels is not ...:
        check_targets(organization_id=organization_id, levels=levels)

    def attempt() -> StoredPolicy:
        record = _get_record(organization_id, policy_id, consistent=True)
        if expected_version is not None and record.version != expected_version:
            raise _stale(expected_version, int(record.version or 0))
        current = _to_domain(record).policy
        policy = _validated(
            EscalationPolicy(
                current.policy_id,
                new_name if new_name is not None else current.name,
                tuple(levels) if levels is not ... else current.levels,
                repeat_count if repeat_count is not ... else current.repeat_count,
            )
        )
        record.name = policy.name
        record.levels = [level.to_dict() for level in policy.levels]
        record.repeat_count = policy.repeat_count
        record.updated_at = now
        if not save_if(record, EscalationPolicyRecord.policy_id.exists()):
            if expected_version is not None:
                latest = _get_record(organization_id, policy_id, consistent=True)
                raise _stale(expected_version, int(latest.version or 0))
            raise RetryableConflict()
        return _to_domain(record)

    stored = retry_on_conflict(attempt, what="escalation policy")
    coverage_watch.mark_due(organization_id, "policy", policy_id, now)
    return stored


def policies_of_schedule(*, organization_id: str, schedule_id: str) -> list[StoredPolicy]:
    """The policies with the schedule among their targets. One Query."""
    return [
        stored
        for stored in list_policies(organization_id=organization_id)
        if any(t.kind == "schedule" and t.id == schedule_id for level in stored.policy.levels for t in level.targets)
    ]


def policies_using_schedule(*, organization_id: str, schedule_id: str) -> list[str]:
    """Ids of the policies with the schedule among their targets. One Query."""
    return [
        stored.policy_id for stored in policies_of_schedule(organization_id=organization_id, schedule_id=schedule_id)
    ]


def delete_policy(
    *, organization_id: str, policy_id: str, used_by_services: Sequence[str], service_names: Sequence[str] = ()
) -> None:
    """404 when unknown; 409 while a service points at it, naming them (details.service_keys).

    The caller passes `catalog.service.services_using_policy(...)` and their names: services sit
    above policies in the import layers, so policies cannot ask for them (docs/ARCHITECTURE.md)."""
    record = _get_record(organization_id, policy_id)
    users = list(used_by_services)
    if users:
        named = ", ".join(service_names or users)
        raise Conflict(
            f"The escalation policy is used by {'a service' if len(users) == 1 else 'services'}: {named}. "
            f"Point {'it' if len(users) == 1 else 'them'} at another policy first.",
            details={"service_keys": users},
        )
    if not delete_if(record, EscalationPolicyRecord.policy_id.exists(), add_version_condition=False):
        raise _not_found()
    coverage_watch.forget(organization_id, "policy", policy_id)
