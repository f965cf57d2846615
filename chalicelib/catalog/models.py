"""Request and response models of the service catalog (GET/POST/PATCH /api/v1/services)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field
from pydantic.json_schema import SkipJsonSchema

from chalicelib.catalog.service import Service
from chalicelib.directory.models import ActiveFilter, Description, ItemId, Name, Severity
from chalicelib.model_base import ApiModel, PatchModel, RequestModel, StrictBool


class ServiceV1(ApiModel):
    name: str
    service_key: str = Field(description="Public key of the service: svc_ and 10 characters.")
    description: str | None
    is_active: bool
    default_severity: Literal["SEV0", "SEV1", "SEV2", "SEV3", "SEV4"] | None
    service_id: str = Field(description="Human-readable id, SER-nnnnn; webhooks may route by it.")
    team_id: str | None
    team_name: str | None
    escalation_policy_id: str | None

    @classmethod
    def of(cls, service: Service, team_name: str | None = None) -> ServiceV1:
        return cls(
            name=service.name,
            service_key=service.service_key,
            description=service.description,
            is_active=service.is_active,
            default_severity=service.default_severity,
            service_id=service.service_id,
            team_id=service.team_id,
            team_name=team_name,
            escalation_policy_id=service.escalation_policy_id,
        )


class ServiceCreate(RequestModel):
    name: Name = Field(description="Unique within the organization, case-insensitively.")
    description: Description | None = None
    team_id: ItemId | None = None
    default_severity: Severity | None = Field(default=None, description="Used when an incident names none.")
    escalation_policy_id: ItemId | None = None


class ServicePatch(PatchModel):
    nullable = frozenset({"description", "team_id", "default_severity", "escalation_policy_id"})

    name: Name | SkipJsonSchema[None] = None
    description: Description | None = None
    team_id: ItemId | None = None
    default_severity: Severity | None = None
    is_active: StrictBool | SkipJsonSchema[None] = None
    escalation_policy_id: ItemId | None = None


class ServiceListQuery(ActiveFilter):
    team_id: ItemId | None = Field(default=None, description="Only services owned by this team.")
