"""Request and response models of /api/v1/insights/* (they are the OpenAPI schemas)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field, Strict, StringConstraints

from chalicelib.incident.models import UtcDateTime
from chalicelib.model_base import ApiModel, RequestModel, SingleLine

Reference = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=40), SingleLine]
ZoneName = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=64), SingleLine]
RANGE_HELP = "RFC 3339 with an offset; without since: 30 days before until; without until: now. At most 400 days."


class RangeQuery(ApiModel):
    model_config = ConfigDict(extra="forbid")

    since: UtcDateTime | None = Field(default=None, description=RANGE_HELP)
    until: UtcDateTime | None = Field(default=None, description=RANGE_HELP)
    time_zone: ZoneName | None = Field(
        default=None, description="IANA zone of the buckets and working hours; default: the organization's."
    )


class IncidentInsightsQuery(RangeQuery):
    service_ids: list[Reference] | None = Field(default=None, description="SER-nnnnn or svc_ keys; repeat for several.")
    team_ids: list[Reference] | None = Field(default=None, description="Team ids; repeat for several.")
    severities: list[Reference] | None = Field(default=None, description="SEV1...; repeat for several.")
    urgency: list[Literal["high", "low"]] | None = Field(default=None, description="high or low.")
    group_by: Literal["none", "service", "team", "severity"] = "none"
    interval: Literal["day", "week", "month"] = "day"


class DurationsV1(ApiModel):
    mean: float | None = Field(description="Seconds; null when nothing was counted.")
    p50: float | None = Field(description="Median seconds, read from the rollups' histogram.")
    p90: float | None


class IncidentFiguresV1(ApiModel):
    count: int = Field(description="Incidents opened.")
    acknowledged: int
    resolved: int = Field(description="Incidents whose resolution stands (a reopened one counts again when resolved).")
    escalated: int = Field(description="Incidents escalated past their first level, by a timer or by hand.")
    opened_outside_working_hours: int
    acknowledged_within_sla: int
    acknowledged_within_sla_share: float | None = Field(description="acknowledged_within_sla / count.")
    mtta_seconds: DurationsV1
    mttr_seconds: DurationsV1


class IncidentBucketV1(IncidentFiguresV1):
    start: str = Field(description="Local midnight the bucket starts at, with its offset.")
    end: str


class IncidentGroupRefV1(ApiModel):
    kind: str
    id: str | None = Field(description="null: incidents without one (no team).")
    name: str | None


class IncidentGroupV1(ApiModel):
    group: IncidentGroupRefV1 | None = Field(description="null without group_by.")
    buckets: list[IncidentBucketV1]
    totals: IncidentFiguresV1


class IncidentInsightsV1(ApiModel):
    since: str
    until: str
    time_zone: str
    interval: str
    group_by: str
    groups: list[IncidentGroupV1]
    totals: IncidentFiguresV1


class ResponderInsightsQuery(RangeQuery):
    team_ids: list[Reference] | None = Field(default=None, description="Members of these teams only.")
    user_ids: list[Reference] | None = Field(default=None, description="These people only.")


class PagesV1(ApiModel):
    total: int = Field(description="Pages that reached the person (one page, whatever its channels).")
    by_channel: dict[str, int] = Field(description="email, slack, sms, voice: pages sent on each.")
    by_urgency: dict[str, int] = Field(description="high, low.")


class OnCallHoursV1(ApiModel):
    total: float
    working: float = Field(description="Hours of a working day's working hours, in the person's zone.")
    off_hours: float = Field(description="Other hours of a working day.")
    weekend: float = Field(description="Hours of days that are not working days.")


class ResponderUserV1(ApiModel):
    id: str
    name: str | None
    email: str | None
    time_zone: str = Field(description="The person's own zone (or the organization's): the bands are cut in it.")


class ResponderV1(ApiModel):
    user: ResponderUserV1
    pages: PagesV1
    interruptions: dict[str, int] = Field(
        description="Pages by band of the person's local hour: working, evening, sleep."
    )
    acknowledged: int
    resolved: int
    on_call_hours: OnCallHoursV1


class BandsV1(ApiModel):
    working_start_hour: int
    working_end_hour: int
    sleep_start_hour: int
    sleep_end_hour: int
    working_days: list[int] = Field(description="0 is Monday.")


class ResponderInsightsV1(ApiModel):
    since: str
    until: str
    bands: BandsV1
    people: list[ResponderV1]


class AlertInsightsQuery(RangeQuery):
    limit: int = Field(default=10, ge=1, le=100, description="How many of each top list.")
    flap_minutes: int = Field(
        default=10,
        description="An alert its source resolved within this many minutes flapped: 1-10, 12, 15, 20, 30, 45, 60, "
        "or another whole number of minutes that is a bound of the lifetime histogram (400 otherwise).",
    )


class AlertFiguresV1(ApiModel):
    events: int = Field(description="Trigger events received (repeats on a dedup key included).")
    alerts: int = Field(description="Alerts created (suppressed ones included; repeats are events, not alerts).")
    incidents: int = Field(description="Incidents the alerts opened.")
    suppressed_by_rules: int
    suppressed_by_maintenance: int
    dropped: int = Field(description="Events an event rule dropped (no alert).")
    auto_resolved: int = Field(description="Alerts their source resolved.")
    flapping: int = Field(description="Of those, resolved within flap_minutes of being opened.")


class AlertSourceV1(AlertFiguresV1):
    source: str


class AlertServiceRefV1(ApiModel):
    id: str | None
    name: str | None


class AlertServiceV1(AlertFiguresV1):
    service: AlertServiceRefV1


class AlertKeyV1(AlertFiguresV1):
    key: str = Field(description="The dedup key, or the title of an alert without one.")


class AlertInsightsV1(ApiModel):
    since: str
    until: str
    flap_minutes: int
    totals: AlertFiguresV1
    top_sources: list[AlertSourceV1]
    top_services: list[AlertServiceV1]
    top_keys: list[AlertKeyV1]


# Whole numbers only: JSON true/false is not an hour (pydantic would read it as 1/0).
WholeNumber = Annotated[int, Strict()]


class BandsIn(RequestModel):
    working_start_hour: WholeNumber | None = Field(default=None, description="0-24; default 9.")
    working_end_hour: WholeNumber | None = Field(default=None, description="0-24, exclusive; default 18.")
    sleep_start_hour: WholeNumber | None = Field(default=None, description="0-24; default 23.")
    sleep_end_hour: WholeNumber | None = Field(
        default=None, description="0-24, exclusive; default 7 (sleep crosses midnight)."
    )
    working_days: list[WholeNumber] | None = Field(
        default=None, description="0 (Monday) to 6; default Monday to Friday."
    )


class InsightsSettingsIn(RequestModel):
    bands: BandsIn = Field(description="What is left out takes its default (docs/INSIGHTS.md).")


class InsightsSettingsV1(ApiModel):
    bands: BandsV1
