"""Acting from a notification: the API's commands with the person's permissions, the channel named."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest

from chalicelib.directory import users
from chalicelib.incident import commands, repository, service
from chalicelib.paging.respond import Outcome, respond
from chalicelib.settings import get_settings
from tests.conftest import NOW, Org
from tests.kit import factories as make


@pytest.fixture
def world(org: Org) -> dict[str, Any]:
    grace = users.create_user(
        organization_id=org.organization_id, name="Grace", email="grace@acme.test", now=NOW, role="responder"
    )
    vera = users.create_user(
        organization_id=org.organization_id, name="Vera", email="vera@acme.test", now=NOW, role="viewer"
    )
    svc = make.service(org, "Checkout")
    created = service.create_incident(
        organization_id=org.organization_id,
        request=service.NewIncident(title="Checkout down", service_keys=[svc.service_key], severity="SEV1"),
        now=NOW,
        actor="seed",
        settings=get_settings(),
    )
    return {"grace": grace, "vera": vera, "number": created.incident_number}


def _titles(org: Org, number: str) -> list[str]:
    return [entry.title or "" for entry in repository.get_with_timeline(org.organization_id, number).timeline]


def test_acknowledge_then_resolve_name_the_channel(org: Org, world: dict[str, Any]) -> None:
    number = world["number"]
    done = respond(
        organization_id=org.organization_id,
        incident_number=number,
        action="acknowledge",
        person=world["grace"],
        channel="slack",
        now=NOW,
        settings=get_settings(),
    )
    assert done.done and done.message == f"{number} acknowledged by grace@acme.test."
    again = respond(
        organization_id=org.organization_id,
        incident_number=number,
        action="acknowledge",
        person=world["grace"],
        channel="sms",
        now=NOW,
        settings=get_settings(),
    )
    assert not again.done and "already acknowledged" in again.message
    resolved = respond(
        organization_id=org.organization_id,
        incident_number=number,
        action="resolve",
        person=world["grace"],
        channel="voice",
        now=NOW,
        settings=get_settings(),
    )
    assert resolved.done
    titles = _titles(org, number)
    assert "Acknowledged by grace@acme.test via Slack" in titles
    assert any(t.endswith("to resolved via a phone call") for t in titles)
    assert repository.get_incident(org.organization_id, number).status == "resolved"


def test_a_viewer_and_an_unknown_incident_change_nothing(org: Org, world: dict[str, Any]) -> None:
    number = world["number"]
    refused = respond(
        organization_id=org.organization_id,
        incident_number=number,
        action="acknowledge",
        person=world["vera"],
        channel="slack",
        now=NOW,
        settings=get_settings(),
    )
    assert not refused.done and "viewer" in refused.message
    assert repository.get_incident(org.organization_id, number).acknowledged_at is None
    missing = respond(
        organization_id=org.organization_id,
        incident_number="INC-2026-9999",
        action="resolve",
        person=world["grace"],
        channel="email",
        now=NOW,
        settings=get_settings(),
    )
    assert not missing.done and missing.message.startswith("INC-2026-9999:")


def _respond(org: Org, world: dict[str, Any], action: str, who: str, channel: str, at: datetime = NOW) -> Outcome:
    return respond(
        organization_id=org.organization_id,
        incident_number=world["number"],
        action=action,  # type: ignore[arg-type]
        person=world[who],
        channel=channel,
        now=at,
        settings=get_settings(),
    )


def test_of_two_channels_resolving_at_once_only_the_one_that_did_is_told_so(
    org: Org, world: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """SMS reads the incident open; before it writes, Slack resolves it. Only Slack is told it
    resolved it; SMS is told who did, and when."""
    world["ana"] = users.create_user(
        organization_id=org.organization_id, name="Ana", email="ana@acme.test", now=NOW, role="responder"
    )
    real_plan = commands.plan_transition
    told: list[Outcome] = []
    started: list[bool] = []

    def slack_first(*args: Any, **kwargs: Any) -> Any:
        if not started:
            started.append(True)
            told.append(_respond(org, world, "resolve", "ana", "slack", NOW + timedelta(minutes=5)))
        return real_plan(*args, **kwargs)

    monkeypatch.setattr(commands, "plan_transition", slack_first)
    by_sms = _respond(org, world, "resolve", "grace", "sms", NOW + timedelta(minutes=5, seconds=1))
    [by_slack] = told
    number = world["number"]
    assert by_slack.done and by_slack.message == f"{number} resolved by ana@acme.test."
    assert not by_sms.done
    assert by_sms.message == f"{number} was already resolved by ana@acme.test at 12:05 UTC."
    titles = _titles(org, number)
    assert sum(1 for title in titles if title.startswith("Status changed")) == 1


def test_acknowledging_a_resolved_incident_from_a_page_is_refused_and_changes_nothing(
    org: Org, world: dict[str, Any]
) -> None:
    assert _respond(org, world, "resolve", "grace", "voice", NOW + timedelta(minutes=2)).done
    late = _respond(org, world, "acknowledge", "grace", "sms", NOW + timedelta(minutes=3))
    number = world["number"]
    assert not late.done
    assert late.message == f"{number} was already resolved by grace@acme.test at 12:02 UTC."
    incident = repository.get_incident(org.organization_id, number)
    assert incident.acknowledged_at is None and incident.status == "resolved"
    assert (incident.sla or {}).get("acknowledge_met") is None  # never recorded as met after the resolve
    again = _respond(org, world, "resolve", "grace", "slack", NOW + timedelta(minutes=4))
    assert again.message == f"{number} was already resolved by grace@acme.test at 12:02 UTC."


def test_a_second_acknowledge_is_told_who_acknowledged_first(org: Org, world: dict[str, Any]) -> None:
    assert _respond(org, world, "acknowledge", "grace", "slack", NOW + timedelta(minutes=1)).done
    world["ana"] = users.create_user(
        organization_id=org.organization_id, name="Ana", email="ana@acme.test", now=NOW, role="responder"
    )
    second = _respond(org, world, "acknowledge", "ana", "voice", NOW + timedelta(minutes=2))
    assert not second.done
    assert second.message == f"{world['number']} was already acknowledged by grace@acme.test at 12:01 UTC."
