"""Incident service on moto: numbering, idempotency, optimistic locking, SLA, listing, timeline."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest

from chalicelib import clock
from chalicelib.auth.principal import Principal
from chalicelib.auth.scopes import ALL_SCOPES
from chalicelib.errors import (
    ConfigurationError,
    IdempotencyInProgress,
    IdempotencyKeyReused,
    InvalidStatus,
    NotFound,
    TransitionNotAllowed,
    ValidationFailed,
)
from chalicelib.idempotency.service import StoredResponse, run_once
from chalicelib.incident import commands, listing, repository, service, workflow_settings
from chalicelib.incident.models import IncidentListQuery
from chalicelib.incident.sla import SlaSettings, SlaTarget
from chalicelib.settings import get_settings
from tests.conftest import NOW, Org
from tests.kit import factories as make


@pytest.fixture
def svc(org: Org):
    return make.service(org, "Checkout")


def principal(org: Org, email: str | None = None) -> Principal:
    return Principal(
        organization_id=org.organization_id,
        credential_kind="api_key",
        scopes=frozenset(ALL_SCOPES),
        key_id="k1",
        display_name=email or "robot (API key)",
        email=email,
    )


def create(org: Org, svc, title: str = "Checkout down", now=NOW, severity: str | None = None):
    return service.create_incident(
        organization_id=org.organization_id,
        request=service.NewIncident(title=title, service_keys=[svc.service_key], severity=severity),
        now=now,
        actor="tester",
        settings=get_settings(),
    )


def test_numbers_are_sequential_per_year_and_unique_under_concurrency(org: Org, svc) -> None:
    first = create(org, svc)
    assert first.incident_number == "INC-2026-0001"
    with ThreadPoolExecutor(max_workers=8) as pool:
        numbers = list(pool.map(lambda i: create(org, svc, f"t{i}").incident_number, range(16)))
    assert len(set(numbers)) == 16
    assert sorted(numbers)[-1] == "INC-2026-0017"
    next_year = create(org, svc, now=NOW.replace(year=2027))
    assert next_year.incident_number == "INC-2027-0001"


def test_create_sets_initial_status_default_severity_team_and_created_entry(org: Org) -> None:
    from chalicelib.catalog import service as services
    from chalicelib.directory import teams

    team = teams.create_team(organization_id=org.organization_id, name="Payments", now=NOW)
    checkout = services.create_service(
        organization_id=org.organization_id, name="Pay", team_id=team.team_id, default_severity="SEV1", now=NOW
    )
    record = create(org, checkout)
    assert (record.status, record.severity, record.team_name) == ("new", "SEV1", "Payments")
    found = repository.get_with_timeline(org.organization_id, record.incident_number)
    assert [e.event_type for e in found.timeline] == ["created"]


def test_unknown_or_foreign_services_are_refused(org: Org, svc) -> None:
    from tests.conftest import make_org

    other = make_org("Other")
    with pytest.raises(ValidationFailed) as refused:
        service.create_incident(
            organization_id=other.organization_id,
            request=service.NewIncident(title="x", service_keys=[svc.service_key]),
            now=NOW,
            actor="a",
            settings=get_settings(),
        )
    assert refused.value.details == {
        "fields": [{"field": "service_ids", "message": f"unknown or inactive service: {svc.service_key}"}]
    }


def test_incomplete_sla_for_the_severity_is_a_configuration_error(org: Org, svc) -> None:
    partial = SlaSettings({"SEV0": SlaTarget(5, 60)})
    workflow_settings.save_sla_settings(organization_id=org.organization_id, sla=partial)
    with pytest.raises(ConfigurationError):
        create(org, svc, severity="SEV2")
    assert create(org, svc, severity="SEV0").severity == "SEV0"


def test_idempotent_create_runs_once_across_eight_threads(org: Org, svc) -> None:
    calls = []
    barrier = threading.Barrier(8)

    def attempt(_: int):
        barrier.wait()

        def action() -> StoredResponse:
            calls.append(1)
            return StoredResponse(201, {"incident_number": create(org, svc).incident_number})

        try:
            return run_once(
                organization_id=org.organization_id,
                operation="create",
                key="same",
                payload={"a": 1},
                now=NOW,
                action=action,
            )
        except IdempotencyInProgress:
            return None

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(attempt, range(8)))
    assert len(calls) == 1
    replayed = run_once(
        organization_id=org.organization_id,
        operation="create",
        key="same",
        payload={"a": 1},
        now=NOW,
        action=lambda: pytest.fail("must not run again"),  # type: ignore[arg-type,return-value]
    )
    assert replayed[1] is True
    assert all(r is None or r[0] == replayed[0] for r in results)
    with pytest.raises(IdempotencyKeyReused):
        run_once(
            organization_id=org.organization_id,
            operation="create",
            key="same",
            payload={"a": 2},
            now=NOW,
            action=lambda: StoredResponse(201, {}),
        )


def test_idempotency_keys_are_per_organization_and_expire_after_a_day(org: Org) -> None:
    from tests.conftest import make_org

    other = make_org("Other")
    run_once(
        organization_id=org.organization_id,
        operation="op",
        key="k",
        payload=1,
        now=NOW,
        action=lambda: StoredResponse(201, {"n": 1}),
    )
    response, replayed = run_once(
        organization_id=other.organization_id,
        operation="op",
        key="k",
        payload=2,
        now=NOW,
        action=lambda: StoredResponse(201, {"n": 2}),
    )
    assert (response.body, replayed) == ({"n": 2}, False)
    later = NOW + timedelta(hours=24, seconds=1)
    response, replayed = run_once(
        organization_id=org.organization_id,
        operation="op",
        key="k",
        payload=9,
        now=later,
        action=lambda: StoredResponse(201, {"n": 3}),
    )
    assert (response.body, replayed) == ({"n": 3}, False)


def test_a_failed_action_releases_the_key(org: Org) -> None:
    def failing() -> StoredResponse:
        raise ValidationFailed("nope")

    with pytest.raises(ValidationFailed):
        run_once(organization_id=org.organization_id, operation="op", key="k", payload=1, now=NOW, action=failing)
    response, replayed = run_once(
        organization_id=org.organization_id,
        operation="op",
        key="k",
        payload=1,
        now=NOW,
        action=lambda: StoredResponse(201, {"ok": True}),
    )
    assert (response.body, replayed) == ({"ok": True}, False)


def test_stale_write_is_refused_then_retried_never_lost(org: Org, svc) -> None:
    from pynamodb.exceptions import TransactWriteError

    incident = create(org, svc)
    stale = repository.get_incident(org.organization_id, incident.incident_number)
    fresh = repository.get_incident(org.organization_id, incident.incident_number)
    fresh.title = "fresh"
    repository.commit(fresh, [])
    stale.title = "stale"
    with pytest.raises(TransactWriteError):
        repository.commit(stale, [])
    # The commands retry with a fresh read, so both changes survive.
    commands.update_incident(
        organization_id=org.organization_id,
        incident_number=incident.incident_number,
        changes={"severity": "SEV1"},
        now=NOW,
        principal=principal(org),
    )
    final = repository.get_incident(org.organization_id, incident.incident_number)
    assert (final.title, final.severity) == ("fresh", "SEV1")


def test_racing_acknowledges_stamp_once(org: Org, svc) -> None:
    incident = create(org, svc)
    barrier = threading.Barrier(6)

    def ack(i: int):
        barrier.wait()
        with clock.frozen(NOW + timedelta(seconds=i)):
            return commands.acknowledge(
                organization_id=org.organization_id,
                incident_number=incident.incident_number,
                principal=principal(org),
                now=clock.now(),
            )

    with ThreadPoolExecutor(max_workers=6) as pool:
        results = list(pool.map(ack, range(6)))
    assert sum(r.newly_acknowledged for r in results) == 1
    stamps = {r.incident.acknowledged_at for r in results}
    assert len(stamps) == 1
    found = repository.get_with_timeline(org.organization_id, incident.incident_number)
    assert [e.event_type for e in found.timeline].count("acknowledged") == 1
    assert found.incident.status == "investigating"
    assert found.incident.sla["acknowledge_met"] is True


def test_status_moves_stamp_and_clear_resolution(org: Org, svc) -> None:
    incident = create(org, svc)
    number = incident.incident_number
    who = principal(org, "ada@example.com")
    with pytest.raises(InvalidStatus):
        commands.change_status(
            organization_id=org.organization_id,
            incident_number=number,
            status="bogus",
            comment=None,
            now=NOW + timedelta(minutes=1),
            principal=who,
        )
    resolved = commands.change_status(
        organization_id=org.organization_id,
        incident_number=number,
        status="resolved",
        comment="fixed",
        now=NOW + timedelta(minutes=2),
        principal=who,
    )
    assert (resolved.resolved_at, resolved.resolved_by_email) == (NOW + timedelta(minutes=2), "ada@example.com")
    assert resolved.list_key.endswith("#closed")
    reopened = commands.change_status(
        organization_id=org.organization_id,
        incident_number=number,
        status="investigating",
        comment=None,
        now=NOW + timedelta(minutes=3),
        principal=who,
    )
    assert (reopened.resolved_at, reopened.resolved_by_email) == (None, None)
    assert reopened.list_key.endswith("#open")
    commands.change_status(
        organization_id=org.organization_id,
        incident_number=number,
        status="resolved",
        comment=None,
        now=NOW + timedelta(minutes=4),
        principal=who,
    )
    commands.change_status(
        organization_id=org.organization_id,
        incident_number=number,
        status="closed",
        comment=None,
        now=NOW + timedelta(minutes=5),
        principal=who,
    )
    with pytest.raises(TransitionNotAllowed):
        commands.change_status(
            organization_id=org.organization_id,
            incident_number=number,
            status="new",
            comment=None,
            now=NOW + timedelta(minutes=6),
            principal=who,
        )
    types = [e.event_type for e in repository.get_with_timeline(org.organization_id, number).timeline]
    assert types[:4] == ["status_changed", "resolved", "reopened", "resolved"]
    # A move to the current status is a no-op without a timeline entry.
    commands.change_status(
        organization_id=org.organization_id,
        incident_number=number,
        status="closed",
        comment=None,
        now=NOW + timedelta(minutes=7),
        principal=who,
    )
    assert len(repository.get_with_timeline(org.organization_id, number).timeline) == len(types)


def test_timeline_is_newest_first_limited_to_50_with_has_more(org: Org, svc) -> None:
    incident = create(org, svc)
    for i in range(55):
        commands.add_comment(
            organization_id=org.organization_id,
            incident_number=incident.incident_number,
            comment=f"c{i}",
            now=NOW + timedelta(seconds=i + 1),
            principal=principal(org),
        )
    found = repository.get_with_timeline(org.organization_id, incident.incident_number)
    assert len(found.timeline) == 50 and found.has_more
    assert found.timeline[0].description == "c54"
    with pytest.raises(NotFound):
        commands.add_comment(
            organization_id=org.organization_id,
            incident_number="INC-2026-9999",
            comment="x",
            now=NOW,
            principal=principal(org),
        )


def test_default_list_reads_only_open_incidents(org: Org, svc) -> None:
    numbers = [create(org, svc, f"i{i}", now=NOW + timedelta(minutes=i)).incident_number for i in range(6)]
    for number in numbers[:4]:
        commands.change_status(
            organization_id=org.organization_id,
            incident_number=number,
            status="resolved",
            comment=None,
            now=NOW + timedelta(hours=1),
            principal=principal(org, "a@b.co"),
        )
    page = listing.list_incidents(organization_id=org.organization_id, query=IncidentListQuery())
    assert [r.incident_number for r in page.items] == [numbers[5], numbers[4]]
    assert page.items_read == 2  # the resolved history was never read
    resolved = listing.list_incidents(
        organization_id=org.organization_id, query=IncidentListQuery(status=["resolved"], limit=3)
    )
    assert (resolved.total, resolved.has_more, resolved.next_offset) == (4, True, 3)
    assert [r.incident_number for r in resolved.items] == [numbers[3], numbers[2], numbers[1]]
    windowed = listing.list_incidents(
        organization_id=org.organization_id,
        query=IncidentListQuery(
            status=["resolved", "new"],
            created_after=NOW + timedelta(minutes=1),
            created_before=NOW + timedelta(minutes=4),
            resolved_by="a@b.co",
        ),
    )
    assert [r.incident_number for r in windowed.items] == [numbers[3], numbers[2], numbers[1]]
