"""The public status documents (spec: "Public status resources"). Nothing internal appears here:
no organization, no linked internal incident, no people."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import Field

from chalicelib.model_base import ApiModel, SingleLine
from chalicelib.statuspage.rules import ComponentStatus, Impact, IncidentStatus, MaintenanceStatus


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
