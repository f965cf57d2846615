"""Subscribers of public status pages: one partition per page.

Partition `page_id`; sort key `item_key`:
- `SUB#<subscriber_id>` a subscriber (`sub_<hex>`): an email address, or a webhook URL with the
  email address told when the webhook keeps failing. `status` is `pending` until the
  confirmation link is followed (double opt-in), then `confirmed`; nothing but the confirmation
  is ever sent to a pending subscriber. A pending subscriber carries `expires_at` (DynamoDB TTL)
  so an unconfirmed address disappears on its own; confirming removes it.
  `component_ids` empty means every component of the page.
- `ADDR#<email>` / `URL#<sha256 of url>` guards: one subscriber per address (or webhook URL) and
  page, claimed in the subscriber's create transaction (`subscriber_id` names the holder), so a
  retried or racing subscribe never makes two.

Notifying a page's followers is one Query (`begins_with SUB#`) per public event, never per
request; unsubscribing deletes the subscriber and its guard in one transaction.
"""

from __future__ import annotations

from pynamodb.attributes import (
    JSONAttribute,
    TTLAttribute,
    UnicodeAttribute,
    UTCDateTimeAttribute,
    VersionAttribute,
)

from chalicelib import aws
from chalicelib.store.model import TocsinModel

SUBSCRIBER_PREFIX = "SUB#"
EMAIL_GUARD_PREFIX = "ADDR#"
URL_GUARD_PREFIX = "URL#"
PENDING = "pending"
CONFIRMED = "confirmed"
EMAIL = "email"
WEBHOOK = "webhook"


def subscriber_key(subscriber_id: str) -> str:
    return f"{SUBSCRIBER_PREFIX}{subscriber_id}"


@aws.register_model
class SubscriberItem(TocsinModel):
    class Meta(TocsinModel.Meta):
        table_name = "status-subscribers"

    page_id = UnicodeAttribute(hash_key=True)
    item_key = UnicodeAttribute(range_key=True)

    subscriber_id = UnicodeAttribute(null=True)  # subscriber; guard: the holder
    organization_id = UnicodeAttribute(null=True)  # subscriber (the page's organization)
    kind = UnicodeAttribute(null=True)  # subscriber: email | webhook
    email = UnicodeAttribute(null=True)  # subscriber: lowercased address
    url = UnicodeAttribute(null=True)  # webhook subscriber
    component_ids = JSONAttribute(null=True)  # subscriber: [] = all components
    status = UnicodeAttribute(null=True)  # subscriber: pending | confirmed
    created_at = UTCDateTimeAttribute(null=True)
    confirmed_at = UTCDateTimeAttribute(null=True)
    expires_at = TTLAttribute(null=True)  # pending subscribers only
    version = VersionAttribute()
