"""Alerts: every accepted inbound event creates or updates one. Lists and one alert, read-only."""

from __future__ import annotations

from chalicelib.alert import listing
from chalicelib.alert import repository as alert_repository
from chalicelib.alert.models import AlertListQuery, AlertListV1, AlertV1, IncidentAlertQuery
from chalicelib.api.operation import Call, OperationGroup
from chalicelib.api.routes.incidents import incident_number_of
from chalicelib.catalog.service import find_service
from chalicelib.errors import NotFound, ValidationFailed
from chalicelib.incident import repository

api = OperationGroup(__name__, tag="alerts")

SCOPE = "incidents:read"


def _page(page: listing.Page[listing.AlertRecord]) -> AlertListV1:
    return AlertListV1(
        items=[AlertV1.of(record) for record in page.items],
        total=page.total,
        has_more=page.has_more,
        next_offset=page.next_offset,
    )


@api.operation(
    "GET",
    "/api/v1/alerts",
    operation_id="listAlerts",
    summary="List alerts, newest first (by first received)",
    scope=SCOPE,
    query=AlertListQuery,
    response=AlertListV1,
    errors=(400,),
    description="Every accepted inbound event creates an alert or counts one more event on the alert its "
    "dedup key names. Filters: service_id (SER-nnnnn or svc_ key), status (triggered, resolved, suppressed; "
    "repeat for several), incident_number, since/until on first_received_at (without either: the last 30 days).",
)
def list_alerts(call: Call) -> AlertListV1:
    query: AlertListQuery = call.query
    organization_id = call.principal.organization_id
    service_key = None
    if query.service_id:
        service = find_service(organization_id=organization_id, service_ref=query.service_id)
        if service is None:
            raise ValidationFailed.for_field("service_id", "no such service in this organization")
        service_key = service.service_key
    page = listing.list_alerts(organization_id=organization_id, query=query, service_key=service_key, now=call.now)
    return _page(page)


@api.operation(
    "GET",
    "/api/v1/alerts/{alert_id}",
    operation_id="getAlert",
    summary="Get an alert",
    scope=SCOPE,
    response=AlertV1,
    errors=(404,),
)
def get_alert(call: Call) -> AlertV1:
    alert_id = call.path["alert_id"]
    record = (
        alert_repository.get_alert(call.principal.organization_id, alert_id) if alert_id.startswith("alr_") else None
    )
    if record is None:
        raise NotFound(f"Alert {alert_id} was not found.")
    return AlertV1.of(record)


@api.operation(
    "GET",
    "/api/v1/incidents/{id}/alerts",
    operation_id="listIncidentAlerts",
    summary="List the alerts of an incident, newest first",
    scope=SCOPE,
    query=IncidentAlertQuery,
    response=AlertListV1,
    errors=(404,),
    description="The alert that opened the incident, and those its dedup key or the service's alert grouping "
    "added. The incident resolves when its last triggered alert resolves (for sources that send recoveries).",
)
def list_incident_alerts(call: Call) -> AlertListV1:
    query: IncidentAlertQuery = call.query
    organization_id = call.principal.organization_id
    number = incident_number_of(call)
    repository.get_incident(organization_id, number)  # 404 for an unknown incident
    return _page(listing.incident_alerts(organization_id=organization_id, incident_number=number, query=query))
