"""Who is on call, on moto: a level's targets to people, the primary on call of a service, and
on-call/current whose round trips do not grow with the number of services or the history."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from pynamodb.connection.base import Connection

from chalicelib.catalog import service as services
from chalicelib.directory import teams, users
from chalicelib.escalation import Level, Target
from chalicelib.escalation import service as policies
from chalicelib.oncall import Layer, Restriction
from chalicelib.oncall import service as schedules
from chalicelib.paging import on_call
from tests.conftest import NOW

MONDAY = datetime(2026, 11, 16, 8, 0, tzinfo=UTC)  # 09:00 in Europe/Berlin; NOW is Sunday 13:00 there


def record_operations(monkeypatch) -> list[str]:
    calls: list[str] = []
    original = Connection.dispatch

    def dispatch(self, operation_name, operation_kwargs):
        calls.append(operation_name)
        return original(self, operation_name, operation_kwargs)

    monkeypatch.setattr(Connection, "dispatch", dispatch)
    return calls


@pytest.fixture
def world(org):
    oid = org.organization_id
    people = {
        name: users.create_user(
            organization_id=oid, name=name.title(), email=f"{name}@example.com", slack_user_id=f"U{name}", now=NOW
        ).user_id
        for name in ("alice", "bob", "carol", "dave")
    }
    team = teams.create_team(organization_id=oid, name="Payments", now=NOW)
    schedule = schedules.create_schedule(
        organization_id=oid,
        name="Payments primary",
        time_zone="Europe/Berlin",
        team_id=team.team_id,
        layers=[
            Layer("lyr_week", "Weekly", (people["alice"], people["bob"]), "weekly", "09:00", MONDAY),
            Layer(
                "lyr_day",
                "Business hours",
                (people["carol"],),
                "daily",
                "09:00",
                MONDAY,
                restrictions=(Restriction.daily("09:00", "17:00"),),
            ),
        ],
        now=NOW,
    )
    policy = policies.create_policy(
        organization_id=oid,
        name="Payments",
        levels=[
            Level((Target("schedule", schedule.schedule_id),), 5),
            Level((Target("user", people["dave"]),), 10),
        ],
        now=NOW,
    )
    service = services.create_service(
        organization_id=oid, name="Payments API", team_id=team.team_id, escalation_policy_id=policy.policy_id, now=NOW
    )
    return oid, people, team, schedule, policy, service


def test_resolve_level_targets(world):
    oid, people, _, schedule, _, _ = world
    targets = [
        Target("schedule", schedule.schedule_id),
        Target("user", people["dave"]),
        Target("user", people["carol"]),  # already reached through the schedule
        Target("schedule", "sch_gone"),
        Target("user", "usr_gone"),
    ]
    found = on_call.resolve_level_targets(organization_id=oid, targets=targets, now=NOW)
    assert [u.user_id for u in found] == [people["carol"], people["dave"]]
    assert found[0].email == "carol@example.com" and found[0].slack_user_id == "Ucarol"
    evening = NOW + timedelta(hours=8)  # 21:00 Berlin: the weekly layer (Alice) decides
    assert [u.name for u in on_call.resolve_level_targets(organization_id=oid, targets=targets[:1], now=evening)] == [
        "Alice"
    ]
    users.update_user(organization_id=oid, user_id=people["dave"], now=NOW, is_active=False)
    assert on_call.resolve_level_targets(organization_id=oid, targets=[targets[1]], now=NOW) == []
    assert on_call.resolve_level_targets(organization_id=oid, targets=[], now=NOW) == []


def test_reach_level_says_why_each_target_reaches_nobody(world):
    oid, people, _, schedule, _, _ = world
    evening = NOW + timedelta(hours=8)
    users.update_user(organization_id=oid, user_id=people["dave"], now=NOW, is_active=False)
    targets = [
        Target("user", people["dave"]),
        Target("schedule", "sch_gone"),
        Target("user", "usr_gone"),
    ]
    reach = on_call.reach_level(organization_id=oid, targets=targets, now=evening)
    assert reach.people == []
    assert reach.misses == [
        "Dave is deactivated",
        "schedule sch_gone no longer exists",
        "user usr_gone no longer exists",
    ]
    users.update_user(organization_id=oid, user_id=people["alice"], now=NOW, is_active=False)
    reach = on_call.reach_level(organization_id=oid, targets=[Target("schedule", schedule.schedule_id)], now=evening)
    assert reach.misses == ["schedule Payments primary has Alice on call, who is deactivated or removed"]
    reached = on_call.reach_level(organization_id=oid, targets=[Target("schedule", schedule.schedule_id)], now=NOW)
    assert [u.name for u in reached.people] == ["Carol"] and reached.misses == []


def test_primary_on_call(world):
    oid, people, _, schedule, _, service = world
    primary = on_call.primary_on_call(organization_id=oid, service_key=service.service_key, now=NOW)
    assert primary is not None and (primary.user_id, primary.email) == (people["carol"], "carol@example.com")
    # An override wins for its interval.
    schedules.add_override(
        organization_id=oid,
        schedule_id=schedule.schedule_id,
        user_id=people["bob"],
        start=NOW,
        end=NOW + timedelta(hours=1),
        now=NOW,
    )
    assert (
        on_call.primary_on_call(organization_id=oid, service_key=service.service_key, now=NOW).user_id
        == (people["bob"])
    )
    bare = services.create_service(organization_id=oid, name="Bare", now=NOW)
    assert on_call.primary_on_call(organization_id=oid, service_key=bare.service_key, now=NOW) is None
    assert on_call.primary_on_call(organization_id=oid, service_key="svc_0000000000", now=NOW) is None
    # Before any layer starts, level 1 reaches nobody: no primary (level 2 does not stand in).
    assert (
        on_call.primary_on_call(organization_id=oid, service_key=service.service_key, now=MONDAY - timedelta(1)) is None
    )


def test_current_on_call_shape(world):
    oid, people, _, _, _, service = world
    services.create_service(organization_id=oid, name="Search", now=NOW + timedelta(seconds=1))
    view = on_call.current_on_call(organization_id=oid, now=NOW)
    assert (view.summary.total_services, view.summary.services_with_coverage, view.summary.coverage_percentage) == (
        2,
        1,
        50,
    )
    search, payments = view.services  # newest first
    assert (search.service.name, search.has_coverage, search.team) == ("Search", False, None)
    assert payments.service.service_key == service.service_key
    assert [(e.user.user_id, e.role) for e in payments.engineers] == [
        (people["carol"], "primary"),
        (people["dave"], "secondary"),
    ]
    assert payments.schedule_names == ("Payments primary",)
    filtered = on_call.current_on_call(organization_id=oid, now=NOW, team_name="PAYMENTS")
    assert [e.service.service_key for e in filtered.services] == [service.service_key]
    assert on_call.current_on_call(organization_id=oid, now=NOW, team_name="Nobody").services == ()


def test_current_on_call_round_trips_do_not_grow(world, monkeypatch):
    oid, people, team, schedule, policy, _ = world
    calls = record_operations(monkeypatch)
    on_call.current_on_call(organization_id=oid, now=NOW)
    few = list(calls)
    assert few == ["Query", "BatchGetItem", "BatchGetItem", "BatchGetItem", "BatchGetItem"]

    # More services on the same policy, another schedule, and a long history of overrides.
    other = schedules.create_schedule(
        organization_id=oid,
        name="Secondary",
        time_zone="UTC",
        layers=[Layer("lyr_1", "One", (people["bob"],), "hourly", "00:00", MONDAY)],
        now=NOW,
    )
    for day in range(20):
        start = NOW - timedelta(days=25) + timedelta(days=day)
        schedules.add_override(
            organization_id=oid,
            schedule_id=schedule.schedule_id,
            user_id=people["alice"],
            start=start,
            end=start + timedelta(hours=2),
            now=NOW,
        )
    policies.update_policy(
        organization_id=oid,
        policy_id=policy.policy_id,
        now=NOW,
        levels=[
            Level((Target("schedule", schedule.schedule_id), Target("schedule", other.schedule_id)), 5),
            Level((Target("user", people["dave"]),), 10),
        ],
    )
    for number in range(6):
        services.create_service(
            organization_id=oid,
            name=f"Service {number}",
            team_id=team.team_id,
            escalation_policy_id=policy.policy_id,
            now=NOW,
        )
    calls.clear()
    view = on_call.current_on_call(organization_id=oid, now=NOW)
    assert calls == few
    assert view.summary.total_services == 7 and view.summary.coverage_percentage == 100
    assert view.services[0].schedule_names == ("Payments primary", "Secondary")
