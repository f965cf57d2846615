"""The configuration document: an organization's setup as one YAML file (docs/CONFIG.md).

Objects are keyed by name (users by email) and name each other, never a server id, so one
document applies to any organization. A section left out (None) is not managed: nothing in it is
created, changed or pruned, and references into it resolve against the organization as it is.
`source` records where an imported object came from (the reconciler keeps it in Tocsin's import
ledger, so a re-run finds the object again after a rename).

The importers build these models and hand them to the reconciler; the JSON Schema published as
docs/tocsin-config.schema.json is generated from them (`tocsin config schema`).
"""

from __future__ import annotations

import json
from datetime import UTC
from typing import Annotated, Any, ClassVar, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, model_validator
from pydantic.json_schema import SkipJsonSchema

SCHEMA_ID = "https://tocsin.dev/schemas/tocsin-config.schema.json"

Name = Annotated[str, Field(min_length=1, max_length=100, pattern=r"^\S(.*\S)?$")]
Text = Annotated[str, Field(max_length=10000)]
Email = Annotated[str, Field(min_length=3, max_length=254, pattern=r"^[^@\s]+@[^@\s]+$")]
LocalTime = Annotated[str, Field(pattern=r"^([01]\d|2[0-3]):[0-5]\d$", description="Local wall-clock time HH:MM.")]
TimeZone = Annotated[str, Field(min_length=1, max_length=64, description="IANA time zone, e.g. Europe/Berlin.")]
Severity = Literal["SEV0", "SEV1", "SEV2", "SEV3", "SEV4"]
Role = Literal["owner", "admin", "responder", "viewer"]
# The chat and push channels' addresses are secrets: the server answers (and an export writes) only a
# hint of them, which names the method in the document; a new one is added with its real URL.
ContactType = Literal[
    "email", "slack", "sms", "voice", "teams", "mattermost", "ntfy", "pushover", "discord", "google_chat"
]
ComponentStatus = Literal[
    "operational", "degraded_performance", "partial_outage", "major_outage", "under_maintenance", "unknown"
]


class Part(BaseModel):
    """Every part of the document: unknown fields are errors (a typo is never silently ignored)."""

    model_config = ConfigDict(extra="forbid", validate_by_name=True, validate_by_alias=True, serialize_by_alias=True)


class Source(Part):
    """Where an imported object came from: the vendor and the vendor's id for it."""

    vendor: Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9_-]{0,31}$", description="e.g. pagerduty, opsgenie.")]
    id: Annotated[str, Field(min_length=1, max_length=256, description="The object's id at the vendor.")]


class Keyed(Part):
    """A top-level object: its key is unique in its section."""

    kind: ClassVar[str]
    source: Source | None = None

    def key(self) -> str:
        """What the object is found by, in the document and in the organization: its name (an
        email for users), case-insensitively, as the server compares names."""
        raise NotImplementedError


class Named(Keyed):
    name: Name

    def key(self) -> str:
        return self.name.casefold()


# --- people ---------------------------------------------------------------------------------------


class ContactMethod(Part):
    type: ContactType
    address: Annotated[str, Field(min_length=1, max_length=254)] = Field(
        description="email: an address; slack: a Slack user id; sms and voice: an E.164 number (+15551234567); "
        "teams, mattermost, ntfy, discord, google_chat: the webhook or topic URL (an export writes the hint the "
        "server shows, which names the existing method); pushover: the user key. "
        "A phone number or URL is added unverified: its owner verifies it before it is paged."
    )
    label: Annotated[str, Field(max_length=100)] | None = Field(default=None, description="Default: the type's name.")


class RuleStep(Part):
    type: ContactType = Field(description="With address, names one of the user's contact methods.")
    address: Annotated[str, Field(min_length=1, max_length=254)]
    delay_minutes: Annotated[int, Field(ge=0, le=1440)] = 0


class NotificationRules(Part):
    high: list[RuleStep] = Field(default_factory=list, max_length=10)
    low: list[RuleStep] = Field(default_factory=list, max_length=10)


class User(Keyed):
    kind: ClassVar[str] = "user"

    email: Email = Field(description="The key: unique in the organization, case-insensitively.")
    name: Name
    role: Role = "responder"
    slack_user_id: Annotated[str, Field(min_length=1, max_length=64, pattern=r"^\S+$")] | None = None
    active: bool = True
    contact_methods: list[ContactMethod] | None = Field(
        default=None,
        description="Besides the account email (always a method). Left out: the user's methods are not managed.",
    )
    notification_rules: NotificationRules | None = Field(default=None, description="Left out: not managed.")

    def key(self) -> str:
        return self.email.lower()


class Team(Named):
    kind: ClassVar[str] = "team"

    description: Text | None = None
    members: list[Email] = Field(default_factory=list, description="Users, by email.")
    active: bool = True


# --- on call --------------------------------------------------------------------------------------


class Restriction(Part):
    kind: Literal["daily", "weekly"]
    start: LocalTime
    end: LocalTime
    start_day: Annotated[int, Field(ge=0, le=6, description="weekly: Monday=0 .. Sunday=6.")] | None = None
    end_day: Annotated[int, Field(ge=0, le=6)] | None = None


class Layer(Part):
    name: Name
    members: list[Email] = Field(min_length=1, max_length=50, description="Users by email, in rotation order.")
    rotation: Literal["hourly", "daily", "weekly", "custom"]
    rotation_hours: Annotated[int, Field(ge=1, le=8760)] | None = Field(default=None, description="custom only.")
    handoff_time: LocalTime
    start: AwareDatetime = Field(description="The rotation starts here with the first member.")
    end: AwareDatetime | None = None
    restrictions: list[Restriction] = Field(default_factory=list, max_length=14)


class Override(Part):
    user: Email
    start: AwareDatetime
    end: AwareDatetime


class Schedule(Named):
    kind: ClassVar[str] = "schedule"

    time_zone: TimeZone
    team: Name | None = None
    handoff_notice_lead_minutes: Annotated[int, Field(ge=0)] = 0
    layers: list[Layer] = Field(min_length=1, max_length=10, description="Lowest first: a later layer wins.")
    overrides: list[Override] | None = Field(
        default=None, description="Overrides not yet ended. Left out: the schedule's overrides are not managed."
    )


class Target(Part):
    """Exactly one of user (by email) or schedule (by name)."""

    model_config = ConfigDict(json_schema_extra={"oneOf": [{"required": ["user"]}, {"required": ["schedule"]}]})

    user: Email | SkipJsonSchema[None] = None
    schedule: Name | SkipJsonSchema[None] = None

    @model_validator(mode="after")
    def _exactly_one(self) -> Target:
        if (self.user is None) == (self.schedule is None):
            raise ValueError("a target names exactly one of user or schedule")
        return self


class Level(Part):
    delay_minutes: Annotated[int, Field(ge=0)] = Field(description="Minutes before the next level is notified.")
    targets: list[Target] = Field(min_length=1)


class EscalationPolicy(Named):
    kind: ClassVar[str] = "escalation_policy"

    repeat_count: Annotated[int, Field(ge=0)] = 0
    levels: list[Level] = Field(min_length=1, description="Level 1 first.")


# --- services and intake --------------------------------------------------------------------------


class SupportHours(Part):
    time_zone: TimeZone
    days: list[Literal["mon", "tue", "wed", "thu", "fri", "sat", "sun"]] = Field(min_length=1, max_length=7)
    start: LocalTime
    end: LocalTime


class UrgencyRule(Part):
    type: Literal["high", "low", "severity_based"] = "severity_based"
    support_hours: SupportHours | None = None


class AlertGrouping(Part):
    type: Literal["none", "time", "content"] = "none"
    window_minutes: Annotated[int, Field(ge=1, le=1440)] | None = None
    fields: list[str] | None = None


class Service(Named):
    kind: ClassVar[str] = "service"

    description: Text | None = None
    team: Name | None = None
    escalation_policy: Name | None = None
    default_severity: Severity | None = None
    urgency_rule: UrgencyRule = Field(default_factory=UrgencyRule)
    alert_grouping: AlertGrouping = Field(default_factory=AlertGrouping)
    active: bool = True


class Integration(Named):
    kind: ClassVar[str] = "integration"

    type: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,31}$")] = Field(
        description="custom, newrelic, sentry, alertmanager, cloudwatch, pagerduty, or any type the server knows."
    )
    service: Name | None = Field(default=None, description="The default service, by name.")
    signing: bool = Field(default=False, description="Custom webhooks: require a signature (secret shown once).")
    ip_allowlist: list[str] = Field(default_factory=list, max_length=50)
    expected_topic_arn: str | None = None
    client_secret_env: Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")] | None = Field(
        default=None, description="Sentry: the environment variable holding the client secret (never in the file)."
    )


class Condition(Part):
    field: Annotated[str, Field(min_length=1, max_length=135)] = Field(
        description="title, source, severity, service_id, integration_type, labels.<name>; or `service` "
        "(equals only) naming a service of the document."
    )
    op: Literal["equals", "contains", "matches", "exists"]
    value: str | None = None


class Actions(Part):
    suppress: bool = False
    drop: bool = False
    severity: Severity | None = None
    route_to_service: Name | None = Field(default=None, description="A service, by name.")
    note: str | None = None


class EventRule(Keyed):
    """One rule of an ordered list: the integration's when `integration` names one, else the
    organization's. Rules keep the document's order within their list."""

    kind: ClassVar[str] = "event_rule"

    description: Text | None = Field(default=None, description="Unique within its list when given: the key.")
    integration: Name | None = None
    conditions: list[Condition] = Field(default_factory=list)
    actions: Actions
    continue_: bool = Field(default=False, alias="continue")

    def key(self) -> str:
        if self.description:
            return f"{(self.integration or '').casefold()}/{self.description.casefold()}"
        body = self.model_dump(mode="json", include={"conditions", "actions", "continue_"})
        return f"{(self.integration or '').casefold()}/{json.dumps(body, sort_keys=True)}"


class MaintenanceWindow(Keyed):
    kind: ClassVar[str] = "maintenance_window"

    description: Text | None = Field(default=None, description="Unique in the section when given: the key.")
    services: list[Name] = Field(min_length=1, description="Services, by name.")
    start: AwareDatetime
    end: AwareDatetime

    def key(self) -> str:
        if self.description:
            return self.description.casefold()
        services = ",".join(sorted(name.casefold() for name in self.services))
        return f"{services}@{self.start.astimezone(UTC).isoformat()}/{self.end.astimezone(UTC).isoformat()}"


class Heartbeat(Named):
    kind: ClassVar[str] = "heartbeat"

    service: Name
    interval_seconds: Annotated[int, Field(ge=60, le=604800)]
    grace_seconds: Annotated[int, Field(ge=0)] = 0
    description: Text | None = None
    enabled: bool = True


# --- status pages ---------------------------------------------------------------------------------


class Component(Part):
    name: Name = Field(description="Unique within its page.")


class ComponentGroup(Part):
    name: Name
    components: list[Component] = Field(default_factory=list)


class Section(Part):
    name: Name = Field(description="Unique within its page.")
    components: list[Component] = Field(default_factory=list, description="Components outside any group.")
    groups: list[ComponentGroup] = Field(default_factory=list)


class IncidentTemplate(Part):
    name: Name = Field(description="Unique within its page.")
    title: Annotated[str, Field(min_length=1, max_length=200)]
    body: Annotated[str, Field(min_length=1, max_length=5000)]
    status: Literal["investigating", "identified", "monitoring", "resolved"] | None = None
    impact: Literal["none", "minor", "major", "critical"] | None = None
    component_statuses: dict[str, ComponentStatus] = Field(
        default_factory=dict, description="Component name -> status."
    )


class StatusPage(Named):
    kind: ClassVar[str] = "status_page"

    slug: Annotated[str, Field(pattern=r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")] = Field(
        description="The public URL's last segment; unique across the whole service."
    )
    sections: list[Section] = Field(default_factory=list)
    templates: list[IncidentTemplate] = Field(default_factory=list)


# --- the document ---------------------------------------------------------------------------------

# Sections in the order the reconciler applies them (a section's objects only name earlier ones,
# except users' and teams' mutual membership, which the team side carries).
SECTIONS: tuple[tuple[str, type[Keyed]], ...] = (
    ("users", User),
    ("teams", Team),
    ("schedules", Schedule),
    ("escalation_policies", EscalationPolicy),
    ("services", Service),
    ("integrations", Integration),
    ("event_rules", EventRule),
    ("maintenance_windows", MaintenanceWindow),
    ("heartbeats", Heartbeat),
    ("status_pages", StatusPage),
)


class Document(Part):
    """An organization's setup. Every section is optional: one left out is not managed."""

    model_config = ConfigDict(json_schema_extra={"$id": SCHEMA_ID, "title": "Tocsin configuration document"})

    version: Literal[1] = Field(description="The document format's version.")
    users: list[User] | SkipJsonSchema[None] = None
    teams: list[Team] | SkipJsonSchema[None] = None
    schedules: list[Schedule] | SkipJsonSchema[None] = None
    escalation_policies: list[EscalationPolicy] | SkipJsonSchema[None] = None
    services: list[Service] | SkipJsonSchema[None] = None
    integrations: list[Integration] | SkipJsonSchema[None] = None
    event_rules: list[EventRule] | SkipJsonSchema[None] = None
    maintenance_windows: list[MaintenanceWindow] | SkipJsonSchema[None] = None
    heartbeats: list[Heartbeat] | SkipJsonSchema[None] = None
    status_pages: list[StatusPage] | SkipJsonSchema[None] = None

    def section(self, name: str) -> list[Keyed] | None:
        found: list[Keyed] | None = getattr(self, name)
        return found


def json_schema() -> dict[str, Any]:
    """The document's JSON Schema (draft 2020-12), as published."""
    schema = Document.model_json_schema(mode="validation")
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}


def schema_text() -> str:
    return json.dumps(json_schema(), indent=2, sort_keys=True) + "\n"
