"""Nobody to page, on moto with time passed in: an incident whose service has no escalation policy,
or whose level reaches nobody now (a schedule with nobody on call, a deactivated user), says so
and why on its timeline and in its paging status, and pages the organization's fallback contacts
when it has some, once."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from chalicelib import clock
from chalicelib.escalation.steps import Level, Target
from chalicelib.incident import commands, repository
from chalicelib.incident.paging_status import view_of
from chalicelib.oncall import Layer, Restriction
from chalicelib.paging import escalation_runs, fallback, handlers
from chalicelib.queue.messages import Message
from chalicelib.settings import get_settings
from tests.conftest import NOW, Org
from tests.service.test_escalation_runtime import _UndelayedSqs, drain
from tests.service.test_incident_service import principal

MONDAY = datetime(2026, 11, 16, 8, 0, tzinfo=UTC)


@pytest.fixture
def world(org: Org, aws_env: None) -> dict[str, Any]:
    """Ana (active), Bo (deactivated), Cy (a fallback candidate); a night-only schedule of Ana
    (nobody on call at NOW, 13:00 Berlin); services: Quiet (no policy), Empty (a policy reaching
    nobody), Split (Ana at level 1, the empty targets at level 2)."""
    from chalicelib import aws
    from chalicelib.catalog import service as services
    from chalicelib.directory import users
    from chalicelib.escalation import service as policies
    from chalicelib.oncall import service as schedules
    from chalicelib.queue.messages import EVENTS_QUEUE

    aws.queue_url(EVENTS_QUEUE)
    aws.set_client("sqs", _UndelayedSqs(aws.client("sqs")))
    oid = org.organization_id
    ana = users.create_user(organization_id=oid, name="Ana Lima", email="ana@acme.test", now=NOW)
    bo = users.create_user(organization_id=oid, name="Bo Diaz", email="bo@acme.test", now=NOW)
    cy = users.create_user(organization_id=oid, name="Cy Park", email="cy@acme.test", now=NOW)
    night = schedules.create_schedule(
        organization_id=oid,
        name="Nights",
        time_zone="Europe/Berlin",
        layers=[
            Layer(
                "lyr_night",
                "Night",
                (ana.user_id,),
                "weekly",
                "09:00",
                MONDAY,
                restrictions=(Restriction.daily("01:00", "02:00"),),
            )
        ],
        now=NOW,
    )
    empty_targets = (Target("schedule", night.schedule_id), Target("user", bo.user_id))
    empty = policies.create_policy(organization_id=oid, name="Empty", levels=[Level(empty_targets, 5)], now=NOW)
    split = policies.create_policy(
        organization_id=oid,
        name="Split",
        levels=[Level((Target("user", ana.user_id),), 5), Level(empty_targets, 5)],
        now=NOW,
    )
    # Deactivated after the policies name him (a policy refuses a deactivated target when written).
    users.update_user(organization_id=oid, user_id=bo.user_id, now=NOW, is_active=False)
    return {
        "ana": ana,
        "bo": bo,
        "cy": cy,
        "quiet": services.create_service(organization_id=oid, name="Quiet", now=NOW),
        "empty": services.create_service(
            organization_id=oid, name="Empty", now=NOW, escalation_policy_id=empty.policy.policy_id
        ),
        "split": services.create_service(
            organization_id=oid, name="Split", now=NOW, escalation_policy_id=split.policy.policy_id
        ),
    }


def open_on(org: Org, service: Any) -> tuple[str, list[Message]]:
    """An incident on `service`, its post-create work done at NOW; the messages that work left."""
    from chalicelib.incident import service as incidents

    with clock.frozen(NOW):
        record = incidents.create_incident(
            organization_id=org.organization_id,
            request=incidents.NewIncident(title="Checkout 500s", service_keys=[service.service_key], severity="SEV1"),
            now=NOW,
            actor="tester",
            settings=get_settings(),
        )
        created = next(m for m in drain() if m.message_type == "incident.created")
        handlers.on_incident_created(created, get_settings())
        handlers.on_incident_created(created, get_settings())  # redelivered: decided once
    return record.incident_number, drain()


def pages(messages: list[Message]) -> list[Message]:
    return [m for m in messages if m.message_type == escalation_runs.DELIVER_NOTIFICATION]


def nobody_entries(org: Org, number: str) -> list[Any]:
    timeline = repository.get_with_timeline(org.organization_id, number).timeline
    return [entry for entry in reversed(timeline) if entry.event_type == "nobody_to_page"]


def titles(org: Org, number: str) -> list[str]:
    return [str(entry.title) for entry in reversed(repository.get_with_timeline(org.organization_id, number).timeline)]


def test_a_service_without_a_policy_says_nobody_is_paged_and_why(org: Org, world: dict[str, Any]) -> None:
    number, left = open_on(org, world["quiet"])
    assert pages(left) == []
    (entry,) = nobody_entries(org, number)
    assert entry.title == "Nobody to page"
    assert entry.description == (
        "Service Quiet has no escalation policy. The organization has no fallback contacts "
        "(PUT /api/v1/settings/paging)."
    )
    view = view_of(repository.get_incident(org.organization_id, number))
    assert (view.status, view.reason, view.level) == ("nobody", "Service Quiet has no escalation policy.", None)
    assert view.is_warning


def test_a_policy_whose_targets_reach_nobody_now_says_why_per_target(org: Org, world: dict[str, Any]) -> None:
    number, left = open_on(org, world["empty"])
    assert pages(left) == []
    (entry,) = nobody_entries(org, number)
    reason = (
        "Level 1 of escalation policy Empty reaches nobody now: schedule Nights has nobody on call now; "
        "Bo Diaz is deactivated."
    )
    assert entry.title == "Nobody to page at level 1"
    assert entry.description.startswith(reason)
    incident = repository.get_incident(org.organization_id, number)
    assert (view_of(incident).status, view_of(incident).reason, view_of(incident).level) == ("nobody", reason, 1)
    assert escalation_runs.state_of(incident) is not None  # the escalation runs on: level 2 may reach someone
    assert titles(org, number)[-2:] == ["Escalation started: level 1", "Nobody to page at level 1"]


def test_fallback_contacts_are_paged_through_their_own_rules_once(org: Org, world: dict[str, Any]) -> None:
    cy = world["cy"]
    fallback.save_paging_settings(organization_id=org.organization_id, fallback_contacts=["cy@acme.test"])
    number, left = open_on(org, world["quiet"])
    (page,) = pages(left)
    assert page.payload["user_id"] == cy.user_id
    assert page.payload["delivery_id"] == f"{org.organization_id}#{number}#0#fallback#{cy.user_id}"
    assert page.payload["reason"] == (
        "You are a fallback contact: nobody else can be paged. Service Quiet has no escalation policy."
    )
    (entry,) = nobody_entries(org, number)
    assert entry.title == "Nobody to page: paging the fallback contacts Cy Park"
    assert entry.details["fallback_contacts"] == [cy.user_id]
    view = view_of(repository.get_incident(org.organization_id, number))
    assert (view.status, view.fallback_contacts, view.is_warning) == ("fallback", ("Cy Park",), True)
    with clock.frozen(NOW):
        handlers.on_deliver_notification(page, get_settings())
        handlers.on_deliver_notification(page, get_settings())  # the same page again: claimed, sent once
    paged = [title for title in titles(org, number) if title.startswith("Paged Cy Park")]
    assert paged == ["Paged Cy Park by email"]


def test_a_deactivated_fallback_contact_is_skipped(org: Org, world: dict[str, Any]) -> None:
    from chalicelib.directory import users

    fallback.save_paging_settings(organization_id=org.organization_id, fallback_contacts=[world["cy"].user_id])
    users.update_user(organization_id=org.organization_id, user_id=world["cy"].user_id, now=NOW, is_active=False)
    number, left = open_on(org, world["quiet"])
    assert pages(left) == []
    (entry,) = nobody_entries(org, number)
    assert entry.description.endswith("The organization's fallback contacts are all deactivated.")
    assert view_of(repository.get_incident(org.organization_id, number)).status == "nobody"


def test_a_later_level_that_reaches_nobody_is_decided_then(org: Org, world: dict[str, Any]) -> None:
    fallback.save_paging_settings(organization_id=org.organization_id, fallback_contacts=["cy@acme.test"])
    number, left = open_on(org, world["split"])
    assert [m.payload["user_id"] for m in pages(left)] == [world["ana"].user_id]
    incident = repository.get_incident(org.organization_id, number)
    assert (view_of(incident).status, view_of(incident).level) == ("paging", 1)
    assert nobody_entries(org, number) == []
    timer = next(m for m in left if m.message_type == escalation_runs.ESCALATION_TIMER)
    later = NOW + timedelta(minutes=5)
    for _ in range(2):  # the timer redelivered: its token is stale the second time
        step = escalation_runs.on_timer(
            organization_id=org.organization_id,
            incident_number=number,
            token=timer.payload["token"],
            now=later,
            settings=get_settings(),
        )
    assert step is None
    (entry,) = nobody_entries(org, number)
    assert entry.title == "Nobody to page at level 2: paging the fallback contacts Cy Park"
    (page,) = pages(drain())
    assert page.payload["user_id"] == world["cy"].user_id and page.payload["level"] == 2
    incident = repository.get_incident(org.organization_id, number)
    assert (view_of(incident).status, view_of(incident).level) == ("fallback", 2)


def test_escalating_by_hand_to_a_level_that_reaches_nobody_pages_the_fallback(org: Org, world: dict[str, Any]) -> None:
    fallback.save_paging_settings(organization_id=org.organization_id, fallback_contacts=["cy@acme.test"])
    number, _ = open_on(org, world["split"])
    outcome = escalation_runs.escalate(
        organization_id=org.organization_id,
        incident_number=number,
        actor="ana@acme.test",
        now=NOW,
        settings=get_settings(),
    )
    assert outcome.escalated and outcome.notified_emails == ["cy@acme.test"]
    assert [entry.title for entry in nobody_entries(org, number)] == [
        "Nobody to page at level 2: paging the fallback contacts Cy Park"
    ]


def test_acknowledging_stops_the_warning(org: Org, world: dict[str, Any]) -> None:
    number, _ = open_on(org, world["quiet"])
    commands.acknowledge(organization_id=org.organization_id, incident_number=number, principal=principal(org), now=NOW)
    view = view_of(repository.get_incident(org.organization_id, number))
    assert (view.status, view.is_warning) == ("stopped", False)
