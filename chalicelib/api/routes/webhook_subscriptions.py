"""Outbound webhook subscriptions: create (secret shown once), list, get, update, delete, rotate the
secret, and list deliveries. Every operation needs webhooks:write."""

from __future__ import annotations

from chalicelib.api.operation import Call, OperationGroup
from chalicelib.api.resource import Resource, each
from chalicelib.outbound import subscriptions
from chalicelib.outbound.models import (
    DeliveryQuery,
    SubscriptionCreate,
    SubscriptionIssuedV1,
    SubscriptionListV1,
    SubscriptionPatch,
    SubscriptionV1,
    WebhookDeliveryPageV1,
)

api = OperationGroup(__name__, tag="webhook-subscriptions")

SCOPE = "webhooks:write"
hooks = Resource(
    api,
    "/api/v1/webhook-subscriptions",
    "subscription_id",
    SubscriptionV1,
    each(SubscriptionV1.of),
    read=SCOPE,
    write=SCOPE,
)
_DELIVERY_RULES = (
    "Each event is POSTed as JSON (the `webhooks` section of this document describes every event type) "
    "with the headers X-Service-Timestamp, X-Service-Signature (sha256=<hex HMAC-SHA256(secret, "
    '"<timestamp>." + raw body)>, as inbound custom webhooks are verified), X-Tocsin-Event-Id, '
    "X-Tocsin-Event-Type and X-Tocsin-Delivery-Attempt. A 2xx answer within 10 s delivers it; anything "
    "else (4xx other than 408/429 included) is retried 1 min, 5 min, 30 min and 2 h later. After 5 failed "
    "attempts the subscription is disabled (disabled_reason delivery_failures) and owner_email is told."
)


def _create(call: Call, body: SubscriptionCreate) -> subscriptions.CreatedSubscription:
    owner = body.owner_email if "owner_email" in body.model_fields_set else call.principal.email
    return subscriptions.create_subscription(
        organization_id=call.principal.organization_id,
        now=call.now,
        created_by=call.principal.actor,
        settings=call.settings,
        **{**body.arguments(), "owner_email": owner},
    )


def _issued_v1(_call: Call, issued: subscriptions.CreatedSubscription) -> SubscriptionIssuedV1:
    return SubscriptionIssuedV1.issued(issued)


hooks.create(
    "createWebhookSubscription",
    "Subscribe a URL to events; the signing secret is in this response only",
    SubscriptionCreate,
    _create,
    response=SubscriptionIssuedV1,
    present=_issued_v1,
    errors=(400, 409),
    description=_DELIVERY_RULES + f" At most {subscriptions.MAX_SUBSCRIPTIONS} subscriptions per organization (409).",
)


@api.operation(
    "GET",
    hooks.base,
    operation_id="listWebhookSubscriptions",
    summary="List webhook subscriptions, newest first (never their secrets)",
    scope=SCOPE,
    response=SubscriptionListV1,
)
def list_subscriptions(call: Call) -> SubscriptionListV1:
    found = subscriptions.list_subscriptions(organization_id=call.principal.organization_id)
    return SubscriptionListV1(items=[SubscriptionV1.of(record) for record in found])


hooks.get("getWebhookSubscription", "Get a webhook subscription", subscriptions.get_subscription)
hooks.update(
    "updateWebhookSubscription",
    "Update a webhook subscription (at least one field); enabled=true re-enables a disabled one",
    SubscriptionPatch,
    subscriptions.update_subscription,
    with_settings=True,
    description="Send the version you read to make the change conditional: 409 when the subscription "
    "changed since. enabled=false disables it by hand (disabled_reason manual).",
)
hooks.delete(
    "deleteWebhookSubscription", "Delete a webhook subscription; queued retries stop", subscriptions.delete_subscription
)
hooks.act(
    "POST",
    "/rotate-secret",
    "rotateWebhookSubscriptionSecret",
    "A new signing secret, in this response only; the old one stops signing at once",
    subscriptions.rotate_secret,
    with_settings=True,
    response=SubscriptionIssuedV1,
    present=_issued_v1,
    errors=(404, 409),
)


@api.operation(
    "GET",
    hooks.item + "/deliveries",
    operation_id="listWebhookDeliveries",
    summary="Deliveries of a subscription, newest first (kept 30 days)",
    scope=SCOPE,
    query=DeliveryQuery,
    response=WebhookDeliveryPageV1,
    errors=(400, 404),
)
def list_deliveries(call: Call) -> WebhookDeliveryPageV1:
    query: DeliveryQuery = call.query
    page = subscriptions.list_deliveries(
        organization_id=call.principal.organization_id,
        subscription_id=call.path["subscription_id"],
        now=call.now,
        limit=query.limit,
        cursor=query.cursor,
    )
    return WebhookDeliveryPageV1.of(page)
