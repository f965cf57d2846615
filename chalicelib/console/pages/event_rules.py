"""Event rules: the organization's ordered list (`/event-rules`) and each integration's
(`/integrations/{id}/event-rules`), each rule in words; add a rule, move it up or down, delete it.

The same scopes as /api/v1/event-rules (`integrations:read` to read, `integrations:write` to
change), the same service functions (`eventrule.service`) and request models; an integration the
organization lacks is a 404, as in the API.
"""

from __future__ import annotations

from typing import Any

from chalicelib.catalog.service import get_services, list_services
from chalicelib.console.form_problems import on_the_form
from chalicelib.console.rule_form import FIELD_CHOICES, FORM_CONDITIONS, OP_CHOICES, form_field, in_words, rule_body
from chalicelib.console.visits import app_path
from chalicelib.console.web import Confirmation, ConsolePages, Ctx, Page, Redirect
from chalicelib.errors import ValidationFailed
from chalicelib.eventrule import service
from chalicelib.eventrule.models import EventRuleCreate, EventRulePatch
from chalicelib.integration import admin
from chalicelib.integration.admin import Integration
from chalicelib.settings import Settings
from chalicelib.severity import SEVERITIES

console = ConsolePages(
    __name__,
    notices={
        "event_rule_added": "Rule added at the end of the list.",
        "event_rule_moved": "Rule moved.",
        "event_rule_deleted": "Rule deleted.",
    },
)

READ, WRITE = "integrations:read", "integrations:write"
_DELETE = Confirmation(
    "Delete this event rule?",
    "Alerts it matched are no longer suppressed, dropped or changed by it from the next event on. "
    "It cannot be restored.",
    "Delete rule",
)


def _integration(ctx: Ctx) -> Integration | None:
    """The path's integration (404 when the organization has none such), or None for the organization's list."""
    integration_id = ctx.path.get("integration_id")
    if integration_id is None:
        return None
    return admin.get_integration(organization_id=ctx.organization_id, integration_id=integration_id)


def _here(integration: Integration | None, *, settings: Settings) -> str:
    if integration is None:
        return app_path("/event-rules", settings=settings)
    return app_path(f"/integrations/{integration.integration_id}/event-rules", settings=settings)


def rules_page(ctx: Ctx) -> Page:
    integration = _integration(ctx)
    integration_id = integration.integration_id if integration is not None else None
    organization_id = ctx.organization_id
    rules = service.list_rules(organization_id=organization_id, integration_id=integration_id)
    routed = [rule.actions.route_to_service_key for rule in rules if rule.actions.route_to_service_key]
    found = get_services(organization_id=organization_id, service_keys=routed)
    names = {key: routed_to.name for key, routed_to in found.items()}
    writable = ctx.can(WRITE)
    services = list_services(organization_id=organization_id, is_active=True) if writable else []
    posted = ctx.request.method == "POST" and ctx.value("form") == "add"
    typed: dict[str, Any] = {name: values[0] for name, values in ctx.form.items() if values} if posted else {}
    return Page(
        "console/noise/event_rules.html",
        f"Event rules of {integration.name}" if integration is not None else "Event rules",
        section="integrations" if integration is not None else "event-rules",
        context={
            "integration": integration,
            "here": _here(integration, settings=ctx.settings),
            "rules": [(rule, in_words(rule, names)) for rule in rules],
            "write_scope": WRITE,
            "rows": range(FORM_CONDITIONS),
            "field_choices": FIELD_CHOICES,
            "op_choices": OP_CHOICES,
            "severity_choices": [(name, name) for name in SEVERITIES],
            "service_choices": [(s.service_id, f"{s.name} ({s.service_id})") for s in services],
            "typed": typed,
        },
    )


def _add(ctx: Ctx) -> Redirect:
    integration = _integration(ctx)
    body, rows = rule_body(ctx.value)
    try:
        checked = ctx.model(EventRuleCreate, body)
        service.create_rule(
            organization_id=ctx.organization_id,
            integration_id=integration.integration_id if integration is not None else None,
            now=ctx.now,
            conditions=[condition.as_input() for condition in checked.conditions],
            actions=checked.actions.as_actions(),
            continues=checked.continue_,
            description=checked.description,
        )
    except ValidationFailed as error:
        placed = on_the_form(error, lambda path: form_field(path, rows))
        # The API's message names body paths (conditions.0.value); the form marks the inputs instead.
        placed.message = "The rule was not added: see the marked fields." if _fields(placed) else error.message
        raise placed from None
    return Redirect(_here(integration, settings=ctx.settings), notice="event_rule_added")


def _fields(error: ValidationFailed) -> list[object]:
    details = error.details if isinstance(error.details, dict) else {}
    fields = details.get("fields")
    return list(fields) if isinstance(fields, list) else []


def _move(ctx: Ctx) -> Redirect:
    """One place up or down: the rule's new position, validated as a PATCH's."""
    integration = _integration(ctx)
    integration_id = integration.integration_id if integration is not None else None
    placed = service.get_rule(
        organization_id=ctx.organization_id, integration_id=integration_id, rule_id=ctx.path["rule_id"]
    )
    step = {"up": -1, "down": 1}.get(ctx.value("direction"))
    if step is None:
        raise ValidationFailed.for_field("direction", "must be up or down")
    body = ctx.model(EventRulePatch, {"position": placed.position + step})
    service.update_rule(
        organization_id=ctx.organization_id,
        integration_id=integration_id,
        rule_id=placed.rule.rule_id,
        now=ctx.now,
        **body.domain_changes(),
    )
    return Redirect(_here(integration, settings=ctx.settings), notice="event_rule_moved")


def _delete(ctx: Ctx) -> Redirect:
    integration = _integration(ctx)
    service.delete_rule(
        organization_id=ctx.organization_id,
        integration_id=integration.integration_id if integration is not None else None,
        rule_id=ctx.path["rule_id"],
        now=ctx.now,
    )
    return Redirect(_here(integration, settings=ctx.settings), notice="event_rule_deleted")


# --- the organization's list -------------------------------------------------------------------------


@console.page("/event-rules")
def show_event_rules(ctx: Ctx) -> Page:
    """The organization's event rules, in the order they run."""
    return rules_page(ctx)


@console.action("/event-rules", scope=WRITE, on_error=rules_page)
def add_event_rule(ctx: Ctx) -> Redirect:
    """Add a rule at the end of the organization's list."""
    return _add(ctx)


@console.action("/event-rules/{rule_id}/move", scope=WRITE, on_error=rules_page)
def move_event_rule(ctx: Ctx) -> Redirect:
    """Move a rule of the organization's list one place up or down."""
    return _move(ctx)


@console.action("/event-rules/{rule_id}/delete", scope=WRITE, on_error=rules_page, confirm=_DELETE)
def delete_event_rule(ctx: Ctx) -> Redirect:
    """Delete a rule of the organization's list."""
    return _delete(ctx)


# --- an integration's list ---------------------------------------------------------------------------


@console.page("/integrations/{integration_id}/event-rules")
def show_integration_event_rules(ctx: Ctx) -> Page:
    """An integration's event rules, in the order they run (before the organization's)."""
    return rules_page(ctx)


@console.action("/integrations/{integration_id}/event-rules", scope=WRITE, on_error=rules_page)
def add_integration_event_rule(ctx: Ctx) -> Redirect:
    """Add a rule at the end of an integration's list."""
    return _add(ctx)


@console.action("/integrations/{integration_id}/event-rules/{rule_id}/move", scope=WRITE, on_error=rules_page)
def move_integration_event_rule(ctx: Ctx) -> Redirect:
    """Move a rule of an integration's list one place up or down."""
    return _move(ctx)


@console.action(
    "/integrations/{integration_id}/event-rules/{rule_id}/delete", scope=WRITE, on_error=rules_page, confirm=_DELETE
)
def delete_integration_event_rule(ctx: Ctx) -> Redirect:
    """Delete a rule of an integration's list."""
    return _delete(ctx)
