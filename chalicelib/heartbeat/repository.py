"""Between the stored item and the rules' `Beat`: reading a heartbeat, the update actions that
write a new state (the due index kept with it), and the condition "the state is still what we read"."""

from __future__ import annotations

from typing import Any, cast

from pynamodb.attributes import Attribute
from pynamodb.exceptions import DoesNotExist
from pynamodb.expressions.condition import Condition
from pynamodb.expressions.update import Action

from chalicelib.heartbeat.rules import Beat, State, looks_like_id
from chalicelib.heartbeat.tables import DUE_SHARD, HeartbeatRecord


def read(heartbeat_id: str) -> HeartbeatRecord | None:
    """One consistent GetItem; a malformed id never reaches DynamoDB."""
    if not looks_like_id(heartbeat_id):
        return None
    try:
        return HeartbeatRecord.get(heartbeat_id, consistent_read=True)
    except DoesNotExist:
        return None


def beat_of(record: HeartbeatRecord) -> Beat:
    return Beat(
        enabled=bool(record.enabled),
        state=cast(State, record.state),
        interval_seconds=int(record.interval_seconds),
        grace_seconds=int(record.grace_seconds),
        window_started_at=record.window_started_at,
        last_ping_at=record.last_ping_at,
        down_since=record.down_since,
        outages=int(record.outages or 0),
        incident_number=record.incident_number,
    )


def apply(record: HeartbeatRecord, beat: Beat) -> None:
    """Set the record's attributes to `beat` (for a new item, before its first save)."""
    record.enabled = beat.enabled
    record.state = beat.state
    record.interval_seconds = beat.interval_seconds
    record.grace_seconds = beat.grace_seconds
    record.window_started_at = beat.window_started_at
    record.last_ping_at = beat.last_ping_at
    record.down_since = beat.down_since
    record.outages = beat.outages
    record.incident_number = beat.incident_number
    due = beat.due_at
    record.due_shard = DUE_SHARD if due is not None else None
    record.due_at = due


def _set(attribute: Attribute[Any], value: object) -> Action:
    return attribute.remove() if value is None else attribute.set(value)


def state_actions(beat: Beat) -> list[Action]:
    """Write `beat`: its state and the due index attributes (present only while a ping is awaited)."""
    due = beat.due_at
    return [
        HeartbeatRecord.enabled.set(beat.enabled),
        HeartbeatRecord.state.set(beat.state),
        HeartbeatRecord.interval_seconds.set(beat.interval_seconds),
        HeartbeatRecord.grace_seconds.set(beat.grace_seconds),
        HeartbeatRecord.window_started_at.set(beat.window_started_at),
        _set(HeartbeatRecord.last_ping_at, beat.last_ping_at),
        _set(HeartbeatRecord.down_since, beat.down_since),
        HeartbeatRecord.outages.set(beat.outages),
        _set(HeartbeatRecord.incident_number, beat.incident_number),
        _set(HeartbeatRecord.due_shard, DUE_SHARD if due is not None else None),
        _set(HeartbeatRecord.due_at, due),
    ]


def unchanged(beat: Beat) -> Condition:
    """The item exists and its state is the `beat` read: no ping, check or edit moved it since."""
    condition: Condition = (
        (HeartbeatRecord.state == beat.state)
        & (HeartbeatRecord.enabled == beat.enabled)
        & (HeartbeatRecord.window_started_at == beat.window_started_at)
        & (HeartbeatRecord.outages == beat.outages)
        & (HeartbeatRecord.interval_seconds == beat.interval_seconds)
        & (HeartbeatRecord.grace_seconds == beat.grace_seconds)
    )
    return condition
