"""The pure rules of a heartbeat: limits, the ping URL's token, when a ping is due, and how a ping,
a missed ping, a pause or a new interval move its state. `now` is always passed in.

States: `waiting` (no ping yet since it was created or resumed), `up`, `down` (a ping was missed:
an outage is open), and `paused` for a disabled heartbeat whatever its state. An enabled heartbeat
waiting or up is due at window start + interval + grace (the window starts at the last ping, or at
creation / resume); from then on it is overdue and the next check opens outage n+1. The next ping
ends the outage. A paused heartbeat accepts pings and ignores them, and never goes down.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Final, Literal

from chalicelib.errors import ValidationFailed

State = Literal["waiting", "up", "down"]
Status = Literal["waiting", "up", "down", "paused"]

INTERVAL_MIN: Final = 60
INTERVAL_MAX: Final = 7 * 24 * 3600
GRACE_MAX: Final = 24 * 3600
NAME_MAX: Final = 100
DESCRIPTION_MAX: Final = 1000

_ID = re.compile(r"^hb_[0-9a-f]{24}$")
_TOKEN = re.compile(r"^(hb_[0-9a-f]{24})\.([0-9a-f]{32})$")


# --- identity and the ping URL's token -------------------------------------------------------------


def new_heartbeat_id() -> str:
    return "hb_" + secrets.token_hex(12)


def new_secret() -> str:
    return secrets.token_hex(16)


def looks_like_id(value: str) -> bool:
    return bool(_ID.match(value))


def token_of(heartbeat_id: str, secret: str) -> str:
    """What the ping URL ends with: the heartbeat's id (to find it with one GetItem) and its secret."""
    return f"{heartbeat_id}.{secret}"


def split_token(token: str) -> tuple[str, str] | None:
    """(heartbeat id, secret), or None for anything that is not a token: it never reaches DynamoDB."""
    matched = _TOKEN.match(token)
    return (matched.group(1), matched.group(2)) if matched else None


def hash_secret(hmac_secret: str, heartbeat_id: str, secret: str) -> str:
    # Labelled and bound to the id, so it can never match an API key's or a routing key's hash.
    return hmac.new(hmac_secret.encode(), f"heartbeat:{heartbeat_id}:{secret}".encode(), hashlib.sha256).hexdigest()


def secret_matches(stored_hash: str, hmac_secret: str, heartbeat_id: str, secret: str) -> bool:
    return hmac.compare_digest(stored_hash, hash_secret(hmac_secret, heartbeat_id, secret))


def outage_dedup_key(outage: int) -> str:
    """The alert dedup key of a heartbeat's outage n (dedup keys are scoped to the heartbeat)."""
    return f"outage-{outage}"


# --- limits ----------------------------------------------------------------------------------------


def check_interval(interval_seconds: int) -> None:
    if isinstance(interval_seconds, bool) or not INTERVAL_MIN <= interval_seconds <= INTERVAL_MAX:
        raise ValidationFailed.for_field(
            "interval_seconds", f"must be {INTERVAL_MIN} to {INTERVAL_MAX} seconds (7 days)"
        )


def check_grace(grace_seconds: int) -> None:
    if isinstance(grace_seconds, bool) or not 0 <= grace_seconds <= GRACE_MAX:
        raise ValidationFailed.for_field("grace_seconds", f"must be 0 to {GRACE_MAX} seconds (1 day)")


# --- the state -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Beat:
    enabled: bool
    state: State
    interval_seconds: int
    grace_seconds: int
    window_started_at: datetime
    last_ping_at: datetime | None = None
    down_since: datetime | None = None
    outages: int = 0
    incident_number: str | None = None

    @property
    def status(self) -> Status:
        return "paused" if not self.enabled else self.state

    @property
    def awaiting_ping(self) -> bool:
        """Enabled and not down: the overdue step watches it (it is in the due index)."""
        return self.enabled and self.state != "down"

    @property
    def next_due_at(self) -> datetime | None:
        """When the next ping is expected; None while paused or down (any ping is welcome then)."""
        if not self.awaiting_ping:
            return None
        return self.window_started_at + timedelta(seconds=self.interval_seconds)

    @property
    def due_at(self) -> datetime | None:
        """When a missing ping becomes an outage (next_due_at + grace): the due index's time."""
        expected = self.next_due_at
        return None if expected is None else expected + timedelta(seconds=self.grace_seconds)


def new_beat(*, interval_seconds: int, grace_seconds: int, enabled: bool, now: datetime) -> Beat:
    check_interval(interval_seconds)
    check_grace(grace_seconds)
    return Beat(
        enabled=enabled,
        state="waiting",
        interval_seconds=interval_seconds,
        grace_seconds=grace_seconds,
        window_started_at=now,
    )


def is_overdue(beat: Beat, now: datetime) -> bool:
    due = beat.due_at
    return due is not None and due <= now


def went_down(beat: Beat, now: datetime, incident_number: str | None) -> Beat:
    """The missed ping opened outage `beat.outages + 1` (its incident, or None when the alert
    opened none: suppressed by a maintenance window or a rule, or refused)."""
    if not is_overdue(beat, now):
        raise ValueError("only an overdue heartbeat goes down")
    return replace(beat, state="down", down_since=now, outages=beat.outages + 1, incident_number=incident_number)


@dataclass(frozen=True)
class PingOutcome:
    beat: Beat
    ignored: bool = False  # paused: accepted, nothing recorded
    ended_outage: int | None = None  # the outage this ping ends (its incident resolves)


def pinged(beat: Beat, now: datetime) -> PingOutcome:
    if not beat.enabled:
        return PingOutcome(beat, ignored=True)
    ended = beat.outages if beat.state == "down" else None
    up = replace(beat, state="up", window_started_at=now, last_ping_at=now, down_since=None, incident_number=None)
    return PingOutcome(up, ended_outage=ended)


def reconfigured(
    beat: Beat,
    now: datetime,
    *,
    interval_seconds: int | None = None,
    grace_seconds: int | None = None,
    enabled: bool | None = None,
) -> Beat:
    """A new interval or grace applies to the current wait (from its start); resuming a paused
    heartbeat starts a new wait at `now` (the pause's silence is no outage). A down heartbeat
    stays down, paused or not, until a ping ends its outage."""
    if interval_seconds is not None:
        check_interval(interval_seconds)
    if grace_seconds is not None:
        check_grace(grace_seconds)
    changed = replace(
        beat,
        interval_seconds=beat.interval_seconds if interval_seconds is None else interval_seconds,
        grace_seconds=beat.grace_seconds if grace_seconds is None else grace_seconds,
        enabled=beat.enabled if enabled is None else enabled,
    )
    if enabled and not beat.enabled and beat.state != "down":
        changed = replace(changed, window_started_at=now)
    return changed
