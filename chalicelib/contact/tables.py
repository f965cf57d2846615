"""A user's contact methods and notification rules: one partition per user, so reading everything
the paging engine needs about a person is one Query.

Items of the partition `user_key = <organization_id>#<user_id>`:
- `item_key = "rules"`: the head item. The notification rules of both urgencies, their `version`
  (what clients send back for optimistic concurrency) and `revision`, bumped by every write that
  changes the set of methods or their addresses, so the limit, the duplicate check and "every rule
  names one of the user's methods" are checked against what is really stored.
- `item_key = "method#<contact_method_id>"`: one contact method, with its verification state.

`version` and `revision` are plain numbers compared in conditions, not PynamoDB VersionAttributes:
a VersionAttribute is bumped by every write of the item, and adding a method must not make a
client's rules edit stale.

The sparse index `address-index` holds verified sms and voice methods only (`address_key =
sms#+15551234567`): who owns a number that replies by SMS is one Query.
"""

from __future__ import annotations

from pynamodb.attributes import (
    BooleanAttribute,
    JSONAttribute,
    NumberAttribute,
    UnicodeAttribute,
    UTCDateTimeAttribute,
)
from pynamodb.indexes import GlobalSecondaryIndex

from chalicelib import aws
from chalicelib.store.indexes import global_index
from chalicelib.store.model import TocsinModel

RULES_ITEM_KEY = "rules"
METHOD_PREFIX = "method#"


def user_key(organization_id: str, user_id: str) -> str:
    return f"{organization_id}#{user_id}"


def method_item_key(contact_method_id: str) -> str:
    return f"{METHOD_PREFIX}{contact_method_id}"


@aws.register_model
class ContactRecord(TocsinModel):
    class Meta(TocsinModel.Meta):
        table_name = "contacts"

    user_key = UnicodeAttribute(hash_key=True)
    item_key = UnicodeAttribute(range_key=True)
    organization_id = UnicodeAttribute()
    user_id = UnicodeAttribute()
    created_at = UTCDateTimeAttribute()
    updated_at = UTCDateTimeAttribute(null=True)

    # The rules item.
    high = JSONAttribute(null=True)  # [{"contact_method_id", "delay_minutes"}], by delay
    low = JSONAttribute(null=True)
    version = NumberAttribute(null=True)
    revision = NumberAttribute(null=True)

    # A method item.
    contact_method_id = UnicodeAttribute(null=True)
    method_type = UnicodeAttribute(null=True)  # email | slack | sms | voice | a hook type
    address = UnicodeAttribute(null=True)
    label = UnicodeAttribute(null=True)
    verified = BooleanAttribute(null=True)
    follows_account_email = BooleanAttribute(null=True)
    address_key = UnicodeAttribute(null=True)
    # A webhook-style method (chalicelib/contact/hooks.py): its destination sealed (the URL is a
    # secret; `address` holds only a hint) and the HMAC of it a duplicate check compares.
    sealed_destination = UnicodeAttribute(null=True)
    destination_identity = UnicodeAttribute(null=True)
    # Verification: an HMAC of the code (never the code), its expiry, the attempts claimed on it,
    # and the send history behind the resend cooldown and the hourly cap.
    code_digest = UnicodeAttribute(null=True)
    code_expires_at = UTCDateTimeAttribute(null=True)
    code_attempts = NumberAttribute(null=True)
    code_sent_at = UTCDateTimeAttribute(null=True)
    send_window_started_at = UTCDateTimeAttribute(null=True)
    sends_in_window = NumberAttribute(null=True)

    # address_key: <type>#<E.164>, verified phone methods only
    by_address: GlobalSecondaryIndex[ContactRecord] = global_index("address-index", "address_key")
