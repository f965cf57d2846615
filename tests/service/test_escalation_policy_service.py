"""Escalation policies on moto: CRUD, targets checked against the organization, optimistic locking,
and deleting a policy a service points at (409)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from chalicelib.catalog import service as services
from chalicelib.directory import users
from chalicelib.errors import Conflict, NotFound, ValidationFailed
from chalicelib.escalation import Level, Target
from chalicelib.escalation import service as policies
from chalicelib.escalation.tables import EscalationPolicyRecord
from chalicelib.oncall import Layer
from chalicelib.oncall import service as schedules
from chalicelib.paging import on_call
from tests.conftest import NOW, make_org


def fields_of(error: ValidationFailed) -> dict[str, str]:
    assert error.details is not None
    return {item["field"]: item["message"] for item in error.details["fields"]}


@pytest.fixture
def world(org):
    oid = org.organization_id
    lead = users.create_user(organization_id=oid, name="Lead", email="lead@example.com", now=NOW)
    schedule = schedules.create_schedule(
        organization_id=oid,
        name="Primary",
        time_zone="UTC",
        layers=[Layer("lyr_1", "One", (lead.user_id,), "daily", "09:00", datetime(2026, 11, 1, tzinfo=UTC))],
        now=NOW,
    )
    return oid, lead.user_id, schedule.schedule_id


def two_levels(user_id: str, schedule_id: str) -> list[Level]:
    return [Level((Target("schedule", schedule_id),), 5), Level((Target("user", user_id),), 30)]


def test_create_get_list_update_delete(world):
    oid, lead, schedule_id = world
    created = policies.create_policy(
        organization_id=oid, name=" Payments ", levels=two_levels(lead, schedule_id), repeat_count=2, now=NOW
    )
    assert created.policy_id.startswith("pol_")
    assert created.policy.name == "Payments"
    assert created.policy.levels == tuple(two_levels(lead, schedule_id))
    assert (created.policy.repeat_count, created.version, created.created_at) == (2, 1, NOW)
    assert policies.get_policy(organization_id=oid, policy_id=created.policy_id) == created
    assert policies.load_policy(organization_id=oid, policy_id=created.policy_id) == created.policy
    assert policies.load_policy(organization_id=oid, policy_id="pol_gone") is None

    second = policies.create_policy(
        organization_id=oid,
        name="Search",
        levels=[Level((Target("user", lead),), 1)],
        now=NOW + timedelta(minutes=1),
    )
    assert [p.policy_id for p in policies.list_policies(organization_id=oid)] == [second.policy_id, created.policy_id]
    assert set(policies.get_policies(organization_id=oid, policy_ids=[second.policy_id, "pol_x", "a/b"])) == {
        second.policy_id
    }
    assert policies.list_policies(organization_id=make_org("Other").organization_id) == []

    later = NOW + timedelta(hours=1)
    updated = policies.update_policy(organization_id=oid, policy_id=created.policy_id, now=later, repeat_count=0)
    assert (updated.policy.repeat_count, updated.policy.name, updated.version, updated.updated_at) == (
        0,
        "Payments",
        2,
        later,
    )
    assert updated.policy.levels == created.policy.levels

    policies.delete_policy(
        organization_id=oid,
        policy_id=created.policy_id,
        used_by_services=services.services_using_policy(organization_id=oid, policy_id=created.policy_id),
    )
    with pytest.raises(NotFound):
        policies.get_policy(organization_id=oid, policy_id=created.policy_id)
    with pytest.raises(NotFound):
        policies.delete_policy(
            organization_id=oid,
            policy_id=created.policy_id,
            used_by_services=services.services_using_policy(organization_id=oid, policy_id=created.policy_id),
        )
    with pytest.raises(NotFound):
        policies.update_policy(organization_id=oid, policy_id=created.policy_id, now=later, name="x")


def test_shape_and_targets_are_validated(world):
    oid, lead, schedule_id = world
    with pytest.raises(ValidationFailed) as caught:
        policies.create_policy(
            organization_id=oid, name="Bad", levels=[Level((Target("user", lead),), 0)], repeat_count=10, now=NOW
        )
    assert set(fields_of(caught.value)) == {"levels.0.delay_minutes", "repeat_count"}
    with pytest.raises(ValidationFailed):
        policies.create_policy(organization_id=oid, name="Empty", levels=[], now=NOW)

    with pytest.raises(ValidationFailed) as caught:
        policies.create_policy(
            organization_id=oid,
            name="Ghosts",
            levels=[
                Level((Target("schedule", "sch_ghost"), Target("user", lead)), 5),
                Level((Target("user", "usr_ghost"), Target("schedule", schedule_id)), 5),
            ],
            now=NOW,
        )
    assert fields_of(caught.value) == {
        "levels.0.targets.0.id": "no such schedule in this organization",
        "levels.1.targets.0.id": "no such user in this organization",
    }

    users.update_user(organization_id=oid, user_id=lead, now=NOW, is_active=False)
    with pytest.raises(ValidationFailed) as caught:
        policies.create_policy(organization_id=oid, name="Gone", levels=[Level((Target("user", lead),), 5)], now=NOW)
    assert fields_of(caught.value) == {"levels.0.targets.0.id": "the user is deactivated"}

    # Another organization's schedule is unknown here.
    other = make_org("Other").organization_id
    with pytest.raises(ValidationFailed):
        policies.create_policy(
            organization_id=other, name="Theirs", levels=[Level((Target("schedule", schedule_id),), 5)], now=NOW
        )


def test_update_validates_and_locks_optimistically(world):
    oid, lead, schedule_id = world
    created = policies.create_policy(organization_id=oid, name="P", levels=two_levels(lead, schedule_id), now=NOW)
    with pytest.raises(ValidationFailed):
        policies.update_policy(
            organization_id=oid,
            policy_id=created.policy_id,
            now=NOW,
            levels=[Level((Target("user", "usr_ghost"),), 5)],
        )
    with pytest.raises(ValidationFailed):
        policies.update_policy(organization_id=oid, policy_id=created.policy_id, now=NOW, repeat_count=11)

    first = policies.update_policy(
        organization_id=oid, policy_id=created.policy_id, now=NOW, expected_version=1, name="First"
    )
    assert first.version == 2
    with pytest.raises(Conflict) as caught:
        policies.update_policy(
            organization_id=oid, policy_id=created.policy_id, now=NOW, expected_version=1, name="Second"
        )
    assert caught.value.details == {"expected_version": 1, "current_version": 2}
    record = EscalationPolicyRecord.get(oid, created.policy_id)
    assert (record.name, record.version) == ("First", 2)


def test_deleting_a_policy_a_service_uses_is_a_conflict(world):
    oid, lead, schedule_id = world
    created = policies.create_policy(organization_id=oid, name="P", levels=two_levels(lead, schedule_id), now=NOW)
    service = services.create_service(
        organization_id=oid, name="Payments", now=NOW, escalation_policy_id=created.policy_id
    )
    assert on_call.policy_for_service(organization_id=oid, service_key=service.service_key) == created.policy
    # Inactive services still point at it: it stays in use.
    services.update_service(organization_id=oid, service_ref=service.service_key, now=NOW, is_active=False)
    with pytest.raises(Conflict) as caught:
        policies.delete_policy(
            organization_id=oid,
            policy_id=created.policy_id,
            used_by_services=services.services_using_policy(organization_id=oid, policy_id=created.policy_id),
        )
    assert caught.value.details == {"service_keys": [service.service_key]}

    services.update_service(organization_id=oid, service_ref=service.service_key, now=NOW, escalation_policy_id=None)
    assert on_call.policy_for_service(organization_id=oid, service_key=service.service_key) is None
    policies.delete_policy(
        organization_id=oid,
        policy_id=created.policy_id,
        used_by_services=services.services_using_policy(organization_id=oid, policy_id=created.policy_id),
    )
    assert on_call.policy_for_service(organization_id=oid, service_key="svc_0000000000") is None
