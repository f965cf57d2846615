"""Event rule lists: list, get, create, update (move), delete; and the read the pipeline makes.

Each list (the organization's, or one integration's) is one item holding its rules in order
(eventrule.tables). Every write reads the item consistently, changes the list, and saves it on the
version read; a lost race re-reads and re-applies (store.retry_on_conflict), so two racing
creates both land and neither rule is lost. A rule's own `version` lets a PATCH name the version it
read: 409 when the rule changed since.

Positions are 0-based: position 0 runs first. The integration's existence is checked by the caller
(the route), which may read integrations: this package sits below them.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from types import EllipsisType
from typing import TypeVar

from pynamodb.exceptions import DoesNotExist

from chalicelib.catalog.service import find_service
from chalicelib.errors import Conflict, NotFound, ValidationFailed
from chalicelib.eventrule.rules import (
    MAX_RULES,
    Actions,
    Rule,
    check_actions,
    check_conditions,
    check_description,
    check_regex_budget,
    regex_cost,
    rule_from_item,
    rule_to_item,
)
from chalicelib.eventrule.tables import EventRuleSetRecord, list_key
from chalicelib.store import RetryableConflict, retry_on_conflict, save_if

# The list is one item: DynamoDB refuses items over 400 KB; keep a margin for the other attributes.
MAX_STORED_BYTES = 350_000
_RULE_ID = re.compile(r"^evr_[0-9a-f]{32}$")
T = TypeVar("T")
ConditionInput = tuple[str, str, str | None]


@dataclass(frozen=True)
class PlacedRule:
    rule: Rule
    position: int


def new_rule_id() -> str:
    return f"evr_{secrets.token_hex(16)}"


def _not_found() -> NotFound:
    return NotFound("Event rule not found.")


# --- reads -----------------------------------------------------------------------------------------


def _decode(record: EventRuleSetRecord | None) -> list[Rule]:
    if record is None:
        return []
    return [rule_from_item(item) for item in json.loads(record.rules_json or "[]")]


def _read(organization_id: str, integration_id: str | None, *, consistent: bool) -> EventRuleSetRecord | None:
    try:
        return EventRuleSetRecord.get(organization_id, list_key(integration_id), consistent_read=consistent)
    except DoesNotExist:
        return None


def list_rules(*, organization_id: str, integration_id: str | None = None) -> list[Rule]:
    """The list in evaluation order; one GetItem (consistent: an operator reads what they just wrote)."""
    return _decode(_read(organization_id, integration_id, consistent=True))


def _find(rules: Sequence[Rule], rule_id: str) -> int:
    if _RULE_ID.match(rule_id):
        for index, rule in enumerate(rules):
            if rule.rule_id == rule_id:
                return index
    raise _not_found()


def get_rule(*, organization_id: str, rule_id: str, integration_id: str | None = None) -> PlacedRule:
    rules = list_rules(organization_id=organization_id, integration_id=integration_id)
    index = _find(rules, rule_id)
    return PlacedRule(rules[index], index)


def rule_sets_for(*, organization_id: str, integration_id: str | None) -> list[list[Rule]]:
    """The lists that apply to one event, in the order they run: the integration's (when the event
    came through one), then the organization's. One BatchGetItem of at most two keys."""
    keys = [list_key(integration_id)] if integration_id is not None else []
    keys.append(list_key(None))
    found = {record.rule_set: record for record in EventRuleSetRecord.batch_get([(organization_id, k) for k in keys])}
    return [_decode(found.get(key)) for key in keys]


# --- checks needing the store --------------------------------------------------------------------------


def _resolved_actions(organization_id: str, actions: Actions) -> Actions:
    """`actions` with route_to_service (a SER id or svc_ key as given) resolved to the service's SER
    id and key: 400 when the organization has no such service."""
    if actions.route_to_service is None:
        return replace(actions, route_to_service_key=None)
    service = find_service(organization_id=organization_id, service_ref=actions.route_to_service)
    if service is None:
        raise ValidationFailed.for_field("actions.route_to_service", "no such service in this organization")
    return replace(actions, route_to_service=service.service_id, route_to_service_key=service.service_key)


# --- writes ----------------------------------------------------------------------------------------


def _change_list(
    organization_id: str, integration_id: str | None, now: datetime, change: Callable[[list[Rule]], T]
) -> T:
    """Read the list, let `change` edit it in place, save on the version read; re-run on a lost race."""

    def attempt() -> T:
        record = _read(organization_id, integration_id, consistent=True) or EventRuleSetRecord(
            organization_id, list_key(integration_id)
        )
        rules = _decode(record)
        result = change(rules)
        encoded = json.dumps([rule_to_item(rule) for rule in rules], separators=(",", ":"))
        if len(encoded.encode("utf-8")) > MAX_STORED_BYTES:
            raise Conflict(
                "The rule list would pass its storage limit (about 350 KB); shorten notes, "
                "descriptions or patterns, or merge rules."
            )
        record.rules_json = encoded
        record.updated_at = now
        # A new list's version is absent: PynamoDB then requires the item not to exist yet.
        if not save_if(record):
            raise RetryableConflict()
        return result

    return retry_on_conflict(attempt, what="event rule list")


def _check_position(position: int, *, most: int) -> None:
    if position < 0 or position > most:
        raise ValidationFailed.for_field("position", f"must be between 0 and {most} for this list")


def create_rule(
    *,
    organization_id: str,
    now: datetime,
    conditions: Sequence[ConditionInput],
    actions: Actions,
    integration_id: str | None = None,
    continues: bool = False,
    description: str | None = None,
    position: int | None = None,
) -> PlacedRule:
    """Insert at `position` (0 = runs first; default: the end). 409 when the list is full."""
    checked = check_conditions(conditions)
    cleaned = check_description(description)
    resolved = _resolved_actions(organization_id, check_actions(actions))
    rule = Rule(
        rule_id=new_rule_id(),
        conditions=checked,
        actions=resolved,
        continues=continues,
        description=cleaned,
        version=1,
        created_at=now,
    )

    def insert(rules: list[Rule]) -> PlacedRule:
        if len(rules) >= MAX_RULES:
            raise Conflict(f"The list has {MAX_RULES} rules, the most it may have; delete or merge rules first.")
        check_regex_budget(rules, rule.conditions)
        at = len(rules) if position is None else position
        _check_position(at, most=len(rules))
        rules.insert(at, rule)
        return PlacedRule(rule, at)

    return _change_list(organization_id, integration_id, now, insert)


def update_rule(
    *,
    organization_id: str,
    rule_id: str,
    now: datetime,
    integration_id: str | None = None,
    expected_version: int | None = None,
    conditions: Sequence[ConditionInput] | EllipsisType = ...,
    actions: Actions | EllipsisType = ...,
    continues: bool | EllipsisType = ...,
    description: str | EllipsisType | None = ...,
    position: int | EllipsisType = ...,
) -> PlacedRule:
    """Change only what is given (`...` = unchanged); `position` moves the rule within its list."""
    checked = check_conditions(conditions) if conditions is not ... else None
    cleaned = check_description(description) if description is not ... else None
    resolved = _resolved_actions(organization_id, check_actions(actions)) if actions is not ... else None

    def edit(rules: list[Rule]) -> PlacedRule:
        index = _find(rules, rule_id)
        rule = rules[index]
        if expected_version is not None and rule.version != expected_version:
            raise Conflict(
                f"The event rule changed since version {expected_version}; it is now at version {rule.version}. "
                "Read it again and reapply your change.",
                details={"expected_version": expected_version, "current_version": rule.version},
            )
        # A change that costs no more than before is always allowed (a list over its budget
        # from before the budget existed can still be simplified).
        if checked is not None and regex_cost([replace(rule, conditions=checked)]).exceeds(regex_cost([rule])):
            check_regex_budget(rules[:index] + rules[index + 1 :], checked)
        rule = replace(
            rule,
            conditions=checked if checked is not None else rule.conditions,
            actions=resolved if resolved is not None else rule.actions,
            continues=rule.continues if continues is ... else continues,
            description=rule.description if description is ... else cleaned,
            version=rule.version + 1,
            updated_at=now,
        )
        del rules[index]
        at = index if position is ... else position
        _check_position(at, most=len(rules))
        rules.insert(at, rule)
        return PlacedRule(rule, at)

    return _change_list(organization_id, integration_id, now, edit)


def delete_rule(*, organization_id: str, rule_id: str, now: datetime, integration_id: str | None = None) -> None:
    """404 when the list has no such rule (a repeated delete included)."""
    if not _RULE_ID.match(rule_id):
        raise _not_found()

    def remove(rules: list[Rule]) -> None:
        del rules[_find(rules, rule_id)]

    _change_list(organization_id, integration_id, now, remove)
