"""The public status documents (spec: "Public status resources"). Nothing internal appears here:
no organization, no linked internal incident, no people."""

from __future__ import annotations

import datetime as dt
from datetime import datetime
from typing import Annotated, Any

from pydantic import Field

from chalicelib.model_base import ApiModel, SingleLine
from chalicelib.statuspage.rules import ComponentStatus, Impact, IncidentStatus, MaintenanceStatus
from chalicelib.statuspage.tables import StatusPageItem


class PublicComponent(ApiModel):
    component_id: str = Field(description="Prefix cmp_.")
    name: str
    status: ComponentStatus = Field(
        description="under_maintenance while an in-progress maintenance window affects it, "
        "unless its own status is worse."
    )
    updated_at: datetime


class PublicPage(ApiModel):
    name: str
    url: str = Field(json_schema_extra={"format": "uri"})


class PublicSummary(ApiModel):
    page: PublicPage
    status: ComponentStatus = Field(
        description="The worst component status (major_outage > partial_outage > degraded_performance > "
        "under_maintenance > unknown > operational); operational for a page without components."
    )
    updated_at: datetime
    active_incident_count: int = Field(description="Incidents investigating, identified or monitoring.")
    active_maintenance_count: int = Field(description="Maintenance windows in progress.")


class PublicGroup(ApiModel):
    group_id: str = Field(description="Prefix grp_.")
    name: str
    components: list[PublicComponent]


class PublicSection(ApiModel):
    section_id: str = Field(description="Prefix sec_.")
    name: str
    components: list[PublicComponent]
    groups: list[PublicGroup]


class PublicComponents(ApiModel):
    sections: list[PublicSection]


class AffectedComponent(ApiModel):
    component_id: str
    name: str


class PublicIncidentUpdate(ApiModel):
    status: str
    body: str
    published_at: datetime


class PublicIncident(ApiModel):
    incident_id: str = Field(description="Prefix inc_.")
    title: str
    status: IncidentStatus
    impact: Impact
    started_at: datetime
    resolved_at: datetime | None
    updated_at: datetime
    updates: list[PublicIncidentUpdate] = Field(description="Newest first.")
    affected_components: list[AffectedComponent]


class PublicIncidents(ApiModel):
    incidents: list[PublicIncident]
    next_cursor: str | None = Field(description="Pass as ?cursor= for the next (older) page; null on the last.")


class PublicMaintenance(ApiModel):
    maintenance_id: str = Field(description="Prefix mnt_.")
    title: str
    status: MaintenanceStatus
    scheduled_start: datetime
    scheduled_end: datetime
    updated_at: datetime
    affected_components: list[AffectedComponent]


class PublicMaintenanceList(ApiModel):
    maintenance: list[PublicMaintenance]
    next_cursor: str | None = Field(description="Pass as ?cursor= for the next (older) page; null on the last.")


class PublicCursorQuery(ApiModel):
    """Documents the listings' only query parameter (the route checks it itself)."""

    cursor: Annotated[str, SingleLine] | None = Field(
        default=None, description="next_cursor of the previous page; omit for the newest"
    )


class PublicUptimeDay(ApiModel):
    date: dt.date = Field(description="A UTC day.")
    uptime_percent: float | None = Field(
        description="100 x (1 - weighted down time / measured time), rounded down to hundredths; "
        "null for a day without data (before the component existed, or its status unknown all day)."
    )
    worst_status: ComponentStatus | None = Field(
        description="The worst status the component showed that day; null before it existed."
    )


class PublicComponentUptime(ApiModel):
    component_id: str = Field(description="Prefix cmp_.")
    name: str
    uptime_percent: float | None = Field(
        description="Over the whole period, every measured second weighted alike; null without data."
    )
    days: list[PublicUptimeDay] = Field(description="Exactly `days` entries, oldest first; the last is today.")


class PublicUptime(ApiModel):
    days: int = Field(description="Days in the period (90), today included.")
    start_date: dt.date = Field(description="The oldest day (UTC).")
    end_date: dt.date = Field(description="Today (UTC).")
    down_weights: dict[str, float] = Field(
        description="The share of the time in each status that counts as down (statuses not listed: 0). "
        "Time with status unknown and time before a component existed are no data."
    )
    components: list[PublicComponentUptime] = Field(description="In the order the page shows them.")


# What a public incident or maintenance window item shows as it is stored, the same in the public
# documents and in the managers' answers (which add ids, components and times of their own).
def _shown(item: StatusPageItem, *names: str) -> dict[str, Any]:
    return {"title": item.name or "", **{name: getattr(item, name) for name in ("status", *names, "updated_at")}}


def incident_fields(item: StatusPageItem) -> dict[str, Any]:
    return _shown(item, "impact", "started_at", "resolved_at")


def window_fields(item: StatusPageItem) -> dict[str, Any]:
    return _shown(item, "scheduled_start", "scheduled_end")
