"""Where a person is on call or paged, and taking them out when they are deactivated.

`whereabouts` reads the organization's schedules and policies (one Query each) and says, per
schedule and policy naming the person, what leaving would change (chalicelib/paging/
departure_rules.py): the console shows it before deactivating and on the person's page.
`take_out` applies it through the same service functions as the API's writes (schedule layers,
overrides, policy levels), each version-checked against what it read and recomputed when someone
wrote in between; a write that is refused (another person the schedule names is deactivated too,
say) is reported, never raised, so the others still happen.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TypeVar

from chalicelib.errors import AppError, Conflict, NotFound
from chalicelib.escalation import service as policies
from chalicelib.escalation.service import StoredPolicy
from chalicelib.oncall import service as schedules
from chalicelib.oncall.service import StoredSchedule
from chalicelib.paging import fallback
from chalicelib.paging.departure_rules import (
    PolicyDeparture,
    ScheduleDeparture,
    policy_departure,
    schedule_departure,
)

ATTEMPTS = 3  # a write that keeps losing to concurrent edits is reported, not retried forever

T = TypeVar("T")


@dataclass(frozen=True)
class Whereabouts:
    """Every schedule and policy that names the person, with what leaving each changes."""

    schedules: list[tuple[StoredSchedule, ScheduleDeparture]]
    policies: list[tuple[StoredPolicy, PolicyDeparture]]
    fallback_contact: bool  # one of the organization's fallback contacts (kept listed, skipped while inactive)

    @property
    def anywhere(self) -> bool:
        return bool(self.schedules or self.policies or self.fallback_contact)


@dataclass
class Outcome:
    """One schedule or policy after `take_out`: what happened, in words, or why not."""

    kind: str  # "schedule" or "policy"
    item_id: str
    name: str
    done: list[str] = field(default_factory=list)
    problem: str | None = None


def whereabouts(*, organization_id: str, user_id: str, now: datetime) -> Whereabouts:
    found_schedules = []
    for stored in schedules.list_schedules(organization_id=organization_id):
        departure = schedule_departure(stored.schedule, user_id, now)
        if departure is not None:
            found_schedules.append((stored, departure))
    found_policies = []
    for stored_policy in policies.list_policies(organization_id=organization_id):
        left = policy_departure(stored_policy.policy, user_id)
        if left is not None:
            found_policies.append((stored_policy, left))
    contacts = fallback.paging_settings(organization_id=organization_id).fallback_contacts
    listed = any(contact.user_id == user_id for contact in contacts)
    return Whereabouts(found_schedules, found_policies, listed)


def _again(write: Callable[[], T]) -> T:
    """`write` re-reads and recomputes each time; a version conflict means someone wrote in between."""
    for _ in range(ATTEMPTS - 1):
        try:
            return write()
        except Conflict as conflict:
            if "expected_version" not in (conflict.details or {}):
                raise
    return write()


def _leave_schedule(organization_id: str, schedule_id: str, user_id: str, now: datetime) -> list[str]:
    done: list[str] = []

    def layers() -> ScheduleDeparture | None:
        stored = schedules.get_schedule(organization_id=organization_id, schedule_id=schedule_id)
        departure = schedule_departure(stored.schedule, user_id, now)
        if departure is not None and departure.changes_layers:
            schedules.update_schedule(
                organization_id=organization_id,
                schedule_id=schedule_id,
                now=now,
                expected_version=stored.version,
                layers=departure.schedule.layers,
            )
        return departure

    departure = _again(layers)
    if departure is None:
        return done
    if departure.changes_layers:
        done += [f"left the layer {name}" for name in departure.layers_left]
        done += [f"the layer {name} was removed (they were its only member)" for name in departure.layers_removed]
    for override in departure.overrides_removed:
        try:
            schedules.remove_override(
                organization_id=organization_id, schedule_id=schedule_id, override_id=override.override_id, now=now
            )
        except NotFound:
            continue  # removed meanwhile: the goal is met
        done.append("an override of theirs was removed")
    return done


def _leave_policy(organization_id: str, policy_id: str, user_id: str, now: datetime) -> list[str]:
    def levels() -> PolicyDeparture | None:
        stored = policies.get_policy(organization_id=organization_id, policy_id=policy_id)
        departure = policy_departure(stored.policy, user_id)
        if departure is not None and not departure.stuck:
            policies.update_policy(
                organization_id=organization_id,
                policy_id=policy_id,
                now=now,
                expected_version=stored.version,
                levels=departure.policy.levels,
            )
        return departure

    departure = _again(levels)
    if departure is None or departure.stuck:
        return []
    return [f"no longer a target of level {number}" for number in departure.levels_left] + [
        f"level {number} was removed (they were its only target)" for number in departure.levels_removed
    ]


def _why(error: AppError) -> str:
    """The refusal in words: its message and the distinct problems it lists ("the user is deactivated")."""
    details = error.details if isinstance(error.details, dict) else {}
    problems = list(dict.fromkeys(str(p.get("message")) for p in details.get("fields") or [] if isinstance(p, dict)))
    return error.message + (f" ({'; '.join(problems)})" if problems else "")


def take_out(*, organization_id: str, user_id: str, now: datetime) -> list[Outcome]:
    """Take the person out of every schedule and policy that names them; what happened to each."""
    where = whereabouts(organization_id=organization_id, user_id=user_id, now=now)
    outcomes: list[Outcome] = []
    for stored, departure in where.schedules:
        outcome = Outcome("schedule", stored.schedule_id, stored.schedule.name)
        try:
            outcome.done.extend(_leave_schedule(organization_id, stored.schedule_id, user_id, now))
        except AppError as error:
            outcome.problem = _why(error)
        if departure.stuck and outcome.problem is None:
            outcome.problem = "they are the only member of every layer: edit or delete the schedule"
        outcomes.append(outcome)
    for stored_policy, left in where.policies:
        outcome = Outcome("policy", stored_policy.policy_id, stored_policy.policy.name)
        try:
            outcome.done.extend(_leave_policy(organization_id, stored_policy.policy_id, user_id, now))
        except AppError as error:
            outcome.problem = _why(error)
        if left.stuck and outcome.problem is None:
            outcome.problem = "they are the only target of every level: edit or delete the policy"
        outcomes.append(outcome)
    return outcomes
