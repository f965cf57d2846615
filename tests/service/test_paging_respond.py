"""Acting from a notification: the API's commands with the person's permissions, the channel named."""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib.directory import users
from chalicelib.incident import repository, service
from chalicelib.paging.respond import respond
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
    )
    assert done.done and done.message == f"{number} acknowledged by grace@acme.test."
    again = respond(
        organization_id=org.organization_id,
        incident_number=number,
        action="acknowledge",
        person=world["grace"],
        channel="sms",
        now=NOW,
    )
    assert not again.done and "already acknowledged" in again.message
    resolved = respond(
        organization_id=org.organization_id,
        incident_number=number,
        action="resolve",
        person=world["grace"],
        channel="voice",
        now=NOW,
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
    )
    assert not missing.done and missing.message.startswith("INC-2026-9999:")
