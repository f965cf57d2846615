"""Pure rules of maintenance windows: state from now, the times a window may have, list order,
and the sort key of the per-service items. Everything receives `now`; nothing reads AWS.

A window covers the half-open interval [start, end): an alert exactly at its start is in
maintenance, one exactly at its end is not.
"""

from __future__ import annotations

import re
import secrets
from datetime import UTC, datetime, timedelta
from typing import Literal

from chalicelib.errors import ValidationFailed

State = Literal["future", "ongoing", "past"]
StateFilter = Literal["future", "ongoing", "past", "open"]
STATES: tuple[State, ...] = ("ongoing", "future", "past")

MAX_DURATION = timedelta(days=90)
# A transaction holds at most 100 items: an update writes the window, deletes the old
# memberships and puts the new ones (1 + 2 x 40 = 81), with room to spare.
MAX_SERVICES = 40
# How long a membership item outlives its window before DynamoDB's TTL removes it. Reads never
# depend on it (the Query's key condition leaves ended windows out); it only keeps the table small.
MEMBERSHIP_GRACE = timedelta(days=1)

WINDOW_ID_PREFIX = "mw_"
_WINDOW_ID = re.compile(r"^mw_[0-9a-f]{32}$")
# Fixed width (years 2000-2100 are enforced on requests), so string order is time order.
_SORT_TIME_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"
# Sorts after "#" and every character of a window id: "<now>~" is above "<now>#mw_..." (a window
# ending exactly now) and below any later instant (its digits differ before the "#").
_AFTER_ANY_ID = "~"


def new_window_id() -> str:
    return f"{WINDOW_ID_PREFIX}{secrets.token_hex(16)}"


def is_window_id(value: str) -> bool:
    return bool(_WINDOW_ID.match(value))


def state_of(*, start: datetime, end: datetime, now: datetime) -> State:
    if now < start:
        return "future"
    if now < end:
        return "ongoing"
    return "past"


def matches_state(state: State, wanted: StateFilter | None) -> bool:
    if wanted is None:
        return True
    if wanted == "open":
        return state != "past"
    return state == wanted


def effective_start(start: datetime, now: datetime) -> datetime:
    """A start in the past means "from now" (as PagerDuty does): the window never claims a past
    it did not cover, and its state is right from the first read."""
    return max(start, now).astimezone(UTC)


def check_span(*, start: datetime, end: datetime, now: datetime, end_field: str = "end") -> None:
    """The times a window may be written with: end after start, end still ahead, at most
    MAX_DURATION long. `end_field` names the field a problem with the end is reported on."""
    if end <= start:
        raise ValidationFailed.for_field(end_field, "must be after start")
    if end <= now:
        raise ValidationFailed.for_field(end_field, "must be in the future")
    if end - start > MAX_DURATION:
        raise ValidationFailed.for_field(end_field, f"a window lasts at most {MAX_DURATION.days} days")


def list_order(*, start: datetime, end: datetime, window_id: str, now: datetime) -> tuple[int, float, str]:
    """What an operator looks for first: ongoing windows (ending soonest first), then future ones
    (starting soonest first), then past ones (most recently ended first)."""
    state = state_of(start=start, end=end, now=now)
    if state == "ongoing":
        return (0, end.timestamp(), window_id)
    if state == "future":
        return (1, start.timestamp(), window_id)
    return (2, -end.timestamp(), window_id)


def sort_time(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime(_SORT_TIME_FORMAT)


def membership_partition(organization_id: str, service_key: str) -> str:
    return f"{organization_id}#{service_key}"


def membership_sort_key(end: datetime, window_id: str) -> str:
    return f"{sort_time(end)}#{window_id}"


def ending_after(now: datetime) -> str:
    """The lower bound (exclusive) of the sort keys of windows that end after `now`."""
    return sort_time(now) + _AFTER_ANY_ID
