"""Several incidents at once, from the incident list's checkboxes: acknowledge them, or resolve them.

Each incident goes through the command its own page's button calls (`commands.acknowledge`, as
POST /api/v1/incidents/{id}/acknowledge; `commands.change_status` to the workflow's resolved
status, as POST /api/v1/incidents/{id}/status), with the person's own permissions
(`incidents:write`), one after the other: one refusal never stops the others. The answer is a page
with a line per incident: done, already (nothing to do: acknowledged, resolved or closed before),
or refused and why (a move the workflow does not allow, an unknown number). It answers the POST
itself rather than redirecting, because the lines are the point; sending it again does no harm
(everything is "already").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from chalicelib.console.pages.incident_page import INCIDENT_NUMBER
from chalicelib.console.pages.incidents import LIST_LIMIT, incident_list
from chalicelib.console.visits import app_path, safe_next
from chalicelib.console.web import ConsolePages, Ctx, Page
from chalicelib.errors import AppError, ValidationFailed
from chalicelib.incident import commands, repository
from chalicelib.incident.workflow_settings import incident_settings
from chalicelib.paging.respond import resolved_status

console = ConsolePages(__name__)

WRITE = "incidents:write"
ACTIONS = {"acknowledge": "Acknowledge", "resolve": "Resolve"}
DONE_WORDS = {"acknowledge": "acknowledged", "resolve": "resolved"}
MAX_SELECTED = LIST_LIMIT * 4  # a page shows 25; a hand-made form may not ask for hundreds

Result = Literal["done", "already", "refused"]


@dataclass(frozen=True)
class Line:
    number: str
    title: str
    result: Result
    why: str


def _selected(ctx: Ctx) -> list[str]:
    numbers = list(dict.fromkeys(value.upper() for value in ctx.values("incident")))
    if not numbers:
        raise ValidationFailed.for_field("incident", "tick at least one incident")
    if len(numbers) > MAX_SELECTED:
        raise ValidationFailed.for_field("incident", f"at most {MAX_SELECTED} incidents at once")
    return numbers


def _one(ctx: Ctx, action: str, number: str, resolved: str) -> Line:
    organization_id = ctx.organization_id
    if not INCIDENT_NUMBER.match(number):
        return Line(number[:64], "", "refused", "not an incident number")
    try:
        incident = repository.get_incident(organization_id, number)
    except AppError as error:
        return Line(number, "", "refused", error.message)
    workflow = incident_settings(organization_id=organization_id).workflow
    title = incident.title
    if not workflow.is_open(incident.status):
        return Line(number, title, "already", f"already {incident.status.replace('_', ' ')}")
    try:
        if action == "acknowledge":
            outcome = commands.acknowledge(
                organization_id=organization_id, incident_number=number, principal=ctx.signed_in, now=ctx.now
            )
            if not outcome.newly_acknowledged:
                return Line(number, title, "already", "already acknowledged")
        else:
            commands.change_status(
                organization_id=organization_id,
                incident_number=number,
                status=resolved,
                comment=None,
                now=ctx.now,
                principal=ctx.signed_in,
            )
    except AppError as error:
        return Line(number, title, "refused", error.message)
    return Line(number, title, "done", DONE_WORDS[action])


@console.action("/incidents/bulk", scope=WRITE, on_error=incident_list)
def act_on_selected(ctx: Ctx) -> Page:
    """Acknowledge or resolve every ticked incident; a line per incident says what happened."""
    action = ctx.value("action")
    if action not in ACTIONS:
        raise ValidationFailed.for_field("action", "must be acknowledge or resolve")
    numbers = _selected(ctx)
    resolved = resolved_status(ctx.organization_id) if action == "resolve" else ""
    lines = [_one(ctx, action, number, resolved) for number in numbers]
    done = sum(1 for line in lines if line.result == "done")
    return Page(
        "console/incidents/bulk.html",
        f"{DONE_WORDS[action].capitalize()} {done} of {len(lines)}",
        section="incidents",
        context={
            "lines": lines,
            "action": action,
            "verb": ACTIONS[action],
            "back": safe_next(
                ctx.value("back") or app_path("/incidents", settings=ctx.settings), settings=ctx.settings
            ),
        },
    )
