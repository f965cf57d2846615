"""Incident templates of a status page: prepared title, body and component statuses that
`template_id` fills into a new public incident or an update (chalicelib.statuspage.incident_templates)."""

from __future__ import annotations

from chalicelib.api.operation import Idempotent, OperationGroup
from chalicelib.api.resource import Resource, each
from chalicelib.api.routes.status_pages import on_page
from chalicelib.statuspage import incident_templates
from chalicelib.statuspage.models import IncidentTemplateV1, TemplateCreate, TemplatePatch

api = OperationGroup(__name__, tag="status-pages")

_USE = (
    "Name one as template_id when opening a public incident or posting an update: it fills title, body, "
    "status, impact and component_statuses the request leaves out (an update takes no title); the request's "
    "own values win, field by field. component_statuses must name components of the page (400 otherwise)."
)


templates = Resource(
    api,
    "/api/v1/status-pages/{page_id}/templates",
    "template_id",
    IncidentTemplateV1,
    each(IncidentTemplateV1.of),
    read="status:read",
    write="status:write",
    key=on_page,
)
templates.listing(
    "listStatusIncidentTemplates",
    "List incident templates, by name",
    lambda call, _: incident_templates.list_templates(**on_page(call)),
    errors=(400, 404),
    description=_USE,
)
templates.create(
    "createStatusIncidentTemplate",
    "Add an incident template",
    TemplateCreate,
    templates.by_key(incident_templates.create_template),
    errors=(400, 404, 409),
    description=f"{_USE} At most {incident_templates.MAX_TEMPLATES} per page (409).",
    idempotent=Idempotent(place="page_id"),
)
templates.get("getStatusIncidentTemplate", "Get an incident template", incident_templates.get_template)
templates.update(
    "updateStatusIncidentTemplate",
    "Change an incident template",
    TemplatePatch,
    incident_templates.update_template,
    errors=(400, 404),
    description="Only the fields given change; null clears status or impact, {} the component statuses. "
    "Incidents already posted from it keep their words.",
)
templates.delete(
    "deleteStatusIncidentTemplate",
    "Delete an incident template",
    incident_templates.delete_template,
    description="Incidents already posted from it keep their words.",
)
