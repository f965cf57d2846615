"""A status page's incident templates, managed: the list (name, title, status, impact, component
statuses), a new one, each one changed or deleted (asking first).

Writes call chalicelib.statuspage.incident_templates with the form validated by the API's own
request models (TemplateCreate, TemplatePatch) under the API's scopes: status:read to see,
status:write to change. A component status is one select per component ("no change" + the
statuses), so the form names components only from the page's own list.
"""

from __future__ import annotations

from typing import Any

from chalicelib.console.status_forms import (
    COMPONENT_STATUSES,
    IMPACTS,
    SCOPE,
    draft,
    options,
    page_item,
    page_path,
)
from chalicelib.console.web import Confirmation, ConsolePages, Ctx, Page, Redirect
from chalicelib.statuspage import incident_templates, structure
from chalicelib.statuspage.models import TemplateCreate, TemplatePatch
from chalicelib.statuspage.repository import item_id
from chalicelib.statuspage.rules import INCIDENT_STATUSES
from chalicelib.statuspage.tables import StatusPageItem

console = ConsolePages(
    __name__,
    notices={
        "status_template_added": "Template added. Pick it when posting an incident or an update.",
        "status_template_changed": "Template saved.",
        "status_template_deleted": "Template deleted.",
    },
)

# One select per component, named by this prefix and the component's id.
COMPONENT_FIELD = "component_status."


def _component_statuses(ctx: Ctx) -> dict[str, str]:
    """The components whose select says something other than "no change" (blank)."""
    return {
        name.removeprefix(COMPONENT_FIELD): values[0].strip()
        for name, values in ctx.form.items()
        if name.startswith(COMPONENT_FIELD) and values and values[0].strip()
    }


def _fields(ctx: Ctx) -> dict[str, Any]:
    """The form as the API's body: a blank status or impact is null (the template sets none)."""
    return {
        "name": ctx.value("name"),
        "title": ctx.value("title"),
        "body": ctx.value("body"),
        "status": ctx.value("status") or None,
        "impact": ctx.value("impact") or None,
        "component_statuses": _component_statuses(ctx),
    }


def _values(template: StatusPageItem) -> dict[str, str]:
    """A template as its form shows it."""
    values = {
        "name": template.name or "",
        "title": template.title or "",
        "body": template.body or "",
        "status": template.status or "",
        "impact": template.impact or "",
    }
    return values | {COMPONENT_FIELD + cid: status for cid, status in (template.component_statuses or {}).items()}


@console.page("/status-pages/{page_id}/templates")
def show_templates(ctx: Ctx) -> Page:
    """A status page's incident templates."""
    page = page_item(ctx)
    components = [(item_id(c), c.name or "") for c in structure.list_structure(page_id=page.page_id).components]
    names = dict(components)
    found = incident_templates.list_templates(page_id=page.page_id)
    return Page(
        "console/status_pages/templates.html",
        f"Incident templates · {page.name or 'Status page'}",
        section="status",
        context={
            "page": page,
            "page_id": page.page_id,
            "here": page_path(page.page_id, settings=ctx.settings),
            "templates": [
                {
                    "item": template,
                    "id": item_id(template),
                    # A component deleted since is left out when the template is used: not shown either.
                    "values": _values(template),
                    "statuses": [
                        (names[cid], status)
                        for cid, status in (template.component_statuses or {}).items()
                        if cid in names
                    ],
                }
                for template in found
            ],
            "limit": incident_templates.MAX_TEMPLATES,
            "components": components,
            "component_field": COMPONENT_FIELD,
            "component_status_options": options(COMPONENT_STATUSES),
            "incident_status_options": options(INCIDENT_STATUSES),
            "impact_options": options(IMPACTS),
            "draft": draft(ctx),
            "posted": ctx.value("form") if ctx.request.method == "POST" else "",
        },
    )


@console.action("/status-pages/{page_id}/templates", scope=SCOPE, on_error=show_templates)
def add_template(ctx: Ctx) -> Redirect:
    """Add an incident template."""
    page = page_item(ctx)
    body = ctx.model(TemplateCreate, _fields(ctx))
    incident_templates.create_template(page_id=page.page_id, now=ctx.now, **dict(body))
    return Redirect(page_path(page.page_id, "/templates", settings=ctx.settings), notice="status_template_added")


@console.action("/status-pages/{page_id}/templates/{template_id}", scope=SCOPE, on_error=show_templates)
def change_template(ctx: Ctx) -> Redirect:
    """Change an incident template (every field as the form shows it)."""
    page = page_item(ctx)
    body = ctx.model(TemplatePatch, _fields(ctx))
    incident_templates.update_template(
        page_id=page.page_id, template_id=ctx.path["template_id"], now=ctx.now, **body.changes()
    )
    return Redirect(page_path(page.page_id, "/templates", settings=ctx.settings), notice="status_template_changed")


@console.action(
    "/status-pages/{page_id}/templates/{template_id}/delete",
    scope=SCOPE,
    on_error=show_templates,
    confirm=Confirmation(
        question="Delete this incident template?",
        consequence="It leaves the Template pickers of this page's forms. Incidents already posted from it "
        "keep their words.",
        button="Delete template",
    ),
)
def delete_template(ctx: Ctx) -> Redirect:
    """Delete an incident template."""
    page = page_item(ctx)
    incident_templates.delete_template(page_id=page.page_id, template_id=ctx.path["template_id"])
    return Redirect(page_path(page.page_id, "/templates", settings=ctx.settings), notice="status_template_deleted")
