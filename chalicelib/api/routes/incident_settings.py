"""The organization's incident workflow, SLA and paging settings (admin).

Each is one part of the organization's incident settings: anyone who may read incidents reads it,
an admin replaces it (409 when the organization changed at the same time)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from chalicelib.api.operation import Call, OperationGroup
from chalicelib.incident import workflow_settings
from chalicelib.incident.settings_models import SlaSettingsUpdate, SlaSettingsV1, WorkflowUpdate, WorkflowV1
from chalicelib.incident.workflow_settings import IncidentSettings
from chalicelib.paging import fallback
from chalicelib.paging.settings_models import PagingSettingsUpdate, PagingSettingsV1

api = OperationGroup(__name__, tag="settings")

Part = Callable[[IncidentSettings], Any]
Save = Callable[[str, Any], IncidentSettings]  # the organization and the parsed body -> the saved settings


def _settings_part(
    name: str,
    part: Part,
    response: Any,
    body: type[BaseModel],
    save: Save,
    *,
    read: tuple[str, str],
    write: tuple[str, str],
    description: str,
) -> None:
    """GET and PUT /api/v1/settings/<name>; `read` and `write` are each an operationId and summary."""
    path = f"/api/v1/settings/{name}"

    @api.operation("GET", path, operation_id=read[0], summary=read[1], scope="incidents:read", response=response)
    def get(call: Call) -> Any:
        return response.of(part(workflow_settings.incident_settings(organization_id=call.principal.organization_id)))

    @api.operation(
        "PUT",
        path,
        operation_id=write[0],
        summary=write[1],
        description=description,
        scope="admin",
        body=body,
        response=response,
        errors=(409,),
    )
    def put(call: Call) -> Any:
        return response.of(part(save(call.principal.organization_id, call.body)))


def _save_workflow(organization_id: str, body: WorkflowUpdate) -> IncidentSettings:
    return workflow_settings.save_workflow(organization_id=organization_id, workflow=body.to_workflow())


def _save_sla(organization_id: str, body: SlaSettingsUpdate) -> IncidentSettings:
    current = workflow_settings.incident_settings(organization_id=organization_id).sla
    return workflow_settings.save_sla_settings(organization_id=organization_id, sla=body.apply_to(current))


_settings_part(
    "workflow",
    lambda settings: settings.workflow,
    WorkflowV1,
    WorkflowUpdate,
    _save_workflow,
    read=("getWorkflow", "The incident statuses, their categories and the allowed moves"),
    write=("replaceWorkflow", "Replace the incident workflow"),
    description="Every status must be reachable from the initial status, and at least one status must be "
    "in the resolved category. Incidents in a status the new workflow drops can still move to any status.",
)
_settings_part(
    "sla",
    lambda settings: settings.sla,
    SlaSettingsV1,
    SlaSettingsUpdate,
    _save_sla,
    read=("getSlaSettings", "Acknowledge and resolve targets per severity"),
    write=("updateSlaSettings", "Set acknowledge and resolve targets for some severities"),
    description="Fields left out keep their value; null clears one. Creating an incident whose severity has "
    "no complete setting answers 500 INTERNAL_ERROR, as the spec says.",
)


# The fallback contacts are the paging domain's own settings (not a part of IncidentSettings), and only
# an admin reads them: declared apart.
@api.operation(
    "GET",
    "/api/v1/settings/paging",
    operation_id="getPagingSettings",
    summary="Who is paged when an incident's escalation reaches nobody (the fallback contacts)",
    scope="admin",
    response=PagingSettingsV1,
)
def get_paging(call: Call) -> PagingSettingsV1:
    return PagingSettingsV1.of(fallback.paging_settings(organization_id=call.principal.organization_id))


@api.operation(
    "PUT",
    "/api/v1/settings/paging",
    operation_id="updatePagingSettings",
    summary="Set the fallback contacts",
    description="Replaces the list. When an incident's service has no escalation policy, or an escalation level "
    "reaches nobody now, the incident says so (its paging field and timeline) and these people are paged through "
    "their own notification rules. Each must be an active user of the organization (400 VALIDATION_ERROR naming "
    "fallback_contacts.<index> otherwise); [] removes them.",
    scope="admin",
    body=PagingSettingsUpdate,
    response=PagingSettingsV1,
    errors=(409,),
)
def update_paging(call: Call) -> PagingSettingsV1:
    body: PagingSettingsUpdate = call.body
    saved = fallback.save_paging_settings(
        organization_id=call.principal.organization_id, fallback_contacts=list(body.fallback_contacts)
    )
    return PagingSettingsV1.of(saved)
