"""The on-call/current assembly as a pure function over loaded data (no AWS, `now` passed in)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from chalicelib.catalog.service import Service
from chalicelib.directory.teams import Team
from chalicelib.directory.users import User
from chalicelib.escalation import EscalationPolicy, Level, Target
from chalicelib.oncall import Layer, Override, Restriction, Schedule
from chalicelib.paging.current import (
    assemble_on_call,
    coverage_percentage,
    current_shifts,
    role_for_level,
    team_matches,
    user_ids_of,
)

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)  # a Sunday, 13:00 in Berlin
MONDAY = datetime(2026, 11, 16, 8, 0, tzinfo=UTC)  # 09:00 in Berlin
CREATED = datetime(2026, 1, 1, tzinfo=UTC)


def user(user_id: str, *, active: bool = True, name: str | None = None) -> User:
    return User(
        user_id, "org", name or user_id.title(), f"{user_id}@example.com", f"U{user_id}", "responder", active, CREATED
    )


def service(key: str, *, policy: str | None, team: str | None = "team_pay", active: bool = True) -> Service:
    return Service(key, "SER-00001", "org", f"Service {key}", "desc", team, None, policy, active, CREATED)


USERS = {u.user_id: u for u in (user("alice"), user("bob"), user("carol"), user("dave"), user("gone", active=False))}
TEAMS = {"team_pay": Team("team_pay", "org", "Payments  Team", "Money", ["alice"], True, CREATED)}
SCHEDULE = Schedule(
    "sch_1",
    "Payments primary",
    "Europe/Berlin",
    (
        Layer("lyr_week", "Weekly", ("alice", "bob"), "weekly", "09:00", MONDAY),
        Layer(
            "lyr_day",
            "Business hours",
            ("carol",),
            "daily",
            "09:00",
            MONDAY,
            restrictions=(Restriction.daily("09:00", "17:00"),),
        ),
    ),
)
POLICY = EscalationPolicy(
    "pol_1",
    "Payments",
    (Level((Target("schedule", "sch_1"), Target("user", "gone")), 5), Level((Target("user", "dave"),), 15)),
)


def assemble(services: list[Service], *, now: datetime = NOW, team_name: str | None = None, **overrides):
    data = {
        "policies": {"pol_1": POLICY},
        "schedules": {"sch_1": SCHEDULE},
        "users": USERS,
        "teams": TEAMS,
    }
    data.update(overrides)
    return assemble_on_call(services=services, now=now, team_name=team_name, **data)


def test_the_answer_per_service_and_the_summary():
    view = assemble([service("svc_a", policy="pol_1"), service("svc_b", policy=None, team=None)])
    assert view.timestamp == NOW
    assert view.summary.__dict__ == {
        "total_services": 2,
        "services_with_coverage": 1,
        "services_without_coverage": 1,
        "coverage_percentage": 50,
    }
    covered, uncovered = view.services
    # Level 1: the schedule's top layer (business hours, 09:00-17:00 Berlin) has Carol now; the
    # deactivated direct target is left out. Level 2: Dave, directly.
    assert [(e.user.user_id, e.role, e.level) for e in covered.engineers] == [
        ("carol", "primary", 1),
        ("dave", "secondary", 2),
    ]
    carol, dave = covered.engineers
    assert carol.schedule is SCHEDULE and carol.name == "Carol"
    assert (carol.shift.start, carol.shift.end) == (
        datetime(2026, 11, 22, 8, tzinfo=UTC),
        datetime(2026, 11, 22, 16, tzinfo=UTC),
    )
    assert (dave.schedule, dave.shift) == (None, None)
    assert covered.primary_on_call is carol
    assert covered.has_coverage is True
    assert covered.schedule_names == ("Payments primary",)
    assert covered.team is TEAMS["team_pay"]

    assert (uncovered.engineers, uncovered.schedule_names, uncovered.team) == ((), (), None)
    assert uncovered.has_coverage is False and uncovered.primary_on_call is None


def test_lower_layer_and_overrides_apply_outside_the_top_layer():
    evening = datetime(2026, 11, 22, 20, 0, tzinfo=UTC)  # 21:00 Berlin: business hours are over
    [entry] = assemble([service("svc_a", policy="pol_1")], now=evening).services
    assert entry.primary_on_call.user.user_id == "alice"
    assert entry.primary_on_call.shift.end == datetime(2026, 11, 23, 8, tzinfo=UTC)  # Monday 09:00 Berlin handoff

    overridden = Schedule(
        "sch_1",
        "Payments primary",
        "Europe/Berlin",
        SCHEDULE.layers,
        (Override("ovr_1", "bob", NOW - timedelta(hours=1), NOW + timedelta(hours=1)),),
    )
    [entry] = assemble([service("svc_a", policy="pol_1")], schedules={"sch_1": overridden}).services
    assert entry.primary_on_call.user.user_id == "bob"
    assert entry.primary_on_call.shift.end == NOW + timedelta(hours=1)


def test_only_active_services_and_the_team_filter():
    services = [
        service("svc_a", policy="pol_1"),
        service("svc_off", policy="pol_1", active=False),
        service("svc_none", policy=None, team=None),
    ]
    assert [e.service.service_key for e in assemble(services).services] == ["svc_a", "svc_none"]
    for name in ("payments team", " PAYMENTS   team ", "Payments  Team"):
        assert [e.service.service_key for e in assemble(services, team_name=name).services] == ["svc_a"]
    empty = assemble(services, team_name="Search")
    assert empty.services == ()
    assert empty.summary.coverage_percentage == 0 and empty.summary.total_services == 0
    assert team_matches(None, None) and team_matches(None, " ") and not team_matches(None, "Payments Team")


def test_missing_policy_schedule_or_people_mean_no_coverage():
    services = [service("svc_a", policy="pol_1"), service("svc_b", policy="pol_gone")]
    view = assemble(services, schedules={}, users={"gone": USERS["gone"]})
    assert [e.has_coverage for e in view.services] == [False, False]
    assert view.services[0].schedule_names == ()  # the schedule is gone
    assert view.summary.coverage_percentage == 0


def test_rounding_roles_and_helpers():
    assert [coverage_percentage(c, 3) for c in range(4)] == [0, 33, 66, 100]
    assert coverage_percentage(0, 0) == 0
    assert [role_for_level(n) for n in range(1, 7)] == [
        "primary",
        "secondary",
        "tertiary",
        "quaternary",
        "quinary",
        "level_6",
    ]
    shifts = current_shifts([SCHEDULE], NOW)
    assert shifts["sch_1"].user_id == "carol" and shifts["sch_1"].layer_id == "lyr_day"
    targets = [Target("schedule", "sch_1"), Target("user", "dave"), Target("user", "carol"), Target("schedule", "x")]
    assert user_ids_of(targets, shifts) == ["carol", "dave"]
