"""What an event rule is, the checks a rule passes before it is stored, and its stored form. Pure.

A rule: `conditions` (all must hold; none at all means it matches every alert, a catch-all),
`actions` (at least one), `continue` (after a match, go on to the next rules of the same list).
Each condition is `{field, op, value}`:
- field: title, source, severity, service_id, integration_type, or `labels.<name>`;
- op: equals, contains (both ignore case), matches (an RE2 pattern, see eventrule.regex), exists
  (the field has a non-empty value; takes no value). The other ops need a non-empty value.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from chalicelib.errors import ValidationFailed
from chalicelib.eventrule.regex import MAX_PATTERN_LENGTH, PatternRefused, check_pattern, program_size

ALERT_FIELDS: tuple[str, ...] = ("title", "source", "severity", "service_id", "integration_type")
LABEL_PREFIX = "labels."
MAX_LABEL_NAME_LENGTH = 128
# Label names as monitoring tools write them (Prometheus, Datadog tags, custom metadata keys).
LABEL_NAME_CHARACTERS = r"A-Za-z0-9_.:/@-"
# The `field` of a condition, for the request model and the document alike (ASCII: same in both).
FIELD_PATTERN = (
    "^(" + "|".join(ALERT_FIELDS) + r"|labels\.[" + LABEL_NAME_CHARACTERS + "]{1," + str(MAX_LABEL_NAME_LENGTH) + "})$"
)
_FIELD = re.compile(FIELD_PATTERN)

OPS: tuple[str, ...] = ("equals", "contains", "matches", "exists")
VALUELESS_OPS = frozenset({"exists"})
MAX_VALUE_LENGTH = MAX_PATTERN_LENGTH
MAX_CONDITIONS = 16
MAX_NOTE_LENGTH = 1000
MAX_DESCRIPTION_LENGTH = 1000
# Per list (an organization's, or one integration's): every rule runs on every event, and the list
# is one DynamoDB item, read whole per event.
MAX_RULES = 100
# What a list's `matches` conditions may cost together, all of them running on every event: a
# search costs up to (RE2 instructions x text length), and alert text is bounded at intake (labels
# 1,000 characters). A full list then stays near a tenth of a second at worst (bench/abuse_rules.py);
# the time budget at evaluation (eventrule.evaluate) catches what the counts cannot.
MAX_MATCHES_PER_LIST = 200
MAX_INSTRUCTIONS_PER_LIST = 5_000
ACTION_NAMES = ("suppress", "drop", "severity", "route_to_service", "note")


@dataclass(frozen=True)
class Condition:
    field: str
    op: str
    value: str | None = None


@dataclass(frozen=True)
class Actions:
    suppress: bool = False
    drop: bool = False
    severity: str | None = None
    route_to_service: str | None = None  # SER-nnnnn, checked to exist when the rule was written
    route_to_service_key: str | None = None  # its svc_ key, shown beside it
    note: str | None = None

    def chosen(self) -> list[str]:
        """The names of the actions this rule takes."""
        taken = {
            "suppress": self.suppress,
            "drop": self.drop,
            "severity": self.severity is not None,
            "route_to_service": self.route_to_service is not None,
            "note": bool(self.note),
        }
        return [name for name in ACTION_NAMES if taken[name]]


@dataclass(frozen=True)
class Rule:
    rule_id: str
    conditions: tuple[Condition, ...]
    actions: Actions
    continues: bool
    description: str | None
    version: int  # bumped by every change of this rule; a PATCH may name the one it read
    created_at: datetime
    updated_at: datetime | None = None


# --- checks (a 400 naming the field) -----------------------------------------------------------------


def check_condition(field: str, op: str, value: str | None, *, where: str) -> Condition:
    """`where` is the condition's place in the request (`conditions.2`), for the error's field."""
    if not _FIELD.match(field):
        raise ValidationFailed.for_field(
            f"{where}.field", "must be one of " + ", ".join(ALERT_FIELDS) + ", or labels.<name>"
        )
    if op not in OPS:
        raise ValidationFailed.for_field(f"{where}.op", "must be one of " + ", ".join(OPS))
    if op in VALUELESS_OPS:
        if value is not None:
            raise ValidationFailed.for_field(f"{where}.value", f"must be left out when op is {op}")
        return Condition(field, op, None)
    if not value:
        raise ValidationFailed.for_field(f"{where}.value", f"is required when op is {op}")
    if len(value) > MAX_VALUE_LENGTH:
        raise ValidationFailed.for_field(f"{where}.value", f"must be at most {MAX_VALUE_LENGTH} characters")
    if op == "matches":
        try:
            check_pattern(value)
        except PatternRefused as refused:
            raise ValidationFailed.for_field(f"{where}.value", str(refused)) from None
    return Condition(field, op, value)


def check_conditions(conditions: Sequence[tuple[str, str, str | None]]) -> tuple[Condition, ...]:
    if len(conditions) > MAX_CONDITIONS:
        raise ValidationFailed.for_field("conditions", f"must have at most {MAX_CONDITIONS} conditions")
    return tuple(
        check_condition(field, op, value, where=f"conditions.{index}")
        for index, (field, op, value) in enumerate(conditions)
    )


@dataclass(frozen=True)
class RegexCost:
    """What `matches` conditions cost on every event: how many, and their RE2 instructions."""

    patterns: int = 0
    instructions: int = 0

    def __add__(self, other: RegexCost) -> RegexCost:
        return RegexCost(self.patterns + other.patterns, self.instructions + other.instructions)

    def exceeds(self, other: RegexCost) -> bool:
        return self.patterns > other.patterns or self.instructions > other.instructions


def condition_cost(condition: Condition) -> RegexCost:
    if condition.op != "matches" or not condition.value:
        return RegexCost()
    return RegexCost(1, program_size(condition.value))


def regex_cost(rules: Iterable[Rule]) -> RegexCost:
    total = RegexCost()
    for rule in rules:
        for condition in rule.conditions:
            total += condition_cost(condition)
    return total


def check_regex_budget(others: Iterable[Rule], conditions: Sequence[Condition]) -> None:
    """400 naming the first of `conditions` (a rule being written) that takes its list, with the
    list's `others` rules, past MAX_MATCHES_PER_LIST or MAX_INSTRUCTIONS_PER_LIST."""
    spent = regex_cost(others)
    for index, condition in enumerate(conditions):
        cost = condition_cost(condition)
        if not cost.patterns:
            continue
        where = f"conditions.{index}.value"
        if spent.patterns + 1 > MAX_MATCHES_PER_LIST:
            raise ValidationFailed.for_field(
                where,
                f"the list already has {spent.patterns} matches conditions, the most it may have "
                f"({MAX_MATCHES_PER_LIST}: each runs on every event); use equals or contains, or merge patterns",
            )
        if spent.instructions + cost.instructions > MAX_INSTRUCTIONS_PER_LIST:
            raise ValidationFailed.for_field(
                where,
                f"this pattern ({cost.instructions} RE2 instructions) would take the list's matches "
                f"conditions past {MAX_INSTRUCTIONS_PER_LIST} instructions in all ({spent.instructions} "
                "already; each runs on every event); use equals or contains, or simpler patterns",
            )
        spent += cost


def check_actions(actions: Actions) -> Actions:
    chosen = actions.chosen()
    if not chosen:
        raise ValidationFailed.for_field(
            "actions", "must take at least one action: " + ", ".join(ACTION_NAMES) + " (suppress/drop set to true)"
        )
    if actions.drop and len(chosen) > 1:
        raise ValidationFailed.for_field(
            "actions.drop", "a dropped event is discarded unrecorded: drop takes no other action"
        )
    if actions.note is not None and len(actions.note) > MAX_NOTE_LENGTH:
        raise ValidationFailed.for_field("actions.note", f"must be at most {MAX_NOTE_LENGTH} characters")
    return actions


def check_description(description: str | None) -> str | None:
    if description is None:
        return None
    cleaned = description.strip()
    if len(cleaned) > MAX_DESCRIPTION_LENGTH:
        raise ValidationFailed.for_field("description", f"must be at most {MAX_DESCRIPTION_LENGTH} characters")
    return cleaned or None


# --- the stored form (JSON inside the list's item) -----------------------------------------------------


def rule_to_item(rule: Rule) -> dict[str, Any]:
    actions = rule.actions
    return {
        "id": rule.rule_id,
        "description": rule.description,
        "conditions": [{"field": c.field, "op": c.op, "value": c.value} for c in rule.conditions],
        "actions": {
            "suppress": actions.suppress,
            "drop": actions.drop,
            "severity": actions.severity,
            "route_to_service": actions.route_to_service,
            "route_to_service_key": actions.route_to_service_key,
            "note": actions.note,
        },
        "continue": rule.continues,
        "version": rule.version,
        "created_at": rule.created_at.isoformat(),
        "updated_at": rule.updated_at.isoformat() if rule.updated_at else None,
    }


def rule_from_item(item: Mapping[str, Any]) -> Rule:
    actions = item.get("actions") or {}
    updated_at = item.get("updated_at")
    return Rule(
        rule_id=str(item["id"]),
        description=item.get("description"),
        conditions=tuple(
            Condition(str(c["field"]), str(c["op"]), c.get("value")) for c in item.get("conditions") or ()
        ),
        actions=Actions(
            suppress=bool(actions.get("suppress")),
            drop=bool(actions.get("drop")),
            severity=actions.get("severity"),
            route_to_service=actions.get("route_to_service"),
            route_to_service_key=actions.get("route_to_service_key"),
            note=actions.get("note"),
        ),
        continues=bool(item.get("continue")),
        version=int(item.get("version") or 1),
        created_at=datetime.fromisoformat(str(item["created_at"])),
        updated_at=datetime.fromisoformat(str(updated_at)) if updated_at else None,
    )
