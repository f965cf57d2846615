"""Request and response models for shift swaps and cover requests (they generate the OpenAPI document)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import Field

from chalicelib.model_base import ApiModel, RequestModel, ScheduleTime, SingleLine
from chalicelib.oncall.models import utc
from chalicelib.oncall.schedule import Override
from chalicelib.oncall.swap_rules import MAX_SPAN, NOTE_MAX, SwapRequest
from chalicelib.pagination import PageQuery

SwapStatusV1 = Literal["open", "taken", "withdrawn", "expired"]
Note = Annotated[str, Field(max_length=NOTE_MAX, description='A word for the people asked ("dentist").'), SingleLine]


class SwapRequestCreate(RequestModel):
    start: ScheduleTime = Field(description="Within the requester's own shifts; not more than 15 minutes ago.")
    end: ScheduleTime = Field(description=f"After start, in the future, at most {MAX_SPAN.days} days after start.")
    note: Note | None = None


class SwapRequestListQuery(PageQuery):
    status: SwapStatusV1 | None = Field(default=None, description="Only requests with this status (as of now).")


class SwapRequestV1(ApiModel):
    id: str
    schedule_id: str
    requester_id: str = Field(description="Who asked for cover (a user id).")
    start: datetime
    end: datetime
    note: str | None
    status: SwapStatusV1 = Field(
        description="open (anyone of the schedule's members may take it), taken (an override covers the span), "
        "withdrawn, or expired (nobody took it by its start). As of the answer's time."
    )
    created_at: datetime
    taken_by: str | None = Field(description="Who took it (a user id), once taken.")
    taken_at: datetime | None
    override_id: str | None = Field(description="The schedule's override that puts the taker on call, once taken.")
    withdrawn_at: datetime | None
    expired_at: datetime | None = Field(description="When the requester was told that nobody took it.")
    version: int

    @classmethod
    def of(cls, request: SwapRequest, now: datetime) -> SwapRequestV1:
        def moment(value: datetime | None) -> datetime | None:
            return utc(value) if value is not None else None

        return cls(
            id=request.swap_id,
            schedule_id=request.schedule_id,
            requester_id=request.requester_id,
            start=utc(request.start),
            end=utc(request.end),
            note=request.note,
            status=request.status_at(now),
            created_at=utc(request.created_at),
            taken_by=request.taken_by,
            taken_at=moment(request.taken_at),
            override_id=request.override_id,
            withdrawn_at=moment(request.withdrawn_at),
            expired_at=moment(request.expired_at),
            version=request.version,
        )


class SwapTakenV1(ApiModel):
    swap_request: SwapRequestV1
    override_id: str
    user_id: str
    start: datetime
    end: datetime

    @classmethod
    def of(cls, request: SwapRequest, override: Override, now: datetime) -> SwapTakenV1:
        return cls(
            swap_request=SwapRequestV1.of(request, now),
            override_id=override.override_id,
            user_id=override.user_id,
            start=utc(override.start),
            end=utc(override.end),
        )
