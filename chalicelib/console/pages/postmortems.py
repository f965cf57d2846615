"""Postmortems: the organization's list, and the postmortem of an incident (create, edit the
structured fields, preview the rendered report, move it draft -> in_review -> published).

Every write is the API's: `postmortem.service.create_postmortem` / `update_postmortem` with the
body validated by the API's `PostmortemCreate` / `PostmortemPatch`, under the same scope
(postmortems:write). The edit form carries the version it showed, so a save over someone
else's newer save is a 409, never a silent overwrite.
"""

from __future__ import annotations

from chalicelib.console import postmortem_form as form
from chalicelib.console.visits import app_path
from chalicelib.console.web import ConsolePages, Ctx, Page, Redirect
from chalicelib.errors import NotFound, ValidationFailed
from chalicelib.incident import repository
from chalicelib.incident.tables import IncidentRecord
from chalicelib.pagination import paginate
from chalicelib.postmortem import rules, service
from chalicelib.postmortem.models import INCIDENT_NUMBER, PostmortemCreate, PostmortemPatch
from chalicelib.postmortem.tables import PostmortemRecord
from chalicelib.settings import Settings

console = ConsolePages(
    __name__,
    notices={
        "postmortem_created": "Postmortem created as a draft.",
        "postmortem_saved": "Postmortem saved.",
        "postmortem_unchanged": "Nothing changed, so nothing was saved.",
        "postmortem_moved": "Postmortem status changed.",
    },
)

PAGE_SIZE = 25
SCOPE = "postmortems:write"
# The buttons of each status move, in the order they are offered.
MOVE_LABELS: dict[str, str] = {"in_review": "Send for review", "published": "Publish", "draft": "Back to draft"}


def _offset(ctx: Ctx) -> int:
    raw = ctx.arg("offset", "0")
    if not raw.isdigit() or len(raw) > 9:
        raise ValidationFailed.for_field("offset", "must be a whole number, 0 or more")
    return int(raw)


@console.page("/postmortems")
def list_postmortems(ctx: Ctx) -> Page:
    """Every postmortem of the organization, newest first."""
    status = ctx.arg("status")
    if status and status not in rules.STATUSES:
        raise ValidationFailed.for_field("status", f"must be one of {', '.join(rules.STATUSES)}")
    found = service.list_postmortems(organization_id=ctx.organization_id, status=status or None)
    window = paginate(found, limit=PAGE_SIZE, offset=_offset(ctx))
    return Page(
        "console/postmortems/list.html",
        "Postmortems",
        section="postmortems",
        context={
            "postmortems": window.items,
            "total": window.total,
            "next_offset": window.next_offset,
            "previous_offset": max(0, _offset(ctx) - PAGE_SIZE) if _offset(ctx) > 0 else None,
            "status": status,
            "statuses": rules.STATUSES,
        },
    )


def _incident(ctx: Ctx) -> IncidentRecord:
    number = ctx.path["number"]
    if not INCIDENT_NUMBER.match(number):
        raise NotFound(f"Incident {number[:64]} was not found.")
    return repository.get_incident(ctx.organization_id, number)


def _postmortem(ctx: Ctx, incident: IncidentRecord) -> PostmortemRecord | None:
    try:
        return service.get_postmortem_for_incident(
            organization_id=ctx.organization_id, incident_number=incident.incident_number
        )
    except NotFound:
        return None


def _here(incident_number: str, *, settings: Settings) -> str:
    return app_path(f"/incidents/{incident_number}/postmortem", settings=settings)


def _page(
    ctx: Ctx,
    *,
    state: form.FormState | None = None,
    preview: list[form.ReportPart] | None = None,
) -> Page:
    incident = _incident(ctx)
    record = _postmortem(ctx, incident)
    title = f"Postmortem {record.postmortem_number}" if record else f"Postmortem of {incident.incident_number}"
    moves = [] if record is None else [m for m in MOVE_LABELS if m in rules.ALLOWED_MOVES.get(record.status, ())]
    return Page(
        "console/postmortems/page.html",
        title,
        section="postmortems",
        context={
            "incident": incident,
            "postmortem": record,
            "report": form.stored_report(record) if record is not None else [],
            "form": state or (form.state_of(record) if record is not None else form.FormState()),
            "preview": preview,
            "moves": [(move, MOVE_LABELS[move]) for move in moves],
            "level_options": [(level, level.title()) for level in rules.LEVELS],
            "item_status_options": [(status, status.replace("_", " ")) for status in rules.ACTION_ITEM_STATUSES],
            "text_labels": form.TEXT_LABELS,
            "create_level": ctx.value("level") or "standard",
        },
    )


@console.page("/incidents/{number}/postmortem")
def show_postmortem(ctx: Ctx) -> Page:
    """The postmortem of an incident: the report, its status moves and the edit form."""
    return _page(ctx)


def postmortem_page(ctx: Ctx) -> Page:
    return _page(ctx)


def edit_again(ctx: Ctx) -> Page:
    """After a refused save or preview: the form as sent, so nothing typed is lost."""
    record = _postmortem(ctx, _incident(ctx))
    legacy = form.state_of(record).legacy if record is not None else ()
    return _page(ctx, state=form.state_from_form(ctx.form, legacy))


@console.action("/incidents/{number}/postmortem", scope=SCOPE, on_error=postmortem_page)
def create_postmortem(ctx: Ctx) -> Redirect:
    """Start the incident's postmortem (a draft; the response timeline is prefilled)."""
    incident = _incident(ctx)
    body = ctx.model(PostmortemCreate, {"incident_number": incident.incident_number, "level": ctx.value("level")})
    service.create_postmortem(
        organization_id=ctx.organization_id, now=ctx.now, actor=ctx.signed_in.actor, **body.arguments()
    )
    return Redirect(_here(incident.incident_number, settings=ctx.settings), notice="postmortem_created")


def _existing(ctx: Ctx) -> tuple[IncidentRecord, PostmortemRecord]:
    incident = _incident(ctx)
    record = _postmortem(ctx, incident)
    if record is None:
        raise NotFound(f"Incident {incident.incident_number} has no postmortem.")
    return incident, record


def _patch(ctx: Ctx, record: PostmortemRecord) -> tuple[form.FormState, PostmortemPatch]:
    state = form.state_from_form(ctx.form, form.state_of(record).legacy)
    return state, ctx.model(PostmortemPatch, form.patch_body(state))


@console.action("/incidents/{number}/postmortem/edit", scope=SCOPE, on_error=edit_again)
def save_postmortem(ctx: Ctx) -> Redirect:
    """Save the edited fields (only what changed), if nobody saved in between."""
    incident, record = _existing(ctx)
    _, patch = _patch(ctx, record)
    changes = form.changes_against(record, patch)
    if not changes:
        return Redirect(_here(incident.incident_number, settings=ctx.settings), notice="postmortem_unchanged")
    service.update_postmortem(
        organization_id=ctx.organization_id,
        postmortem_id=record.postmortem_id,
        changes=changes,
        now=ctx.now,
        expected_version=patch.version,
    )
    return Redirect(_here(incident.incident_number, settings=ctx.settings), notice="postmortem_saved")


@console.action("/incidents/{number}/postmortem/preview", scope=SCOPE, on_error=edit_again)
def preview_postmortem(ctx: Ctx) -> Page:
    """Show the report as it would read after saving; nothing is written."""
    _, record = _existing(ctx)
    state, patch = _patch(ctx, record)
    return _page(ctx, state=state, preview=form.preview_report(record, patch))


@console.action("/incidents/{number}/postmortem/status", scope=SCOPE, on_error=postmortem_page)
def move_postmortem(ctx: Ctx) -> Redirect:
    """Move the postmortem to another status (the allowed moves are the service's)."""
    incident, record = _existing(ctx)
    version = {"version": ctx.value("version")} if ctx.value("version") else {}
    patch = ctx.model(PostmortemPatch, {"status": ctx.value("status"), **version})
    service.update_postmortem(
        organization_id=ctx.organization_id,
        postmortem_id=record.postmortem_id,
        changes=patch.changes_to_apply(),
        now=ctx.now,
        expected_version=patch.version,
    )
    return Redirect(_here(incident.incident_number, settings=ctx.settings), notice="postmortem_moved")
