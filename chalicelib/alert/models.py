"""Request and response models of the alert lists (GET /api/v1/alerts, /incidents/{id}/alerts)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, StringConstraints, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from chalicelib.alert.tables import AlertRecord
from chalicelib.incident.models import UtcDateTime
from chalicelib.model_base import ApiModel, SingleLine
from chalicelib.pagination import Page, PageQuery

AlertStatus = Literal["triggered", "resolved", "suppressed"]
Reference = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=40), SingleLine]
DEFAULT_DAYS = 30


class AlertIntegrationV1(ApiModel):
    id: str | None = Field(description="The integration's id; null for a heartbeat's alert.")
    name: str
    type: str = Field(
        description="custom, sentry, newrelic, alertmanager, cloudwatch, pagerduty, opsgenie or heartbeat."
    )


class AlertV1(ApiModel):
    id: str
    integration: AlertIntegrationV1
    source: str
    dedup_key: str | None
    title: str
    description: str | None
    source_url: str | None
    severity: str
    service_id: str
    service_key: str
    status: AlertStatus
    suppressed_by: dict[str, Any] | None = Field(
        description="Why it is suppressed: {kind: maintenance, window_id} or {kind: event_rule, rule_ids}."
    )
    incident_number: str | None
    grouped: bool = Field(description="True when alert grouping added it to an incident another alert opened.")
    first_received_at: datetime
    last_received_at: datetime
    resolved_at: datetime | None
    count: int = Field(description="Events received for this alert (its dedup hits included).")
    labels: dict[str, str] = Field(description="The alert's normalized labels (labels.<name> in event rules).")
    details: dict[str, Any] = Field(
        default_factory=dict,
        description="What the delivery carried beyond the fields its source's format maps (a custom body's "
        "unknown fields, PagerDuty custom_details, Alertmanager labels and annotations, ...): at most 32 keys "
        "and 16 KiB as JSON.",
    )
    runbook_url: str | None = Field(
        default=None, description="The alert's runbook (Alertmanager's runbook_url annotation, metadata.runbook_url)."
    )
    rule_notes: list[str] = Field(description="Notes of the event rules that matched when it was created.")
    matched_rule_ids: list[str]

    @classmethod
    def of(cls, record: AlertRecord) -> AlertV1:
        notes = record.rule_notes or {}
        return cls(
            id=record.alert_id,
            integration=AlertIntegrationV1(
                id=record.integration_id, name=record.integration_name, type=record.integration_type
            ),
            source=record.source,
            dedup_key=record.dedup_key,
            title=record.title,
            description=record.description,
            source_url=record.source_url,
            severity=record.severity,
            service_id=record.service_id,
            service_key=record.service_key,
            status=record.status,
            suppressed_by=record.suppressed_by,
            incident_number=record.incident_number,
            grouped=record.grouped == "joined",
            first_received_at=record.first_received_at,
            last_received_at=record.last_received_at,
            resolved_at=record.resolved_at,
            count=int(record.event_count),
            labels={str(k): str(v) for k, v in (record.labels or {}).items()},
            details=dict(record.details or {}),
            runbook_url=record.runbook_url,
            rule_notes=[str(note) for note in notes.get("notes", [])],
            matched_rule_ids=[str(rule) for rule in notes.get("rule_ids", [])],
        )


class AlertListV1(Page[AlertV1]):
    pass


class IncidentAlertQuery(PageQuery):
    model_config = ConfigDict(extra="forbid")

    status: list[AlertStatus] | None = Field(default=None, description="Repeat for several.")


class AlertListQuery(IncidentAlertQuery):
    """Filters for GET /api/v1/alerts; bounds are inclusive, RFC 3339 with an offset, on first_received_at."""

    service_id: Reference | None = Field(default=None, description="SER-nnnnn or svc_ key of a service.")
    incident_number: Reference | None = Field(default=None, description="INC-yyyy-nnnn: that incident's alerts.")
    since: UtcDateTime | None = Field(
        default=None, description=f"Without since or until: the last {DEFAULT_DAYS} days."
    )
    until: UtcDateTime | None = Field(default=None, description="Not earlier than since (400).")

    @field_validator("until")
    @classmethod
    def _ordered(cls, value: datetime | None, info: ValidationInfo) -> datetime | None:
        since = info.data.get("since")
        if value is not None and since is not None and value < since:
            raise PydanticCustomError("range", "must not be earlier than since")
        return value
