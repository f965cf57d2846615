"""Request and response models for escalation policies (they generate the OpenAPI document)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Annotated, Literal

from pydantic import Field
from pydantic.json_schema import SkipJsonSchema

from chalicelib.escalation.coverage import PolicyGap
from chalicelib.escalation.service import StoredPolicy
from chalicelib.escalation.steps import (
    DELAY_MINUTES_MAX,
    DELAY_MINUTES_MIN,
    MAX_LEVELS,
    MAX_TARGETS,
    REPEAT_COUNT_MAX,
    Level,
    Target,
)
from chalicelib.model_base import ApiModel, RequestModel, VersionedPatchModel
from chalicelib.oncall.models import ItemId, Name, utc

TargetKind = Literal["user", "schedule"]
DelayMinutes = Annotated[
    int,
    Field(
        ge=DELAY_MINUTES_MIN,
        le=DELAY_MINUTES_MAX,
        description="Minutes to wait after notifying this level before notifying the next one.",
    ),
]
RepeatCount = Annotated[
    int,
    Field(ge=0, le=REPEAT_COUNT_MAX, description="Times the policy starts over at level 1 after the last level."),
]


class TargetIn(RequestModel):
    kind: TargetKind = Field(description="user: that person; schedule: whoever it has on call at the time.")
    id: ItemId = Field(description="A user id or a schedule id of the organization.")

    def to_domain(self) -> Target:
        return Target(self.kind, self.id)


class LevelIn(RequestModel):
    targets: list[TargetIn] = Field(min_length=1, max_length=MAX_TARGETS)
    delay_minutes: DelayMinutes

    def to_domain(self) -> Level:
        return Level(tuple(target.to_domain() for target in self.targets), self.delay_minutes)


Levels = Annotated[list[LevelIn], Field(min_length=1, max_length=MAX_LEVELS, description="Level 1 first.")]


class EscalationPolicyCreate(RequestModel):
    domain_lists = frozenset({"levels"})

    name: Name
    levels: Levels
    repeat_count: RepeatCount = 0


class EscalationPolicyPatch(VersionedPatchModel):
    domain_lists = frozenset({"levels"})

    name: Name | SkipJsonSchema[None] = None
    levels: Levels | SkipJsonSchema[None] = Field(default=None, description="Replaces every level.")
    repeat_count: RepeatCount | SkipJsonSchema[None] = None


class TargetV1(ApiModel):
    kind: TargetKind
    id: str


class LevelV1(ApiModel):
    level: int = Field(description="1-based; level 1 is notified when an incident triggers.")
    targets: list[TargetV1]
    delay_minutes: int


class PolicyCoverageGapV1(ApiModel):
    start: datetime
    end: datetime
    levels: list[int] = Field(description="The levels (1-based) that reach nobody throughout the span.")


class EscalationPolicyV1(ApiModel):
    id: str
    name: str
    levels: list[LevelV1]
    repeat_count: int
    version: int = Field(description="Bumped by every write; send it back in a PATCH to make the change conditional.")
    created_at: datetime
    updated_at: datetime | None
    coverage_gaps: list[PolicyCoverageGapV1] = Field(
        description="Every span of the next 14 days (from the answer's time) in which a level reaches nobody: each "
        "of its schedules has nobody on call (or someone deactivated) and each of its people is deactivated, so "
        "an incident would page nobody at that level (the fallback contacts instead). Computed on read: 14 days "
        "of rotation math per schedule target and two reads."
    )

    @classmethod
    def of(cls, stored: StoredPolicy, coverage_gaps: Sequence[PolicyGap]) -> EscalationPolicyV1:
        policy = stored.policy
        return cls(
            id=policy.policy_id,
            name=policy.name,
            levels=[
                LevelV1(
                    level=index + 1,
                    targets=[TargetV1(kind=target.kind, id=target.id) for target in level.targets],
                    delay_minutes=level.delay_minutes,
                )
                for index, level in enumerate(policy.levels)
            ],
            repeat_count=policy.repeat_count,
            version=stored.version,
            created_at=stored.created_at,
            updated_at=stored.updated_at,
            coverage_gaps=[
                PolicyCoverageGapV1(start=utc(gap.start), end=utc(gap.end), levels=list(gap.levels))
                for gap in coverage_gaps
            ],
        )
