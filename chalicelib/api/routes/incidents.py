"""Incidents: create, list, read, update, status, acknowledge, comment."""

from __future__ import annotations

import re

from chalicelib.api.idempotent import IDEMPOTENT
from chalicelib.api.operation import Call, Idempotent, OperationGroup
from chalicelib.change.models import recent_change_v1
from chalicelib.change.service import recent_changes
from chalicelib.errors import NotFound
from chalicelib.incident import commands, listing, service
from chalicelib.incident.models import (
    AcknowledgeResultV1,
    CommentCreate,
    CommentResultV1,
    IncidentCreate,
    IncidentDetailV1,
    IncidentListQuery,
    IncidentListV1,
    IncidentUpdate,
    IncidentV1,
    StatusChange,
)
from chalicelib.incident.presenters import incident_detail_v1, incident_v1

api = OperationGroup(__name__, tag="incidents")

INCIDENT_NUMBER = re.compile(r"^INC-\d{4}-\d{1,12}$")
# The spec names the parameter {id}; its value is the incident number (INC-<year>-<n>).
ITEM = "/api/v1/incidents/{id}"


def incident_number_of(call: Call) -> str:
    given = call.path["id"]
    number = given.upper()
    if not INCIDENT_NUMBER.match(number):
        raise NotFound(f"Incident {given} was not found.")
    return number


@api.operation(
    "POST",
    "/api/v1/incidents",
    operation_id="createIncident",
    summary="Create an incident",
    description=f"{IDEMPOTENT} assigned_to and team may not reflect final state yet: assignment and "
    "notifications finish afterwards.",
    scope="incidents:write",
    body=IncidentCreate,
    response=IncidentV1,
    status=201,
    errors=(409,),
    headers=("Idempotency-Key",),
    idempotent=Idempotent(),
)
def create_incident(call: Call) -> IncidentV1:
    body: IncidentCreate = call.body
    request = service.NewIncident(
        title=body.title, service_keys=list(body.service_ids), description=body.description, severity=body.severity
    )
    record = service.create_incident(
        organization_id=call.principal.organization_id,
        request=request,
        now=call.now,
        actor=call.principal.actor,
        settings=call.settings,
    )
    return incident_v1(record)


@api.operation(
    "GET",
    "/api/v1/incidents",
    operation_id="listIncidents",
    summary="List incidents, newest first",
    description="Without a status filter only incidents still in progress are listed; resolved and closed "
    "incidents appear when the status filter names them. Repeat status, severity and urgency to filter on several.",
    scope="incidents:read",
    query=IncidentListQuery,
    response=IncidentListV1,
)
def list_incidents(call: Call) -> IncidentListV1:
    page = listing.list_incidents(organization_id=call.principal.organization_id, query=call.query)
    return IncidentListV1(
        items=[incident_v1(record) for record in page.items],
        total=page.total,
        has_more=page.has_more,
        next_offset=page.next_offset,
    )


@api.operation(
    "GET",
    ITEM,
    operation_id="getIncident",
    summary="Get an incident with its timeline (newest first) and the changes just before it",
    scope="incidents:read",
    response=IncidentDetailV1,
    errors=(404,),
)
def get_incident(call: Call) -> IncidentDetailV1:
    found = service.get_incident_detail(
        organization_id=call.principal.organization_id, incident_number=incident_number_of(call)
    )
    changes = recent_changes(
        organization_id=call.principal.organization_id,
        service_keys=[str(key) for key in found.incident.service_keys or []],
        opened_at=found.incident.created_at,
        now=call.now,
    )
    return incident_detail_v1(found, [recent_change_v1(change) for change in changes])


@api.operation(
    "PATCH",
    ITEM,
    operation_id="updateIncident",
    summary="Update title, description, severity or assignee (never status)",
    scope="incidents:write",
    body=IncidentUpdate,
    response=IncidentV1,
    errors=(404,),
)
def update_incident(call: Call) -> IncidentV1:
    body: IncidentUpdate = call.body
    record = commands.update_incident(
        organization_id=call.principal.organization_id,
        incident_number=incident_number_of(call),
        changes=body.changes(),
        now=call.now,
        principal=call.principal,
    )
    return incident_v1(record)


@api.operation(
    "POST",
    ITEM + "/status",
    operation_id="changeIncidentStatus",
    summary="Move an incident to another status of the organization's workflow",
    scope="incidents:write",
    body=StatusChange,
    response=IncidentV1,
    errors=(404,),
)
def change_status(call: Call) -> IncidentV1:
    body: StatusChange = call.body
    record = commands.change_status(
        organization_id=call.principal.organization_id,
        incident_number=incident_number_of(call),
        status=body.status,
        comment=body.comment,
        now=call.now,
        principal=call.principal,
    )
    return incident_v1(record)


@api.operation(
    "POST",
    ITEM + "/acknowledge",
    operation_id="acknowledgeIncident",
    summary="Acknowledge: assigns the caller, stamps acknowledged_at once, stops escalation",
    description="A triggered incident moves to investigating; any other status is kept. Acknowledging "
    "again answers 200 with the first acknowledged_at. A resolved or closed incident is 409 INCIDENT_RESOLVED "
    "(details: status, resolved_at, resolved_by) and nothing changes, its acknowledge SLA included.",
    scope="incidents:write",
    response=AcknowledgeResultV1,
    errors=(404, 409),
)
def acknowledge(call: Call) -> AcknowledgeResultV1:
    result = commands.acknowledge(
        organization_id=call.principal.organization_id,
        incident_number=incident_number_of(call),
        principal=call.principal,
        now=call.now,
    )
    return AcknowledgeResultV1(
        incident_number=result.incident.incident_number,
        acknowledged=result.incident.acknowledged_at is not None,
        acknowledged_at=result.incident.acknowledged_at,
    )


@api.operation(
    "POST",
    ITEM + "/events",
    operation_id="addIncidentComment",
    summary="Add a comment to the incident's timeline",
    scope="incidents:write",
    body=CommentCreate,
    response=CommentResultV1,
    errors=(404,),
)
def add_comment(call: Call) -> CommentResultV1:
    body: CommentCreate = call.body
    number = incident_number_of(call)
    entry = commands.add_comment(
        organization_id=call.principal.organization_id,
        incident_number=number,
        comment=body.comment,
        now=call.now,
        principal=call.principal,
    )
    return CommentResultV1(incident_number=number, comment=body.comment, created_at=entry.created_at)
