"""Insights: incident metrics, responder load and noisy alerts, read from the rollups the workers
keep (docs/INSIGHTS.md). Reads only: a bounded number of items whatever the history."""

from __future__ import annotations

from typing import Any

from chalicelib.api.operation import Call, OperationGroup
from chalicelib.insights import responders, service
from chalicelib.insights.models import (
    AlertInsightsQuery,
    AlertInsightsV1,
    IncidentInsightsQuery,
    IncidentInsightsV1,
    InsightsSettingsIn,
    InsightsSettingsV1,
    ResponderInsightsQuery,
    ResponderInsightsV1,
)

api = OperationGroup(__name__, tag="insights")

SCOPE = "insights:read"
DEFINITIONS = " Definitions: docs/INSIGHTS.md."


@api.operation(
    "GET",
    "/api/v1/insights/incidents",
    operation_id="getIncidentInsights",
    summary="Incident metrics per day, week or month: counts, MTTA and MTTR, SLA, escalations",
    scope=SCOPE,
    query=IncidentInsightsQuery,
    response=IncidentInsightsV1,
    errors=(400,),
    description="Incidents opened in the range (since/until, at most 400 days), cut into buckets of `interval` "
    "in `time_zone` (default: the organization's), optionally grouped by service, team or severity and "
    "filtered by services, teams, severities and urgency. Each incident's figures belong to the bucket it "
    "was opened in. MTTA/MTTR: mean, p50 and p90 in seconds (percentiles from a fixed histogram)." + DEFINITIONS,
)
def incident_insights(call: Call) -> dict[str, Any]:
    return service.incident_insights(organization_id=call.principal.organization_id, query=call.query, now=call.now)


@api.operation(
    "GET",
    "/api/v1/insights/responders",
    operation_id="getResponderInsights",
    summary="Responder load: pages, interruptions by band of the person's local hour, hours on call",
    scope=SCOPE,
    query=ResponderInsightsQuery,
    response=ResponderInsightsV1,
    errors=(400,),
    description="Per person with activity or a shift in the range: pages received by channel and urgency, "
    "incidents acknowledged and resolved, pages split by the band of the person's own local hour (working, "
    "evening, sleep: the organization's bands), and hours on call from the schedules' final shifts (overrides "
    "and swaps included) split into working hours, off-hours and weekends." + DEFINITIONS,
)
def responder_insights(call: Call) -> dict[str, Any]:
    return responders.responder_insights(organization_id=call.principal.organization_id, query=call.query, now=call.now)


@api.operation(
    "GET",
    "/api/v1/insights/alerts",
    operation_id="getAlertInsights",
    summary="Noisy alerts: top sources, services and dedup keys, flapping, suppressed and dropped",
    scope=SCOPE,
    query=AlertInsightsQuery,
    response=AlertInsightsV1,
    errors=(400,),
    description="The alert sources, services and dedup keys (or titles) that raised the most alerts and "
    "incidents in the range (events received are counted by when they arrived), how many alerts their "
    "source resolved within flap_minutes of opening (flapping), and how many events event rules and "
    "maintenance windows suppressed or dropped: what to tune." + DEFINITIONS,
)
def alert_insights(call: Call) -> dict[str, Any]:
    return service.alert_insights(organization_id=call.principal.organization_id, query=call.query, now=call.now)


@api.operation(
    "GET",
    "/api/v1/insights/settings",
    operation_id="getInsightsSettings",
    summary="The organization's working-hours, evening and sleep bands",
    scope=SCOPE,
    response=InsightsSettingsV1,
    description="The bands incident metrics (opened outside working hours), responder load (interruptions) "
    "and hours on call are cut by; the defaults unless an admin set them." + DEFINITIONS,
)
def get_insights_settings(call: Call) -> dict[str, Any]:
    return {"bands": service.bands_of(call.principal.organization_id).to_dict()}


@api.operation(
    "PUT",
    "/api/v1/insights/settings",
    operation_id="putInsightsSettings",
    summary="Set the organization's working-hours, evening and sleep bands",
    scope="admin",
    body=InsightsSettingsIn,
    response=InsightsSettingsV1,
    errors=(400,),
    description="Whole hours 0-24 (working and sleep hours may cross midnight) and working days (0 is Monday); "
    "what is left out takes its default. Every figure read afterwards uses them (the rollups are hourly)."
    + DEFINITIONS,
)
def put_insights_settings(call: Call) -> dict[str, Any]:
    body: InsightsSettingsIn = call.body
    bands = service.set_bands(organization_id=call.principal.organization_id, bands=body.bands.model_dump())
    return {"bands": bands.to_dict()}
