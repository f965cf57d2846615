"""Management request and response models for status pages (they generate the OpenAPI document)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, ClassVar

from pydantic import ConfigDict, Field, ValidationInfo, field_validator, model_validator
from pydantic.json_schema import SkipJsonSchema
from pydantic_core import PydanticCustomError

from chalicelib.model_base import (
    ApiModel,
    MultiLine,
    PatchModel,
    RequestModel,
    ScheduleTime,
    SingleLine,
    not_nullable,
)
from chalicelib.settings import Settings
from chalicelib.statuspage.pages import public_url
from chalicelib.statuspage.public_models import PublicIncidentUpdate, incident_fields, window_fields
from chalicelib.statuspage.repository import item_id
from chalicelib.statuspage.rules import (
    RESERVED_SLUGS,
    SLUG_PATTERN,
    ComponentStatus,
    Impact,
    IncidentStatus,
    MaintenanceStatus,
)
from chalicelib.statuspage.tables import StatusPageItem

Name = Annotated[str, Field(min_length=1, max_length=100), SingleLine]
Title = Annotated[str, Field(min_length=1, max_length=200), SingleLine]
Body = Annotated[str, Field(min_length=1, max_length=5000), MultiLine]
Slug = Annotated[
    str,
    Field(
        min_length=1,
        max_length=63,
        description="The public URL's last segment: lowercase letters, digits and hyphens, globally unique.",
        json_schema_extra={"pattern": SLUG_PATTERN.pattern, "not": {"enum": sorted(RESERVED_SLUGS)}},
    ),
    SingleLine,
]
RefId = Annotated[str, Field(min_length=1, max_length=64), SingleLine]
ComponentIds = Annotated[list[RefId], Field(max_length=100, description="Components of this page.")]
ComponentStatuses = Annotated[
    dict[RefId, ComponentStatus],
    Field(
        # Each change writes the component and its history item in the incident's transaction,
        # and DynamoDB takes at most 100 items in one: the incident + 2 x 49.
        max_length=49,
        description="Component id -> new status, set together with the incident (one transaction, "
        'with each change\'s history item); at most 49; e.g. {"cmp_...": "major_outage"}.',
    ),
]
TemplateId = Annotated[
    str,
    Field(
        min_length=1,
        max_length=64,
        description="An incident template of this page (404 otherwise): it fills the fields left out; "
        "the request's own values win. A component the template names that was since deleted is left out.",
    ),
    SingleLine,
]
IncidentNumber = Annotated[
    str,
    Field(min_length=1, max_length=32, description="An internal incident to link (never shown publicly)."),
    SingleLine,
]


def _utc(moment: datetime) -> datetime:
    return moment.astimezone(UTC)


# --- requests ------------------------------------------------------------------------------------


class PageCreate(RequestModel):
    name: Name
    slug: Slug


class PagePatch(PatchModel):
    name: Name | SkipJsonSchema[None] = None
    slug: Slug | SkipJsonSchema[None] = None


class SectionCreate(RequestModel):
    name: Name


class NamePatch(PatchModel):
    name: Name | SkipJsonSchema[None] = None


class GroupCreate(RequestModel):
    section_id: RefId
    name: Name


class ComponentCreate(RequestModel):
    section_id: RefId
    group_id: RefId | None = Field(default=None, description="A group of the same section, or null.")
    name: Name
    status: ComponentStatus = "operational"


class ComponentPatch(PatchModel):
    nullable = frozenset({"group_id"})

    name: Name | SkipJsonSchema[None] = None
    status: ComponentStatus | SkipJsonSchema[None] = Field(default=None, description="A change stamps updated_at.")
    section_id: RefId | SkipJsonSchema[None] = None
    group_id: RefId | None = Field(default=None, description="null takes it out of its group.")


def _needs_template_or(*fields: str, never_null: tuple[str, ...]) -> Any:
    """The body names a template or carries `fields` itself (JSON Schema can say so; the model checks
    it); `never_null` may be left out but not null."""

    def schema(schema: dict[str, Any]) -> None:
        for name in never_null:
            not_nullable(schema["properties"][name])
        schema["anyOf"] = [{"required": ["template_id"]}, {"required": list(fields)}]

    return schema


class TemplatedRequest(RequestModel):
    """A request a template may complete: `never_null` fields may be left out, never null, and the
    `template_fields` are required unless template_id is given."""

    template_fields: ClassVar[tuple[str, ...]] = ()
    never_null: ClassVar[tuple[str, ...]] = ()

    template_id: TemplateId | None = None

    @field_validator("*")
    @classmethod
    def _not_null(cls, value: Any, info: ValidationInfo) -> Any:
        if value is None and info.field_name in cls.never_null:
            raise PydanticCustomError("null_not_allowed", "must not be null")
        return value

    @model_validator(mode="after")
    def _template_or_fields(self) -> Any:
        missing = [name for name in self.template_fields if getattr(self, name) is None]
        if self.template_id is None and missing:
            raise PydanticCustomError(
                "missing_without_template",
                "{fields}: required unless template_id is given",
                {"fields": ", ".join(missing)},
            )
        return self


class StatusIncidentCreate(TemplatedRequest):
    template_fields: ClassVar[tuple[str, ...]] = ("title", "body")
    never_null: ClassVar[tuple[str, ...]] = ("template_id", "title", "status", "impact", "body")
    model_config = ConfigDict(json_schema_extra=_needs_template_or(*template_fields, never_null=never_null))

    title: Title | None = Field(default=None, description="Required unless template_id is given.")
    status: IncidentStatus | None = Field(default=None, description="Left out: the template's, else investigating.")
    impact: Impact | None = Field(default=None, description="Left out: the template's, else minor.")
    body: Body | None = Field(
        default=None, description="The first update's message. Required unless template_id is given."
    )
    component_ids: ComponentIds = []
    incident_number: IncidentNumber | None = None
    component_statuses: ComponentStatuses | None = None


class IncidentUpdateCreate(TemplatedRequest):
    template_fields: ClassVar[tuple[str, ...]] = ("status", "body")
    never_null: ClassVar[tuple[str, ...]] = ("template_id", *template_fields)
    model_config = ConfigDict(json_schema_extra=_needs_template_or(*template_fields, never_null=never_null))

    status: IncidentStatus | None = Field(
        default=None,
        description="Any status; an active one reopens a resolved incident. Required unless template_id names "
        "a template with a status.",
    )
    body: Body | None = Field(default=None, description="Required unless template_id is given.")
    impact: Impact | None = None
    component_ids: ComponentIds | None = Field(default=None, description="Replaces the affected components.")
    component_statuses: ComponentStatuses | None = None


class TemplateCreate(RequestModel):
    name: Name = Field(description="What people pick it by.")
    title: Title = Field(description="The incident's title.")
    body: Body = Field(description="The update's message.")
    status: IncidentStatus | None = None
    impact: Impact | None = None
    component_statuses: ComponentStatuses = {}


class TemplatePatch(PatchModel):
    nullable = frozenset({"status", "impact"})

    name: Name | SkipJsonSchema[None] = None
    title: Title | SkipJsonSchema[None] = None
    body: Body | SkipJsonSchema[None] = None
    status: IncidentStatus | None = Field(default=None, description="null: the template sets no status.")
    impact: Impact | None = Field(default=None, description="null: the template sets no impact.")
    component_statuses: ComponentStatuses | SkipJsonSchema[None] = Field(
        default=None, description="Replaces the map; {} clears it."
    )


class MaintenanceCreate(RequestModel):
    title: Title
    scheduled_start: ScheduleTime
    scheduled_end: ScheduleTime = Field(description="After scheduled_start.")
    component_ids: ComponentIds = []


class MaintenancePatch(PatchModel):
    title: Title | SkipJsonSchema[None] = None
    scheduled_start: ScheduleTime | SkipJsonSchema[None] = None
    scheduled_end: ScheduleTime | SkipJsonSchema[None] = None
    component_ids: ComponentIds | SkipJsonSchema[None] = None
    status: MaintenanceStatus | SkipJsonSchema[None] = Field(
        default=None,
        description="scheduled -> in_progress -> completed; scheduled | in_progress -> cancelled. "
        "Completed and cancelled windows are final.",
    )


# --- responses -----------------------------------------------------------------------------------


def _stamped(item: StatusPageItem) -> dict[str, Any]:
    """The id and times every answer about an item under a page carries."""
    return {"id": item_id(item), "created_at": item.created_at, "updated_at": item.updated_at}


class StatusPageV1(ApiModel):
    id: str
    name: str
    slug: str
    url: str = Field(description="The public page: <public base URL>/status/<slug>.")
    created_at: datetime
    updated_at: datetime

    @classmethod
    def of(cls, item: StatusPageItem, *, settings: Settings) -> StatusPageV1:
        slug = item.slug or ""
        return cls(
            id=item.page_id,
            name=item.name or "",
            slug=slug,
            url=public_url(slug, settings=settings),
            created_at=item.created_at,
            updated_at=item.updated_at,
        )


class SectionV1(ApiModel):
    id: str
    name: str
    created_at: datetime
    updated_at: datetime

    @classmethod
    def of(cls, item: StatusPageItem) -> SectionV1:
        return cls(**_stamped(item), name=item.name or "")


class GroupV1(SectionV1):
    section_id: str

    @classmethod
    def of(cls, item: StatusPageItem) -> GroupV1:
        return cls(**_stamped(item), name=item.name or "", section_id=item.section_id or "")


class ComponentV1(ApiModel):
    id: str
    section_id: str
    group_id: str | None
    name: str
    status: ComponentStatus = Field(description="As set; the public view shows under_maintenance during maintenance.")
    created_at: datetime
    updated_at: datetime

    @classmethod
    def of(cls, item: StatusPageItem) -> ComponentV1:
        return cls(
            **_stamped(item),
            section_id=item.section_id or "",
            group_id=item.group_id,
            name=item.name or "",
            status=item.status,
        )


class StatusIncidentV1(ApiModel):
    id: str
    title: str
    status: IncidentStatus
    impact: Impact
    started_at: datetime
    resolved_at: datetime | None
    updated_at: datetime
    updates: list[PublicIncidentUpdate] = Field(description="Newest first.")
    component_ids: list[str]
    incident_number: str | None = Field(description="The linked internal incident, if any.")

    @classmethod
    def of(cls, item: StatusPageItem) -> StatusIncidentV1:
        return cls(
            id=item_id(item),
            **incident_fields(item),
            updates=[PublicIncidentUpdate.model_validate(u) for u in reversed(item.updates or [])],
            component_ids=list(item.component_ids or []),
            incident_number=item.incident_number,
        )


class MaintenanceV1(ApiModel):
    id: str
    title: str
    status: MaintenanceStatus
    scheduled_start: datetime
    scheduled_end: datetime
    component_ids: list[str]
    created_at: datetime
    updated_at: datetime

    @classmethod
    def of(cls, item: StatusPageItem) -> MaintenanceV1:
        return cls(
            id=item_id(item),
            **window_fields(item),
            component_ids=list(item.component_ids or []),
            created_at=item.created_at,
        )


class IncidentTemplateV1(ApiModel):
    id: str
    name: str
    title: str
    body: str
    status: IncidentStatus | None
    impact: Impact | None
    component_statuses: dict[str, ComponentStatus]
    created_at: datetime
    updated_at: datetime

    @classmethod
    def of(cls, item: StatusPageItem) -> IncidentTemplateV1:
        return cls(
            **_stamped(item),
            name=item.name or "",
            title=item.title or "",
            body=item.body or "",
            status=item.status,
            impact=item.impact,
            component_statuses=dict(item.component_statuses or {}),
        )
