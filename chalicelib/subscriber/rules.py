"""What a subscriber is, pure: ids, guard keys, how long a pending subscriber waits, and when a
stored one still counts.

DynamoDB deletes an expired pending subscriber (TTL) some time after `expires_at`, and the
emulator never does: an item past its `expires_at` is treated as absent everywhere.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from chalicelib.addresses import mailbox_key
from chalicelib.statuspage import rules as statuspage_rules
from chalicelib.subscriber.tables import (
    CONFIRMED,
    EMAIL,
    EMAIL_GUARD_PREFIX,
    PENDING,
    URL_GUARD_PREFIX,
    WEBHOOK,
    SubscriberItem,
)

# A confirmation link works this long; subscribing again while pending sends a new one and
# starts the wait again.
PENDING_FOR = timedelta(hours=48)
SUBSCRIBER_ID_PATTERN = re.compile(r"^sub_[0-9a-f]{24}$")
MAX_COMPONENTS = 100
STATUSES = (PENDING, CONFIRMED)
KINDS = (EMAIL, WEBHOOK)


def new_subscriber_id(now: datetime) -> str:
    """`sub_<hex>`, sorting by creation time (the status page's ids: chalicelib/statuspage/rules.py)."""
    return statuspage_rules.new_id("sub", now)


def is_subscriber_id(value: str) -> bool:
    return SUBSCRIBER_ID_PATTERN.match(value) is not None


def url_digest(url: str) -> str:
    return hashlib.sha256(url.encode("utf-8")).hexdigest()


def guard_key(*, email: str, url: str | None) -> str:
    """One subscriber per page and address: a webhook is known by its URL, a person by the email."""
    if url is not None:
        return URL_GUARD_PREFIX + url_digest(url)
    return EMAIL_GUARD_PREFIX + email


def email_bucket_identity(email: str) -> str:
    """The per-address rate-limit window's identity: the mailbox the address reaches (every
    `+tag`, case and Gmail dot spelling of it counts as one), as a digest so no address is kept."""
    return hashlib.sha256(mailbox_key(email).encode("utf-8")).hexdigest()


def requester_digest(email: str) -> str:
    """Who asked for a confirmation, as the queued message carries it (no address in the queue):
    the worker sends only when the pending subscriber's own address is the one that asked."""
    return hashlib.sha256(email.encode("utf-8")).hexdigest()


def expired(item: SubscriberItem, now: datetime) -> bool:
    return item.expires_at is not None and item.expires_at <= now


def live(item: SubscriberItem | None, now: datetime) -> SubscriberItem | None:
    """The item when it still counts (a pending one past its wait does not)."""
    return None if item is None or expired(item, now) else item


@dataclass(frozen=True)
class SubscribeDecision:
    """What a subscribe request does to the address's current subscriber (None: it has none)."""

    create: bool  # a new pending subscriber (replacing an expired one, if any)
    refresh: bool  # the pending one gets the new choice, a new wait and a new confirmation email
    # Neither: the address is confirmed already, or a pending webhook subscriber was created by
    # another address; nothing is sent or changed.


def decide(current: SubscriberItem | None, email: str, now: datetime) -> SubscribeDecision:
    """`email` is the request's (lower-cased) address. A pending subscriber is only ever refreshed
    by the address that created it: a webhook's URL named again with another address must not
    move its confirmation (and the signing secret the confirmation shows) to that address."""
    found = live(current, now)
    if found is None:
        return SubscribeDecision(create=True, refresh=False)
    if found.status == PENDING and found.email == email:
        return SubscribeDecision(create=False, refresh=True)
    return SubscribeDecision(create=False, refresh=False)


def wanted(component_ids: list[str] | None, event_component_ids: list[str]) -> bool:
    """A subscriber with no components follows the whole page; otherwise only events that touch
    one of its components (an event touching no component reaches everyone)."""
    if not component_ids or not event_component_ids:
        return True
    return not set(component_ids).isdisjoint(event_component_ids)
