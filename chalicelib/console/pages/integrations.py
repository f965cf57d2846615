"""Integrations: list, create (the webhook URL and secrets shown once), regenerate the URL, revoke.

The same scopes as the API (`integrations:read` to list, `integrations:write` to change) and the
same service functions (`integration.admin`), through the API's request model. The URL, routing
key and signing secret are on the answer to the POST only (console pages are never cached).
"""

from __future__ import annotations

from typing import Any

from chalicelib.catalog.service import list_services
from chalicelib.console.visits import app_path
from chalicelib.console.web import Confirmation, ConsolePages, Ctx, Page, Redirect
from chalicelib.integration import admin
from chalicelib.integration.admin import IssuedIntegration
from chalicelib.integration.models import IntegrationCreate

console = ConsolePages(
    __name__, notices={"integration_revoked": "Integration revoked. Its URL answers 410 from now on."}
)

READ, WRITE = "integrations:read", "integrations:write"
TYPE_NAMES = {
    "custom": "Custom webhook",
    "newrelic": "New Relic",
    "sentry": "Sentry",
    "alertmanager": "Prometheus Alertmanager",
    "cloudwatch": "Amazon CloudWatch (SNS)",
    "pagerduty": "PagerDuty Events API v2",
    "opsgenie": "Opsgenie Alert API",
}


def integrations_page(ctx: Ctx) -> Page:
    writable = ctx.can(WRITE)
    services = list_services(organization_id=ctx.organization_id, is_active=True) if writable else []
    return Page(
        "console/self_service/integrations.html",
        "Integrations",
        section="integrations",
        context={
            "integrations": admin.list_integrations(organization_id=ctx.organization_id),
            "type_names": TYPE_NAMES,
            "services": services,
            "write_scope": WRITE,
            "typed": {
                "type": ctx.value("type", "custom"),
                "name": ctx.value("name"),
                "default_service": ctx.value("default_service"),
                "signing": bool(ctx.value("signing")),
                "ip_allowlist": ctx.value("ip_allowlist"),
                "expected_topic_arn": ctx.value("expected_topic_arn"),
            },
        },
    )


@console.page("/integrations")
def show_integrations(ctx: Ctx) -> Page:
    """The organization's integrations (never their routing keys or secrets)."""
    return integrations_page(ctx)


def _issued_page(issued: IssuedIntegration, *, regenerated: bool) -> Page:
    return Page(
        "console/self_service/integration_issued.html",
        "New integration URL" if regenerated else "Integration created",
        section="integrations",
        context={
            "issued": issued,
            "integration": issued.integration,
            "type_names": TYPE_NAMES,
            "regenerated": regenerated,
        },
    )


def _or_none(value: str) -> str | None:
    return value or None


@console.action("/integrations", scope=WRITE, on_error=integrations_page)
def create_integration(ctx: Ctx) -> Page:
    """Create an integration and show its URL, once."""
    fields: dict[str, Any] = {
        "type": ctx.value("type"),
        "name": ctx.value("name"),
        "default_service": _or_none(ctx.value("default_service")),
        "signing": bool(ctx.value("signing")),
        "client_secret": _or_none(ctx.value("client_secret")),
        "ip_allowlist": [line.strip() for line in ctx.value("ip_allowlist").splitlines() if line.strip()],
        "expected_topic_arn": _or_none(ctx.value("expected_topic_arn")),
    }
    body = ctx.model(IntegrationCreate, fields)
    issued = admin.create_integration(
        organization_id=ctx.organization_id,
        now=ctx.now,
        created_by=ctx.signed_in.actor,
        **body.arguments(),
        settings=ctx.settings,
    )
    return _issued_page(issued, regenerated=False)


@console.action(
    "/integrations/{integration_id}/regenerate",
    scope=WRITE,
    on_error=integrations_page,
    confirm=Confirmation(
        "Regenerate this integration's URL?",
        "The current URL stops working at once: alerts sent to it are refused until the monitoring tool "
        "has the new one.",
        "Regenerate URL",
    ),
)
def regenerate_integration_url(ctx: Ctx) -> Page:
    """A new URL for an integration; the old one stops working at once."""
    issued = admin.regenerate_url(**ctx.item, now=ctx.now, settings=ctx.settings)
    return _issued_page(issued, regenerated=True)


@console.action(
    "/integrations/{integration_id}/revoke",
    scope=WRITE,
    on_error=integrations_page,
    confirm=Confirmation(
        "Revoke this integration?",
        "Its URL answers 410 from now on, so the monitoring tool's alerts no longer open incidents. "
        "It cannot be restored.",
        "Revoke integration",
    ),
)
def revoke_integration(ctx: Ctx) -> Redirect:
    """Revoke an integration: its URL answers 410 from now on."""
    admin.revoke_integration(**ctx.item, now=ctx.now)
    return Redirect(app_path("/integrations", settings=ctx.settings), notice="integration_revoked")
