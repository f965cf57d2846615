"""Request and response models for webhook subscriptions and their deliveries (they generate the OpenAPI document)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import ConfigDict, Field, WithJsonSchema
from pydantic.json_schema import SkipJsonSchema

from chalicelib.delivery.targets import MAX_URL_LENGTH, URL_PATTERN
from chalicelib.directory import rules
from chalicelib.model_base import ApiModel, MultiLine, RequestModel, SingleLine, StrictBool, VersionedPatchModel
from chalicelib.outbound.events import ALL_EVENTS, EVENT_TYPES
from chalicelib.outbound.subscriptions import (
    MAX_EVENT_TYPE_ENTRIES,
    CreatedSubscription,
    DeliveryPage,
    event_types_of,
)
from chalicelib.outbound.tables import WebhookDeliveryRecord, WebhookSubscriptionRecord

# Checked by the service, so every problem is one field message (event_types.<n>).
EventTypeName = Annotated[
    str, Field(max_length=64), SingleLine, WithJsonSchema({"type": "string", "enum": [*EVENT_TYPES, ALL_EVENTS]})
]
# Lengths checked by the service too, so an empty list is one message on `event_types`.
EventTypes = Annotated[
    list[EventTypeName],
    Field(
        description='Event types to receive, or ["*"] for every type (present and future): "*" only alone.',
        json_schema_extra={"minItems": 1, "maxItems": MAX_EVENT_TYPE_ENTRIES},
    ),
]
TargetUrl = Annotated[
    str,
    Field(
        min_length=1,
        max_length=MAX_URL_LENGTH,
        description="Where deliveries are POSTed: https, and a host that resolves only to public addresses "
        "(checked on every write and again before every delivery).",
        json_schema_extra={"pattern": URL_PATTERN},
    ),
    SingleLine,
]
Description = Annotated[str, Field(max_length=rules.DESCRIPTION_MAX), MultiLine]
Email = Annotated[str, Field(max_length=rules.EMAIL_MAX, pattern=rules.EMAIL_PATTERN)]
IntegrationId = Annotated[
    str,
    Field(
        min_length=1,
        max_length=64,
        pattern=r"^[A-Za-z0-9_-]+$",
        description="An integration of the organization: this subscription is the outbound side of a "
        "bi-directional sync with its tool. Events get data.sync_status, and changes that tool made "
        "through its inbound webhook are not sent back to it.",
    ),
]
OwnerEmail = Annotated[Email, Field(description="Who is emailed when failed deliveries disable the subscription.")]


class SubscriptionCreate(RequestModel):
    url: TargetUrl
    event_types: EventTypes
    description: Description | None = None
    enabled: StrictBool = True
    owner_email: OwnerEmail | None = Field(
        default=None, description="Defaults to the calling user's email (null for a service-account key)."
    )
    sync_integration_id: IntegrationId | None = None


class SubscriptionPatch(VersionedPatchModel):
    nullable = frozenset({"description", "owner_email", "sync_integration_id"})

    url: TargetUrl | SkipJsonSchema[None] = None
    event_types: EventTypes | SkipJsonSchema[None] = None
    description: Description | None = None
    enabled: StrictBool | SkipJsonSchema[None] = Field(
        default=None, description="true re-enables a disabled subscription and clears disabled_reason/disabled_at."
    )
    owner_email: OwnerEmail | None = None
    sync_integration_id: IntegrationId | None = None


class DeliveryQuery(ApiModel):
    model_config = ConfigDict(extra="forbid")

    limit: int = Field(default=20, ge=1, le=100, description="Page size, 1 to 100.")
    cursor: Annotated[str, SingleLine] | None = Field(
        default=None, max_length=512, description="next_cursor of the previous page."
    )


class SubscriptionV1(ApiModel):
    subscription_id: str = Field(description="whs_<hex>")
    url: str
    event_types: list[str]
    description: str | None
    enabled: bool
    disabled_reason: str | None = Field(description="delivery_failures or manual; null while enabled.")
    disabled_at: datetime | None
    owner_email: str | None
    sync_integration_id: str | None
    version: int = Field(description="Bumped by every write; send it back in a PATCH to make the change conditional.")
    created_at: datetime
    updated_at: datetime | None

    @classmethod
    def fields_of(cls, record: WebhookSubscriptionRecord) -> dict[str, Any]:
        return {
            "subscription_id": record.subscription_id,
            "url": record.url,
            "event_types": event_types_of(record),
            "description": record.description,
            "enabled": bool(record.enabled),
            "disabled_reason": record.disabled_reason,
            "disabled_at": record.disabled_at,
            "owner_email": record.owner_email,
            "sync_integration_id": record.sync_integration_id,
            "version": int(record.version or 0),
            "created_at": record.created_at,
            "updated_at": record.updated_at,
        }

    @classmethod
    def of(cls, record: WebhookSubscriptionRecord) -> SubscriptionV1:
        return cls(**cls.fields_of(record))


class SubscriptionIssuedV1(SubscriptionV1):
    """Creation and rotation only: the signing secret is never shown again."""

    secret: str = Field(
        description="whsec_...: deliveries carry X-Service-Signature: sha256=<hex HMAC-SHA256(secret, "
        '"<X-Service-Timestamp>." + raw body)>.'
    )

    @classmethod
    def issued(cls, created: CreatedSubscription) -> SubscriptionIssuedV1:
        return cls(**cls.fields_of(created.record), secret=created.secret)


class SubscriptionListV1(ApiModel):
    items: list[SubscriptionV1]


class WebhookDeliveryV1(ApiModel):
    delivery_id: str = Field(description="<occurred_at>#<event_id>")
    event_id: str
    event_type: str
    status: str = Field(description="pending, retrying, succeeded or failed.")
    attempts: int
    last_attempt_at: datetime | None
    next_attempt_at: datetime | None
    last_error: str | None
    response_code: int | None
    created_at: datetime

    @classmethod
    def of(cls, record: WebhookDeliveryRecord) -> WebhookDeliveryV1:
        return cls(
            delivery_id=record.delivery_key,
            event_id=record.event_id,
            event_type=record.event_type,
            status=record.status,
            attempts=int(record.attempts or 0),
            last_attempt_at=record.last_attempt_at,
            next_attempt_at=record.next_attempt_at,
            last_error=record.last_error,
            response_code=int(record.response_code) if record.response_code is not None else None,
            created_at=record.created_at,
        )


class WebhookDeliveryPageV1(ApiModel):
    items: list[WebhookDeliveryV1]
    next_cursor: str | None = Field(description="Pass as cursor for the next (older) page; null on the last page.")

    @classmethod
    def of(cls, page: DeliveryPage) -> WebhookDeliveryPageV1:
        return cls(items=[WebhookDeliveryV1.of(record) for record in page.items], next_cursor=page.next_cursor)
