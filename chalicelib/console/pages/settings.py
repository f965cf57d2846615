"""Organization settings (`/app/settings`, owners and admins: the `admin` scope, as the settings
API's writes): the default time zone, the incident workflow (statuses and allowed moves, as an
editable table), SLA targets per severity, the fallback contacts, and links to integrations and
API keys. Others are refused the page (403), as the API refuses them the writes.

Each form is one settings operation of the API, through its request model and service function:
PATCH /api/v1/settings/organization (`set_time_zone`), PUT /api/v1/settings/workflow
(`WorkflowUpdate`, `save_workflow`: every status reachable, a resolved one, no status stuck open),
PUT /api/v1/settings/sla (`SlaSettingsUpdate.apply_to`, `save_sla_settings`) and PUT
/api/v1/settings/paging (`save_paging_settings`: active people only). A refused form comes back
as it was sent, the problem on its row.
"""

from __future__ import annotations

from typing import Any

from chalicelib.console import workflow_form
from chalicelib.console.form_problems import on_the_form
from chalicelib.console.people_choices import by_name, responders
from chalicelib.console.visits import app_path
from chalicelib.console.web import ConsolePages, Ctx, Page, Redirect
from chalicelib.errors import Forbidden, ValidationFailed
from chalicelib.incident import workflow_settings
from chalicelib.incident.settings_models import SlaSettingsUpdate, WorkflowUpdate
from chalicelib.organization.models import OrganizationSettingsPatch
from chalicelib.organization.service import get_organization, set_time_zone
from chalicelib.paging import fallback
from chalicelib.paging.settings_models import PagingSettingsUpdate
from chalicelib.settings import Settings
from chalicelib.zones import offered_zones

console = ConsolePages(
    __name__,
    notices={
        "settings_zone_saved": "Time zone saved. Everyone without a zone of their own sees times in it.",
        "settings_workflow_saved": "Workflow saved. Incidents move by it from now on.",
        "settings_sla_saved": "SLA targets saved. New incidents get them; open ones keep theirs.",
        "settings_fallback_saved": "Fallback contacts saved.",
    },
)

ADMIN = "admin"
LABELS = {
    "time_zone": "Default time zone",
    "initial": "Initial status",
    "statuses": "Statuses",
    "fallback_contacts": "Fallback contacts",
}


def _label(path: str) -> str | None:
    """The settings forms' labels for the paths the pages rename problems to."""
    if path in LABELS:
        return LABELS[path]
    parts = path.split("_")
    if path.startswith("status_") and len(parts) >= 3 and parts[1].isdigit():
        return f"Status row {int(parts[1]) + 1}, {'category' if parts[-1] == 'category' else 'name'}"
    if path.startswith("moves_") and parts[1].isdigit():
        return f"Status row {int(parts[1]) + 1}, may move to"
    if path.startswith("sla_") and len(parts) == 3:
        return f"{parts[1]}, {'acknowledge within' if parts[2] == 'ack' else 'resolve within'}"
    return None


def settings_page(ctx: Ctx) -> Page:
    """Every setting, as stored, or as a refused form sent it."""
    if not ctx.can(ADMIN):
        raise Forbidden("Only owners and admins change the organization's settings.")
    organization_id = ctx.organization_id
    organization = get_organization(organization_id=organization_id)
    stored = workflow_settings.incident_settings(organization_id=organization_id)
    contacts = fallback.paging_settings(organization_id=organization_id).fallback_contacts
    sent = ctx.value("form") if ctx.request.method == "POST" else ""  # the refused form, shown as sent
    workflow_rows, initial = (
        workflow_form.rows_sent(ctx) if sent == "workflow" else workflow_form.rows_of(stored.workflow)
    )
    chosen = ctx.values("fallback_contacts") if sent == "fallback" else [c.user_id for c in contacts]
    can_respond = responders(organization_id)
    ids = {person.user_id for person in can_respond}
    # Only people who can respond are offered; one set earlier who no longer can stays listed, to be untick.
    offered = by_name(can_respond + [c for c in contacts if c.user_id not in ids])
    context: dict[str, Any] = {
        "organization": organization,
        "zone": ctx.value("time_zone") if sent == "zone" else organization.time_zone,
        "zones": [(name, name) for name in offered_zones()],
        "rows": workflow_rows,
        "initial": initial,
        "categories": workflow_form.CATEGORY_CHOICES,
        "sla_rows": workflow_form.sla_rows_sent(ctx) if sent == "sla" else workflow_form.sla_rows(stored.sla),
        "people": offered,
        "chosen": chosen,
        "contacts": contacts,
    }
    return Page("console/settings/settings.html", "Settings", section="settings", labels=_label, context=context)


@console.page("/settings")
def show_settings(ctx: Ctx) -> Page:
    """The organization's settings (owners and admins)."""
    return settings_page(ctx)


def _back(notice: str, *, settings: Settings) -> Redirect:
    return Redirect(app_path("/settings", settings=settings), notice=notice)


@console.action("/settings/time-zone", scope=ADMIN, on_error=settings_page)
def save_time_zone(ctx: Ctx) -> Redirect:
    """The organization's default time zone (as PATCH /api/v1/settings/organization)."""
    body = ctx.model(OrganizationSettingsPatch, {"time_zone": ctx.value("time_zone")})
    if body.time_zone is None:
        raise ValidationFailed.for_field("time_zone", "choose a time zone")
    set_time_zone(organization_id=ctx.organization_id, time_zone=body.time_zone)
    return _back("settings_zone_saved", settings=ctx.settings)


@console.action("/settings/workflow", scope=ADMIN, on_error=settings_page)
def save_workflow(ctx: Ctx) -> Redirect:
    """Replace the incident workflow (as PUT /api/v1/settings/workflow)."""
    body, kept_rows = workflow_form.workflow_body(ctx)
    names = {status["name"]: row for status, row in zip(body["statuses"], kept_rows, strict=True)}
    try:
        workflow = ctx.model(WorkflowUpdate, body).to_workflow()
    except ValidationFailed as error:
        raise workflow_form.workflow_problems(error, kept_rows, names) from None
    workflow_settings.save_workflow(organization_id=ctx.organization_id, workflow=workflow)
    return _back("settings_workflow_saved", settings=ctx.settings)


@console.action("/settings/sla", scope=ADMIN, on_error=settings_page)
def save_sla(ctx: Ctx) -> Redirect:
    """Acknowledge and resolve targets per severity (as PUT /api/v1/settings/sla)."""
    organization_id = ctx.organization_id
    try:
        body = ctx.model(SlaSettingsUpdate, workflow_form.sla_body(ctx))
        current = workflow_settings.incident_settings(organization_id=organization_id).sla
        merged = body.apply_to(current)
    except ValidationFailed as error:
        raise workflow_form.sla_problems(error) from None
    workflow_settings.save_sla_settings(organization_id=organization_id, sla=merged)
    return _back("settings_sla_saved", settings=ctx.settings)


@console.action("/settings/fallback", scope=ADMIN, on_error=settings_page)
def save_fallback(ctx: Ctx) -> Redirect:
    """The fallback contacts (as PUT /api/v1/settings/paging): the people paged when an incident's
    escalation reaches nobody. The ones already set keep their order; new ones follow."""
    organization_id = ctx.organization_id
    ticked = ctx.values("fallback_contacts")
    current = [c.user_id for c in fallback.paging_settings(organization_id=organization_id).fallback_contacts]
    ordered = [user_id for user_id in current if user_id in ticked] + [u for u in ticked if u not in current]
    try:
        body = ctx.model(PagingSettingsUpdate, {"fallback_contacts": ordered})
        fallback.save_paging_settings(organization_id=organization_id, fallback_contacts=list(body.fallback_contacts))
    except ValidationFailed as error:  # fallback_contacts.2 -> the group of checkboxes (the message names who)
        raise on_the_form(error, lambda path: path.split(".")[0]) from None
    return _back("settings_fallback_saved", settings=ctx.settings)
