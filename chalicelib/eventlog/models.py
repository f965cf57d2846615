"""Request and response models of an integration's event log (GET .../events, .../events/{id},
POST .../events/{id}/replay); they are the OpenAPI schemas."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from chalicelib.eventlog.capture import signature_state
from chalicelib.eventlog.tables import IntegrationEventRecord
from chalicelib.incident.models import UtcDateTime
from chalicelib.model_base import ApiModel, SingleLine

OutcomeName = Literal[
    "created", "grouped", "deduplicated", "suppressed", "dropped", "accepted", "refused", "rate_limited", "failed"
]


def summary_of(record: IntegrationEventRecord) -> str | None:
    if record.error_code and record.title and record.message:
        return f"{record.title}: {record.message}"
    return record.title or record.message


class EventListQuery(ApiModel):
    """Filters of an integration's event list; bounds are inclusive, RFC 3339 with an offset."""

    model_config = ConfigDict(extra="forbid")

    outcome: list[OutcomeName] | None = Field(default=None, description="Repeat for several.")
    since: UtcDateTime | None = Field(default=None, description="Events received at or after this instant.")
    until: UtcDateTime | None = Field(default=None, description="At or before; not earlier than since (400).")
    limit: int = Field(default=20, ge=1, le=100, description="Page size, 1 to 100.")
    cursor: Annotated[str, SingleLine] | None = Field(
        default=None, max_length=40, description="next_cursor of the previous page."
    )

    @field_validator("until")
    @classmethod
    def _ordered(cls, value: datetime | None, info: ValidationInfo) -> datetime | None:
        since = info.data.get("since")
        if value is not None and since is not None and value < since:
            raise PydanticCustomError("range", "must not be earlier than since")
        return value


class IntegrationEventSummaryV1(ApiModel):
    id: str = Field(description="<yyyymmddHHMMSS UTC>.<slot>: sorts as the events were received.")
    received_at: datetime = Field(description="When the request came (the latest, for a shared record).")
    source_address: str
    method: str
    route: str = Field(description="The route's template (/webhooks/{routing_key}): never the routing key.")
    outcome: OutcomeName
    status: int = Field(description="The HTTP status answered.")
    summary: str | None = Field(
        description="The alert's title, else the answer's message; for an error, its message after the title."
    )
    error_code: str | None = Field(description="Refused, rate limited or failed: the error code answered.")
    incident_number: str | None
    alert_id: str | None
    count: int = Field(
        description="Requests this record stands for: 1, or more past the minute's bound (the latest is shown)."
    )
    replay_of: str | None = Field(description="The event this one replayed.")
    replayed_as: str | None = Field(description="The event that replayed this one.")

    @classmethod
    def fields_of(cls, record: IntegrationEventRecord) -> dict[str, Any]:
        return {
            "id": record.event_id,
            "received_at": record.received_at,
            "source_address": record.source_address,
            "method": record.method,
            "route": record.route,
            "outcome": record.outcome,
            "status": int(record.status),
            "summary": summary_of(record),
            "error_code": record.error_code,
            "incident_number": record.incident_number,
            "alert_id": record.alert_id,
            "count": int(record.request_count or 1),
            "replay_of": record.replay_of,
            "replayed_as": record.replayed_as,
        }

    @classmethod
    def of(cls, record: IntegrationEventRecord) -> IntegrationEventSummaryV1:
        return cls(**cls.fields_of(record))


class IntegrationEventV1(IntegrationEventSummaryV1):
    operation_id: str = Field(description="The inbound operation (deliverWebhook, enqueuePagerDutyEvent, ...).")
    headers: dict[str, str] = Field(
        description="The request's headers (names in lower case). Credentials show as present; signatures as "
        "valid, invalid (checked) or present (not checked); never their values."
    )
    signature: Literal["valid", "invalid"] | None = Field(description="The signature check; null: none was made.")
    body: str | None = Field(description="The first 16 KiB of the body, a routing key in it masked.")
    body_size: int = Field(description="Bytes received.")
    truncated: bool = Field(description="The body was longer than the 16 KiB kept.")
    action: str | None = Field(description="trigger, resolve, acknowledge, note, change, ...")
    title: str | None
    message: str | None = Field(description="The answer's message, or the error's.")
    warnings: list[str] = Field(description="Every warning the answer gave (the parser's, then the ingest's).")
    suppressed_by: dict[str, Any] | None = Field(
        description="Suppressed: {kind: maintenance, window_id} or {kind: event_rule, rule_ids}."
    )
    rule_ids: list[str] = Field(description="Dropped: the event rules that dropped it.")
    response: Any = Field(description="The answer's JSON body ({truncated: true} past 4 KiB).")
    replayable: bool = Field(description="POST .../replay would replay it now.")
    not_replayable_because: str | None = Field(description="Why it cannot be replayed (the 409's message).")

    @classmethod
    def detail(cls, record: IntegrationEventRecord, not_replayable_because: str | None) -> IntegrationEventV1:
        return cls(
            **cls.fields_of(record),
            operation_id=record.operation_id,
            headers={str(k): str(v) for k, v in (record.headers or {}).items()},
            signature=signature_state(record.signature),
            body=record.body,
            body_size=int(record.body_size),
            truncated=bool(record.truncated),
            action=record.action,
            title=record.title,
            message=record.message,
            warnings=list(record.warnings or []),
            suppressed_by=record.suppressed_by,
            rule_ids=list(record.rule_ids or []),
            response=record.response,
            replayable=not_replayable_because is None,
            not_replayable_because=not_replayable_because,
        )


class IntegrationEventPageV1(ApiModel):
    items: list[IntegrationEventSummaryV1]
    next_cursor: str | None = Field(description="Pass as cursor for the next (older) page; null on the last page.")
