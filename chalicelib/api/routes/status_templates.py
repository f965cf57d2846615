"""Incident templates of a status page: prepared title, body and component statuses that
`template_id` fills into a new public incident or an update (chalicelib.statuspage.incident_templates)."""

from __future__ import annotations

from typing import Any

from chalicelib.api.idempotent import IDEMPOTENT
from chalicelib.api.operation import Call, Idempotent, OperationGroup
from chalicelib.api.routes.status_pages import fields
from chalicelib.oncall.models import DeletedV1
from chalicelib.pagination import Page, PageQuery, paginate
from chalicelib.statuspage import incident_templates
from chalicelib.statuspage.models import IncidentTemplateV1, TemplateCreate, TemplatePatch
from chalicelib.statuspage.repository import get_page

api = OperationGroup(__name__, tag="status-pages")

TEMPLATES = "/api/v1/status-pages/{page_id}/templates"
TEMPLATE = TEMPLATES + "/{template_id}"
_USE = (
    "Name one as template_id when opening a public incident or posting an update: it fills title, body, "
    "status, impact and component_statuses the request leaves out (an update takes no title); the request's "
    "own values win, field by field. component_statuses must name components of the page (400 otherwise)."
)


def _page_id(call: Call) -> str:
    """The page named in the path, after checking it belongs to the caller's organization (404)."""
    return get_page(organization_id=call.principal.organization_id, page_id=call.path["page_id"]).page_id


@api.operation(
    "GET",
    TEMPLATES,
    operation_id="listStatusIncidentTemplates",
    summary="List incident templates, by name",
    scope="status:read",
    query=PageQuery,
    response=Page[IncidentTemplateV1],
    errors=(400, 404),
    description=_USE,
)
def list_templates(call: Call) -> Any:
    query: PageQuery = call.query
    found = incident_templates.list_templates(page_id=_page_id(call))
    return paginate([IncidentTemplateV1.of(t) for t in found], limit=query.limit, offset=query.offset)


@api.operation(
    "POST",
    TEMPLATES,
    operation_id="createStatusIncidentTemplate",
    summary="Add an incident template",
    scope="status:write",
    body=TemplateCreate,
    response=IncidentTemplateV1,
    status=201,
    errors=(400, 404, 409),
    headers=("Idempotency-Key",),
    description=f"{_USE} At most {incident_templates.MAX_TEMPLATES} per page (409). {IDEMPOTENT}",
    idempotent=Idempotent(place="page_id"),
)
def create_template(call: Call) -> IncidentTemplateV1:
    created = incident_templates.create_template(page_id=_page_id(call), now=call.now, **fields(call))
    return IncidentTemplateV1.of(created)


@api.operation(
    "GET",
    TEMPLATE,
    operation_id="getStatusIncidentTemplate",
    summary="Get an incident template",
    scope="status:read",
    response=IncidentTemplateV1,
    errors=(404,),
)
def get_template(call: Call) -> IncidentTemplateV1:
    page_id = _page_id(call)
    return IncidentTemplateV1.of(incident_templates.get_template(page_id=page_id, template_id=call.path["template_id"]))


@api.operation(
    "PATCH",
    TEMPLATE,
    operation_id="updateStatusIncidentTemplate",
    summary="Change an incident template",
    scope="status:write",
    body=TemplatePatch,
    response=IncidentTemplateV1,
    errors=(400, 404),
    description="Only the fields given change; null clears status or impact, {} the component statuses. "
    "Incidents already posted from it keep their words.",
)
def update_template(call: Call) -> IncidentTemplateV1:
    template_id = call.path["template_id"]
    return IncidentTemplateV1.of(
        incident_templates.update_template(
            page_id=_page_id(call), template_id=template_id, now=call.now, **fields(call)
        )
    )


@api.operation(
    "DELETE",
    TEMPLATE,
    operation_id="deleteStatusIncidentTemplate",
    summary="Delete an incident template",
    scope="status:write",
    response=DeletedV1,
    errors=(404,),
    description="Incidents already posted from it keep their words.",
)
def delete_template(call: Call) -> DeletedV1:
    incident_templates.delete_template(page_id=_page_id(call), template_id=call.path["template_id"])
    return DeletedV1(id=call.path["template_id"], deleted=True)
