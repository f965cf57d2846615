"""Request and response models of the service catalog (GET/POST/PATCH /api/v1/services)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints
from pydantic.json_schema import SkipJsonSchema

from chalicelib.catalog.grouping import CONTENT_FIELDS, WINDOW_MINUTES_MAX, AlertGrouping, GroupingType
from chalicelib.catalog.service import Service
from chalicelib.catalog.urgency import RuleType, SupportHours, UrgencyRule, Weekday, canonical_days
from chalicelib.directory.models import ActiveFilter, Description, ItemId, Name, Severity
from chalicelib.model_base import JSON_INTEGER, ApiModel, PatchModel, RequestModel, SingleLine, StrictBool
from chalicelib.oncall.models import LocalTime, TimeZone

RULE_DESCRIPTION = (
    "Which urgency the service's incidents page with: high, low, or severity_based (SEV0 and SEV1 high, "
    "SEV2 to SEV4 low). Default {type: severity_based, support_hours: null}. Open incidents keep the urgency "
    "they were opened with when the rule changes; a change of an incident's severity recomputes it."
)
SUPPORT_HOURS_DESCRIPTION = (
    "Inside these hours the rule applies; outside them incidents are low urgency. On each listed day from "
    "start to end local time (end excluded); an end before start runs overnight into the next day; end must "
    "differ from start (400). Local wall-clock times: across DST, times the clock skips never happen and times "
    "it shows twice count twice."
)


class SupportHoursV1(ApiModel):
    time_zone: str = Field(description="IANA time zone, e.g. Europe/Berlin.")
    days: list[Weekday] = Field(description="The days a window starts on, Monday first.")
    start: str = Field(description="Local time HH:MM.")
    end: str = Field(description="Local time HH:MM; before start: the window ends the next day.")


class UrgencyRuleV1(ApiModel):
    type: RuleType
    support_hours: SupportHoursV1 | None = Field(description=SUPPORT_HOURS_DESCRIPTION)

    @classmethod
    def of(cls, rule: UrgencyRule) -> UrgencyRuleV1:
        hours = rule.support_hours
        return cls(
            type=rule.type,
            support_hours=SupportHoursV1(
                time_zone=hours.time_zone, days=list(hours.days), start=hours.start, end=hours.end
            )
            if hours is not None
            else None,
        )


class SupportHoursIn(RequestModel):
    time_zone: TimeZone
    days: list[Weekday] = Field(min_length=1, max_length=7, description="Days a window starts on; repeats ignored.")
    start: LocalTime
    end: LocalTime = Field(description="Local time HH:MM; before start runs overnight; must differ from start.")


class UrgencyRuleIn(RequestModel):
    type: RuleType = Field(description="high, low, or severity_based (SEV0 and SEV1 high, the rest low).")
    support_hours: SupportHoursIn | None = Field(default=None, description=SUPPORT_HOURS_DESCRIPTION)

    def rule(self) -> UrgencyRule:
        """The domain rule; the service checks what JSON Schema cannot (zone known, end != start)."""
        hours = self.support_hours
        return UrgencyRule(
            type=self.type,
            support_hours=SupportHours(
                time_zone=hours.time_zone, days=canonical_days(hours.days), start=hours.start, end=hours.end
            )
            if hours is not None
            else None,
        )


GROUPING_DESCRIPTION = (
    "How new alerts of the service become incidents. {type: none} (the default): each alert opens its own "
    "incident. {type: time, window_minutes: N}: a new alert joins the service's open incident whose first "
    "alert came less than N minutes ago. {type: content, fields: [...], window_minutes: N or null}: the same, "
    "but only alerts whose named fields (" + ", ".join(CONTENT_FIELDS) + ", labels.<name>) are all equal share "
    "an incident; without a window, as long as that incident is open. N is 1 to "
    f"{WINDOW_MINUTES_MAX}. Alerts with the same dedup key always update their own alert first."
)


GroupingField = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=120), SingleLine]


class AlertGroupingV1(ApiModel):
    type: GroupingType
    window_minutes: int | None = None
    fields: list[str] | None = None

    @classmethod
    def of(cls, grouping: AlertGrouping) -> AlertGroupingV1:
        if grouping.type == "none":
            return cls(type="none")
        if grouping.type == "time":
            return cls(type="time", window_minutes=grouping.window_minutes)
        return cls(type="content", window_minutes=grouping.window_minutes, fields=list(grouping.fields))


class AlertGroupingIn(RequestModel):
    type: GroupingType = Field(description="none, time or content.")
    window_minutes: Annotated[int, Field(ge=1, le=WINDOW_MINUTES_MAX), JSON_INTEGER] | None = Field(
        default=None, description="1 to 1440 minutes."
    )
    fields: list[GroupingField] | None = Field(
        default=None, max_length=10, description="Content grouping: the fields that must be equal."
    )

    def grouping(self) -> AlertGrouping:
        """The domain value; the catalog checks what JSON Schema cannot (fields per type)."""
        return AlertGrouping(type=self.type, window_minutes=self.window_minutes, fields=tuple(self.fields or ()))


class ServiceV1(ApiModel):
    name: str
    service_key: str = Field(description="Public key of the service: svc_ and 10 characters.")
    description: str | None
    is_active: bool
    default_severity: Literal["SEV0", "SEV1", "SEV2", "SEV3", "SEV4"] | None
    service_id: str = Field(description="Human-readable id, SER-nnnnn; webhooks may route by it.")
    team_id: str | None
    team_name: str | None
    escalation_policy_id: str | None
    urgency_rule: UrgencyRuleV1 = Field(description=RULE_DESCRIPTION)
    alert_grouping: AlertGroupingV1 = Field(description=GROUPING_DESCRIPTION)

    @classmethod
    def of(cls, service: Service, team_name: str | None = None) -> ServiceV1:
        return cls(
            name=service.name,
            service_key=service.service_key,
            description=service.description,
            is_active=service.is_active,
            default_severity=service.default_severity,
            service_id=service.service_id,
            team_id=service.team_id,
            team_name=team_name,
            escalation_policy_id=service.escalation_policy_id,
            urgency_rule=UrgencyRuleV1.of(service.urgency_rule),
            alert_grouping=AlertGroupingV1.of(service.alert_grouping),
        )


class ServiceCreate(RequestModel):
    name: Name = Field(description="Unique within the organization, case-insensitively.")
    description: Description | None = None
    team_id: ItemId | None = None
    default_severity: Severity | None = Field(default=None, description="Used when an incident names none.")
    escalation_policy_id: ItemId | None = None
    urgency_rule: UrgencyRuleIn | None = Field(default=None, description=RULE_DESCRIPTION)
    alert_grouping: AlertGroupingIn | None = Field(default=None, description=GROUPING_DESCRIPTION)

    def rule(self) -> UrgencyRule | None:
        return self.urgency_rule.rule() if self.urgency_rule is not None else None

    def grouping(self) -> AlertGrouping | None:
        return self.alert_grouping.grouping() if self.alert_grouping is not None else None

    def arguments(self) -> dict[str, Any]:
        return {**super().arguments(), "urgency_rule": self.rule(), "alert_grouping": self.grouping()}


class ServicePatch(PatchModel):
    nullable = frozenset({"description", "team_id", "default_severity", "escalation_policy_id"})

    name: Name | SkipJsonSchema[None] = None
    description: Description | None = None
    team_id: ItemId | None = None
    default_severity: Severity | None = None
    is_active: StrictBool | SkipJsonSchema[None] = None
    escalation_policy_id: ItemId | None = None
    # `| None` rather than SkipJsonSchema: errors then name urgency_rule.type, not a union branch;
    # PatchModel documents no null and refuses one.
    urgency_rule: UrgencyRuleIn | None = Field(default=None, description=RULE_DESCRIPTION + " Replaces the whole rule.")
    alert_grouping: AlertGroupingIn | None = Field(
        default=None,
        description=GROUPING_DESCRIPTION + " Replaces the whole setting; open incidents keep their window.",
    )

    def changes(self) -> dict[str, Any]:
        changed = super().changes()
        if self.urgency_rule is not None:
            changed["urgency_rule"] = self.urgency_rule.rule()
        if self.alert_grouping is not None:
            changed["alert_grouping"] = self.alert_grouping.grouping()
        return changed


class ServiceListQuery(ActiveFilter):
    team_id: ItemId | None = Field(default=None, description="Only services owned by this team.")
