"""Timeline order under racing writers, and the resolve SLA across a reopen (issue #13, finding 15)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from chalicelib import clock
from chalicelib.auth.principal import Principal
from chalicelib.auth.scopes import ALL_SCOPES
from chalicelib.incident import commands, repository, service
from chalicelib.incident.presenters import incident_detail_v1
from chalicelib.settings import get_settings
from tests.conftest import NOW, Org
from tests.kit import factories as make


@pytest.fixture
def svc(org: Org) -> Any:
    return make.service(org, "Checkout")


def who(org: Org) -> Principal:
    return Principal(
        organization_id=org.organization_id,
        credential_kind="api_key",
        scopes=frozenset(ALL_SCOPES),
        key_id="k1",
        display_name="robot (API key)",
        email="ada@example.com",
    )


def create(org: Org, svc: Any) -> str:
    record = service.create_incident(
        organization_id=org.organization_id,
        request=service.NewIncident(title="Checkout down", service_keys=[svc.service_key]),
        now=NOW,
        actor="tester",
        settings=get_settings(),
    )
    return record.incident_number


def move(org: Org, number: str, status: str, now: Any) -> None:
    commands.change_status(
        organization_id=org.organization_id,
        incident_number=number,
        status=status,
        comment=None,
        now=now,
        principal=who(org),
    )


def newest_first(org: Org, number: str) -> list[tuple[str, Any]]:
    found = repository.get_with_timeline(org.organization_id, number)
    return [(entry.details["to"] if entry.details else entry.event_type, entry.created_at) for entry in found.timeline]


def test_racing_status_changes_list_in_commit_order(org: Org, svc: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A (request at +1 min) reads the incident; B (request at +2 min) commits first; A's commit
    conflicts, its retry re-reads and commits last. Newest first must show A's change first."""
    number = create(org, svc)
    real_commit = repository.commit
    raced: list[bool] = []

    def commit_after_a_rival(incident: Any, entries: Any, **options: Any) -> None:
        if not raced:
            raced.append(True)
            move(org, number, "identified", NOW + timedelta(minutes=2))  # B, while A is between read and write
        real_commit(incident, entries, **options)

    monkeypatch.setattr(repository, "commit", commit_after_a_rival)
    move(org, number, "investigating", NOW + timedelta(minutes=1))  # A: conflicts once, retried
    monkeypatch.setattr(repository, "commit", real_commit)

    timeline = newest_first(org, number)
    assert [what for what, _ in timeline] == ["investigating", "identified", "created"]
    times = [at for _, at in timeline]
    assert times == sorted(times, reverse=True) and len(set(times)) == len(times)
    incident = repository.get_incident(org.organization_id, number)
    assert incident.updated_at >= times[0]  # the incident's last change is its newest entry


def test_entries_of_later_commits_sort_after_earlier_ones_even_with_an_older_request_time(org: Org, svc: Any) -> None:
    number = create(org, svc)
    move(org, number, "investigating", NOW + timedelta(minutes=5))
    move(org, number, "identified", NOW + timedelta(minutes=3))  # a slow request: started earlier
    assert [what for what, _ in newest_first(org, number)] == ["identified", "investigating", "created"]


def test_reopening_clears_the_resolve_sla_outcome(org: Org, svc: Any) -> None:
    number = create(org, svc)
    incident = repository.get_incident(org.organization_id, number)
    due = clock.parse(incident.sla["resolve_due_at"])
    move(org, number, "resolved", NOW + timedelta(minutes=1))
    assert repository.get_incident(org.organization_id, number).sla["resolve_met"] is True

    move(org, number, "investigating", NOW + timedelta(minutes=2))
    reopened = repository.get_with_timeline(org.organization_id, number)
    assert reopened.incident.resolved_at is None
    assert "resolve_met" not in reopened.incident.sla and "resolved_after_seconds" not in reopened.incident.sla
    sla = incident_detail_v1(reopened).sla
    assert sla is not None and sla.resolve_met is None  # running again

    move(org, number, "resolved", due + timedelta(minutes=1))  # the second resolution is late
    late = repository.get_incident(org.organization_id, number)
    assert late.sla["resolve_met"] is False
    assert late.sla["resolved_after_seconds"] == int((due + timedelta(minutes=1) - NOW).total_seconds())
