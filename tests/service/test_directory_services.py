"""Services on moto: keys and ids, the LSI lookup, one-call batch get, updates."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from pynamodb.connection.base import Connection

from chalicelib.catalog import service as services
from chalicelib.directory import teams
from chalicelib.errors import Conflict, InvalidSeverity, NotFound, ValidationFailed
from chalicelib.store import owner_of
from chalicelib.store.counters import CounterRecord
from tests.conftest import NOW, make_org


def _record_operations(monkeypatch):
    calls: list[str] = []
    original = Connection.dispatch

    def dispatch(self, operation_name, operation_kwargs):
        calls.append(operation_name)
        return original(self, operation_name, operation_kwargs)

    monkeypatch.setattr(Connection, "dispatch", dispatch)
    return calls


def test_create_service_assigns_key_and_sequential_id(org):
    oid = org.organization_id
    team = teams.create_team(organization_id=oid, name="Core", now=NOW)
    first = services.create_service(
        organization_id=oid,
        name=" Payments API ",
        now=NOW,
        description="Charges cards",
        team_id=team.team_id,
        default_severity="SEV2",
    )
    second = services.create_service(organization_id=oid, name="Search", now=NOW)
    assert re.fullmatch(r"svc_[a-z0-9]{10}", first.service_key)
    assert first.service_key != second.service_key
    assert (first.service_id, second.service_id) == ("SER-00001", "SER-00002")
    assert (first.name, first.description, first.team_id, first.default_severity) == (
        "Payments API",
        "Charges cards",
        team.team_id,
        "SEV2",
    )
    assert first.is_active is True
    assert first.escalation_policy_id is None
    assert first.created_at == NOW
    assert second.default_severity is None
    assert owner_of(organization_id=oid, unique_key="service-name#payments api") == first.service_key
    # Each organization counts on its own.
    other = services.create_service(organization_id=make_org("Other").organization_id, name="Payments API", now=NOW)
    assert other.service_id == "SER-00001"


def test_create_service_with_a_given_key(org):
    svc = services.create_service(organization_id=org.organization_id, name="A", now=NOW, service_key="svc_abcdefghij")
    assert svc.service_key == "svc_abcdefghij"
    with pytest.raises(Conflict) as raised:
        services.create_service(organization_id=org.organization_id, name="B", now=NOW, service_key="svc_abcdefghij")
    assert raised.value.details["fields"][0]["field"] == "service_key"
    with pytest.raises(ValidationFailed):
        services.create_service(organization_id=org.organization_id, name="C", now=NOW, service_key="svc_BAD")


def test_duplicate_service_name_is_a_conflict_and_burns_no_id(org):
    oid = org.organization_id
    services.create_service(organization_id=oid, name="Payments", now=NOW)
    with pytest.raises(Conflict) as raised:
        services.create_service(organization_id=oid, name="PAYMENTS", now=NOW)
    assert raised.value.details == {"fields": [{"field": "name", "message": "already in use"}]}
    assert CounterRecord.get(oid, "service").current_value == 1
    assert services.create_service(organization_id=oid, name="Other", now=NOW).service_id == "SER-00002"


def test_create_service_validation(org):
    oid = org.organization_id
    with pytest.raises(InvalidSeverity) as raised:
        services.create_service(organization_id=oid, name="A", now=NOW, default_severity="SEV9")
    assert raised.value.status == 400
    assert raised.value.code == "INVALID_SEVERITY"
    with pytest.raises(ValidationFailed) as invalid:
        services.create_service(organization_id=oid, name="A", now=NOW, team_id="no-such-team")
    assert invalid.value.details["fields"][0]["field"] == "team_id"
    foreign_team = teams.create_team(organization_id=make_org("Other").organization_id, name="T", now=NOW)
    with pytest.raises(ValidationFailed):
        services.create_service(organization_id=oid, name="A", now=NOW, team_id=foreign_team.team_id)
    with pytest.raises(ValidationFailed):
        services.create_service(organization_id=oid, name=" ", now=NOW)
    with pytest.raises(ValidationFailed):
        services.create_service(organization_id=oid, name="A", now=NOW, description="x" * 1001)
    assert services.list_services(organization_id=oid) == []


def test_get_service_by_key_or_id(org, monkeypatch):
    oid = org.organization_id
    svc = services.create_service(organization_id=oid, name="A", now=NOW)
    calls = _record_operations(monkeypatch)
    assert services.get_service(organization_id=oid, service_ref=svc.service_key) == svc
    assert calls == ["GetItem"]
    calls.clear()
    assert services.get_service(organization_id=oid, service_ref=svc.service_id) == svc
    assert services.get_service(organization_id=oid, service_ref=svc.service_id.lower()) == svc
    assert calls == ["Query", "Query"]  # the service-id LSI, never a scan


def test_get_service_not_found(org):
    oid = org.organization_id
    svc = services.create_service(organization_id=oid, name="A", now=NOW)
    for ref in ["svc_0000000000", "SER-99999", "SER-1", "nonsense", "svc_" + "x" * 300, "SER-" + "9" * 300]:
        with pytest.raises(NotFound):
            services.get_service(organization_id=oid, service_ref=ref)
    other = make_org("Other").organization_id
    for ref in (svc.service_key, svc.service_id):
        with pytest.raises(NotFound):
            services.get_service(organization_id=other, service_ref=ref)
    assert services.find_service(organization_id=other, service_ref=svc.service_key) is None


def test_get_services_is_one_batch_get(org, monkeypatch):
    oid = org.organization_id
    made = [services.create_service(organization_id=oid, name=f"S{i}", now=NOW) for i in range(3)]
    foreign = services.create_service(organization_id=make_org("Other").organization_id, name="F", now=NOW)
    keys = [s.service_key for s in made] + [made[0].service_key, foreign.service_key, "svc_0000000000", "junk"]
    calls = _record_operations(monkeypatch)
    found = services.get_services(organization_id=oid, service_keys=keys)
    assert calls == ["BatchGetItem"]
    assert found == {s.service_key: s for s in made}
    calls.clear()
    assert services.get_services(organization_id=oid, service_keys=["junk"]) == {}
    assert calls == []


def test_list_services_is_one_query_newest_first_with_filters(org, monkeypatch):
    oid = org.organization_id
    team = teams.create_team(organization_id=oid, name="Core", now=NOW)
    services.create_service(organization_id=oid, name="A", now=NOW, team_id=team.team_id)
    b = services.create_service(organization_id=oid, name="B", now=NOW + timedelta(seconds=1))
    c = services.create_service(organization_id=oid, name="C", now=NOW + timedelta(seconds=2), team_id=team.team_id)
    services.update_service(organization_id=oid, service_ref=c.service_key, now=NOW, is_active=False)
    calls = _record_operations(monkeypatch)
    assert [s.name for s in services.list_services(organization_id=oid)] == ["C", "B", "A"]
    assert calls == ["Query"]
    assert [s.name for s in services.list_services(organization_id=oid, is_active=True)] == ["B", "A"]
    assert [s.name for s in services.list_services(organization_id=oid, team_id=team.team_id)] == ["C", "A"]
    assert [s.name for s in services.list_services(organization_id=oid, team_id=team.team_id, is_active=True)] == ["A"]
    assert b.team_id is None


def _policy(organization_id: str) -> str:
    from chalicelib.directory import users
    from chalicelib.escalation import service as policies
    from chalicelib.escalation.steps import Level, Target

    someone = users.create_user(organization_id=organization_id, name="P", email="p@acme.test", now=NOW)
    levels = [Level((Target("user", someone.user_id),), 5)]
    return policies.create_policy(organization_id=organization_id, name="Pol", levels=levels, now=NOW).policy.policy_id


def test_update_service(org):
    oid = org.organization_id
    team = teams.create_team(organization_id=oid, name="Core", now=NOW)
    svc = services.create_service(organization_id=oid, name="A", now=NOW, description="d", default_severity="SEV1")
    policy_id = _policy(oid)
    with pytest.raises(ValidationFailed):
        services.update_service(
            organization_id=oid, service_ref=svc.service_key, now=NOW, escalation_policy_id="pol_nope"
        )
    updated = services.update_service(
        organization_id=oid,
        service_ref=svc.service_id,
        now=NOW,
        name="Renamed",
        description=None,
        team_id=team.team_id,
        default_severity="SEV3",
        escalation_policy_id=policy_id,
    )
    assert (updated.name, updated.description, updated.team_id, updated.default_severity) == (
        "Renamed",
        None,
        team.team_id,
        "SEV3",
    )
    assert updated.escalation_policy_id == policy_id
    assert (updated.service_key, updated.service_id, updated.created_at) == (svc.service_key, svc.service_id, NOW)
    assert owner_of(organization_id=oid, unique_key="service-name#a") is None
    assert owner_of(organization_id=oid, unique_key="service-name#renamed") == svc.service_key
    cleared = services.update_service(
        organization_id=oid, service_ref=svc.service_key, now=NOW, team_id=None, default_severity=None
    )
    assert (cleared.team_id, cleared.default_severity) == (None, None)
    assert services.get_service(organization_id=oid, service_ref=svc.service_key) == cleared


def test_update_service_errors_change_nothing(org):
    oid = org.organization_id
    services.create_service(organization_id=oid, name="Taken", now=NOW)
    svc = services.create_service(organization_id=oid, name="Mine", now=NOW)
    with pytest.raises(Conflict):
        services.update_service(
            organization_id=oid, service_ref=svc.service_key, now=NOW, name="TAKEN", is_active=False
        )
    with pytest.raises(InvalidSeverity):
        services.update_service(organization_id=oid, service_ref=svc.service_key, now=NOW, default_severity="P1")
    with pytest.raises(ValidationFailed):
        services.update_service(organization_id=oid, service_ref=svc.service_key, now=NOW, team_id="ghost")
    with pytest.raises(NotFound):
        services.update_service(organization_id=oid, service_ref="SER-99999", now=NOW, is_active=False)
    assert services.get_service(organization_id=oid, service_ref=svc.service_key) == svc
    # A case-only rename keeps the guard.
    recased = services.update_service(organization_id=oid, service_ref=svc.service_key, now=NOW, name="MINE")
    assert recased.name == "MINE"
    assert owner_of(organization_id=oid, unique_key="service-name#mine") == svc.service_key
