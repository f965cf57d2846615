"""Request and response models of event rules (they generate the OpenAPI document).

Shapes only; what depends on two fields (a value for every op but exists, at least one action,
drop alone) or on stored data (the service exists, the position fits the list) is checked by
eventrule.rules and eventrule.service, and answered as a 400 naming the field.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

from chalicelib.eventrule.rules import (
    FIELD_PATTERN,
    MAX_CONDITIONS,
    MAX_DESCRIPTION_LENGTH,
    MAX_NOTE_LENGTH,
    MAX_RULES,
    MAX_VALUE_LENGTH,
    Actions,
    Rule,
)
from chalicelib.eventrule.service import ConditionInput, PlacedRule
from chalicelib.model_base import (
    JSON_INTEGER,
    ApiModel,
    MultiLine,
    RequestModel,
    SingleLine,
    StrictBool,
    VersionedPatchModel,
)
from chalicelib.severity import Severity

Op = Literal["equals", "contains", "matches", "exists"]
ConditionField = Annotated[
    str,
    Field(
        max_length=7 + 128,
        pattern=FIELD_PATTERN,
        description="title, source, severity, service_id (the service's SER-nnnnn id; with equals, its id or "
        "its svc_ key), integration_type, or labels.<name> (the alert's normalized labels).",
    ),
]
ConditionValue = Annotated[
    str,
    Field(
        max_length=MAX_VALUE_LENGTH,
        description="Required (non-empty) for equals, contains and matches; left out for exists (400 otherwise). "
        "equals and contains ignore case; matches is an RE2 pattern (no backreferences or lookaround, "
        f"at most {MAX_VALUE_LENGTH} characters) found anywhere in the value; an invalid pattern is a 400.",
    ),
    SingleLine,
]
ServiceRef = Annotated[
    str,
    Field(
        min_length=1,
        max_length=64,
        description="A service of the organization, by SER-nnnnn or svc_ key (400 when it has none such); "
        "answered as its SER id.",
    ),
    SingleLine,
]
Note = Annotated[str, Field(max_length=MAX_NOTE_LENGTH), MultiLine]
Description = Annotated[str, Field(max_length=MAX_DESCRIPTION_LENGTH), MultiLine]
Position = Annotated[
    int,
    Field(
        ge=0,
        le=MAX_RULES,
        description="0-based place in the list (0 runs first). At most the list's length on create "
        "(the default appends), at most its length - 1 on update; 400 otherwise.",
    ),
    JSON_INTEGER,
]
CONDITIONS_DESCRIPTION = (
    f"All must hold (at most {MAX_CONDITIONS}). An empty list matches every alert (a catch-all rule). "
    "A field the alert lacks fails every op (exists is then false)."
)
ACTIONS_DESCRIPTION = (
    "At least one action (400 otherwise). drop discards the event unrecorded and ends all evaluation, so "
    "it takes no other action. severity and route_to_service: the first matched rule that sets one decides; "
    "notes accumulate."
)


class ConditionIn(RequestModel):
    field: ConditionField
    op: Op
    value: ConditionValue | None = None

    def as_input(self) -> ConditionInput:
        return (self.field, self.op, self.value)


class ActionsIn(RequestModel):
    suppress: StrictBool = Field(default=False, description="Record the alert as suppressed: no incident, no page.")
    drop: StrictBool = Field(default=False, description="Discard the event: no alert, no incident.")
    severity: Severity | None = Field(default=None, description="Set the alert's severity.")
    route_to_service: ServiceRef | None = None
    note: Note | None = Field(default=None, description="Text added to the alert (notes of every matched rule).")

    def as_actions(self) -> Actions:
        return Actions(
            suppress=self.suppress,
            drop=self.drop,
            severity=self.severity,
            route_to_service=self.route_to_service,
            note=self.note or None,
        )


def _conditions(description: str) -> Any:
    return Field(default_factory=list, max_length=MAX_CONDITIONS, description=description)


class EventRuleCreate(RequestModel):
    description: Description | None = None
    conditions: list[ConditionIn] = _conditions(CONDITIONS_DESCRIPTION)
    actions: ActionsIn = Field(description=ACTIONS_DESCRIPTION)
    continue_: StrictBool = Field(
        default=False,
        alias="continue",
        description="After this rule matches, go on to the next rules of the same list (default: stop there).",
    )
    position: Position | None = None


class EventRulePatch(VersionedPatchModel):
    nullable = frozenset({"description"})

    description: Description | None = None
    # The cap sits on the list itself: on the union, pydantic would apply it to None too (a TypeError).
    conditions: Annotated[list[ConditionIn], Field(max_length=MAX_CONDITIONS)] | SkipJsonSchema[None] = Field(
        default=None, description="Replaces every condition. " + CONDITIONS_DESCRIPTION
    )
    actions: ActionsIn | SkipJsonSchema[None] = Field(
        default=None, description="Replaces every action. " + ACTIONS_DESCRIPTION
    )
    continue_: StrictBool | SkipJsonSchema[None] = Field(default=None, alias="continue")
    position: Position | SkipJsonSchema[None] = Field(default=None, description="Moves the rule within its list.")

    def domain_changes(self) -> dict[str, Any]:
        changes = self.changes()
        renamed: dict[str, Any] = {}
        for name, value in changes.items():
            if name == "conditions":
                renamed["conditions"] = [condition.as_input() for condition in value]
            elif name == "actions":
                renamed["actions"] = self.actions.as_actions() if self.actions else value
            elif name == "continue_":
                renamed["continues"] = value
            else:
                renamed[name] = value
        return renamed


class EventRuleTest(RequestModel):
    """A sample alert, as the rules would see it once normalized."""

    title: Annotated[str, Field(min_length=1, max_length=1024), SingleLine]
    source: Annotated[str, Field(max_length=64), SingleLine] = "custom"
    severity: Severity | None = None
    service_id: Annotated[str, Field(max_length=64), SingleLine] | None = Field(
        default=None, description="The service the alert names: its id (SER-nnnnn) or its key (svc_...)."
    )
    integration_type: Annotated[str, Field(max_length=64), SingleLine] = "custom"
    labels: dict[
        Annotated[str, Field(max_length=128), SingleLine], Annotated[str, Field(max_length=1024), SingleLine]
    ] = Field(default_factory=dict, max_length=64)
    integration_id: Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]+$")] | None = Field(
        default=None, description="Also run this integration's list (first), as for an event it received."
    )


# --- responses -----------------------------------------------------------------------------------------


class ConditionV1(ApiModel):
    field: str
    op: str
    value: str | None


class ActionsV1(ApiModel):
    suppress: bool
    drop: bool
    severity: str | None
    route_to_service: str | None = Field(description="SER-nnnnn")
    route_to_service_key: str | None = Field(description="The same service's svc_ key.")
    note: str | None


class EventRuleV1(ApiModel):
    model_config = ConfigDict(defer_build=True, serialize_by_alias=True, validate_by_name=True)

    id: str = Field(description="evr_<hex>")
    position: int = Field(description="0-based place in its list (0 runs first).")
    integration_id: str | None = Field(description="The integration whose list holds it; null: the organization's.")
    description: str | None
    conditions: list[ConditionV1]
    actions: ActionsV1
    continue_: bool = Field(alias="continue")
    version: int = Field(description="Bumped by every change; send it back in a PATCH to make the change conditional.")
    created_at: datetime
    updated_at: datetime | None

    @classmethod
    def of(cls, placed: PlacedRule, integration_id: str | None) -> EventRuleV1:
        rule: Rule = placed.rule
        actions = rule.actions
        return cls(
            id=rule.rule_id,
            position=placed.position,
            integration_id=integration_id,
            description=rule.description,
            conditions=[ConditionV1(field=c.field, op=c.op, value=c.value) for c in rule.conditions],
            actions=ActionsV1(
                suppress=actions.suppress,
                drop=actions.drop,
                severity=actions.severity,
                route_to_service=actions.route_to_service,
                route_to_service_key=actions.route_to_service_key,
                note=actions.note,
            ),
            continue_=rule.continues,
            version=rule.version,
            created_at=rule.created_at,
            updated_at=rule.updated_at,
        )


class RuleDecisionV1(ApiModel):
    dropped: bool
    suppressed: bool
    severity: str | None
    route_to_service: str | None = Field(description="SER-nnnnn")
    notes: list[str]
    matched_rule_ids: list[str] = Field(description="Every matched rule, in the order it matched.")
    warnings: list[str] = Field(
        default_factory=list,
        description="Why the rules could not decide: evaluation passed its time budget, so no rule applied "
        "(an event would be kept and paged as if none matched).",
    )
