"""Outbound webhook subscriptions and their deliveries.

Subscriptions live in the organization's partition (an organization has a handful; the fan-out
reads them with one Query). A delivery is one event for one subscription: its key is derived from
the event, so a redelivered fan-out message finds the delivery already written (conditional put)
instead of sending twice. The stored body is what every attempt sends, byte for byte.
"""

from __future__ import annotations

from pynamodb.attributes import (
    BooleanAttribute,
    NumberAttribute,
    TTLAttribute,
    UnicodeAttribute,
    UnicodeSetAttribute,
    UTCDateTimeAttribute,
    VersionAttribute,
)

from chalicelib import aws
from chalicelib.store.model import TocsinModel


@aws.register_model
class WebhookSubscriptionRecord(TocsinModel):
    class Meta(TocsinModel.Meta):
        table_name = "webhook-subscriptions"

    organization_id = UnicodeAttribute(hash_key=True)
    subscription_id = UnicodeAttribute(range_key=True)  # whs_<hex>
    url = UnicodeAttribute()
    event_types = UnicodeSetAttribute()  # names from chalicelib.outbound.events.EVENT_TYPES
    description = UnicodeAttribute(null=True)
    enabled = BooleanAttribute(default=True)
    disabled_reason = UnicodeAttribute(null=True)  # "delivery_failures" or "manual"
    disabled_at = UTCDateTimeAttribute(null=True)
    # Bi-directional sync: this subscription is the outbound side of that integration's tool.
    sync_integration_id = UnicodeAttribute(null=True)
    owner_email = UnicodeAttribute(null=True)  # who hears when deliveries disable it
    sealed_secret = UnicodeAttribute()  # secrets_box.seal(secret, context=subscription_id)
    created_by = UnicodeAttribute(null=True)
    created_at = UTCDateTimeAttribute()
    updated_at = UTCDateTimeAttribute(null=True)
    version = VersionAttribute()


@aws.register_model
class WebhookDeliveryRecord(TocsinModel):
    class Meta(TocsinModel.Meta):
        table_name = "webhook-deliveries"

    subscription_id = UnicodeAttribute(hash_key=True)
    # f"{occurred_at}#{event_id}": sorts deliveries oldest first (list newest first with
    # scan_index_forward=False) and is the same for every redelivery of the event.
    delivery_key = UnicodeAttribute(range_key=True)
    organization_id = UnicodeAttribute()
    event_id = UnicodeAttribute()
    event_type = UnicodeAttribute()
    body = UnicodeAttribute()  # the exact JSON every attempt sends
    status = UnicodeAttribute()  # pending, retrying, succeeded, failed
    attempts = NumberAttribute(default=0)
    # An attempt claims the delivery until this instant, so a redelivered message does not send
    # the same attempt twice; a crashed attempt's claim expires and the attempt can run again.
    claimed_until = UTCDateTimeAttribute(null=True)
    last_attempt_at = UTCDateTimeAttribute(null=True)
    next_attempt_at = UTCDateTimeAttribute(null=True)
    last_error = UnicodeAttribute(null=True)
    response_code = NumberAttribute(null=True)
    created_at = UTCDateTimeAttribute()
    updated_at = UTCDateTimeAttribute(null=True)
    expires_at = TTLAttribute()  # 30 days after creation
    version = VersionAttribute()
