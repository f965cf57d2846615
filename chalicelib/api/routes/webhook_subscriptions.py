"""Outbound webhook subscriptions: create (secret shown once), list, get, update, delete, rotate the
secret, and list deliveries. Every operation needs webhooks:write."""

from __future__ import annotations

from chalicelib.api.operation import Call, OperationGroup
from chalicelib.oncall.models import DeletedV1
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

BASE = "/api/v1/webhook-subscriptions"
ITEM = BASE + "/{subscription_id}"
SCOPE = "webhooks:write"
_DELIVERY_RULES = (
    "Each event is POSTed as JSON (the `webhooks` section of this document describes every event type) "
    "with the headers X-Service-Timestamp, X-Service-Signature (sha256=<hex HMAC-SHA256(secret, "
    '"<timestamp>." + raw body)>, as inbound custom webhooks are verified), X-Tocsin-Event-Id, '
    "X-Tocsin-Event-Type and X-Tocsin-Delivery-Attempt. A 2xx answer within 10 s delivers it; anything "
    "else (4xx other than 408/429 included) is retried 1 min, 5 min, 30 min and 2 h later. After 5 failed "
    "attempts the subscription is disabled (disabled_reason delivery_failures) and owner_email is told."
)


@api.operation(
    "POST",
    BASE,
    operation_id="createWebhookSubscription",
    summary="Subscribe a URL to events; the signing secret is in this response only",
    scope=SCOPE,
    body=SubscriptionCreate,
    response=SubscriptionIssuedV1,
    status=201,
    errors=(400, 409),
    description=_DELIVERY_RULES + f" At most {subscriptions.MAX_SUBSCRIPTIONS} subscriptions per organization (409).",
)
def create_subscription(call: Call) -> SubscriptionIssuedV1:
    body: SubscriptionCreate = call.body
    owner = body.owner_email if "owner_email" in body.model_fields_set else call.principal.email
    created = subscriptions.create_subscription(
        organization_id=call.principal.organization_id,
        url=body.url,
        event_types=body.event_types,
        now=call.now,
        description=body.description,
        owner_email=owner,
        sync_integration_id=body.sync_integration_id,
        enabled=body.enabled,
        created_by=call.principal.actor,
    )
    return SubscriptionIssuedV1.issued(created)


@api.operation(
    "GET",
    BASE,
    operation_id="listWebhookSubscriptions",
    summary="List webhook subscriptions, newest first (never their secrets)",
    scope=SCOPE,
    response=SubscriptionListV1,
)
def list_subscriptions(call: Call) -> SubscriptionListV1:
    found = subscriptions.list_subscriptions(organization_id=call.principal.organization_id)
    return SubscriptionListV1(items=[SubscriptionV1.of(record) for record in found])


@api.operation(
    "GET",
    ITEM,
    operation_id="getWebhookSubscription",
    summary="Get a webhook subscription",
    scope=SCOPE,
    response=SubscriptionV1,
    errors=(404,),
)
def get_subscription(call: Call) -> SubscriptionV1:
    return SubscriptionV1.of(
        subscriptions.get_subscription(
            organization_id=call.principal.organization_id, subscription_id=call.path["subscription_id"]
        )
    )


@api.operation(
    "PATCH",
    ITEM,
    operation_id="updateWebhookSubscription",
    summary="Update a webhook subscription (at least one field); enabled=true re-enables a disabled one",
    scope=SCOPE,
    body=SubscriptionPatch,
    response=SubscriptionV1,
    errors=(400, 404, 409),
    description="Send the version you read to make the change conditional: 409 when the subscription "
    "changed since. enabled=false disables it by hand (disabled_reason manual).",
)
def update_subscription(call: Call) -> SubscriptionV1:
    body: SubscriptionPatch = call.body
    record = subscriptions.update_subscription(
        organization_id=call.principal.organization_id,
        subscription_id=call.path["subscription_id"],
        now=call.now,
        expected_version=body.version,
        **body.domain_changes(),
    )
    return SubscriptionV1.of(record)


@api.operation(
    "DELETE",
    ITEM,
    operation_id="deleteWebhookSubscription",
    summary="Delete a webhook subscription; queued retries stop",
    scope=SCOPE,
    response=DeletedV1,
    errors=(404,),
)
def delete_subscription(call: Call) -> DeletedV1:
    subscription_id = call.path["subscription_id"]
    subscriptions.delete_subscription(organization_id=call.principal.organization_id, subscription_id=subscription_id)
    return DeletedV1(id=subscription_id, deleted=True)


@api.operation(
    "POST",
    ITEM + "/rotate-secret",
    operation_id="rotateWebhookSubscriptionSecret",
    summary="A new signing secret, in this response only; the old one stops signing at once",
    scope=SCOPE,
    response=SubscriptionIssuedV1,
    errors=(404, 409),
)
def rotate_secret(call: Call) -> SubscriptionIssuedV1:
    rotated = subscriptions.rotate_secret(
        organization_id=call.principal.organization_id, subscription_id=call.path["subscription_id"], now=call.now
    )
    return SubscriptionIssuedV1.issued(rotated)


@api.operation(
    "GET",
    ITEM + "/deliveries",
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
