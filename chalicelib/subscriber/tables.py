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

- `SENT#<notice_id>#<subscriber_id>` notice claims (chalicelib/subscriber/notices.py): written
  with a does-not-exist condition before a notice goes to a subscriber, so a retried message
  never tells one subscriber twice about one change. For a webhook subscriber the claim is also
  the delivery record (body, attempts, next attempt). They expire (`expires_at`) after 30 days.

Notifying a page's followers is one Query (`begins_with SUB#`) per public event, never per
request; unsubscribing deletes the subscriber and its guard in one transaction.
"""

from __future__ import annotations

from pynamodb.attributes import (
    JSONAttribute,
    NumberAttribute,
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
NOTICE_PREFIX = "SENT#"
PENDING = "pending"
CONFIRMED = "confirmed"
EMAIL = "email"
WEBHOOK = "webhook"


def subscriber_key(subscriber_id: str) -> str:
    return f"{SUBSCRIBER_PREFIX}{subscriber_id}"


def notice_key(notice_id: str, subscriber_id: str) -> str:
    return f"{NOTICE_PREFIX}{notice_id}#{subscriber_id}"


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
    expires_at = TTLAttribute(null=True)  # pending subscribers and notice claims
    version = VersionAttribute()

    # Notice claims (SENT#...): what was sent to whom, and a webhook's delivery state.
    notice_id = UnicodeAttribute(null=True)
    event_type = UnicodeAttribute(null=True)  # incident.created, maintenance.started, ...
    delivery_status = UnicodeAttribute(
        null=True
    )  # email: sending|sent|failed; webhook: pending|retrying|succeeded|failed
    body = UnicodeAttribute(null=True)  # webhook: the exact JSON every attempt sends
    attempts = NumberAttribute(null=True)
    claimed_until = UTCDateTimeAttribute(null=True)  # webhook: the attempt in flight
    next_attempt_at = UTCDateTimeAttribute(null=True)
    last_attempt_at = UTCDateTimeAttribute(null=True)
    last_error = UnicodeAttribute(null=True)
    response_code = NumberAttribute(null=True)
    updated_at = UTCDateTimeAttribute(null=True)
