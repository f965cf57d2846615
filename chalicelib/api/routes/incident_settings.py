"""The organization's incident workflow, SLA and paging settings (admin)."""

from __future__ import annotations

from chalicelib.api.operation import Call, OperationGroup
from chalicelib.incident import workflow_settings
from chalicelib.incident.settings_models import SlaSettingsUpdate, SlaSettingsV1, WorkflowUpdate, WorkflowV1
from chalicelib.paging import fallback
from chalicelib.paging.settings_models import PagingSettingsUpdate, PagingSettingsV1

api = OperationGroup(__name__, tag="settings")


@api.operation(
    "GET",
    "/api/v1/settings/workflow",
    operation_id="getWorkflow",
    summary="The incident statuses, their categories and the allowed moves",
    scope="incidents:read",
    response=WorkflowV1,
)
def get_workflow(call: Call) -> WorkflowV1:
    return WorkflowV1.of(workflow_settings.incident_settings(organization_id=call.principal.organization_id).workflow)


@api.operation(
    "PUT",
    "/api/v1/settings/workflow",
    operation_id="replaceWorkflow",
    summary="Replace the incident workflow",
    description="Every status must be reachable from the initial status, and at least one status must be "
    "in the resolved category. Incidents in a status the new workflow drops can still move to any status.",
    scope="admin",
    body=WorkflowUpdate,
    response=WorkflowV1,
    errors=(409,),
)
def replace_workflow(call: Call) -> WorkflowV1:
    body: WorkflowUpdate = call.body
    saved = workflow_settings.save_workflow(organization_id=call.principal.organization_id, workflow=body.to_workflow())
    return WorkflowV1.of(saved.workflow)


@api.operation(
    "GET",
    "/api/v1/settings/sla",
    operation_id="getSlaSettings",
    summary="Acknowledge and resolve targets per severity",
    scope="incidents:read",
    response=SlaSettingsV1,
)
def get_sla(call: Call) -> SlaSettingsV1:
    return SlaSettingsV1.of(workflow_settings.incident_settings(organization_id=call.principal.organization_id).sla)


@api.operation(
    "PUT",
    "/api/v1/settings/sla",
    operation_id="updateSlaSettings",
    summary="Set acknowledge and resolve targets for some severities",
    description="Fields left out keep their value; null clears one. Creating an incident whose severity has "
    "no complete setting answers 500 INTERNAL_ERROR, as the spec says.",
    scope="admin",
    body=SlaSettingsUpdate,
    response=SlaSettingsV1,
    errors=(409,),
)
def update_sla(call: Call) -> SlaSettingsV1:
    body: SlaSettingsUpdate = call.body
    current = workflow_settings.incident_settings(organization_id=call.principal.organization_id).sla
    saved = workflow_settings.save_sla_settings(
        organization_id=call.principal.organization_id, sla=body.apply_to(current)
    )
    return SlaSettingsV1.of(saved.sla)


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
