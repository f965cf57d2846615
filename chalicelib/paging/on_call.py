"""Who is on call now: a level's targets to people (for paging), the primary on call of a service
(auto-assignment), and every active service's on-call view (GET /api/v1/on-call/current).

It joins services, escalation policies and schedules, so it sits above all three. Each function
costs a fixed number of round trips (GetItem, Query or BatchGet), never one per service or shift.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from chalicelib.catalog.service import get_services, list_services
from chalicelib.directory.teams import get_teams
from chalicelib.directory.users import User, get_users
from chalicelib.escalation import service as policies
from chalicelib.escalation.steps import EscalationPolicy, Target
from chalicelib.oncall.service import get_schedules
from chalicelib.paging import current


def policy_for_service(*, organization_id: str, service_key: str) -> EscalationPolicy | None:
    """The policy a service points at (to snapshot onto a new incident), or None. Two GetItems."""
    service = get_services(organization_id=organization_id, service_keys=[service_key]).get(service_key)
    if service is None or not service.escalation_policy_id:
        return None
    return policies.load_policy(organization_id=organization_id, policy_id=service.escalation_policy_id)


@dataclass(frozen=True)
class LevelReach:
    """Who a level's targets reach now, and, when that is nobody, why (one phrase per target)."""

    people: list[User]
    misses: list[str]


def reach_level(*, organization_id: str, targets: Sequence[Target], now: datetime) -> LevelReach:
    """The active people a level's targets reach now, in target order, each once: user targets,
    and whoever each schedule target has on call now (nobody for a gap). Two BatchGets at most."""
    schedule_ids = [t.id for t in targets if t.kind == "schedule"]
    stored = get_schedules(organization_id=organization_id, schedule_ids=schedule_ids) if schedule_ids else {}
    schedules = {schedule_id: s.schedule for schedule_id, s in stored.items()}
    shifts_now = current.current_shifts(schedules.values(), now)
    wanted = current.user_ids_of(targets, shifts_now)
    users = get_users(organization_id=organization_id, user_ids=wanted) if wanted else {}
    engineers = current.level_engineers(targets, 1, schedules=schedules, shifts_now=shifts_now, users=users)
    people = [engineer.user for engineer in engineers]
    misses = [] if people else current.level_misses(targets, schedules=schedules, shifts_now=shifts_now, users=users)
    return LevelReach(people, misses)


def resolve_level_targets(*, organization_id: str, targets: Sequence[Target], now: datetime) -> list[User]:
    """The people `reach_level` finds."""
    return reach_level(organization_id=organization_id, targets=targets, now=now).people


def primary_on_call(*, organization_id: str, service_key: str, now: datetime) -> User | None:
    """The first person level 1 of the service's escalation policy reaches now, or None (no such
    service, no policy, or nobody on call). The same person on-call/current calls primary."""
    policy = policy_for_service(organization_id=organization_id, service_key=service_key)
    if policy is None or not policy.levels:
        return None
    people = resolve_level_targets(organization_id=organization_id, targets=policy.levels[0].targets, now=now)
    return people[0] if people else None


def current_on_call(*, organization_id: str, now: datetime, team_name: str | None = None) -> current.OnCallNow:
    """Who is on call now for every active service: one Query and at most four BatchGets."""
    found = list_services(organization_id=organization_id, is_active=True)
    teams = get_teams(organization_id=organization_id, team_ids=[s.team_id for s in found if s.team_id])
    found = [s for s in found if current.team_matches(teams.get(s.team_id) if s.team_id else None, team_name)]
    policy_ids = [s.escalation_policy_id for s in found if s.escalation_policy_id]
    stored_policies = policies.get_policies(organization_id=organization_id, policy_ids=policy_ids)
    by_id = {policy_id: stored.policy for policy_id, stored in stored_policies.items()}
    schedule_ids = current.schedule_ids_of(by_id.values())
    stored_schedules = get_schedules(organization_id=organization_id, schedule_ids=schedule_ids)
    schedules = {schedule_id: s.schedule for schedule_id, s in stored_schedules.items()}
    shifts_now = current.current_shifts(schedules.values(), now)
    wanted = current.user_ids_of(current.policy_targets(by_id.values()), shifts_now)
    users = get_users(organization_id=organization_id, user_ids=wanted)
    return current.assemble_on_call(
        services=found,
        policies=by_id,
        schedules=schedules,
        users=users,
        teams=teams,
        now=now,
        team_name=team_name,
        shifts_now=shifts_now,
    )
