"""Escalation policies and the per-incident escalation state as data; the steps are pure functions.

A policy is ordered levels, each with targets (users or schedules) and a delay in minutes before
the next level; after the last level the policy starts over at level 1 `repeat_count` more
times. When an incident triggers, the service snapshots the policy into an `EscalationState`
(`start`): level 1 is notified now and the next step is due `delay_minutes` later (divided by
the local time scale, clock.scaled, which is 1 outside the local and test stages).

Timers (SQS delayed messages) carry the state's `token`. `advance` ignores a message whose token
is not the state's current one (a stale timer) and a message that arrives before `next_at` (the
caller re-enqueues it for `delay_seconds`, which caps at SQS's 900 s). The token changes on
every step (`advance` derives the next one; `escalate_now` takes a new one), so a duplicate or
leftover message from an earlier step can never fire a second time. `sequence` counts the
levels notified so far (1 after `start`): with the incident id it makes a delivery id that lets
the notification worker refuse to send one step twice.

The next level is always due `delay_minutes` after the step that notified the current one ran
(`now`), so a late timer never makes the following levels fire in a burst. Once the last level's
delay has passed with no next level, `advance` marks the state `stopped` (escalation exhausted).
`stop` (acknowledge, resolve) stops it too. A manual `escalate_now` works on a stopped state as
well (docs/ONCALL.md, "Escalation policies": acknowledged incidents can be escalated by hand); it
notifies the next level but sets no timer when the state was stopped.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any, Literal, cast

from chalicelib import clock
from chalicelib.errors import ValidationFailed
from chalicelib.oncall.fields import FieldReader, format_moment
from chalicelib.settings import Settings

TargetKind = Literal["user", "schedule"]
TARGET_KINDS: tuple[TargetKind, ...] = ("user", "schedule")
DELAY_MINUTES_MIN = 1
DELAY_MINUTES_MAX = 1440
REPEAT_COUNT_MAX = 9
MAX_LEVELS = 20
MAX_TARGETS = 20
NAME_MAX = 100
ID_MAX = 64
SQS_MAX_DELAY_SECONDS = 900


@dataclass(frozen=True)
class Target:
    kind: TargetKind
    id: str

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "id": self.id}


@dataclass(frozen=True)
class Level:
    targets: tuple[Target, ...]
    delay_minutes: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "targets", tuple(self.targets))

    def to_dict(self) -> dict[str, Any]:
        return {"targets": [target.to_dict() for target in self.targets], "delay_minutes": self.delay_minutes}


@dataclass(frozen=True)
class EscalationPolicy:
    policy_id: str
    name: str
    levels: tuple[Level, ...]
    repeat_count: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "levels", tuple(self.levels))

    def to_dict(self) -> dict[str, Any]:
        return {
            "policy_id": self.policy_id,
            "name": self.name,
            "levels": [level.to_dict() for level in self.levels],
            "repeat_count": self.repeat_count,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EscalationPolicy:
        """The inverse of `to_dict`. Checks shape (ValidationFailed); `validate_policy` checks meaning."""
        reader = FieldReader()
        policy = _read_policy(reader, data, "")
        reader.raise_if_any("The escalation policy is invalid.")
        return policy


def _join(where: str, name: str) -> str:
    return f"{where}.{name}" if where else name


def _read_policy(reader: FieldReader, data: Any, where: str) -> EscalationPolicy:
    data = reader.mapping(data, where or "policy")
    levels: list[Level] = []
    for index, raw_level in enumerate(reader.items(data, "levels", _join(where, "levels"))):
        level_where = _join(where, f"levels.{index}")
        raw_level = reader.mapping(raw_level, level_where)
        targets: list[Target] = []
        for number, raw_target in enumerate(reader.items(raw_level, "targets", f"{level_where}.targets")):
            target_where = f"{level_where}.targets.{number}"
            raw_target = reader.mapping(raw_target, target_where)
            kind = reader.text(raw_target, "kind", f"{target_where}.kind")
            targets.append(Target(cast(TargetKind, kind), reader.text(raw_target, "id", f"{target_where}.id")))
        levels.append(Level(tuple(targets), reader.integer(raw_level, "delay_minutes", f"{level_where}.delay_minutes")))
    repeat = reader.optional_int(data, "repeat_count", _join(where, "repeat_count"))
    return EscalationPolicy(
        policy_id=reader.text(data, "policy_id", _join(where, "policy_id")),
        name=reader.text(data, "name", _join(where, "name")),
        levels=tuple(levels),
        repeat_count=repeat if repeat is not None else 0,
    )


def _is_int_in(value: object, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def validate_policy(policy: EscalationPolicy) -> None:
    """ValidationFailed (details.fields lists every problem) unless the policy is usable.

    Usable: an id and a name; 1 to MAX_LEVELS levels; each with 1 to MAX_TARGETS targets of kind
    user or schedule with an id, and a delay of 1 to 1440 minutes; a repeat count of 0 to 9.
    """
    problems: list[dict[str, str]] = []

    def problem(where: str, message: str) -> None:
        problems.append({"field": where, "message": message})

    if not isinstance(policy.policy_id, str) or not policy.policy_id.strip() or len(policy.policy_id) > ID_MAX:
        problem("policy_id", f"must be a non-empty string of at most {ID_MAX} characters")
    if not isinstance(policy.name, str) or not policy.name.strip() or len(policy.name) > NAME_MAX:
        problem("name", f"must be 1 to {NAME_MAX} characters")
    if not 1 <= len(policy.levels) <= MAX_LEVELS:
        problem("levels", f"must hold 1 to {MAX_LEVELS} levels")
    for index, level in enumerate(policy.levels):
        where = f"levels.{index}"
        if not 1 <= len(level.targets) <= MAX_TARGETS:
            problem(f"{where}.targets", f"must hold 1 to {MAX_TARGETS} targets")
        for number, target in enumerate(level.targets):
            if target.kind not in TARGET_KINDS:
                problem(f"{where}.targets.{number}.kind", "must be user or schedule")
            if not isinstance(target.id, str) or not target.id.strip() or len(target.id) > ID_MAX:
                problem(f"{where}.targets.{number}.id", f"must be a non-empty string of at most {ID_MAX} characters")
        if not _is_int_in(level.delay_minutes, DELAY_MINUTES_MIN, DELAY_MINUTES_MAX):
            problem(f"{where}.delay_minutes", f"must be an integer from {DELAY_MINUTES_MIN} to {DELAY_MINUTES_MAX}")
    if not _is_int_in(policy.repeat_count, 0, REPEAT_COUNT_MAX):
        problem("repeat_count", f"must be an integer from 0 to {REPEAT_COUNT_MAX}")
    if problems:
        raise ValidationFailed.for_fields(problems, "The escalation policy is invalid.")


@dataclass(frozen=True)
class Step:
    """Notify `targets` of level `level` (1-based) now. The next timer is due at `next_at` and must
    carry `token`. `repeat` is how many times the policy has started over (0 on the first pass)."""

    level: int
    targets: tuple[Target, ...]
    next_at: datetime | None
    token: str
    repeat: int
    sequence: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "level": self.level,
            "targets": [target.to_dict() for target in self.targets],
            "next_at": format_moment(self.next_at) if self.next_at is not None else None,
            "token": self.token,
            "repeat": self.repeat,
            "sequence": self.sequence,
        }


@dataclass(frozen=True)
class EscalationState:
    """One incident's escalation: a policy snapshot and where it stands. Store it with `to_dict`."""

    policy: EscalationPolicy
    level_index: int
    repeats_done: int
    token: str
    next_at: datetime | None
    stopped: bool = False
    sequence: int = 1
    # The first level's token, kept while the escalation moves through its levels: a person's
    # delayed notification-rule steps carry it and stop when the state stops (acknowledge,
    # resolve) or when a new escalation replaces this one.
    run: str = ""

    @property
    def run_token(self) -> str:
        return self.run or self.token

    @property
    def level(self) -> int:
        """The current level, 1-based."""
        return self.level_index + 1

    def to_dict(self) -> dict[str, Any]:
        return {
            "policy": self.policy.to_dict(),
            "level_index": self.level_index,
            "repeats_done": self.repeats_done,
            "token": self.token,
            "next_at": format_moment(self.next_at) if self.next_at is not None else None,
            "stopped": self.stopped,
            "sequence": self.sequence,
            "run": self.run_token,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EscalationState:
        reader = FieldReader()
        data = reader.mapping(data, "state")
        state = cls(
            policy=_read_policy(reader, data.get("policy"), "policy"),
            level_index=reader.integer(data, "level_index", "level_index"),
            repeats_done=reader.integer(data, "repeats_done", "repeats_done"),
            token=reader.text(data, "token", "token"),
            next_at=reader.optional_moment(data, "next_at", "next_at"),
            stopped=reader.boolean(data, "stopped", "stopped"),
            sequence=reader.optional_int(data, "sequence", "sequence") or 1,
            run=str(data["run"]) if isinstance(data.get("run"), str) else "",  # absent: stored before runs
        )
        if not reader.problems and not 0 <= state.level_index < len(state.policy.levels):
            reader.fail("level_index", "must point at one of the policy's levels")
        reader.raise_if_any("The escalation state is invalid.")
        return state


def _following(state: EscalationState) -> tuple[int, int] | None:
    """(level_index, repeats_done) of the level after the current one, or None when none follows."""
    if state.level_index + 1 < len(state.policy.levels):
        return state.level_index + 1, state.repeats_done
    if state.repeats_done < state.policy.repeat_count:
        return 0, state.repeats_done + 1
    return None


def _derive_token(token: str, sequence: int) -> str:
    return hashlib.sha256(f"{token}\x00{sequence}".encode()).hexdigest()[:32]


def level_delay(level: Level, *, settings: Settings) -> timedelta:
    """How long after notifying `level` the next one is due (divided by the local time scale)."""
    return clock.scaled(timedelta(minutes=level.delay_minutes), scale=settings.effective_time_scale)


def _notify(
    state: EscalationState, level_index: int, repeats_done: int, now: datetime, token: str, *, settings: Settings
) -> tuple[EscalationState, Step]:
    level = state.policy.levels[level_index]
    next_at = None if state.stopped else now + level_delay(level, settings=settings)
    sequence = state.sequence + 1
    moved = replace(
        state, level_index=level_index, repeats_done=repeats_done, token=token, next_at=next_at, sequence=sequence
    )
    return moved, Step(level_index + 1, level.targets, next_at, token, repeats_done, sequence)


def start(policy: EscalationPolicy, now: datetime, token: str, *, settings: Settings) -> tuple[EscalationState, Step]:
    """Begin escalating: level 1 is notified now; the next step is due after level 1's delay."""
    level = policy.levels[0]
    next_at = now + level_delay(level, settings=settings)
    state = EscalationState(policy, 0, 0, token, next_at, stopped=False, sequence=1, run=token)
    return state, Step(1, level.targets, next_at, token, 0, 1)


def timer_is_current(state: EscalationState, token_in_message: str) -> bool:
    """A timer carrying this token may still do something (not stopped, token current, a step due)."""
    return not state.stopped and state.next_at is not None and token_in_message == state.token


def advance(
    state: EscalationState, now: datetime, token_in_message: str, *, settings: Settings
) -> tuple[EscalationState, Step | None]:
    """A timer fired. Returns the new state and the level to notify, or None.

    No-op (same state, None) for a stale timer (stopped, or another token) and for an early one
    (now < next_at: re-enqueue for `delay_seconds`). When due: the next level (wrapping to level 1
    while repeats remain) is notified with a new token; with no next level the state is stopped.
    """
    if not timer_is_current(state, token_in_message) or state.next_at is None or now < state.next_at:
        return state, None
    following = _following(state)
    if following is None:
        return replace(state, stopped=True, next_at=None), None
    return _notify(state, *following, now, _derive_token(state.token, state.sequence + 1), settings=settings)


def delay_seconds(state: EscalationState, now: datetime, cap: int = SQS_MAX_DELAY_SECONDS) -> int | None:
    """Seconds to delay the timer message: min(time until next_at rounded up, cap), never negative.

    None when no timer is needed (stopped, or nothing scheduled).
    """
    if state.stopped or state.next_at is None:
        return None
    remaining = math.ceil((state.next_at - now).total_seconds())
    return max(0, min(remaining, cap))


def escalate_now(
    state: EscalationState, now: datetime, new_token: str, *, settings: Settings
) -> tuple[EscalationState, Step | None]:
    """Manual escalate: notify the next level now under `new_token` (old timers go stale).

    None (state unchanged; the response says escalated false) when no level follows. A stopped
    (acknowledged) state escalates too but stays stopped and sets no timer.
    """
    following = _following(state)
    if following is None:
        return state, None
    return _notify(state, *following, now, new_token, settings=settings)


def stop(state: EscalationState) -> EscalationState:
    """Acknowledge or resolve: no further automatic steps; pending timers become no-ops."""
    return replace(state, stopped=True, next_at=None)


def current_and_next_level(state: EscalationState) -> tuple[int | None, int | None]:
    """(current level, level a further escalation would notify), both 1-based; next is None at the end."""
    following = _following(state)
    return state.level, following[0] + 1 if following is not None else None


def stopped_state(stored: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A stored escalation state with its automatic steps stopped (acknowledge, resolve), or None."""
    return stop(EscalationState.from_dict(stored)).to_dict() if stored else None
