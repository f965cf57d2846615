"""Event ids: time-ordered sort keys, and the bound that keeps a flood from filling the log.

An event id is `<yyyymmddHHMMSS UTC>.<slot>`, so an integration's partition read backwards is
newest first and a time range is a key condition. Recording is one write, without a counter of
its own (that would be a second write): the slot comes from what the request path counted anyway.

- `d<n>`: a request past the routing-key credential is the n-th of its window in the routing
  key's rate-limit bucket (`hits`, counted by the pipeline's admission). The first
  `DELIVERY_SLOTS` of a window each get their own record: unique, as hits are.
- `x`: past those (or rate limited) the window shares one record, the latest, which counts
  the requests it stands for. Dated at the window's last second, so it reads as the newest.
- `r`: a request refused at the door (revoked, plain HTTP, an address not allowed, too large,
  a bad signature), before any bucket it owns counted it, shares one record per
  `DOOR_SECONDS` (a flood of forgeries keeps 6 a minute).
- `p<token>`: a replay (an API call, counted by the caller's own bucket): its own record.

So an integration keeps at most DELIVERY_SLOTS + 1 + 60 / DOOR_SECONDS records a minute, each
for 30 days: a flood past the rate limit adds at most 7 a minute.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from chalicelib.ratelimit.window import window_for

DELIVERY_SLOTS = 30
DOOR_SECONDS = 10
RETENTION = timedelta(days=30)
_STAMP = "%Y%m%d%H%M%S"
EVENT_ID = re.compile(r"^\d{14}\.(d\d{3}|x|r|p[0-9a-f]{8})$")


@dataclass(frozen=True)
class Slot:
    event_id: str
    shared: bool  # other requests may land here (the record counts them)


def stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime(_STAMP)


def slot_for(now: datetime, *, hits: int | None, rate_limited: bool, window_seconds: int) -> Slot:
    """`hits`: the request's count in its routing key's bucket this window (None: not counted there)."""
    if hits is not None and hits <= DELIVERY_SLOTS and not rate_limited:
        return Slot(f"{stamp(now)}.d{hits:03d}", shared=False)
    if hits is not None or rate_limited:
        window = window_for(now.timestamp(), window_seconds)
        last_second = datetime.fromtimestamp(window.reset_at - 1, UTC)
        return Slot(f"{stamp(last_second)}.x", shared=True)
    door = now.replace(second=now.second - now.second % DOOR_SECONDS, microsecond=0)
    return Slot(f"{stamp(door)}.r", shared=True)


def replay_slot(now: datetime) -> Slot:
    return Slot(f"{stamp(now)}.p{secrets.token_hex(4)}", shared=False)


def is_event_id(value: str) -> bool:
    return EVENT_ID.match(value) is not None


def lower_bound(since: datetime) -> str:
    """The first event id at or after `since` (to the second)."""
    return stamp(since)


def upper_bound(until: datetime) -> str:
    """Past every event id of `until`'s second: '~' sorts after every slot."""
    return stamp(until) + "~"
