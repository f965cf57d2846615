"""A real-sized vendor account, the same for both vendors: 40 users, 8 teams, 10 schedules with
several layers (rotations) and restrictions, 12 escalation policies, 30 services, 40
integrations, overrides, maintenance windows, heartbeats. Built relative to `now` so the weeks
ahead always have handoffs, overrides and windows; deterministic for a given `now`.

`pagerduty(now)` and `opsgenie(now)` give each vendor's objects as its API describes them."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

TEAMS = ("Payments", "Search", "Platform", "Data", "Mobile", "Web", "Security", "SRE")
ZONES = (
    "America/New_York",
    "Europe/Berlin",
    "UTC",
    "Australia/Sydney",
    "Asia/Kolkata",
    "America/Los_Angeles",
    "Europe/London",
    "America/Chicago",
    "Asia/Tokyo",
    "Europe/Paris",
)
FIRST = ("Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "Ken", "Margaret", "Dennis")
LAST = ("Lovelace", "Hopper", "Turing", "Dijkstra")


@dataclass(frozen=True)
class Size:
    """How big an account: the real-sized one by default; SMALL for the in-process tests."""

    users: int = 40
    teams: int = 8
    schedules: int = 10
    policies: int = 12
    services: int = 30
    integrations: int = 40


FULL = Size()
SMALL = Size(users=10, teams=2, schedules=3, policies=3, services=6, integrations=9)
PD_INTEGRATIONS = (
    ("events_api_v2_inbound_integration", "", "Events API v2"),
    ("events_api_v2_inbound_integration", "Prometheus", "Alertmanager"),
    ("events_api_v2_inbound_integration", "Datadog", "Datadog"),
    ("aws_cloudwatch_inbound_integration", "Amazon CloudWatch", "CloudWatch"),
    ("generic_events_api_inbound_integration", "New Relic", "New Relic"),
    ("events_api_v2_inbound_integration", "Grafana", "Grafana"),
    ("generic_email_inbound_integration", "", "Email"),
    ("sentry_inbound_integration", "Sentry", "Sentry"),
)
OG_INTEGRATIONS = ("API", "Prometheus", "Datadog", "CloudWatch", "NewRelicV2", "Grafana", "Email", "Sentry", "Webhook")


@dataclass
class Layer:
    id: str
    name: str
    start: datetime
    end: datetime | None
    virtual_start: datetime
    turn_seconds: int
    members: list[int]  # user indexes
    daily: tuple[str, int] | None = None  # (HH:MM, minutes)
    weekly: list[tuple[int, str, int]] = field(default_factory=list)  # (ISO day 1-7, HH:MM, minutes)


@dataclass
class Schedule:
    id: str
    name: str
    zone: str
    team: int
    layers: list[Layer]  # lowest first
    overrides: list[tuple[int, datetime, datetime]]


def user_email(index: int) -> str:
    return f"{FIRST[index % 10].lower()}.{LAST[index // 10].lower()}{index:02d}@example.test"


def user_name(index: int) -> str:
    return f"{FIRST[index % 10]} {LAST[index // 10]} {index:02d}"


def _local(zone: str, day: date, clock: str) -> datetime:
    hours, minutes = (int(part) for part in clock.split(":"))
    return datetime.combine(day, time(hours, minutes), tzinfo=ZoneInfo(zone))


def schedules(now: datetime, size: Size = FULL) -> list[Schedule]:
    """Ten schedules; their kinds of layers cycle through weekly (started before the last DST
    change), daily, 12-hour, two-week, restricted nights and weekends, a layer that starts next
    week between handoffs, one that ends in two weeks, one that has ended."""
    today = now.date()
    monday = today - timedelta(days=today.weekday())
    found = []
    for index in range(size.schedules):
        zone = ZONES[index]
        team = index % size.teams
        people = [(team * 5 + offset) % size.users for offset in range(5)]
        sid = f"PSCH{index:03d}"
        layers = [
            Layer(
                f"{sid}L1",
                "Layer 1",
                _local(zone, monday - timedelta(weeks=20), "09:00"),
                None,
                _local(zone, monday - timedelta(weeks=20 + index % 3), "09:00"),
                7 * 86400 * (2 if index % 4 == 3 else 1),
                people[:4],
            )
        ]
        kind = index % 5
        if kind == 0:  # nights on weekdays, whole weekend, daily turns
            layers.append(
                Layer(
                    f"{sid}L2",
                    "Layer 2",
                    _local(zone, monday - timedelta(weeks=3), "18:00"),
                    None,
                    _local(zone, monday - timedelta(weeks=30), "18:00"),
                    86400,
                    [people[4], people[0], people[2]],
                    weekly=[(day, "18:00", 15 * 60) for day in range(1, 5)] + [(5, "18:00", 63 * 60)],
                )
            )
        elif kind == 1:  # 12-hour turns, daytime only
            layers.append(
                Layer(
                    f"{sid}L2",
                    "Layer 2",
                    _local(zone, today - timedelta(days=10), "08:00"),
                    None,
                    _local(zone, today - timedelta(days=10), "08:00"),
                    12 * 3600,
                    [people[1], people[3]],
                    daily=("08:00", 10 * 60),
                )
            )
        elif kind == 2:  # a new weekly layer from next Wednesday noon, between its Monday handoffs
            layers.append(
                Layer(
                    f"{sid}L2",
                    "Layer 2",
                    _local(zone, monday + timedelta(days=9), "12:00"),
                    None,
                    _local(zone, monday - timedelta(weeks=6), "10:00"),
                    7 * 86400,
                    [people[2], people[4], people[1]],
                )
            )
        elif kind == 3:  # business hours, ends in two weeks; an ended layer below it
            layers.insert(
                0,
                Layer(
                    f"{sid}L0",
                    "Old layer",
                    _local(zone, monday - timedelta(weeks=40), "09:00"),
                    _local(zone, monday - timedelta(weeks=20), "09:00"),
                    _local(zone, monday - timedelta(weeks=40), "09:00"),
                    86400,
                    people[:2],
                ),
            )
            layers.append(
                Layer(
                    f"{sid}L2",
                    "Layer 2",
                    _local(zone, monday - timedelta(weeks=1), "09:00"),
                    _local(zone, monday + timedelta(weeks=2), "17:00"),
                    _local(zone, monday - timedelta(weeks=1), "09:00"),
                    86400,
                    [people[3], people[1]],
                    daily=("09:00", 8 * 60),
                )
            )
        else:  # three layers: weekends on a daily turn over a 2-day rotation
            layers.append(
                Layer(
                    f"{sid}L2",
                    "Layer 2",
                    _local(zone, monday - timedelta(weeks=8), "07:30"),
                    None,
                    _local(zone, monday - timedelta(weeks=8), "07:30"),
                    2 * 86400,
                    [people[0], people[4]],
                )
            )
            layers.append(
                Layer(
                    f"{sid}L3",
                    "Layer 3",
                    _local(zone, monday - timedelta(weeks=8), "00:00"),
                    None,
                    _local(zone, monday - timedelta(weeks=8), "00:00"),
                    86400,
                    [people[2], people[3]],
                    weekly=[(6, "00:00", 48 * 60)],
                )
            )
        overrides = [
            (
                people[(index + 1) % 5],
                _local(zone, today + timedelta(days=2 + index % 5), "10:00"),
                _local(zone, today + timedelta(days=3 + index % 5), "14:30"),
            ),
        ]
        if index % 2 == 0:
            overrides.append(
                (
                    people[(index + 3) % 5],
                    _local(zone, today + timedelta(days=12), "00:00"),
                    _local(zone, today + timedelta(days=13), "00:00"),
                )
            )
        found.append(Schedule(sid, f"{TEAMS[team]} on call {index + 1}", zone, team, layers, overrides))
    return found


def policies(size: Size = FULL) -> list[dict[str, Any]]:
    """Twelve policies: level 1 a schedule, level 2 another schedule or a user, some a level 3."""
    found = []
    for index in range(size.policies):
        levels = [{"delay": 10 + 5 * (index % 3), "targets": [("schedule", index % size.schedules)]}]
        if index % 4 != 3:
            second = ("schedule", (index + 1) % size.schedules) if index % 2 else ("user", (index * 3) % size.users)
            levels.append({"delay": 15 + 5 * (index % 2), "targets": [second]})
        if index % 3 == 0:
            levels.append(
                {"delay": 30, "targets": [("user", (index * 7 + 1) % size.users), ("user", (index + 2) % size.users)]}
            )
        found.append(
            {
                "id": f"PPOL{index:03d}",
                "name": f"{TEAMS[index % size.teams]} escalation {index + 1}",
                "levels": levels,
                "loops": index % 3,
                "team": index % size.teams,
            }
        )
    return found


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def service_names(size: Size = FULL) -> list[str]:
    return [
        f"{TEAMS[index % size.teams]} {word}"
        for index, word in enumerate(
            ("api", "web", "worker", "db", "cache", "queue", "search", "auth", "billing", "cdn") * 3
        )
    ][: size.services]


def unique_service_names(size: Size = FULL) -> list[str]:
    names = service_names(size)
    return [f"{name} {index // size.teams + 1}" for index, name in enumerate(names)]


@dataclass
class Built:
    now: datetime
    schedules: list[Schedule]
    policies: list[dict[str, Any]]
    services: list[str]
    size: Size = FULL

    @classmethod
    def at(cls, now: datetime, size: Size = FULL) -> Built:
        return cls(now, schedules(now, size), policies(size), unique_service_names(size), size)
