"""Taking a person out of schedules and escalation policies when they are deactivated. Pure.

Deactivated people are never paged (chalicelib/paging/current.py skips them), so a turn left to
one is a gap. Leaving rotations closes those gaps where the data allows it:
- Layers: the person leaves every layer's members; the others keep their order and the rotation
  turns among them from the layer's start (their turns move up). A layer left with nobody is
  removed, so its hours fall through to the layers below. A schedule whose every layer would be
  removed cannot exist empty: it keeps the person (`stuck`), their turns there page nobody (its
  coverage flags the gap) and someone edits or deletes it by hand.
- Overrides: theirs that have not ended are removed (an ongoing one hands back to the layers
  now); past ones stay, as history.
- Policies: their user targets go; a level left with no target is removed. A policy whose every
  level would be removed keeps them (`stuck`), for the same reason as a schedule.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from chalicelib.escalation.steps import EscalationPolicy, Level
from chalicelib.oncall.schedule import Layer, Override, Schedule


@dataclass(frozen=True)
class ScheduleDeparture:
    """What leaving one schedule changes. `schedule` is the schedule after it (unchanged layers
    when `stuck`)."""

    schedule: Schedule
    layers_left: tuple[str, ...]  # names of the layers the person leaves (others remain in them)
    layers_removed: tuple[str, ...]  # names of the layers removed: the person was their only member
    overrides_removed: tuple[Override, ...]  # theirs that had not ended
    stuck: bool  # the person is the only member of every layer: the schedule keeps them

    @property
    def changes_layers(self) -> bool:
        return not self.stuck and bool(self.layers_left or self.layers_removed)


@dataclass(frozen=True)
class PolicyDeparture:
    """What leaving one policy changes; levels are numbered from 1, as the console shows them."""

    policy: EscalationPolicy
    levels_left: tuple[int, ...]  # levels where the person was a target beside others
    levels_removed: tuple[int, ...]  # levels whose only target was the person
    stuck: bool  # the person is the only target of every level: the policy keeps them


def _in_layer(layer: Layer, user_id: str) -> bool:
    return user_id in layer.members


def schedule_departure(schedule: Schedule, user_id: str, now: datetime) -> ScheduleDeparture | None:
    """None when the schedule names the person nowhere that matters now (no layer, no override
    that has not ended)."""
    named = [layer for layer in schedule.layers if _in_layer(layer, user_id)]
    ending = tuple(o for o in schedule.overrides if o.user_id == user_id and o.end > now)
    if not named and not ending:
        return None
    kept: list[Layer] = []
    left: list[str] = []
    removed: list[str] = []
    for layer in schedule.layers:
        if not _in_layer(layer, user_id):
            kept.append(layer)
            continue
        others = tuple(member for member in layer.members if member != user_id)
        if others:
            kept.append(replace(layer, members=others))
            left.append(layer.name)
        else:
            removed.append(layer.name)
    stuck = bool(named) and not kept
    layers = schedule.layers if stuck else tuple(kept)
    overrides = tuple(o for o in schedule.overrides if o not in ending)
    return ScheduleDeparture(
        replace(schedule, layers=layers, overrides=overrides),
        tuple(left),
        tuple(removed),
        ending,
        stuck,
    )


def policy_departure(policy: EscalationPolicy, user_id: str) -> PolicyDeparture | None:
    """None when the policy does not target the person."""
    kept: list[Level] = []
    left: list[int] = []
    removed: list[int] = []
    for number, level in enumerate(policy.levels, start=1):
        others = tuple(t for t in level.targets if not (t.kind == "user" and t.id == user_id))
        if len(others) == len(level.targets):
            kept.append(level)
        elif others:
            kept.append(replace(level, targets=others))
            left.append(number)
        else:
            removed.append(number)
    if not left and not removed:
        return None
    stuck = not kept
    levels = policy.levels if stuck else tuple(kept)
    return PolicyDeparture(replace(policy, levels=levels), tuple(left), tuple(removed), stuck)
