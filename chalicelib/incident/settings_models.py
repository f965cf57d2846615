"""Admin models: the organization's incident workflow and SLA settings."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import ConfigDict, Field, StringConstraints, field_validator, model_validator
from pydantic_core import PydanticCustomError

from chalicelib.incident.sla import MAX_SLA_MINUTES, SlaSettings, apply_sla_update
from chalicelib.incident.workflow import Category, Workflow, validate_workflow
from chalicelib.model_base import ApiModel, SingleLine
from chalicelib.severity import Severity, parse_severity

Line = Annotated[str, SingleLine]


class WorkflowStatusV1(ApiModel):
    model_config = ConfigDict(extra="forbid")

    name: Annotated[str, StringConstraints(pattern=r"^[a-z0-9_]{1,40}$")]
    category: Category


class WorkflowV1(ApiModel):
    statuses: list[WorkflowStatusV1]
    moves: dict[str, list[str]] = Field(description="Status name -> the statuses it may move to.")
    initial_status: str

    @classmethod
    def of(cls, workflow: Workflow) -> WorkflowV1:
        return cls.model_validate(workflow.to_dict())


class WorkflowUpdate(ApiModel):
    """Replaces the organization's whole workflow."""

    model_config = ConfigDict(extra="forbid")

    statuses: list[WorkflowStatusV1] = Field(min_length=1, max_length=50)
    moves: dict[Line, list[Line]] = Field(default_factory=dict)
    initial_status: Line

    def to_workflow(self) -> Workflow:
        """The workflow, checked with `validate_workflow` (ValidationFailed lists every problem)."""
        workflow = Workflow.from_dict(self.model_dump())
        validate_workflow(workflow)
        return workflow


class SlaTargetV1(ApiModel):
    acknowledge_within_minutes: int | None
    resolve_within_minutes: int | None


class SlaSettingsV1(ApiModel):
    per_severity: dict[str, SlaTargetV1]

    @classmethod
    def of(cls, settings: SlaSettings) -> SlaSettingsV1:
        return cls.model_validate(settings.to_dict())


SlaMinutes = Annotated[int, Field(ge=1, le=MAX_SLA_MINUTES)]


class SlaTargetUpdate(ApiModel):
    """A field left out keeps its value; null clears it (incidents of that severity then cannot be created).
    acknowledge_within_minutes may not exceed resolve_within_minutes (400)."""

    model_config = ConfigDict(extra="forbid")

    acknowledge_within_minutes: SlaMinutes | None = None
    resolve_within_minutes: SlaMinutes | None = None

    @model_validator(mode="after")
    def _ordered(self) -> SlaTargetUpdate:
        ack, resolve = self.acknowledge_within_minutes, self.resolve_within_minutes
        if ack is not None and resolve is not None and ack > resolve:
            raise PydanticCustomError("range", "acknowledge_within_minutes must not exceed resolve_within_minutes")
        return self


class SlaSettingsUpdate(ApiModel):
    model_config = ConfigDict(extra="forbid")

    per_severity: dict[Severity, SlaTargetUpdate] = Field(min_length=1)

    @field_validator("per_severity", mode="before")
    @classmethod
    def _keys(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return {parse_severity(key): target for key, target in value.items()}
        return value

    def apply_to(self, current: SlaSettings) -> SlaSettings:
        """Merge into `current` and validate the result (ValidationFailed when ack would exceed resolve)."""
        changes: dict[str, dict[str, Any]] = {}
        for severity, target in self.per_severity.items():
            changes[severity] = target.model_dump(include=target.model_fields_set)
        return apply_sla_update(current, changes)
