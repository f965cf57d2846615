"""Outbound webhook subscriptions: list, create (the signing secret shown once), disable and enable,
rotate the secret, delete, and each one's recent deliveries.

Every operation needs `webhooks:write`, as in the API (even reading: a subscription names where
the organization's events go); other roles see the page say so. The handlers call
`outbound.subscriptions` through the API's request models, so the URL (https, public addresses
only), event type and owner checks are the API's.
"""

from __future__ import annotations

from typing import Any

from chalicelib.console.visits import app_path
from chalicelib.console.web import Confirmation, ConsolePages, Ctx, Page, Redirect
from chalicelib.outbound import subscriptions
from chalicelib.outbound.events import ALL_EVENTS, EVENT_TYPES
from chalicelib.outbound.models import DeliveryQuery, SubscriptionCreate, SubscriptionPatch
from chalicelib.outbound.subscriptions import CreatedSubscription

console = ConsolePages(
    __name__,
    notices={
        "webhook_disabled": "Subscription disabled. No events are sent to it until you enable it.",
        "webhook_enabled": "Subscription enabled.",
        "webhook_deleted": "Subscription deleted. Queued retries stop.",
    },
)

SCOPE = "webhooks:write"
DELIVERIES_PER_PAGE = 20


def _allowed(ctx: Ctx) -> bool:
    return ctx.can(SCOPE)


def webhooks_page(ctx: Ctx) -> Page:
    allowed = _allowed(ctx)
    posted = ctx.request.method == "POST"
    return Page(
        "console/self_service/webhooks.html",
        "Webhooks",
        section="webhooks",
        context={
            "allowed": allowed,
            "subscriptions": subscriptions.list_subscriptions(organization_id=ctx.organization_id) if allowed else [],
            "event_types": EVENT_TYPES,
            "all_events": ALL_EVENTS,
            "typed": {
                "url": ctx.value("url"),
                "description": ctx.value("description"),
                "owner_email": ctx.value("owner_email") if posted else (ctx.signed_in.email or ""),
                "event_types": ctx.values("event_types") if posted else [ALL_EVENTS],
            },
        },
    )


@console.page("/webhooks")
def show_webhooks(ctx: Ctx) -> Page:
    """The organization's outbound webhook subscriptions (never their secrets)."""
    return webhooks_page(ctx)


def subscription_page(ctx: Ctx) -> Page:
    subscription_id = ctx.path["subscription_id"]
    if not _allowed(ctx):
        return Page(
            "console/self_service/webhook.html",
            "Webhook subscription",
            section="webhooks",
            context={"allowed": False, "subscription": None, "deliveries": None, "cursor": ""},
        )
    query = ctx.model(DeliveryQuery, {"limit": DELIVERIES_PER_PAGE, "cursor": ctx.arg("cursor") or None})
    record = subscriptions.get_subscription(organization_id=ctx.organization_id, subscription_id=subscription_id)
    deliveries = subscriptions.list_deliveries(
        organization_id=ctx.organization_id,
        subscription_id=subscription_id,
        now=ctx.now,
        limit=query.limit,
        cursor=query.cursor,
    )
    return Page(
        "console/self_service/webhook.html",
        "Webhook subscription",
        section="webhooks",
        context={
            "allowed": True,
            "subscription": record,
            "event_types_of": subscriptions.event_types_of,
            "all_events": ALL_EVENTS,
            "deliveries": deliveries,
            "cursor": query.cursor or "",
        },
    )


@console.page("/webhooks/{subscription_id}")
def show_webhook(ctx: Ctx) -> Page:
    """One subscription and its recent deliveries, newest first."""
    return subscription_page(ctx)


def _issued_page(created: CreatedSubscription, *, rotated: bool) -> Page:
    return Page(
        "console/self_service/webhook_secret.html",
        "New signing secret" if rotated else "Webhook subscription created",
        section="webhooks",
        context={"subscription": created.record, "secret": created.secret, "rotated": rotated},
    )


@console.action("/webhooks", scope=SCOPE, on_error=webhooks_page)
def create_webhook(ctx: Ctx) -> Page:
    """Subscribe a URL to events and show its signing secret, once."""
    fields: dict[str, Any] = {
        "url": ctx.value("url"),
        "event_types": ctx.values("event_types"),
        "description": ctx.value("description") or None,
        # A form always sends the field: blank means nobody is emailed when deliveries keep failing.
        "owner_email": ctx.value("owner_email") or None,
    }
    body = ctx.model(SubscriptionCreate, fields)
    created = subscriptions.create_subscription(
        organization_id=ctx.organization_id,
        now=ctx.now,
        created_by=ctx.signed_in.actor,
        settings=ctx.settings,
        **body.arguments(),
    )
    return _issued_page(created, rotated=False)


def _set_enabled(ctx: Ctx, enabled: bool) -> None:
    body = ctx.model(SubscriptionPatch, {"enabled": enabled, "version": ctx.value("version") or None})
    subscriptions.update_subscription(**ctx.item, now=ctx.now, settings=ctx.settings, **body.arguments())


@console.action("/webhooks/{subscription_id}/disable", scope=SCOPE, on_error=subscription_page)
def disable_webhook(ctx: Ctx) -> Redirect:
    """Stop sending events to a subscription (it stays, with its deliveries)."""
    _set_enabled(ctx, False)
    return Redirect(
        app_path(f"/webhooks/{ctx.path['subscription_id']}", settings=ctx.settings), notice="webhook_disabled"
    )


@console.action("/webhooks/{subscription_id}/enable", scope=SCOPE, on_error=subscription_page)
def enable_webhook(ctx: Ctx) -> Redirect:
    """Send events to a disabled subscription again."""
    _set_enabled(ctx, True)
    return Redirect(
        app_path(f"/webhooks/{ctx.path['subscription_id']}", settings=ctx.settings), notice="webhook_enabled"
    )


@console.action(
    "/webhooks/{subscription_id}/rotate-secret",
    scope=SCOPE,
    on_error=subscription_page,
    confirm=Confirmation(
        "Rotate this subscription's signing secret?",
        "Deliveries are signed with the new secret at once; the receiver refuses them until it has it.",
        "Rotate secret",
    ),
)
def rotate_webhook_secret(ctx: Ctx) -> Page:
    """A new signing secret, shown once; the old one stops signing at once."""
    rotated = subscriptions.rotate_secret(**ctx.item, now=ctx.now, settings=ctx.settings)
    return _issued_page(rotated, rotated=True)


@console.action(
    "/webhooks/{subscription_id}/delete",
    scope=SCOPE,
    on_error=webhooks_page,
    confirm=Confirmation(
        "Delete this webhook subscription?",
        "No more events are sent to its URL, and its delivery history goes with it.",
        "Delete subscription",
    ),
)
def delete_webhook(ctx: Ctx) -> Redirect:
    """Delete a subscription; queued retries stop."""
    subscriptions.delete_subscription(**ctx.item)
    return Redirect(app_path("/webhooks", settings=ctx.settings), notice="webhook_deleted")
