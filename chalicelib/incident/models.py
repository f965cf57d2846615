"""Incident request and response models (they also generate the OpenAPI document).

Severity inputs are parsed with `severity.parse_severity`, whose InvalidSeverity is not a
ValueError: pydantic lets it propagate out of `model_validate`, so a request with a bad
severity answers 400 INVALID_SEVERITY rather than VALIDATION_ERROR, with no special handling
in the route. Every other problem is an ordinary pydantic error (400 VALIDATION_ERROR).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    StringConstraints,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
    model_validator,
)
from pydantic.json_schema import SkipJsonSchema
from pydantic_core import PydanticCustomError

from chalicelib import clock
from chalicelib.directory.models import ServiceRef
from chalicelib.directory.rules import EMAIL_PATTERN
from chalicelib.incident.paging_status import PagingStatus
from chalicelib.model_base import ApiModel, DateTimeIn, MultiLine, SingleLine, not_nullable, require_one_of
from chalicelib.pagination import Page, PageQuery
from chalicelib.severity import Severity, Urgency, is_severity, parse_severity, urgency

TIMELINE_LIMIT = 50
MAX_TITLE = 200
MAX_DESCRIPTION = 10_000
MAX_SERVICE_IDS = 50
MAX_STATUS_COMMENT = 500
MAX_PAGE_MESSAGE = 500
MAX_COMMENT = 10_000
UPDATABLE_FIELDS = ("title", "description", "severity", "assigned_to")

_EMAIL = re.compile(EMAIL_PATTERN)


def _email(value: str) -> str:
    normalized = value.strip().lower()
    if len(normalized) > 254 or not _EMAIL.match(normalized):
        raise PydanticCustomError("email", "must be an email address")
    return normalized


def _utc(moment: datetime) -> datetime:
    """The same instant in UTC (requests give an offset: chalicelib.model_base.DateTimeIn)."""
    return moment.astimezone(UTC)


def _unique(values: list[Any]) -> list[Any]:
    return list(dict.fromkeys(values))


EmailAddress = Annotated[
    str,
    AfterValidator(_email),
    WithJsonSchema({"type": "string", "maxLength": 254, "pattern": EMAIL_PATTERN}),
]
Title = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_TITLE), SingleLine]
Description = Annotated[str, StringConstraints(max_length=MAX_DESCRIPTION), MultiLine]
StatusName = Annotated[
    str, StringConstraints(strip_whitespace=True, to_lower=True, min_length=1, max_length=40), SingleLine
]
UtcDateTime = Annotated[DateTimeIn, AfterValidator(_utc)]
Timestamp = Annotated[datetime, PlainSerializer(clock.isoformat, return_type=str, when_used="json")]
Channel = Literal["slack", "email"]


# ---------------------------------------------------------------- responses


class AssigneeV1(ApiModel):
    name: str | None
    email: str | None


class TeamRefV1(ApiModel):
    name: str | None


class IncidentSlaV1(ApiModel):
    """When the acknowledge and resolve SLAs fall due, and whether they were met (null: still running)."""

    acknowledge_due_at: Timestamp | None = None
    acknowledge_met: bool | None = None
    resolve_due_at: Timestamp | None = None
    resolve_met: bool | None = None


def _severity_urgency(data: dict[str, Any]) -> Urgency:
    """An incident given without an urgency reads as its severity's (stored before the field existed)."""
    severity = data.get("severity")
    return urgency(severity) if isinstance(severity, str) and is_severity(severity) else "low"


URGENCY_DESCRIPTION = (
    "high or low: how responders are paged. Set from the service's urgency rule when the incident opens "
    "(support hours included) and recomputed when its severity changes; a later change of the service's "
    "rule leaves it as it is."
)


class IncidentV1(ApiModel):
    incident_number: str = Field(description="INC-<year>-<sequence>")
    title: str
    description: str | None
    status: str = Field(description="Canonical status name from the organization's workflow.")
    severity: Severity
    assigned_to: AssigneeV1 | None
    team: TeamRefV1 | None
    created_at: Timestamp
    acknowledged_at: Timestamp | None
    resolved_at: Timestamp | None
    # Optional extras beyond the spec's fields.
    service_keys: list[str] = Field(default_factory=list, description="Keys of the affected services.")
    resolved_by: AssigneeV1 | None = Field(default=None, description="Who resolved it; null while open.")
    sla: IncidentSlaV1 | None = None
    urgency: Urgency = Field(default_factory=_severity_urgency, description=URGENCY_DESCRIPTION)
    source_url: str | None = Field(
        default=None, description="A link back to the monitoring tool, from the alert that opened the incident."
    )
    runbook_url: str | None = Field(default=None, description="The runbook of the alert that opened the incident.")


class TimelineEntryV1(ApiModel):
    event_type: str
    title: str | None
    description: str | None
    user: str | None
    created_at: Timestamp


class TimelineMetaV1(ApiModel):
    limit: int = TIMELINE_LIMIT
    has_more: bool


class ChangeLinkV1(ApiModel):
    href: str
    text: str | None


class RecentChangeV1(ApiModel):
    """A change on a service (a deploy, a configuration change), recorded from a PagerDuty change event
    (chalicelib.change)."""

    id: str = Field(description="chg_ followed by hex; derived from the event, so a retried delivery has the same id.")
    summary: str
    source: str | None
    timestamp: Timestamp = Field(description="payload.timestamp, else when the event was received.")
    links: list[ChangeLinkV1]
    service_id: str = Field(description="SER-nnnnn of the service the change was recorded on.")
    service_key: str


class IncidentPagingV1(ApiModel):
    """Is anyone being paged about the incident by its escalation (docs/PAGING.md)."""

    status: PagingStatus = Field(
        description="pending (not decided yet), paging (the current escalation level reached someone), paged (the "
        "policy ran out of levels and repeats unacknowledged), fallback (the escalation reached nobody: the "
        "organization's fallback contacts were paged), nobody (nobody was paged; see reason), stopped "
        "(acknowledged or resolved)."
    )
    reason: str | None = Field(default=None, description="Why the escalation reached nobody (fallback, nobody).")
    level: int | None = Field(default=None, description="The escalation level the status is about, when there is one.")
    fallback_contacts: list[str] = Field(default_factory=list, description="The fallback contacts paged, by name.")


class IncidentDetailV1(IncidentV1):
    paging: IncidentPagingV1 = Field(
        description="Who the escalation is paging; a warning when status is nobody or fallback."
    )
    timeline: list[TimelineEntryV1] = Field(description="Newest first; at most timeline_meta.limit entries.")
    timeline_meta: TimelineMetaV1
    details: dict[str, Any] = Field(
        default_factory=dict,
        description="The details of the alert that opened the incident: what its delivery carried beyond the "
        "fields its source's format maps (at most 32 keys and 16 KiB as JSON); GET /api/v1/alerts/{id} has "
        "each alert's.",
    )
    recent_changes: list[RecentChangeV1] = Field(
        default_factory=list,
        description="Changes (PagerDuty change events: deploys, configuration changes) recorded on the incident's "
        "services in the hour before it opened, newest first, at most 20.",
    )


class IncidentListV1(Page[IncidentV1]):
    """Pagination fields plus the incidents; newest first."""


class AcknowledgeResultV1(ApiModel):
    incident_number: str
    acknowledged: bool
    acknowledged_at: Timestamp | None


class CommentResultV1(ApiModel):
    incident_number: str
    comment: str
    created_at: Timestamp


class EscalateResultV1(ApiModel):
    incident_number: str
    escalated: bool
    notified_emails: list[str]
    current_level: int | None
    next_level: int | None


class DeliveryV1(ApiModel):
    channel: Channel
    sent: bool
    error_code: str | None = None
    message: str | None = None


class PageResultV1(ApiModel):
    incident_number: str
    sent: bool
    channels: list[Channel]
    deliveries: list[DeliveryV1]


# ---------------------------------------------------------------- requests


class IncidentCreate(ApiModel):
    model_config = ConfigDict(extra="forbid")

    title: Title
    service_ids: Annotated[list[ServiceRef], AfterValidator(_unique)] = Field(
        min_length=1,
        max_length=MAX_SERVICE_IDS,
        description="The affected services, each by its key (svc_...) or its id (SER-nnnnn); duplicates are "
        "ignored. The incident lists their keys (service_keys).",
    )
    description: Description | None = None
    severity: Severity | None = Field(
        default=None, description="Defaults to the service's default_severity, else SEV3."
    )

    @field_validator("severity", mode="before")
    @classmethod
    def _severity(cls, value: Any) -> Any:
        return None if value is None else parse_severity(value)


def _one_updatable_field(schema: dict[str, Any]) -> None:
    require_one_of(schema, list(UPDATABLE_FIELDS))


class IncidentUpdate(ApiModel):
    """Partial update: only the fields given change. description and assigned_to accept null to clear."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=_one_updatable_field)

    # title and severity may be left out but not set to null; `changes()` gives what was sent.
    title: Title | None = Field(default=None, json_schema_extra=not_nullable)
    description: Description | None = None
    severity: Severity | None = Field(default=None, json_schema_extra=not_nullable)
    assigned_to: EmailAddress | None = Field(
        default=None, description="Email of the engineer to assign; null unassigns."
    )
    status: SkipJsonSchema[Any] = Field(default=None, exclude=True)

    @field_validator("title", "severity", mode="before")
    @classmethod
    def _not_null(cls, value: Any, info: ValidationInfo) -> Any:
        if value is None:
            raise PydanticCustomError("not_nullable", "may not be null")
        return parse_severity(value) if info.field_name == "severity" else value

    @field_validator("status", mode="before")
    @classmethod
    def _no_status(cls, value: Any) -> Any:
        raise PydanticCustomError(
            "status_not_updatable",
            "status is not changed by PATCH; use POST /api/v1/incidents/<id>/status",
        )

    @model_validator(mode="after")
    def _at_least_one(self) -> IncidentUpdate:
        if not self.model_fields_set & set(UPDATABLE_FIELDS):
            raise PydanticCustomError(
                "empty_update", "at least one of title, description, severity, assigned_to is required"
            )
        return self

    def changes(self) -> dict[str, Any]:
        """The fields the caller gave, with their (possibly null) values."""
        return {name: getattr(self, name) for name in UPDATABLE_FIELDS if name in self.model_fields_set}


class StatusChange(ApiModel):
    model_config = ConfigDict(extra="forbid")

    status: StatusName = Field(description="Target canonical status name, as in the incident's status field.")
    comment: Annotated[str, StringConstraints(max_length=MAX_STATUS_COMMENT), MultiLine] | None = Field(
        default=None, description="The reason, recorded on the timeline."
    )


class CommentCreate(ApiModel):
    model_config = ConfigDict(extra="forbid")

    comment: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_COMMENT), MultiLine]


class PageRequest(ApiModel):
    model_config = ConfigDict(extra="forbid")

    email: EmailAddress = Field(description="The person to page.")
    channels: Annotated[list[Channel], AfterValidator(_unique)] = Field(min_length=1)
    message: Annotated[str, StringConstraints(max_length=MAX_PAGE_MESSAGE), MultiLine] | None = None


class IncidentListQuery(PageQuery):
    """Filters for GET /api/v1/incidents. Date-time bounds are inclusive, RFC 3339 with an offset."""

    model_config = ConfigDict(extra="forbid")

    status: list[StatusName] | None = Field(
        default=None,
        description="Canonical status names of the organization's workflow (another name: 400 INVALID_STATUS); "
        "without it only open incidents are listed.",
    )
    severity: list[Severity] | None = None
    urgency: list[Urgency] | None = Field(default=None, description="high, low, or both (repeat the parameter).")
    team_name: (
        Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200), SingleLine] | None
    ) = Field(default=None, description="Case-insensitive team name.")
    assigned_to: EmailAddress | None = Field(default=None, description="Email of the current assignee.")
    resolved_by: EmailAddress | None = Field(default=None, description="Email of the resolver.")
    created_after: UtcDateTime | None = None
    created_before: UtcDateTime | None = Field(default=None, description="Not earlier than created_after (400).")
    resolved_after: UtcDateTime | None = None
    resolved_before: UtcDateTime | None = Field(default=None, description="Not earlier than resolved_after (400).")

    @field_validator("status", mode="after")
    @classmethod
    def _statuses(cls, value: list[str] | None) -> list[str] | None:
        return _unique(value) or None if value else None

    @field_validator("urgency", mode="after")
    @classmethod
    def _urgencies(cls, value: list[Urgency] | None) -> list[Urgency] | None:
        return _unique(value) or None if value else None

    @field_validator("severity", mode="before")
    @classmethod
    def _severities(cls, value: Any) -> Any:
        items = value if isinstance(value, list) else [value]
        return None if value is None else _unique([parse_severity(item) for item in items]) or None

    @field_validator("created_before", "resolved_before")
    @classmethod
    def _ordered(cls, value: datetime | None, info: ValidationInfo) -> datetime | None:
        prefix = (info.field_name or "").removesuffix("_before")
        after = info.data.get(f"{prefix}_after")
        if value is not None and after is not None and after > value:
            raise PydanticCustomError("range", f"must not be earlier than {prefix}_after")
        return value
