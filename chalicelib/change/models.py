"""Change event models: PagerDuty's body and answer (`POST /v2/change/enqueue`), a stored change as
the API shows it (the list, an incident's recent changes), and the list's query. The incident
detail's own view of a change (`RecentChangeV1`) lives with the incident models."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import ConfigDict, Field, StringConstraints, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from chalicelib.incident.models import ChangeLinkV1, RecentChangeV1, Timestamp, UtcDateTime
from chalicelib.model_base import ApiModel, SingleLine
from chalicelib.pagination import Page, PageQuery

if TYPE_CHECKING:  # the models need not load the table's module
    from chalicelib.change.tables import ChangeEventRecord

ServiceRef = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=40), SingleLine]


class PagerDutyChangeEventV1(ApiModel):
    """A PagerDuty change event. Documents the body only: the route checks it as PagerDuty does
    (400 `invalid event` listing every problem)."""

    model_config = ConfigDict(extra="allow", defer_build=True)

    routing_key: str = Field(min_length=1, description="The routing key of a PagerDuty Events integration.")
    payload: dict[str, Any] = Field(
        description="summary (required, at most 1024 characters), timestamp (ISO 8601; default: when received), "
        "source, custom_details (an object of at most 16 KiB as JSON; its service_id, SER-nnnnn or svc_ key, "
        "names the service instead of the integration's default service)."
    )
    links: list[dict[str, Any]] | None = Field(
        default=None, description="[{href (http or https URL), text}]; the first 10 are kept."
    )


class PagerDutyChangeAcceptedV1(ApiModel):
    status: str = "success"
    message: str = "Change event processed"


class ChangeEventV1(RecentChangeV1):
    integration_id: str = Field(description="The integration whose routing key sent the change.")
    custom_details: dict[str, Any] | None
    received_at: Timestamp


def recent_change_v1(record: ChangeEventRecord) -> RecentChangeV1:
    return RecentChangeV1(**_fields(record))


def change_event_v1(record: ChangeEventRecord) -> ChangeEventV1:
    return ChangeEventV1(
        **_fields(record),
        integration_id=record.integration_id,
        custom_details=record.custom_details,
        received_at=record.received_at,
    )


def _fields(record: ChangeEventRecord) -> dict[str, Any]:
    return {
        "id": record.change_id,
        "summary": record.summary,
        "source": record.source,
        "timestamp": record.timestamp,
        "links": [ChangeLinkV1(href=str(link["href"]), text=link.get("text")) for link in record.links or []],
        "service_id": record.service_id,
        "service_key": record.service_key,
    }


class ChangeEventListV1(Page[ChangeEventV1]):
    """Pagination fields plus the changes; newest first (by timestamp)."""


class ChangeEventListQuery(PageQuery):
    """Filters for GET /api/v1/change-events. Date-time bounds are inclusive, RFC 3339 with an offset."""

    model_config = ConfigDict(extra="forbid")

    service_id: ServiceRef | None = Field(
        default=None, description="SER-nnnnn or svc_ key (404 when the organization has no such service)."
    )
    since: UtcDateTime | None = Field(default=None, description="Changes timed at or after this instant.")
    until: UtcDateTime | None = Field(default=None, description="Changes timed at or before; not before since (400).")

    @field_validator("until")
    @classmethod
    def _ordered(cls, value: datetime | None, info: ValidationInfo) -> datetime | None:
        since = info.data.get("since")
        if value is not None and since is not None and since > value:
            raise PydanticCustomError("range", "must not be earlier than since")
        return value
