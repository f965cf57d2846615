"""Reading subscribers: one GetItem by key, or one Query of the page's partition.

The notices (who hears about a public event) read `confirmed_for`; the managers' list and count
read `all_subscribers`. Both are one Query on `page_id` with `begins_with SUB#`, never a Scan.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

from pynamodb.exceptions import DoesNotExist

from chalicelib.subscriber import rules
from chalicelib.subscriber.tables import CONFIRMED, SUBSCRIBER_PREFIX, SubscriberItem, subscriber_key


def get_item(page_id: str, item_key: str) -> SubscriberItem | None:
    """One consistent GetItem; None when absent (expiry is the caller's to judge)."""
    try:
        return SubscriberItem.get(page_id, item_key, consistent_read=True)
    except DoesNotExist:
        return None


def get_subscriber(page_id: str, subscriber_id: str, now: datetime) -> SubscriberItem | None:
    """The subscriber when it exists and still counts; None otherwise (unknown ids included)."""
    if not rules.is_subscriber_id(subscriber_id):
        return None
    return rules.live(get_item(page_id, subscriber_key(subscriber_id)), now)


def _subscribers(page_id: str) -> Iterator[SubscriberItem]:
    yield from SubscriberItem.query(page_id, SubscriberItem.item_key.startswith(SUBSCRIBER_PREFIX))


def all_subscribers(page_id: str, now: datetime) -> list[SubscriberItem]:
    """Every subscriber of the page that still counts, oldest first (ids sort by creation time)."""
    return [item for item in _subscribers(page_id) if not rules.expired(item, now)]


def confirmed_for(page_id: str, event_component_ids: list[str]) -> list[SubscriberItem]:
    """The confirmed subscribers who follow the event's components (or the whole page)."""
    return [
        item
        for item in _subscribers(page_id)
        if item.status == CONFIRMED and rules.wanted(item.component_ids, event_component_ids)
    ]


def forget_page(page_id: str) -> int:
    """Delete everything stored for a deleted page (subscribers, guards, notice claims); returns how
    many items went. Unconditional: page ids are never reused, and a redelivery finds fewer."""
    forgotten = 0
    for item in SubscriberItem.query(page_id, attributes_to_get=["page_id", "item_key"]):
        item.delete(add_version_condition=False)
        forgotten += 1
    return forgotten
