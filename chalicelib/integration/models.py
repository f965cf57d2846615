"""Webhook answers and the integration admin models (they also generate the OpenAPI document)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, StringConstraints
from pydantic.json_schema import SkipJsonSchema

from chalicelib.integration.admin import Integration, IssuedIntegration
from chalicelib.model_base import ApiModel, PatchModel, SingleLine, StrictBool

IntegrationType = Literal["custom", "newrelic", "sentry", "alertmanager", "cloudwatch", "pagerduty", "opsgenie"]


class WebhookIncidentV1(ApiModel):
    id: str = Field(description="The incident number.")
    title: str
    severity: str
    status: str
    url: str


class WebhookAlertV1(ApiModel):
    id: str = Field(description="The alert's id (GET /api/v1/alerts lists alerts).")
    status: str = Field(description="triggered, resolved or suppressed.")
    count: int = Field(description="Events received for this alert.")


class WebhookAcceptedV1(ApiModel):
    success: bool = True
    incident: WebhookIncidentV1 | None
    deduplicated: bool = Field(description="True when the alert updated an existing incident.")
    message: str | None = None
    alert: WebhookAlertV1 | None = Field(default=None, description="The alert the event created or updated.")
    grouped: bool = Field(
        default=False, description="True when the service's alert grouping added a new alert to an open incident."
    )
    suppressed: bool = Field(
        default=False, description="True when an event rule or a maintenance window suppressed the alert (202)."
    )
    dropped: bool = Field(
        default=False, description="True when an event rule dropped the event (202, nothing recorded)."
    )
    warnings: list[str] = Field(
        default_factory=list,
        description="What the service did with parts of the body it could not take as they were, the alert "
        "accepted all the same: fields the source's format does not define (kept as the alert's details, at "
        "most 32 keys and 16 KiB), values over a limit (cut), values of the wrong type (read as text, or kept as "
        "details), an unknown severity word (the service's default severity); then what ingesting said: a "
        "service_id naming no active service (routed to the integration's default service), event rules "
        "skipped past their time budget (the alert kept and paged as if no rule matched). Empty when the body "
        "was taken whole and ingested as it said.",
    )


class SlackInteractivityAnswerV1(ApiModel):
    """What a Slack button click did (Slack ignores this body; the person is told in Slack)."""

    done: bool = Field(description="True when the incident changed.")
    message: str = Field(description="What the person was told, or why nothing was done.")
    incident_number: str | None = None


class PagerDutyAcceptedV1(ApiModel):
    status: str = "success"
    message: str = "Event processed"
    dedup_key: str


class WebhookPayloadV1(ApiModel):
    """The monitoring tool's own JSON object (custom, New Relic, Sentry, Alertmanager, SNS). Documents
    the body only: the route reads it with the integration's parser, which answers 400 INVALID_PAYLOAD
    for an object that is not that source's shape."""

    model_config = ConfigDict(extra="allow", defer_build=True)


class PagerDutyEventV1(ApiModel):
    """A PagerDuty Events API v2 event. Documents the body only: the route checks it as PagerDuty does
    (400 `invalid event` listing every problem, e.g. a trigger without payload)."""

    model_config = ConfigDict(extra="allow", defer_build=True)

    routing_key: str = Field(min_length=1, description="The integration's routing key.")
    event_action: Literal["trigger", "acknowledge", "resolve"]
    dedup_key: str | None = None
    payload: dict[str, Any] | None = Field(default=None, description="Required to trigger: summary, source, severity.")


class IntegrationCreate(ApiModel):
    model_config = ConfigDict(extra="forbid")

    type: IntegrationType
    name: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100), SingleLine]
    default_service: Annotated[str, SingleLine] | None = Field(
        default=None,
        description="The service an alert that names none opens on: its key (svc_...) or its id (SER-nnnnn). "
        "Answers show its key.",
    )
    signing: StrictBool = Field(
        default=False, description="Custom webhooks: require X-Service-Signature (secret shown once)."
    )
    client_secret: Annotated[str, StringConstraints(min_length=8, max_length=200), SingleLine] | None = Field(
        default=None, description="Sentry: the integration's client secret, to check Sentry-Hook-Signature."
    )
    ip_allowlist: list[Annotated[str, SingleLine]] = Field(
        default_factory=list, description="Single IPs and CIDR ranges (v4 and v6)."
    )
    expected_topic_arn: Annotated[str, SingleLine] | None = Field(
        default=None, description="CloudWatch: accept only this SNS topic."
    )

    def arguments(self) -> dict[str, Any]:
        """As admin.create_integration takes them (the API's and the console's create)."""
        fields = dict(self)
        fields["integration_type"] = fields.pop("type")
        fields["default_service_key"] = fields.pop("default_service")
        return fields


class IntegrationPatch(PatchModel):
    nullable = frozenset({"default_service", "expected_topic_arn"})

    name: (
        Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100), SingleLine]
        | (SkipJsonSchema[None])
    ) = None
    default_service: Annotated[str, SingleLine] | None = Field(
        default=None, description="Its key (svc_...) or its id (SER-nnnnn); null: no default service."
    )
    ip_allowlist: list[Annotated[str, SingleLine]] | SkipJsonSchema[None] = Field(
        default=None, description="Replaces the list; [] admits every address."
    )
    expected_topic_arn: Annotated[str, SingleLine] | None = None


class IntegrationV1(ApiModel):
    id: str
    type: str
    name: str
    state: Literal["active", "revoked"]
    default_service: str | None
    signing: bool
    has_client_secret: bool
    ip_allowlist: list[str]
    expected_topic_arn: str | None
    routing_key_hint: str = Field(description="First characters of the routing key, to recognise it.")
    created_at: datetime
    revoked_at: datetime | None

    @classmethod
    def of(cls, integration: Integration) -> IntegrationV1:
        return cls(
            id=integration.integration_id,
            type=integration.integration_type,
            name=integration.name,
            state="revoked" if integration.state == "revoked" else "active",
            default_service=integration.default_service_key,
            signing=integration.has_signing_secret,
            has_client_secret=integration.has_client_secret,
            ip_allowlist=integration.ip_allowlist,
            expected_topic_arn=integration.expected_topic_arn,
            routing_key_hint=integration.key_hint,
            created_at=integration.created_at,
            revoked_at=integration.revoked_at,
        )


class IntegrationIssuedV1(IntegrationV1):
    routing_key: str = Field(
        description="Shown exactly once. An Opsgenie integration's senders send it as `Authorization: GenieKey "
        "<routing_key>` to this service's base URL (the Opsgenie Alert API drop-in under /v2/)."
    )
    url: str = Field(description="The webhook URL (contains the routing key). Shown exactly once.")
    signing_secret: str | None = Field(default=None, description="Custom webhooks with signing; shown once.")

    @classmethod
    def issued(cls, issued: IssuedIntegration) -> IntegrationIssuedV1:
        return cls(
            **IntegrationV1.of(issued.integration).model_dump(),
            routing_key=issued.routing_key,
            url=issued.url,
            signing_secret=issued.signing_secret,
        )
