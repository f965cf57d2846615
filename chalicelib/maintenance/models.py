"""Request and response models of /api/v1/maintenance-windows (they generate the OpenAPI document).

Not the status pages' maintenance (chalicelib.statuspage): that one is announced to customers;
this one silences alerts for services."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import Field
from pydantic.json_schema import SkipJsonSchema

from chalicelib.catalog.service import Service
from chalicelib.directory.models import Description
from chalicelib.maintenance import rules
from chalicelib.maintenance.repository import MaintenanceWindow
from chalicelib.maintenance.service import Removal
from chalicelib.model_base import ApiModel, RequestModel, ScheduleTime, VersionedPatchModel
from chalicelib.pagination import PageQuery

SERVICE_REF_PATTERN = r"^(svc_[a-z0-9]{10}|[Ss][Ee][Rr]-[0-9]{5,16})$"
ServiceRef = Annotated[
    str,
    Field(
        min_length=1,
        max_length=20,
        pattern=SERVICE_REF_PATTERN,
        description="A service of the organization: its SER-nnnnn id or its svc_ key.",
    ),
]
ServiceRefs = Annotated[
    list[ServiceRef],
    Field(
        min_length=1,
        max_length=rules.MAX_SERVICES,
        description=f"The services the window silences, 1 to {rules.MAX_SERVICES}: SER-nnnnn ids or svc_ keys "
        "(each must be a service of the organization, 400 naming it otherwise); repeats are ignored.",
    ),
]
TIMES = (
    f"RFC 3339 with an offset. The window covers [start, end): in effect from start, until just before end. "
    f"end must be after start and in the future, at most {rules.MAX_DURATION.days} days after start."
)
START_DESCRIPTION = "When alerts start being suppressed; a start in the past means now. " + TIMES
END_DESCRIPTION = "When alerts page again. " + TIMES
STATE_DESCRIPTION = "Computed from now: future (not started), ongoing (alerts suppressed), past (ended)."


class MaintenanceWindowCreate(RequestModel):
    domain_names = {"service_ids": "service_refs"}

    service_ids: ServiceRefs
    start: ScheduleTime = Field(description=START_DESCRIPTION)
    end: ScheduleTime = Field(description=END_DESCRIPTION)
    description: Description | None = Field(default=None, description="Why: shown with the suppressed alerts.")


class MaintenanceWindowPatch(VersionedPatchModel):
    nullable = frozenset({"description"})
    domain_names = {"service_ids": "service_refs"}

    service_ids: ServiceRefs | SkipJsonSchema[None] = Field(default=None, description="Replaces the services.")
    start: ScheduleTime | SkipJsonSchema[None] = Field(
        default=None, description="Only before the window starts (409 after). " + START_DESCRIPTION
    )
    end: ScheduleTime | SkipJsonSchema[None] = Field(default=None, description=END_DESCRIPTION)
    description: Description | None = None


class MaintenanceWindowListQuery(PageQuery):
    service_id: ServiceRef | None = Field(default=None, description="Only windows that include this service.")
    state: rules.StateFilter | None = Field(
        default=None, description="Only ongoing, future or past windows; open means ongoing or future."
    )


class MaintenanceServiceV1(ApiModel):
    service_id: str = Field(description="SER-nnnnn")
    service_key: str = Field(description="svc_ key")
    name: str | None = Field(description="null only if the service could not be read.")


class MaintenanceWindowV1(ApiModel):
    id: str = Field(description="mw_<hex>")
    description: str | None
    start: datetime
    end: datetime
    state: rules.State = Field(description=STATE_DESCRIPTION)
    service_ids: list[str] = Field(description="The services' SER-nnnnn ids, in the order given.")
    services: list[MaintenanceServiceV1]
    ended_early_at: datetime | None = Field(description="When a DELETE ended the window while it was ongoing.")
    created_by: str | None
    created_at: datetime
    updated_at: datetime | None
    version: int = Field(description="Bumped by every write; send it back in a PATCH to make the change conditional.")

    @classmethod
    def of(cls, window: MaintenanceWindow, services: dict[str, Service], now: datetime) -> MaintenanceWindowV1:
        shown = [_service_v1(key, services.get(key)) for key in window.service_keys]
        return cls(
            id=window.window_id,
            description=window.description,
            start=window.start,
            end=window.end,
            state=window.state(now),
            service_ids=[service.service_id for service in shown],
            services=shown,
            ended_early_at=window.ended_early_at,
            created_by=window.created_by,
            created_at=window.created_at,
            updated_at=window.updated_at,
            version=window.version,
        )


def _service_v1(service_key: str, service: Service | None) -> MaintenanceServiceV1:
    # Services are never deleted; should one be unreadable, its key stands in for its id.
    if service is None:
        return MaintenanceServiceV1(service_id=service_key, service_key=service_key, name=None)
    return MaintenanceServiceV1(service_id=service.service_id, service_key=service_key, name=service.name)


class MaintenanceWindowRemovedV1(ApiModel):
    id: str
    outcome: Literal["deleted", "ended"] = Field(
        description="deleted: the window had not started and is gone; ended: it was ongoing and now ends "
        "(its services page again at once), kept as a past window."
    )
    window: MaintenanceWindowV1 | None = Field(description="The ended window; null when deleted.")

    @classmethod
    def of(cls, removal: Removal, services: dict[str, Service], now: datetime) -> MaintenanceWindowRemovedV1:
        window = removal.window
        return cls(
            id=removal.window_id,
            outcome=removal.outcome,
            window=MaintenanceWindowV1.of(window, services, now) if window is not None else None,
        )
