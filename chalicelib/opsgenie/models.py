"""The Opsgenie drop-in's bodies, as Opsgenie's Alert API has them (camelCase). The request models
document the bodies only: the routes read them with chalicelib.integration.parsers.opsgenie, which
answers as Opsgenie does (400 for a body that is not a JSON object, 422 naming invalid fields)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field
from pydantic.alias_generators import to_camel

from chalicelib.incident.models import Timestamp
from chalicelib.model_base import ApiModel

CAMEL = ConfigDict(defer_build=True, alias_generator=to_camel, validate_by_name=True, serialize_by_alias=True)
OPEN = ConfigDict(defer_build=True, alias_generator=to_camel, validate_by_name=True, extra="allow")
# Where Opsgenie's API has a string, Opsgenie reads a number or a boolean as its text (its JSON mapper
# coerces scalars) and so does the drop-in's parser: the document says what is accepted.
OpsgenieText = str | float | bool
# tags and actions: a list, or one comma-separated string (as Opsgenie reads them).
OpsgenieTexts = list[OpsgenieText] | str


class OpsgenieRecipientV1(ApiModel):
    model_config = OPEN

    type: Literal["team", "user", "escalation", "schedule"]
    id: OpsgenieText | None = None
    name: OpsgenieText | None = Field(default=None, description="A team's, an escalation's or a schedule's name.")
    username: OpsgenieText | None = Field(default=None, description="A user's username (an email).")


class OpsgenieCreateAlertV1(ApiModel):
    """Opsgenie's create-alert body. Fields Opsgenie does not define are kept as the alert's details."""

    model_config = OPEN

    message: OpsgenieText = Field(description="Required; longer than 130 characters is cut, as Opsgenie does.")
    alias: OpsgenieText | None = Field(
        default=None,
        description="The dedup key: an open alert of this integration with the same alias counts one more "
        "occurrence instead of opening another (at most 512 characters).",
    )
    description: OpsgenieText | None = Field(
        default=None, description="At most 15000 characters (the alert keeps 10000)."
    )
    responders: list[OpsgenieRecipientV1] | None = Field(
        default=None, description="Kept on the alert; the alert's service pages its own escalation policy."
    )
    visible_to: list[OpsgenieRecipientV1] | None = Field(default=None, description="Kept on the alert.")
    actions: OpsgenieTexts | None = Field(default=None, description="Kept on the alert (at most 10).")
    tags: OpsgenieTexts | None = Field(
        default=None,
        description="At most 20. Each is a label of the alert: `name:value` or `name=value` as name=value, any "
        "other tag as tag=true. A `service_id:SER-nnnnn` tag names the alert's service.",
    )
    details: dict[str, Any] | None = Field(
        default=None,
        description="The alert's details. `service_id` (SER-nnnnn or svc_...) names the alert's service, else the "
        "integration's default service takes it. Opsgenie's values are strings: a number or a boolean is read as its "
        "text, an object or an array as its JSON text.",
    )
    entity: OpsgenieText | None = None
    source: OpsgenieText | None = None
    priority: Literal["P1", "P2", "P3", "P4", "P5"] | None = Field(
        default=None, description="P1 SEV0, P2 SEV1, P3 SEV2 (the default), P4 SEV3, P5 SEV4."
    )
    user: OpsgenieText | None = Field(default=None, description="Who the timeline names as creating it.")
    note: OpsgenieText | None = Field(default=None, description="Added to a new alert's incident as a comment.")


class OpsgenieActionV1(ApiModel):
    """The body of an acknowledge or close request (optional)."""

    model_config = OPEN

    user: OpsgenieText | None = Field(default=None, description="Who the timeline names as acting.")
    source: OpsgenieText | None = None
    note: OpsgenieText | None = Field(default=None, description="Added to the alert's incident as a comment.")


class OpsgenieNoteV1(ApiModel):
    model_config = OPEN

    note: OpsgenieText = Field(description="Added to the alert's incident as a comment (at most 25000 characters).")
    user: OpsgenieText | None = Field(default=None, description="Who the comment names as its author.")
    source: OpsgenieText | None = None


class OpsgenieIdentifierQuery(ApiModel):
    model_config = CAMEL

    identifier_type: Literal["id", "alias", "tiny"] = Field(
        default="id", description="What the identifier in the path is: the alert's id, its alias or its tiny id."
    )


class OpsgenieAcceptedV1(ApiModel):
    """Opsgenie's answer to a request it processes: what it became is at GET /v2/alerts/requests/{requestId}."""

    model_config = CAMEL

    result: str
    took: float = Field(description="Seconds the request took.")
    request_id: str


class OpsgenieRequestStatusV1(ApiModel):
    model_config = CAMEL

    success: bool
    action: str = Field(description="Create, Acknowledge, Close or AddNote.")
    processed_at: Timestamp
    integration_id: str
    is_success: bool
    status: str = Field(description="What the request became, e.g. 'Created alert' or 'Alert does not exist'.")
    alert_id: str = Field(description="The alert's id; empty when there is none.")
    alias: str


class OpsgenieRequestStatusAnswerV1(ApiModel):
    model_config = CAMEL

    data: OpsgenieRequestStatusV1
    took: float
    request_id: str


class OpsgenieAlertIntegrationV1(ApiModel):
    model_config = CAMEL

    id: str
    name: str
    type: str = Field(description="API for an Opsgenie integration's alerts, else the integration's type.")


class OpsgenieAlertReportV1(ApiModel):
    model_config = CAMEL

    ack_time: int | None = Field(default=None, description="Milliseconds from creation to acknowledgement.")
    close_time: int | None = Field(default=None, description="Milliseconds from creation to closing.")
    acknowledged_by: str | None = None
    closed_by: str | None = None


class OpsgenieResponderV1(ApiModel):
    model_config = CAMEL

    type: Literal["team", "user", "escalation", "schedule"]
    id: str = Field(description="The id the create named, else its name or username.")


class OpsgenieAlertV1(ApiModel):
    model_config = CAMEL

    id: str
    tiny_id: str = Field(description="A short number per organization; empty for an alert made by another source.")
    alias: str
    message: str
    status: Literal["open", "closed"]
    acknowledged: bool
    is_seen: bool
    tags: list[str]
    snoozed: bool
    count: int
    last_occurred_at: Timestamp
    created_at: Timestamp
    updated_at: Timestamp
    source: str
    owner: str
    priority: Literal["P1", "P2", "P3", "P4", "P5"] = Field(description="The alert's severity as a priority.")
    responders: list[OpsgenieResponderV1]
    integration: OpsgenieAlertIntegrationV1
    report: OpsgenieAlertReportV1
    actions: list[str]
    entity: str
    description: str
    details: dict[str, str]


class OpsgenieAlertAnswerV1(ApiModel):
    model_config = CAMEL

    data: OpsgenieAlertV1
    took: float
    request_id: str
