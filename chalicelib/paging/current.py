"""Who is on call now, per service: the pure assembly behind GET /api/v1/on-call/current.

Everything here works on data already loaded (services, their policies, the schedules those
policies name, the people, the teams) with `now` passed in; `chalicelib.oncall.service` loads it
in a fixed number of round trips, however many services and however long the history.

Rules
- Only active services are listed, newest first (the order `list_services` returns).
- A service's engineers come from every level of its escalation policy, in level order: a user
  target is that user; a schedule target is whoever the schedule has on call now (with the
  schedule's name and the full shift's start and end). Deactivated or unknown users are left
  out, and a person appears once per level (the first target naming them wins).
- Roles name the level: primary (1), secondary (2), tertiary (3), quaternary (4), quinary (5),
  then `level_<n>`.
- `primary_on_call` is the first level-1 engineer, or None. `has_coverage` means someone at any
  level is on call now (the policy reaches a person); a service without a policy, or whose
  policy reaches nobody now, has no coverage.
- `schedule_names`: the policy's schedules in level order, each once (whether or not someone is
  on call in them now).
- `coverage_percentage` = floor(100 * covered / total), 0 when there are no services; it is 100
  only when every service is covered.
- The `team_name` filter compares whole names case-insensitively (inner whitespace collapsed);
  a service without a team never matches a filter, and reports `team_name` "".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from chalicelib.catalog.service import Service
from chalicelib.directory.teams import Team
from chalicelib.directory.users import User
from chalicelib.escalation.steps import EscalationPolicy, Target
from chalicelib.oncall.rotation import FinalShift, on_call_at
from chalicelib.oncall.schedule import Schedule

ROLE_NAMES: tuple[str, ...] = ("primary", "secondary", "tertiary", "quaternary", "quinary")


def role_for_level(level: int) -> str:
    """primary for level 1, secondary for 2, ... quinary for 5, then level_<n>."""
    return ROLE_NAMES[level - 1] if 1 <= level <= len(ROLE_NAMES) else f"level_{level}"


@dataclass(frozen=True)
class Engineer:
    user: User
    level: int
    schedule: Schedule | None = None  # None for a direct user target
    shift: FinalShift | None = None

    @property
    def role(self) -> str:
        return role_for_level(self.level)

    @property
    def name(self) -> str:
        return self.user.name or self.user.email or self.user.user_id


@dataclass(frozen=True)
class ServiceOnCall:
    service: Service
    team: Team | None
    engineers: tuple[Engineer, ...]
    schedule_names: tuple[str, ...]

    @property
    def has_coverage(self) -> bool:
        return bool(self.engineers)

    @property
    def primary_on_call(self) -> Engineer | None:
        return next((engineer for engineer in self.engineers if engineer.level == 1), None)


@dataclass(frozen=True)
class CoverageSummary:
    total_services: int
    services_with_coverage: int
    services_without_coverage: int
    coverage_percentage: int


@dataclass(frozen=True)
class OnCallNow:
    timestamp: datetime
    summary: CoverageSummary
    services: tuple[ServiceOnCall, ...]


def _fold(name: str) -> str:
    return " ".join(name.split()).casefold()


def team_matches(team: Team | None, team_name: str | None) -> bool:
    """No filter (None or blank) matches everything; otherwise the team's name, case-insensitively."""
    if team_name is None or not team_name.strip():
        return True
    return team is not None and _fold(team.name) == _fold(team_name)


def coverage_percentage(covered: int, total: int) -> int:
    """Rounded down, so 100 means every service is covered; 0 when there are no services."""
    return covered * 100 // total if total > 0 else 0


def schedule_ids_of(policies: Iterable[EscalationPolicy]) -> list[str]:
    """The schedules the policies name, in order, each once."""
    seen: dict[str, None] = {}
    for policy in policies:
        for level in policy.levels:
            for target in level.targets:
                if target.kind == "schedule":
                    seen.setdefault(target.id)
    return list(seen)


def current_shifts(schedules: Iterable[Schedule], now: datetime) -> dict[str, FinalShift | None]:
    """Each schedule's shift covering `now` (full start and end), or None when nobody is on call."""
    return {schedule.schedule_id: on_call_at(schedule, now) for schedule in schedules}


def user_ids_of(targets: Iterable[Target], shifts_now: Mapping[str, FinalShift | None]) -> list[str]:
    """The people the targets reach now: user targets and whoever is on call in schedule targets."""
    seen: dict[str, None] = {}
    for target in targets:
        if target.kind == "user":
            seen.setdefault(target.id)
        else:
            shift = shifts_now.get(target.id)
            if shift is not None:
                seen.setdefault(shift.user_id)
    return list(seen)


def policy_targets(policies: Iterable[EscalationPolicy]) -> list[Target]:
    return [target for policy in policies for level in policy.levels for target in level.targets]


def level_engineers(
    targets: Sequence[Target],
    level: int,
    *,
    schedules: Mapping[str, Schedule],
    shifts_now: Mapping[str, FinalShift | None],
    users: Mapping[str, User],
) -> list[Engineer]:
    """The active people one level's targets reach now, in target order, each once."""
    engineers: list[Engineer] = []
    seen: set[str] = set()
    for target in targets:
        schedule: Schedule | None = None
        shift: FinalShift | None = None
        if target.kind == "user":
            user = users.get(target.id)
        else:
            schedule = schedules.get(target.id)
            shift = shifts_now.get(target.id) if schedule is not None else None
            user = users.get(shift.user_id) if shift is not None else None
        if user is None or not user.is_active or user.user_id in seen:
            continue
        seen.add(user.user_id)
        engineers.append(Engineer(user, level, schedule, shift))
    return engineers


def level_misses(
    targets: Sequence[Target],
    *,
    schedules: Mapping[str, Schedule],
    shifts_now: Mapping[str, FinalShift | None],
    users: Mapping[str, User],
) -> list[str]:
    """Why each of a level's targets reaches nobody now, in target order (for "nobody to page")."""
    misses: list[str] = []
    for target in targets:
        if target.kind == "user":
            user = users.get(target.id)
            if user is None:
                misses.append(f"user {target.id} no longer exists")
            elif not user.is_active:
                misses.append(f"{user.name or user.email or user.user_id} is deactivated")
            continue
        schedule = schedules.get(target.id)
        shift = shifts_now.get(target.id) if schedule is not None else None
        on_call = users.get(shift.user_id) if shift is not None else None
        if schedule is None:
            misses.append(f"schedule {target.id} no longer exists")
        elif shift is None:
            misses.append(f"schedule {schedule.name} has nobody on call now")
        elif on_call is None or not on_call.is_active:
            who = (on_call.name or on_call.email) if on_call is not None else shift.user_id
            misses.append(f"schedule {schedule.name} has {who} on call, who is deactivated or removed")
    return misses


def policy_engineers(
    policy: EscalationPolicy,
    *,
    schedules: Mapping[str, Schedule],
    shifts_now: Mapping[str, FinalShift | None],
    users: Mapping[str, User],
) -> list[Engineer]:
    engineers: list[Engineer] = []
    for index, level in enumerate(policy.levels):
        engineers += level_engineers(level.targets, index + 1, schedules=schedules, shifts_now=shifts_now, users=users)
    return engineers


def service_on_call(
    service: Service,
    *,
    team: Team | None,
    policy: EscalationPolicy | None,
    schedules: Mapping[str, Schedule],
    shifts_now: Mapping[str, FinalShift | None],
    users: Mapping[str, User],
) -> ServiceOnCall:
    if policy is None:
        return ServiceOnCall(service, team, (), ())
    engineers = policy_engineers(policy, schedules=schedules, shifts_now=shifts_now, users=users)
    names = tuple(dict.fromkeys(schedules[s].name for s in schedule_ids_of([policy]) if s in schedules))
    return ServiceOnCall(service, team, tuple(engineers), names)


def assemble_on_call(
    *,
    services: Sequence[Service],
    policies: Mapping[str, EscalationPolicy],
    schedules: Mapping[str, Schedule],
    users: Mapping[str, User],
    teams: Mapping[str, Team],
    now: datetime,
    team_name: str | None = None,
    shifts_now: Mapping[str, FinalShift | None] | None = None,
) -> OnCallNow:
    """The on-call answer from loaded data. `shifts_now` (from `current_shifts`) is computed when absent."""
    if shifts_now is None:
        shifts_now = current_shifts(schedules.values(), now)
    entries: list[ServiceOnCall] = []
    for service in services:
        team = teams.get(service.team_id) if service.team_id else None
        if not service.is_active or not team_matches(team, team_name):
            continue
        policy = policies.get(service.escalation_policy_id) if service.escalation_policy_id else None
        entries.append(
            service_on_call(service, team=team, policy=policy, schedules=schedules, shifts_now=shifts_now, users=users)
        )
    covered = sum(1 for entry in entries if entry.has_coverage)
    summary = CoverageSummary(
        total_services=len(entries),
        services_with_coverage=covered,
        services_without_coverage=len(entries) - covered,
        coverage_percentage=coverage_percentage(covered, len(entries)),
    )
    return OnCallNow(now, summary, tuple(entries))
