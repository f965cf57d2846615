"""Request and response models of heartbeats (they generate the OpenAPI document)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import Field
from pydantic.json_schema import SkipJsonSchema

from chalicelib.catalog.service import Service
from chalicelib.heartbeat import repository
from chalicelib.heartbeat.rules import DESCRIPTION_MAX, GRACE_MAX, INTERVAL_MAX, INTERVAL_MIN, NAME_MAX
from chalicelib.heartbeat.service import IssuedHeartbeat
from chalicelib.heartbeat.tables import HeartbeatRecord
from chalicelib.model_base import (
    JSON_INTEGER,
    ApiModel,
    MultiLine,
    RequestModel,
    SingleLine,
    StrictBool,
    VersionedPatchModel,
)

Name = Annotated[str, Field(min_length=1, max_length=NAME_MAX), SingleLine]
Description = Annotated[str, Field(max_length=DESCRIPTION_MAX), MultiLine]
Interval = Annotated[
    int,
    Field(
        ge=INTERVAL_MIN,
        le=INTERVAL_MAX,
        description=f"Seconds between pings, {INTERVAL_MIN} (1 minute) to {INTERVAL_MAX} (7 days).",
    ),
    JSON_INTEGER,
]
Grace = Annotated[
    int,
    Field(ge=0, le=GRACE_MAX, description=f"Seconds a ping may be late before it counts as missed, 0 to {GRACE_MAX}."),
    JSON_INTEGER,
]
ServiceRef = Annotated[
    str,
    Field(min_length=1, max_length=64, description="The service the outage incidents open on: SER-nnnnn or svc_..."),
    SingleLine,
]


class HeartbeatCreate(RequestModel):
    domain_names = {"service": "service_ref"}

    name: Name
    service: ServiceRef
    interval_seconds: Interval
    grace_seconds: Grace = 0
    description: Description | None = None
    enabled: StrictBool = True


class HeartbeatPatch(VersionedPatchModel):
    nullable = frozenset({"description"})

    name: Name | SkipJsonSchema[None] = None
    description: Description | None = None
    interval_seconds: Interval | SkipJsonSchema[None] = None
    grace_seconds: Grace | SkipJsonSchema[None] = None
    enabled: StrictBool | SkipJsonSchema[None] = Field(
        default=None,
        description="false pauses it (pings are accepted and ignored, no outage opens); true resumes it and "
        "starts a new wait from now.",
    )


Status = Literal["waiting", "up", "down", "paused"]
STATUS_DESCRIPTION = (
    "waiting: no ping yet since it was created or resumed; up: pinged in time; down: a ping was missed and "
    "an outage is open (the next ping ends it); paused: disabled."
)


class HeartbeatV1(ApiModel):
    id: str = Field(description="hb_<hex>")
    name: str
    description: str | None
    service_id: str | None = Field(description="SER-nnnnn; null when the service was deleted.")
    service_key: str
    interval_seconds: int
    grace_seconds: int
    enabled: bool
    status: Status = Field(description=STATUS_DESCRIPTION)
    last_ping_at: datetime | None
    next_due_at: datetime | None = Field(
        description="When the next ping is expected (an outage opens grace_seconds later); null while down or paused."
    )
    down_since: datetime | None
    incident_number: str | None = Field(description="The open outage's incident (null when up, or when suppressed).")
    version: int = Field(
        description="Bumped by every edit (not by pings); send it back in a PATCH to make it conditional."
    )
    created_at: datetime
    updated_at: datetime | None

    @classmethod
    def fields_of(cls, record: HeartbeatRecord, services: Mapping[str, Service]) -> dict[str, Any]:
        beat = repository.beat_of(record)
        service = services.get(record.service_key)
        return {
            "id": record.heartbeat_id,
            "name": record.name,
            "description": record.description,
            "service_id": service.service_id if service is not None else None,
            "service_key": record.service_key,
            "interval_seconds": beat.interval_seconds,
            "grace_seconds": beat.grace_seconds,
            "enabled": beat.enabled,
            "status": beat.status,
            "last_ping_at": beat.last_ping_at,
            "next_due_at": beat.next_due_at,
            "down_since": beat.down_since,
            "incident_number": beat.incident_number,
            "version": int(record.version or 0),
            "created_at": record.created_at,
            "updated_at": record.updated_at,
        }

    @classmethod
    def of(cls, record: HeartbeatRecord, services: Mapping[str, Service]) -> HeartbeatV1:
        return cls(**cls.fields_of(record, services))


class HeartbeatIssuedV1(HeartbeatV1):
    """Creation and regeneration only: the ping URL is never shown again."""

    ping_url: str = Field(
        description="GET or POST it (no credential) at least every interval_seconds. Shown exactly once."
    )

    @classmethod
    def issued(cls, issued: IssuedHeartbeat, services: Mapping[str, Service]) -> HeartbeatIssuedV1:
        return cls(**cls.fields_of(issued.record, services), ping_url=issued.ping_url)


class HeartbeatPingV1(ApiModel):
    success: bool = True
    id: str = Field(description="The heartbeat's id.")
    status: Status = Field(description=STATUS_DESCRIPTION)
    last_ping_at: datetime | None
    next_due_at: datetime | None = Field(description="When the next ping is expected; null while paused.")
    message: str = Field(description="What the ping did.")
