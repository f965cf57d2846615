"""Postmortem request and response models (they also generate the OpenAPI document).

A status outside draft/in_review/published is refused with INVALID_STATUS: the validator raises
the AppError itself, which pydantic lets propagate (as incident severities do with
INVALID_SEVERITY). Every other problem is an ordinary 400 VALIDATION_ERROR.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Annotated, Any, ClassVar

from pydantic import AfterValidator, Field, StringConstraints, WithJsonSchema
from pydantic.json_schema import SkipJsonSchema
from pydantic_core import PydanticCustomError

from chalicelib.errors import InvalidStatus
from chalicelib.incident.models import EmailAddress, Timestamp
from chalicelib.model_base import (
    STORED,
    ApiModel,
    DateTimeIn,
    ExpectedVersion,
    MultiLine,
    PatchModel,
    RequestModel,
    SingleLine,
)
from chalicelib.postmortem.rules import STATUSES, STRUCTURED_FIELDS, ActionItemStatus, Level, Status
from chalicelib.postmortem.tables import PostmortemRecord

INCIDENT_NUMBER = re.compile(r"^INC-\d{4}-\d{1,12}$")
MAX_TEXT = 20_000
MAX_SHORT = 500
MAX_ITEMS = 200
MAX_LEGACY_HTML = 100_000
TEXT_FIELDS: tuple[str, ...] = (
    "summary",
    "root_cause",
    "resolution",
    "contributing_factors",
    "detection_path",
    "monitoring_gaps",
    "five_whys",
    "executive_summary",
    "prevented_recurrence",
)
CONTENT_FIELDS: tuple[str, ...] = ("level", *TEXT_FIELDS, *STRUCTURED_FIELDS)


def _incident_number(value: str) -> str:
    if not INCIDENT_NUMBER.match(value):
        raise PydanticCustomError("incident_number", "must be an incident number like INC-2026-0001")
    return value


def _status(value: str) -> str:
    if value not in STATUSES:
        raise InvalidStatus(
            f"A postmortem status must be one of {', '.join(STATUSES)}.",
            details={"status": value, "allowed": list(STATUSES)},
        )
    return value


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


IncidentNumber = Annotated[
    str,
    StringConstraints(strip_whitespace=True),
    AfterValidator(_incident_number),
    WithJsonSchema({"type": "string", "pattern": INCIDENT_NUMBER.pattern, "examples": ["INC-2026-0042"]}),
]
PostmortemStatus = Annotated[str, AfterValidator(_status), WithJsonSchema({"type": "string", "enum": list(STATUSES)})]
Text = Annotated[str, StringConstraints(max_length=MAX_TEXT), MultiLine]
Short = Annotated[str, StringConstraints(max_length=MAX_SHORT), SingleLine]
Required = Annotated[str, StringConstraints(min_length=1, max_length=MAX_SHORT), SingleLine]
RequiredText = Annotated[str, StringConstraints(min_length=1, max_length=MAX_TEXT), MultiLine]
LegacyHtml = Annotated[str, StringConstraints(max_length=MAX_LEGACY_HTML), MultiLine]


# ---------------------------------------------------------------- structured forms


class ImpactV1(RequestModel):
    duration: Short | None = None
    users_affected: Short | None = None
    services_affected: list[Required] | None = Field(default=None, max_length=MAX_ITEMS)
    revenue_impact: Short | None = None


class TimelineEventV1(RequestModel):
    timestamp: Required = Field(description="As written by the author, e.g. 2026-11-22 12:04 UTC.")
    description: RequiredText


class ActionItemV1(RequestModel):
    text: RequiredText
    owner_email: EmailAddress | None = None
    due_date: Short | None = None
    status: ActionItemStatus = "pending"


class ResponseTimelineV1(RequestModel):
    time_to_acknowledge: Short | None = None
    time_to_identify: Short | None = None
    time_to_resolve: Short | None = None


Timeline = Annotated[list[TimelineEventV1], Field(max_length=MAX_ITEMS)]
ActionItems = Annotated[list[ActionItemV1], Field(max_length=MAX_ITEMS)]


# ---------------------------------------------------------------- requests


class _Content(RequestModel):
    summary: Text | None = None
    root_cause: Text | None = None
    resolution: Text | None = None
    impact: ImpactV1 | None = None
    timeline: Timeline | None = None
    action_items: ActionItems | None = None
    contributing_factors: Text | None = None
    detection_path: Text | None = None
    monitoring_gaps: Text | None = None
    five_whys: Text | None = None
    executive_summary: Text | None = None
    prevented_recurrence: Text | None = None

    def content(self) -> dict[str, Any]:
        """The fields the caller sent, structured ones as plain dicts and lists."""
        return {name: _plain(getattr(self, name)) for name in self.model_fields_set if name in CONTENT_FIELDS}


class PostmortemCreate(_Content):
    incident_number: IncidentNumber
    level: Level = "standard"
    response_timeline: ResponseTimelineV1 | None = Field(
        default=None,
        description="Prefilled from the incident's timestamps; any field given here overrides the prefill.",
    )

    def response_timeline_overrides(self) -> dict[str, str | None]:
        given = self.response_timeline
        return {} if given is None else {name: getattr(given, name) for name in given.model_fields_set}

    def arguments(self) -> dict[str, Any]:
        return {
            "incident_number": self.incident_number,
            "level": self.level,
            "content": self.content(),
            "response_timeline_overrides": self.response_timeline_overrides(),
        }


class PostmortemPatch(PatchModel, _Content):
    nullable: ClassVar[frozenset[str]] = frozenset(CONTENT_FIELDS) - {"level"}
    not_changes: ClassVar[frozenset[str]] = frozenset({"version"})

    level: Level | SkipJsonSchema[None] = None
    status: PostmortemStatus | SkipJsonSchema[None] = Field(
        default=None, description="draft -> in_review -> published; in_review -> draft."
    )
    response_timeline: ResponseTimelineV1 | None = Field(default=None, description="Replaces the whole object.")
    version: ExpectedVersion = Field(
        default=None, description="The version you read: the change is refused with 409 if it moved since."
    )

    def changes_to_apply(self) -> dict[str, Any]:
        status = {"status": self.status} if "status" in self.model_fields_set else {}
        return {**self.content(), **status}

    def arguments(self) -> dict[str, Any]:
        return {"changes": self.changes_to_apply(), "expected_version": self.version}


class PostmortemImport(RequestModel):
    """A legacy record from an older tool: its rich fields are HTML strings, stored and served as given."""

    incident_number: IncidentNumber
    level: Level = "standard"
    status: PostmortemStatus = "published"
    created_at: DateTimeIn | None = Field(default=None, description="When the old tool created it; default now.")
    summary: Text | None = None
    root_cause: Text | None = None
    resolution: Text | None = None
    impact: LegacyHtml | None = None
    impact_html: LegacyHtml | None = None
    timeline: LegacyHtml | None = None
    timeline_html: LegacyHtml | None = None
    action_items: LegacyHtml | None = None
    action_items_html: LegacyHtml | None = None
    contributing_factors: Text | None = None
    detection_path: Text | None = None
    monitoring_gaps: Text | None = None
    response_timeline: LegacyHtml | None = None
    response_timeline_html: LegacyHtml | None = None
    five_whys: Text | None = None
    executive_summary: Text | None = None
    prevented_recurrence: Text | None = None

    def created(self, now: datetime) -> datetime:
        return _utc(self.created_at) if self.created_at is not None else now

    def stored_fields(self) -> dict[str, Any]:
        skip = {"incident_number", "created_at"}
        return {name: getattr(self, name) for name in type(self).model_fields if name not in skip}


class PostmortemQuery(RequestModel):
    incident_number: IncidentNumber


def _plain(value: Any) -> Any:
    if isinstance(value, RequestModel):
        return value.model_dump(mode="json")
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


# ---------------------------------------------------------------- response


class PostmortemV1(ApiModel):
    id: str = Field(description="uuid")
    postmortem_number: str = Field(description="PM-<year>-<sequence>")
    incident_number: str
    level: Level
    status: Status
    summary: str | None
    root_cause: str | None
    resolution: str | None
    impact: ImpactV1 | str | None = Field(description="Object; a legacy record may hold an HTML string.")
    impact_html: str | None = Field(description="Preferred over a legacy string impact when present.")
    timeline: list[TimelineEventV1] | str | None
    timeline_html: str | None
    action_items: list[ActionItemV1] | str | None
    action_items_html: str | None
    contributing_factors: str | None
    detection_path: str | None
    monitoring_gaps: str | None
    response_timeline: ResponseTimelineV1 | str | None
    response_timeline_html: str | None
    five_whys: str | None
    executive_summary: str | None
    prevented_recurrence: str | None
    created_at: Timestamp
    # Beyond the spec's fields.
    updated_at: Timestamp | None = None
    version: int = Field(description="Bumped by every write; send it back in a PATCH to make it conditional.")

    @classmethod
    def of(cls, record: PostmortemRecord) -> PostmortemV1:
        fields = {name: getattr(record, name) for name in cls.model_fields if name not in ("id", "version")}
        document = {**fields, "id": record.postmortem_id, "version": int(record.version or 0)}
        return cls.model_validate(document, context=STORED)
