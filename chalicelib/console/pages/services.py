"""Services: the list, a new service, and a service's settings (escalation policy, default
severity, urgency rule with support hours, alert grouping).

Forms are validated through the API's own request models (ServiceCreate, ServicePatch) and saved
by the catalog's create_service / update_service, as POST and PATCH /api/v1/services do.
"""

from __future__ import annotations

from typing import Any

from chalicelib.catalog import service as catalog
from chalicelib.catalog.grouping import CONTENT_FIELDS, GROUPING_TYPES, NO_GROUPING
from chalicelib.catalog.models import ServiceCreate, ServicePatch
from chalicelib.catalog.urgency import DEFAULT_RULE, RULE_TYPES
from chalicelib.console import grouping_form
from chalicelib.console.form_problems import on_the_form
from chalicelib.console.visits import app_path
from chalicelib.console.web import ConsolePages, Ctx, Page, Redirect
from chalicelib.directory.teams import get_teams, list_teams
from chalicelib.errors import ValidationFailed
from chalicelib.escalation import service as policies
from chalicelib.severity import SEVERITIES

console = ConsolePages(
    __name__,
    notices={
        "service_created": "Service created. Incidents name it by its service key.",
        "service_saved": "Service saved. Open incidents keep the urgency they were opened with.",
    },
)

WEEKDAYS = (
    ("mon", "Monday"),
    ("tue", "Tuesday"),
    ("wed", "Wednesday"),
    ("thu", "Thursday"),
    ("fri", "Friday"),
    ("sat", "Saturday"),
    ("sun", "Sunday"),
)
RULE_LABELS = {
    "severity_based": "By severity (SEV0 and SEV1 high, the rest low)",
    "high": "Always high",
    "low": "Always low",
}
# The request models' field paths -> the form's field names, so each problem shows by its input.
FORM_FIELDS = {
    "urgency_rule.type": "urgency_type",
    "urgency_rule.support_hours.time_zone": "hours_zone",
    "urgency_rule.support_hours.days": "hours_days",
    "urgency_rule.support_hours.start": "hours_start",
    "urgency_rule.support_hours.end": "hours_end",
    "urgency_rule.support_hours": "hours_zone",
}


def _choices(ctx: Ctx) -> dict[str, Any]:
    """What the form's selects offer: the organization's active teams and its policies."""
    return {
        "teams": [
            (team.team_id, team.name) for team in list_teams(organization_id=ctx.organization_id, is_active=True)
        ],
        "policies": [
            (stored.policy.policy_id, stored.policy.name)
            for stored in policies.list_policies(organization_id=ctx.organization_id)
        ],
        "severities": SEVERITIES,
        "rule_types": [(kind, RULE_LABELS[kind]) for kind in RULE_TYPES],
        "weekdays": WEEKDAYS,
        "grouping_types": [(kind, grouping_form.TYPE_LABELS[kind]) for kind in GROUPING_TYPES],
        "grouping_fields": [(name, grouping_form.FIELD_LABELS[name]) for name in CONTENT_FIELDS],
    }


def _form_of(service: catalog.Service | None) -> dict[str, Any]:
    """The form's values for a stored service (or a new one's defaults)."""
    rule = service.urgency_rule if service is not None else DEFAULT_RULE
    hours = rule.support_hours
    return {
        "name": service.name if service else "",
        "description": (service.description or "") if service else "",
        "team_id": (service.team_id or "") if service else "",
        "escalation_policy_id": (service.escalation_policy_id or "") if service else "",
        "default_severity": (service.default_severity or "") if service else "",
        "urgency_type": rule.type,
        "hours_zone": hours.time_zone if hours else "",
        "hours_days": list(hours.days) if hours else [],
        "hours_start": hours.start if hours else "",
        "hours_end": hours.end if hours else "",
        "is_active": service.is_active if service else True,
        **grouping_form.form_of(service.alert_grouping if service else NO_GROUPING),
    }


def _form_sent(ctx: Ctx) -> dict[str, Any]:
    """The values the person sent, to show the form again with its problems."""
    sent: dict[str, Any] = {
        name: ctx.value(name)
        for name in (
            "name",
            "description",
            "team_id",
            "escalation_policy_id",
            "default_severity",
            "urgency_type",
            "hours_zone",
            "hours_start",
            "hours_end",
        )
    }
    sent["hours_days"] = ctx.values("hours_days")
    sent["is_active"] = ctx.value("is_active") == "on"
    sent.update(grouping_form.form_sent(ctx))
    return sent


def _body(ctx: Ctx) -> dict[str, Any]:
    """The form as the API's request body: blank optional fields are null (not set, or cleared)."""
    # A blank part is left out, so it reads "Field required" rather than failing a pattern.
    parts = {
        "time_zone": ctx.value("hours_zone"),
        "days": ctx.values("hours_days"),
        "start": ctx.value("hours_start"),
        "end": ctx.value("hours_end"),
    }
    hours = {key: value for key, value in parts.items() if value} or None
    grouping = grouping_form.body(ctx)
    return {
        **({"alert_grouping": grouping} if grouping is not None else {}),
        "name": ctx.value("name"),
        "description": ctx.form.get("description", [""])[0].strip() or None,
        "team_id": ctx.value("team_id") or None,
        "escalation_policy_id": ctx.value("escalation_policy_id") or None,
        "default_severity": ctx.value("default_severity") or None,
        "urgency_rule": {"type": ctx.value("urgency_type") or "severity_based", "support_hours": hours},
    }


def _on_the_form(error: ValidationFailed) -> ValidationFailed:
    """urgency_rule.support_hours.start -> hours_start, alert_grouping.fields -> grouping_fields, and so on."""
    return on_the_form(error, lambda path: grouping_form.problem_input(path) or FORM_FIELDS.get(path, path))


@console.page("/services")
def show_services(ctx: Ctx) -> Page:
    """Every service, newest first, with its team, policy and urgency rule."""
    found = catalog.list_services(organization_id=ctx.organization_id)
    team_ids = [s.team_id for s in found if s.team_id]
    policy_ids = sorted({s.escalation_policy_id for s in found if s.escalation_policy_id})
    teams = get_teams(organization_id=ctx.organization_id, team_ids=team_ids) if team_ids else {}
    stored = policies.get_policies(organization_id=ctx.organization_id, policy_ids=policy_ids) if policy_ids else {}
    return Page(
        "console/services/list.html",
        "Services",
        section="services",
        context={
            "services": found,
            "team_names": {team_id: team.name for team_id, team in teams.items()},
            "policy_names": {policy_id: item.policy.name for policy_id, item in stored.items()},
            "rule_labels": RULE_LABELS,
            "grouping_words": grouping_form.words,
        },
    )


def new_service_page(ctx: Ctx) -> Page:
    form = _form_sent(ctx) if ctx.request.method == "POST" else _form_of(None)
    return Page(
        "console/services/form.html",
        "New service",
        section="services",
        context={"service": None, "form": form, **_choices(ctx)},
    )


@console.page("/services/new")
def show_new_service(ctx: Ctx) -> Page:
    """The form for a new service."""
    return new_service_page(ctx)


@console.action("/services", scope="services:write", on_error=new_service_page)
def create_service_form(ctx: Ctx) -> Redirect:
    """Create a service (POST /api/v1/services)."""
    try:
        body = ctx.model(ServiceCreate, _body(ctx))
        created = catalog.create_service(organization_id=ctx.organization_id, now=ctx.now, **body.arguments())
    except ValidationFailed as error:
        raise _on_the_form(error) from None
    return Redirect(app_path(f"/services/{created.service_key}", settings=ctx.settings), notice="service_created")


def service_page(ctx: Ctx) -> Page:
    """A service's facts and, for those who may change it, its settings form."""
    service = catalog.get_service(organization_id=ctx.organization_id, service_ref=ctx.path["service_ref"])
    team = get_teams(organization_id=ctx.organization_id, team_ids=[service.team_id]) if service.team_id else {}
    policy = (
        policies.get_policies(organization_id=ctx.organization_id, policy_ids=[service.escalation_policy_id])
        if service.escalation_policy_id
        else {}
    )
    form = _form_sent(ctx) if ctx.request.method == "POST" else _form_of(service)
    return Page(
        "console/services/form.html",
        service.name,
        section="services",
        context={
            "service": service,
            "team": team.get(service.team_id or ""),
            "policy": policy.get(service.escalation_policy_id or ""),
            "rule_labels": RULE_LABELS,
            "grouping_words": grouping_form.words,
            "form": form,
            **_choices(ctx),
        },
    )


@console.page("/services/{service_ref}")
def show_service(ctx: Ctx) -> Page:
    """A service by its svc_ key or SER id."""
    return service_page(ctx)


@console.action("/services/{service_ref}", scope="services:write", on_error=service_page)
def update_service_form(ctx: Ctx) -> Redirect:
    """Save a service's settings (PATCH /api/v1/services/{ref}); a blank optional field clears it."""
    try:
        body = ctx.model(ServicePatch, {**_body(ctx), "is_active": ctx.value("is_active") == "on"})
        saved = catalog.update_service(
            organization_id=ctx.organization_id, service_ref=ctx.path["service_ref"], now=ctx.now, **body.changes()
        )
    except ValidationFailed as error:
        raise _on_the_form(error) from None
    return Redirect(app_path(f"/services/{saved.service_key}", settings=ctx.settings), notice="service_saved")
