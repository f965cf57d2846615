"""The incident list (open by default, the API's filters, offset pages) and the new-incident form.

The list reads through `incident.listing.list_incidents` with the API's own `IncidentListQuery`,
so a filter means what it means on GET /api/v1/incidents (and is refused with the same words).
Two differences are only about the form: the created range is given as whole days in the viewer's
zone (a date input), and no ticked status means the API's default, the open incidents.

Two views ride on the list, kept by its page links: `assigned=me` (the incidents assigned to the
viewer: the API's assigned_to filter with their email) and `refresh=<seconds>`, an opt-in meta
refresh (30, 60, 120 or 300 s). Opt-in, not always: the list carries checkboxes for acknowledging
or resolving several incidents at once (console/pages/incident_bulk.py), and a refresh that
arrived mid-selection would clear it; a responder watching a storm turns it on with one link.
"""

from __future__ import annotations

import re
import secrets
from datetime import date
from typing import Any

from chalicelib import clock
from chalicelib.catalog import service as catalog
from chalicelib.console import list_links
from chalicelib.console.form_problems import headline, labelled
from chalicelib.console.form_times import day_end, day_start
from chalicelib.console.visits import app_path
from chalicelib.console.web import ConsolePages, Ctx, Page, Redirect
from chalicelib.directory.teams import list_teams
from chalicelib.directory.users import list_users
from chalicelib.errors import AppError, ValidationFailed
from chalicelib.idempotency.service import StoredResponse, run_once
from chalicelib.incident import listing, service
from chalicelib.incident.models import IncidentCreate, IncidentListQuery
from chalicelib.incident.paging_status import view_of
from chalicelib.incident.urgency import urgency_of
from chalicelib.incident.workflow_settings import incident_settings
from chalicelib.settings import Settings
from chalicelib.severity import SEVERITIES
from chalicelib.zones import DEFAULT_ZONE

console = ConsolePages(__name__, notices={"incident_created": "Incident created."})

LIST_LIMIT = 25
MULTI_FILTERS = ("status", "severity", "urgency")
SINGLE_FILTERS = ("team_name", "assigned_to", "created_after", "created_before")
URGENCIES = ("high", "low")
REFRESH_CHOICES = (30, 60, 120, 300)
# The selection form's inputs, as its problems name them (console/pages/incident_bulk.py).
LABELS = {"incident": "Incidents to act on", "action": "Action"}
FILTER_LABELS = {
    "status": "Status",
    "severity": "Severity",
    "urgency": "Urgency",
    "team_name": "Team",
    "assigned_to": "Assignee",
    "created_after": "Created from",
    "created_before": "Created to",
    "offset": "Page",
}
DEFAULT_REFRESH = 30
_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def day_bound(name: str, raw: str, *, end_of_day: bool, zone: str = DEFAULT_ZONE) -> str:
    """A date input's day on the zone's calendar as the API's inclusive bound (RFC 3339); anything
    else as typed, for the model to judge."""
    if not _DAY.match(raw):
        return raw
    try:
        day = date.fromisoformat(raw)
    except ValueError:
        raise ValidationFailed.for_field(name, "must be a day of the calendar, as YYYY-MM-DD") from None
    return clock.isoformat(day_end(day, zone) if end_of_day else day_start(day, zone))


def filters_of(ctx: Ctx) -> dict[str, list[str]]:
    """The filters as the form sent them (blank values dropped), to redisplay and to carry into page links."""
    found: dict[str, list[str]] = {}
    for name in (*MULTI_FILTERS, *SINGLE_FILTERS):
        values = [value.strip() for value in ctx.query.get(name, []) if value.strip()]
        if values:
            found[name] = values if name in MULTI_FILTERS else values[:1]
    return found


def list_query(ctx: Ctx, filters: dict[str, list[str]]) -> IncidentListQuery:
    data: dict[str, Any] = {name: filters[name] for name in MULTI_FILTERS if name in filters}
    for name in ("team_name", "assigned_to"):
        if name in filters:
            data[name] = filters[name][0]
    for name in ("created_after", "created_before"):
        if name in filters:
            data[name] = day_bound(name, filters[name][0], end_of_day=name == "created_before", zone=ctx.zone)
    data["limit"] = LIST_LIMIT
    data["offset"] = ctx.arg("offset") or 0
    return ctx.model(IncidentListQuery, data)


def list_view_of(ctx: Ctx) -> dict[str, str]:
    """The list's view options as asked for (`assigned=me`, a known `refresh`), to keep in its links."""
    view: dict[str, str] = {}
    if ctx.arg("assigned") == "me":
        view["assigned"] = "me"
    refresh = ctx.arg("refresh")
    if refresh.isdigit() and int(refresh) in REFRESH_CHOICES:
        view["refresh"] = refresh
    return view


def page_link(
    filters: dict[str, list[str]], offset: int, view: dict[str, str] | None = None, *, settings: Settings
) -> str:
    pairs = [(name, value) for name, values in filters.items() for value in values]
    pairs += list((view or {}).items())
    return list_links.page_link(app_path("/incidents", settings=settings), pairs, offset)


def _view_links(filters: dict[str, list[str]], view: dict[str, str], *, settings: Settings) -> dict[str, str]:
    """The list's links: all or mine (filters kept), refresh on or off (everything else kept)."""
    mine = {**view, "assigned": "me"}
    everyone = {key: value for key, value in view.items() if key != "assigned"}
    with_refresh = {**view, "refresh": str(DEFAULT_REFRESH)}
    without_refresh = {key: value for key, value in view.items() if key != "refresh"}
    return {
        "all": page_link(filters, 0, everyone, settings=settings),
        "mine": page_link(filters, 0, mine, settings=settings),
        "refresh_on": page_link(filters, 0, with_refresh, settings=settings),
        "refresh_off": page_link(filters, 0, without_refresh, settings=settings),
    }


@console.page("/incidents")
def incident_list(ctx: Ctx) -> Page:
    """The incident list: open incidents by default, filtered as the API's list."""
    organization_id = ctx.organization_id
    filters = filters_of(ctx)
    view = list_view_of(ctx)
    mine = view.get("assigned") == "me"
    if mine:  # the viewer's own incidents: the API's assignee filter with their email (it wins over a chosen one)
        filters = {**filters, "assigned_to": [(ctx.user.email or "") if ctx.user else ""]}
    title = "Assigned to me" if mine else "Incidents"
    context: dict[str, Any] = {
        "mine": mine,
        "view": view,
        "view_links": _view_links(_shown(filters, mine), view, settings=ctx.settings),
        "refresh_seconds": int(view["refresh"]) if "refresh" in view else None,
        "back": page_link(
            _shown(filters, mine), 0, view, settings=ctx.settings
        ),  # where the selection's answer links back to
        "filters": _shown(filters, mine),  # "mine" shows as the view, not as a chosen assignee
        "statuses": incident_settings(organization_id=organization_id).workflow.status_names,
        "severities": SEVERITIES,
        "urgencies": URGENCIES,
        "teams": sorted(team.name for team in list_teams(organization_id=organization_id, is_active=True)),
        "people": people_choices(organization_id),
        "incidents": [],
        "urgency_of": urgency_of,
        "paging_of": view_of,  # a mark on incidents whose escalation pages nobody
        "total": 0,
        "first": 0,
        "newer_link": None,
        "older_link": None,
        "filter_problem": None,
        "filter_fields": [],
    }
    try:
        query = list_query(ctx, filters)
        found = listing.list_incidents(organization_id=organization_id, query=query)
    except AppError as problem:
        if problem.status != 400:
            raise
        details = problem.details if isinstance(problem.details, dict) else {}
        fields = labelled(details.get("fields") or [], FILTER_LABELS)
        # The filters say it at their inputs; the message only when it is more than a field's problem.
        context.update(
            filter_problem=headline(problem, fields) or "Check the filters marked below.", filter_fields=fields
        )
        return Page(
            "console/incidents/list.html", title, section="incidents", context=context, status=400, labels=LABELS
        )
    context.update(
        incidents=found.items,
        total=found.total,
        first=query.offset + 1,
        newer_link=page_link(_shown(filters, mine), max(query.offset - LIST_LIMIT, 0), view, settings=ctx.settings)
        if query.offset
        else None,
        older_link=page_link(_shown(filters, mine), found.next_offset, view, settings=ctx.settings)
        if found.next_offset is not None
        else None,
    )
    return Page("console/incidents/list.html", title, section="incidents", context=context, labels=LABELS)


def _shown(filters: dict[str, list[str]], mine: bool) -> dict[str, list[str]]:
    """The filters a link carries: "mine" is carried by the view, not as an assignee."""
    return {name: values for name, values in filters.items() if not (mine and name == "assigned_to")}


def people_choices(organization_id: str) -> list[dict[str, str]]:
    """Active people with an email, by name: the choices of the assignee filter and of reassign/page."""
    found = [
        {"email": person.email, "name": person.name or person.email}
        for person in list_users(organization_id=organization_id, is_active=True)
        if person.email
    ]
    return sorted(found, key=lambda person: (person["name"].lower(), person["email"]))


def new_incident_form(ctx: Ctx) -> Page:
    services = [
        {"key": svc.service_key, "name": svc.name}
        for svc in catalog.list_services(organization_id=ctx.organization_id, is_active=True)
    ]
    draft = {
        "title": ctx.value("title"),
        "description": ctx.value("description"),
        "severity": ctx.value("severity"),
        "service_ids": ctx.values("service_ids"),
    }
    return Page(
        "console/incidents/new.html",
        "New incident",
        section="incidents",
        context={
            "services": sorted(services, key=lambda svc: svc["name"].lower()),
            "severities": SEVERITIES,
            "draft": draft,
            # A new key per form shown: a double click or a resent form opens one incident, not two.
            "form_key": secrets.token_urlsafe(18),
        },
    )


@console.page("/incidents/new")
def show_new_incident(ctx: Ctx) -> Page:
    """The form to open an incident by hand."""
    return new_incident_form(ctx)


@console.action("/incidents/new", scope="incidents:write", on_error=new_incident_form)
def create_incident(ctx: Ctx) -> Redirect:
    """Open an incident (as POST /api/v1/incidents): then its page."""
    data: dict[str, Any] = {"title": ctx.value("title"), "service_ids": ctx.values("service_ids")}
    if ctx.value("description"):
        data["description"] = ctx.value("description")
    if ctx.value("severity"):
        data["severity"] = ctx.value("severity")
    body = ctx.model(IncidentCreate, data)

    def create() -> StoredResponse:
        record = service.create_incident(
            organization_id=ctx.organization_id,
            request=service.NewIncident(
                title=body.title,
                service_keys=list(body.service_ids),
                description=body.description,
                severity=body.severity,
            ),
            now=ctx.now,
            actor=ctx.signed_in.actor,
            settings=ctx.settings,
        )
        return StoredResponse(201, {"incident_number": record.incident_number})

    key = ctx.value("form_key")
    if key:
        created, _ = run_once(
            organization_id=ctx.organization_id,
            operation="consoleCreateIncident",
            key=key,
            payload=body.model_dump(mode="json"),
            now=ctx.now,
            action=create,
        )
    else:
        created = create()
    number = str(created.body["incident_number"])
    return Redirect(app_path(f"/incidents/{number}", settings=ctx.settings), notice="incident_created")
