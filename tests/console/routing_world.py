"""A small people-routing world for the on-call, schedule, policy and service pages: a weekly
rotation (responder then admin, 09:00 Berlin handoffs), an override for the owner tomorrow, a
policy paging the schedule then the owner (a viewer cannot be paged), a service using it and one
without a policy."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from chalicelib import clock
from chalicelib.catalog import service as catalog
from chalicelib.escalation import service as policies
from chalicelib.escalation.steps import Level, Target
from chalicelib.oncall import service as schedules
from chalicelib.oncall.schedule import Layer
from tests.conftest import NOW, Org
from tests.console.conftest import Person

# NOW is Sunday 2026-11-22 12:00Z, 13:00 in Berlin: the responder's week (from Monday 16th 09:00).
OVERRIDE_START = datetime.fromisoformat("2026-11-23T17:00:00+00:00")  # Monday 18:00 in Berlin
OVERRIDE_END = datetime.fromisoformat("2026-11-23T21:00:00+00:00")


@dataclass(frozen=True)
class World:
    schedule_id: str
    override_id: str
    policy_id: str
    service_key: str
    bare_service_key: str


def build_world(org: Org, people: dict[str, Person]) -> World:
    clock.freeze(NOW)
    organization_id = org.organization_id
    layer = Layer(
        layer_id="lyr_weekly",
        name="Weekly",
        members=(people["responder"].user_id, people["admin"].user_id),
        rotation="weekly",
        handoff_time="09:00",
        start=datetime.fromisoformat("2026-11-16T08:00:00+00:00"),
    )
    stored = schedules.create_schedule(
        organization_id=organization_id, name="Payments primary", time_zone="Europe/Berlin", layers=[layer], now=NOW
    )
    schedule_id = stored.schedule.schedule_id
    _, override = schedules.add_override(
        organization_id=organization_id,
        schedule_id=schedule_id,
        user_id=people["owner"].user_id,
        start=OVERRIDE_START,
        end=OVERRIDE_END,
        now=NOW,
    )
    policy = policies.create_policy(
        organization_id=organization_id,
        name="Payments escalation",
        levels=[
            Level((Target("schedule", schedule_id),), 5),
            Level((Target("user", people["owner"].user_id),), 15),
        ],
        repeat_count=1,
        now=NOW,
    )
    paying = catalog.create_service(
        organization_id=organization_id,
        name="Payments API",
        now=NOW,
        description="Takes the money",
        default_severity="SEV2",
        escalation_policy_id=policy.policy.policy_id,
    )
    bare = catalog.create_service(organization_id=organization_id, name="Search", now=NOW)
    return World(schedule_id, override.override_id, policy.policy.policy_id, paying.service_key, bare.service_key)
