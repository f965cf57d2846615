"""One incident: every field, the timeline (newest last), its postmortem, and what a responder can do.

Each action is the API operation it mirrors, with that operation's scope and service call:
acknowledge, status moves (the organization's workflow decides which), escalate, reassign,
comment, page a person, edit title/description/severity. Form input is validated by the API's own
request models, so a bad value is refused with the API's words, next to the field.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from chalicelib import clock
from chalicelib.alert import listing as alert_listing
from chalicelib.alert.models import AlertV1, IncidentAlertQuery
from chalicelib.catalog import service as catalog
from chalicelib.change.models import recent_change_v1
from chalicelib.change.service import recent_changes
from chalicelib.console.pages.incidents import people_choices
from chalicelib.console.visits import app_path
from chalicelib.console.web import ConsolePages, Ctx, Page, Redirect
from chalicelib.errors import DeliveryFailed, NotFound
from chalicelib.incident import commands, service
from chalicelib.incident.models import CommentCreate, IncidentUpdate, PageRequest, StatusChange
from chalicelib.incident.paging_status import view_of
from chalicelib.incident.tables import IncidentRecord
from chalicelib.incident.urgency import urgency_of
from chalicelib.incident.workflow import Workflow, plan_transition
from chalicelib.incident.workflow_settings import incident_settings
from chalicelib.paging import escalation_runs
from chalicelib.postmortem import service as postmortems
from chalicelib.settings import Settings
from chalicelib.severity import SEVERITIES

console = ConsolePages(
    __name__,
    notices={
        "acknowledged": "Acknowledged. You are assigned and escalation has stopped.",
        "status_changed": "Status changed.",
        "escalated": "Escalated: the next level of the escalation policy was notified.",
        "not_escalated": "Nobody was notified: there is no escalation in progress or no further level.",
        "assigned": "Assignee changed. A new assignee is paged through their notification rules.",
        "commented": "Comment added.",
        "paged": "Page sent.",
        "updated": "Incident updated.",
    },
)

WRITE = "incidents:write"
# As the API's path rule (INC-<year>-<n>, any case): anything else cannot be an incident.
INCIDENT_NUMBER = re.compile(r"^INC-\d{4}-\d{1,12}$")
CHANNELS = (("email", "Email"), ("slack", "Slack"))


def number_of(ctx: Ctx) -> str:
    given = ctx.path.get("number", "")
    number = given.upper()
    if not INCIDENT_NUMBER.match(number):
        raise NotFound(f"Incident {given[:64]} was not found.")
    return number


def here(number: str, *, settings: Settings) -> str:
    return app_path(f"/incidents/{number}", settings=settings)


@dataclass(frozen=True)
class Move:
    """A status the incident may move to, as a button."""

    status: str
    label: str
    main: bool  # resolving or closing: shown first, with Acknowledge and Escalate

    @property
    def option(self) -> tuple[str, str]:
        """(value, text) for the status select of the "with a note" form."""
        return self.status, self.label


def moves_of(workflow: Workflow, incident: IncidentRecord) -> list[Move]:
    """Every allowed move from the incident's status, in workflow order, labelled by what it does."""
    found = []
    for target in workflow.status_names:
        if target == incident.status or target not in workflow.targets(incident.status):
            continue
        plan = plan_transition(workflow, incident.status, target)
        if plan.resolves and plan.to_category == "resolved":
            label = "Resolve" if target == "resolved" else f"Resolve as {target.replace('_', ' ')}"
        elif plan.closes:
            label = "Close" if target == "closed" else f"Close as {target.replace('_', ' ')}"
        elif plan.reopens:
            label = f"Reopen as {target.replace('_', ' ')}"
        else:
            label = f"Move to {target.replace('_', ' ')}"
        found.append(Move(target, label, plan.resolves or plan.closes))
    return found


def _escalation_summary(incident: IncidentRecord) -> dict[str, Any] | None:
    state = escalation_runs.state_of(incident)
    if state is None:
        return None
    return {
        "policy": state.policy.name,
        "level": state.level,
        "levels": len(state.policy.levels),
        "stopped": state.stopped or escalation_runs.is_done(incident),
        "next_at": state.next_at,
    }


def _sla_of(incident: IncidentRecord) -> list[dict[str, Any]]:
    """The SLA's due times and outcomes (None while still running), as the API's sla field shows them."""
    stored = incident.sla or {}
    found = []
    for name, label in (("acknowledge", "Acknowledge by"), ("resolve", "Resolve by")):
        due = stored.get(f"{name}_due_at")
        if due:
            found.append({"label": label, "at": clock.parse(due), "met": stored.get(f"{name}_met")})
    return found


def _postmortem_of(ctx: Ctx, number: str) -> Any:
    try:
        return postmortems.get_postmortem_for_incident(organization_id=ctx.organization_id, incident_number=number)
    except NotFound:
        return None


NEWEST_ALERTS = 10


def _alerts_of(ctx: Ctx, incident: IncidentRecord) -> dict[str, Any]:
    """How many alerts the incident has (triggered, resolved), its newest ones, and the link to all:
    the list's time filter starts on the incident's day (the list's default is the last 30 days)."""
    number = incident.incident_number
    newest = alert_listing.incident_alerts(
        organization_id=ctx.organization_id, incident_number=number, query=IncidentAlertQuery(limit=NEWEST_ALERTS)
    )
    triggered = alert_listing.incident_alerts(
        organization_id=ctx.organization_id,
        incident_number=number,
        query=IncidentAlertQuery(status=["triggered"], limit=1),
    ).total
    link = {"incident_number": number, "since": incident.created_at.date().isoformat()}
    return {
        "items": [AlertV1.of(record) for record in newest.items],
        "total": newest.total,
        "triggered": triggered,
        "resolved": newest.total - triggered,  # an incident's alerts are never suppressed
        "link": app_path("/alerts", settings=ctx.settings) + "?" + urlencode(link),
    }


def incident_page(ctx: Ctx, *, page_problem: str | None = None, status: int = 200) -> Page:
    number = number_of(ctx)
    found = service.get_incident_detail(organization_id=ctx.organization_id, incident_number=number)
    incident = found.incident
    workflow = incident_settings(organization_id=ctx.organization_id).workflow
    keys = [str(key) for key in incident.service_keys or []]
    known = catalog.get_services(organization_id=ctx.organization_id, service_keys=keys) if keys else {}
    is_open = workflow.is_open(incident.status)
    # On a re-render after a refused form, the form shows what the person typed.
    draft = {name: values[0] for name, values in ctx.form.items() if values and name != "csrf_token"}
    return Page(
        "console/incidents/detail.html",
        f"{incident.incident_number}: {incident.title}",
        section="incidents",
        status=status,
        context={
            "incident": incident,
            "urgency": urgency_of(incident),
            "services": [{"key": key, "name": known[key].name if key in known else key} for key in keys],
            "sla": _sla_of(incident),
            "timeline": list(reversed(found.timeline)),  # newest last: read as a story
            "timeline_cut": found.has_more,
            "is_open": is_open,
            "can_acknowledge": is_open and incident.acknowledged_at is None,
            "moves": moves_of(workflow, incident),
            "escalation": _escalation_summary(incident),
            "paging": view_of(incident),
            "postmortem": _postmortem_of(ctx, number),
            "alerts": _alerts_of(ctx, incident),
            "people": people_choices(ctx.organization_id) if ctx.can(WRITE) else [],
            "severities": SEVERITIES,
            "channels": CHANNELS,
            "draft": draft,
            "draft_channels": ctx.values("channels") if "email" in draft else ["email"],
            "page_problem": page_problem,
            # As the API's incident detail: the changes on its services in the hour before it opened.
            "recent_changes": [
                recent_change_v1(change)
                for change in recent_changes(
                    organization_id=ctx.organization_id, service_keys=keys, opened_at=incident.created_at, now=ctx.now
                )
            ],
        },
    )


@console.page("/incidents/{number}")
def show_incident(ctx: Ctx) -> Page:
    """An incident with its timeline and actions."""
    return incident_page(ctx)


@console.action("/incidents/{number}/acknowledge", scope=WRITE, on_error=incident_page)
def acknowledge(ctx: Ctx) -> Redirect:
    """Acknowledge (as POST /api/v1/incidents/{id}/acknowledge)."""
    number = number_of(ctx)
    commands.acknowledge(
        organization_id=ctx.organization_id, incident_number=number, principal=ctx.signed_in, now=ctx.now
    )
    return Redirect(here(number, settings=ctx.settings), notice="acknowledged")


@console.action("/incidents/{number}/status", scope=WRITE, on_error=incident_page)
def change_status(ctx: Ctx) -> Redirect:
    """Move to another status of the workflow (as POST /api/v1/incidents/{id}/status)."""
    number = number_of(ctx)
    body = ctx.model(StatusChange, {"status": ctx.value("status"), "comment": ctx.value("comment") or None})
    commands.change_status(
        organization_id=ctx.organization_id,
        incident_number=number,
        status=body.status,
        comment=body.comment,
        now=ctx.now,
        principal=ctx.signed_in,
    )
    return Redirect(here(number, settings=ctx.settings), notice="status_changed")


@console.action("/incidents/{number}/escalate", scope=WRITE, on_error=incident_page)
def escalate(ctx: Ctx) -> Redirect:
    """Notify the next level of the escalation policy now (as POST /api/v1/incidents/{id}/escalate)."""
    number = number_of(ctx)
    outcome = escalation_runs.escalate(
        organization_id=ctx.organization_id,
        incident_number=number,
        actor=ctx.signed_in.actor,
        now=ctx.now,
        settings=ctx.settings,
    )
    return Redirect(here(number, settings=ctx.settings), notice="escalated" if outcome.escalated else "not_escalated")


def _update(ctx: Ctx, number: str, data: dict[str, Any]) -> Redirect:
    """PATCH /api/v1/incidents/{id}'s model and command, with the fields this form sends."""
    body = ctx.model(IncidentUpdate, data)
    commands.update_incident(
        organization_id=ctx.organization_id,
        incident_number=number,
        changes=body.changes(),
        now=ctx.now,
        principal=ctx.signed_in,
    )
    return Redirect(here(number, settings=ctx.settings), notice="assigned" if "assigned_to" in data else "updated")


@console.action("/incidents/{number}/assign", scope=WRITE, on_error=incident_page)
def reassign(ctx: Ctx) -> Redirect:
    """Assign someone else, or nobody (as PATCH /api/v1/incidents/{id} with assigned_to)."""
    number = number_of(ctx)
    return _update(ctx, number, {"assigned_to": ctx.value("assigned_to") or None})


@console.action("/incidents/{number}/edit", scope=WRITE, on_error=incident_page)
def edit(ctx: Ctx) -> Redirect:
    """Change title, description and severity (as PATCH /api/v1/incidents/{id})."""
    number = number_of(ctx)
    data = {
        "title": ctx.value("title"),
        "description": ctx.form.get("description", [""])[0].strip() or None,
        "severity": ctx.value("severity"),
    }
    return _update(ctx, number, data)


@console.action("/incidents/{number}/comment", scope=WRITE, on_error=incident_page)
def comment(ctx: Ctx) -> Redirect:
    """Add a comment to the timeline (as POST /api/v1/incidents/{id}/events)."""
    number = number_of(ctx)
    body = ctx.model(CommentCreate, {"comment": ctx.form.get("comment", [""])[0]})
    commands.add_comment(
        organization_id=ctx.organization_id,
        incident_number=number,
        comment=body.comment,
        now=ctx.now,
        principal=ctx.signed_in,
    )
    return Redirect(here(number, settings=ctx.settings), notice="commented")


@console.action("/incidents/{number}/page", scope=WRITE, on_error=incident_page)
def page_person(ctx: Ctx) -> Page | Redirect:
    """Page one person on the channels chosen (as POST /api/v1/incidents/{id}/page)."""
    from chalicelib.notification import service as notification

    number = number_of(ctx)
    data: dict[str, Any] = {"email": ctx.value("email"), "channels": ctx.values("channels")}
    if ctx.value("message"):
        data["message"] = ctx.form.get("message", [""])[0].strip()
    body = ctx.model(PageRequest, data)
    try:
        notification.page(
            organization_id=ctx.organization_id,
            incident_number=number,
            email=body.email,
            channels=list(body.channels),
            message=body.message,
            now=ctx.now,
            principal=ctx.signed_in,
            settings=ctx.settings,
        )
    except DeliveryFailed as failed:
        # A provider failed (the API's 502): the attempt is on the timeline; say so on the page.
        return incident_page(ctx, page_problem=failed.message, status=failed.status)
    return Redirect(here(number, settings=ctx.settings), notice="paged")
