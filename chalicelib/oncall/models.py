"""Request and response models for schedules, shifts and the calendar feed URL.

Times are RFC 3339 date-times with an offset (Z or +hh:mm); answers give them in UTC. Local
wall-clock times (handoffs, restrictions) are "HH:MM" in the schedule's IANA zone.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Annotated, Literal

from pydantic import Field
from pydantic.json_schema import SkipJsonSchema

from chalicelib.directory.users import User
from chalicelib.model_base import JSON_INTEGER, ApiModel, RequestModel, ScheduleTime, SingleLine, VersionedPatchModel
from chalicelib.oncall.handoffs import LEAD_MINUTES_MAX
from chalicelib.oncall.schedule import Layer, Override, Restriction
from chalicelib.oncall.service import ScheduleShifts, StoredSchedule, new_layer_id
from chalicelib.oncall.wallclock import ZONE_KEY_PATTERN
from chalicelib.pagination import PageQuery

Name = Annotated[str, Field(min_length=1, max_length=100), SingleLine]
ItemId = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]+$")]
LocalTime = Annotated[
    str, Field(pattern=r"^([01]\d|2[0-3]):[0-5]\d$", description="Local wall-clock time HH:MM (00:00 to 23:59).")
]
TimeZone = Annotated[
    str,
    Field(
        min_length=1,
        max_length=64,
        description="IANA time zone, e.g. Europe/Berlin; a name the time zone database lacks is a 400.",
        json_schema_extra={"pattern": ZONE_KEY_PATTERN.pattern},
    ),
    SingleLine,
]
Weekday = Annotated[int, Field(ge=0, le=6, description="Monday=0 .. Sunday=6.")]
RotationKind = Literal["hourly", "daily", "weekly", "custom"]
# "30" or true is refused, as the document says (an integer), rather than read as 30 or 1.
LeadMinutes = Annotated[
    int,
    Field(
        ge=0,
        le=LEAD_MINUTES_MAX,
        description="People on the schedule are told this many minutes ahead when they go on call or come off "
        "call (0: at the handoff).",
    ),
    JSON_INTEGER,
]
RestrictionKind = Literal["daily", "weekly"]


def utc(moment: datetime) -> datetime:
    return moment.astimezone(UTC)


# --- shared request bases ----------------------------------------------------------------------


class DeletedV1(ApiModel):
    id: str
    deleted: bool


# --- schedules: requests -----------------------------------------------------------------------


class RestrictionIn(RequestModel):
    kind: RestrictionKind = Field(
        description="daily: the same window every day; weekly: from start_day start to end_day end."
    )
    start: LocalTime
    end: LocalTime = Field(description="Before start wraps past midnight (daily) or past Sunday (weekly).")
    start_day: Weekday | None = None  # weekly only
    end_day: Weekday | None = None  # weekly only

    def to_domain(self) -> Restriction:
        return Restriction(self.kind, self.start, self.end, self.start_day, self.end_day)


class LayerIn(RequestModel):
    layer_id: ItemId | None = Field(default=None, description="Kept when given; generated otherwise.")
    name: Name
    members: list[ItemId] = Field(min_length=1, max_length=50, description="User ids, in rotation order.")
    rotation: RotationKind
    rotation_hours: int | None = Field(default=None, ge=1, le=8760, description="Custom rotations only.")
    handoff_time: LocalTime
    start: ScheduleTime = Field(description="The rotation starts here with the first member.")
    end: ScheduleTime | None = None
    restrictions: list[RestrictionIn] = Field(default_factory=list, max_length=14, description="A union of windows.")

    def to_domain(self) -> Layer:
        return Layer(
            layer_id=self.layer_id or new_layer_id(),
            name=self.name,
            members=tuple(self.members),
            rotation=self.rotation,
            handoff_time=self.handoff_time,
            start=self.start,
            rotation_hours=self.rotation_hours,
            end=self.end,
            restrictions=tuple(r.to_domain() for r in self.restrictions),
        )


Layers = Annotated[
    list[LayerIn],
    Field(min_length=1, max_length=10, description="Lowest first: a later layer wins where it has a shift."),
]


class ScheduleCreate(RequestModel):
    domain_lists = frozenset({"layers"})

    name: Name
    time_zone: TimeZone
    team_id: ItemId | None = None
    layers: Layers
    handoff_notice_lead_minutes: LeadMinutes = 0


class SchedulePatch(VersionedPatchModel):
    nullable = frozenset({"team_id"})
    domain_lists = frozenset({"layers"})

    name: Name | SkipJsonSchema[None] = None
    time_zone: TimeZone | SkipJsonSchema[None] = None
    team_id: ItemId | None = None
    layers: Layers | SkipJsonSchema[None] = Field(default=None, description="Replaces every layer.")
    handoff_notice_lead_minutes: LeadMinutes | SkipJsonSchema[None] = None


class ScheduleListQuery(PageQuery):
    team_id: ItemId | None = Field(default=None, description="Only this team's schedules.")


class OverrideCreate(RequestModel):
    user_id: ItemId
    start: ScheduleTime
    end: ScheduleTime


class ShiftsQuery(RequestModel):
    since: ScheduleTime | None = Field(default=None, description="Window start; defaults to now.")
    until: ScheduleTime | None = Field(
        default=None, description="Window end; defaults to since + 7 days. At most 93 days after since."
    )


# --- schedules: responses ----------------------------------------------------------------------


class RestrictionV1(ApiModel):
    kind: RestrictionKind
    start: str
    end: str
    start_day: int | None
    end_day: int | None


class LayerV1(ApiModel):
    layer_id: str
    name: str
    members: list[str]
    rotation: RotationKind
    rotation_hours: int | None
    handoff_time: str
    start: datetime
    end: datetime | None
    restrictions: list[RestrictionV1]

    @classmethod
    def of(cls, layer: Layer) -> LayerV1:
        return cls(
            layer_id=layer.layer_id,
            name=layer.name,
            members=list(layer.members),
            rotation=layer.rotation,
            rotation_hours=layer.rotation_hours,
            handoff_time=layer.handoff_time,
            start=utc(layer.start),
            end=utc(layer.end) if layer.end is not None else None,
            restrictions=[
                RestrictionV1(kind=r.kind, start=r.start, end=r.end, start_day=r.start_day, end_day=r.end_day)
                for r in layer.restrictions
            ],
        )


class OverrideV1(ApiModel):
    override_id: str
    user_id: str
    start: datetime
    end: datetime

    @classmethod
    def of(cls, override: Override) -> OverrideV1:
        return cls(
            override_id=override.override_id, user_id=override.user_id, start=utc(override.start), end=utc(override.end)
        )


COVERAGE_GAPS = (
    "Every span of the next 14 days (from the answer's time) in which the schedule pages nobody: no shift "
    "(restrictions, layers not started or ended) or the person on call is deactivated. Overrides fill gaps. "
    "Computed on read: 14 days of rotation math and one read of the people on call."
)


class CoverageGapV1(ApiModel):
    start: datetime
    end: datetime


def gaps_v1(gaps: Sequence[tuple[datetime, datetime]]) -> list[CoverageGapV1]:
    return [CoverageGapV1(start=utc(start), end=utc(end)) for start, end in gaps]


class ScheduleV1(ApiModel):
    id: str
    name: str
    team_id: str | None
    time_zone: str
    layers: list[LayerV1] = Field(description="Lowest first: a later layer wins where it has a shift.")
    overrides: list[OverrideV1] = Field(description="Win over every layer; a later override wins over an earlier one.")
    handoff_notice_lead_minutes: int = Field(
        description="Minutes ahead that people are told they go on call or come off call (0: at the handoff)."
    )
    version: int = Field(description="Bumped by every write; send it back in a PATCH to make the change conditional.")
    created_at: datetime
    updated_at: datetime | None
    coverage_gaps: list[CoverageGapV1] = Field(description=COVERAGE_GAPS)

    @classmethod
    def of(cls, stored: StoredSchedule, coverage_gaps: Sequence[tuple[datetime, datetime]]) -> ScheduleV1:
        schedule = stored.schedule
        return cls(
            id=schedule.schedule_id,
            name=schedule.name,
            team_id=schedule.team_id,
            time_zone=schedule.time_zone,
            layers=[LayerV1.of(layer) for layer in schedule.layers],
            overrides=[OverrideV1.of(override) for override in schedule.overrides],
            handoff_notice_lead_minutes=stored.handoff_notice_lead_minutes,
            version=stored.version,
            created_at=stored.created_at,
            updated_at=stored.updated_at,
            coverage_gaps=gaps_v1(coverage_gaps),
        )


class ShiftUserV1(ApiModel):
    id: str
    name: str | None
    email: str | None


class ShiftV1(ApiModel):
    user: ShiftUserV1
    start: datetime
    end: datetime
    source: Literal["layer", "override"]
    layer_id: str | None
    layer_name: str | None
    override_id: str | None


class ShiftsV1(ApiModel):
    schedule_id: str
    time_zone: str
    since: datetime
    until: datetime
    shifts: list[ShiftV1] = Field(description="Sorted, never overlapping, clipped to [since, until).")

    @classmethod
    def of(cls, result: ScheduleShifts) -> ShiftsV1:
        schedule = result.schedule.schedule
        layer_names = {layer.layer_id: layer.name for layer in schedule.layers}

        def person(user_id: str) -> ShiftUserV1:
            user: User | None = result.users.get(user_id)
            return ShiftUserV1(id=user_id, name=user.name if user else None, email=user.email if user else None)

        return cls(
            schedule_id=schedule.schedule_id,
            time_zone=schedule.time_zone,
            since=utc(result.since),
            until=utc(result.until),
            shifts=[
                ShiftV1(
                    user=person(shift.user_id),
                    start=utc(shift.start),
                    end=utc(shift.end),
                    source=shift.source,
                    layer_id=shift.layer_id,
                    layer_name=layer_names.get(shift.layer_id) if shift.layer_id else None,
                    override_id=shift.override_id,
                )
                for shift in result.shifts
            ],
        )


class IcalUrlV1(ApiModel):
    url: str = Field(description="The feed (text/calendar). Anyone holding it can read the schedule's shifts.")
    webcal_url: str = Field(description="The same feed with the webcal scheme, which calendar apps open directly.")

    @classmethod
    def of(cls, url: str) -> IcalUrlV1:
        scheme, _, rest = url.partition("://")
        return cls(url=url, webcal_url=f"webcal://{rest}" if scheme in ("http", "https") else url)
