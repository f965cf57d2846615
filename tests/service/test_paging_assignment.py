"""Assigning an incident pages the assignee through their own notification rules (on moto, time
passed in): at the incident's urgency, once per assignment, with who assigned them on the
timeline; never for self-assignment, the on-call auto-assignment, unassigning or the same person."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from chalicelib import clock
from chalicelib.auth.principal import Principal
from chalicelib.auth.scopes import ALL_SCOPES
from chalicelib.directory.users import User
from chalicelib.incident import commands
from chalicelib.paging import assignment, escalation_runs, handlers, reach
from chalicelib.queue.messages import Message
from chalicelib.settings import get_settings
from tests.conftest import NOW, Org
from tests.service.test_escalation_runtime import drain
from tests.service.test_incident_service import principal
from tests.service.test_paging_rules import ADA_PHONE, run_step, sent_sms, timeline_titles

# Fixtures of test_paging_rules, re-exported so pytest finds them here.
from tests.service.test_paging_rules import ada as ada
from tests.service.test_paging_rules import providers as providers
from tests.service.test_paging_rules import sqs as sqs


def person(org: Org, user: User) -> Principal:
    """A console session of `user`."""
    return Principal(
        organization_id=org.organization_id,
        credential_kind="session",
        scopes=frozenset(ALL_SCOPES),
        user_id=user.user_id,
        email=user.email,
        name=user.name,
        display_name=user.email,
    )


@pytest.fixture
def bo(org: Org, ada: dict[str, Any]) -> User:
    from chalicelib.directory import users

    return users.create_user(organization_id=org.organization_id, name="Bo", email="bo@acme.test", now=NOW)


@pytest.fixture
def quiet_incident(org: Org, ada: dict[str, Any]) -> str:
    """A SEV1 incident nobody was assigned to (its service has no policy, so nobody was paged)."""
    from chalicelib.catalog import service as services
    from chalicelib.incident import service

    quiet = services.create_service(organization_id=org.organization_id, name="Quiet", now=NOW)
    with clock.frozen(NOW):
        record = service.create_incident(
            organization_id=org.organization_id,
            request=service.NewIncident(title="Checkout 500s", service_keys=[quiet.service_key], severity="SEV1"),
            now=NOW,
            actor="tester",
            settings=get_settings(),
        )
        for message in drain():
            if message.message_type == "incident.created":
                handlers.on_incident_created(message, get_settings())
        drain()
    return record.incident_number


def assign(org: Org, number: str, email: str | None, by: Principal, at: timedelta = timedelta()) -> list[Message]:
    """PATCH assigned_to; returns the incident.assigned messages it published."""
    commands.update_incident(
        organization_id=org.organization_id,
        incident_number=number,
        changes={"assigned_to": email},
        now=NOW + at,
        principal=by,
    )
    return [m for m in drain() if m.message_type == assignment.INCIDENT_ASSIGNED]


def handle(messages: list[Message], at: timedelta = timedelta()) -> list[Message]:
    """The assignment consumer, then the pages it queued; the messages left after both."""
    with clock.frozen(NOW + at):
        for message in messages:
            assignment.on_incident_assigned(message, get_settings())
        left = []
        for message in drain():
            if message.message_type == escalation_runs.DELIVER_NOTIFICATION:
                handlers.on_deliver_notification(message, get_settings())
            else:
                left.append(message)
    return left + drain()


def test_assigning_someone_pages_them_through_their_rules(
    org: Org, ada: dict[str, Any], bo: User, quiet_incident: str
) -> None:
    number = quiet_incident
    (assigned,) = assign(org, number, "ada@acme.test", person(org, bo))
    assert assigned.payload["assigned_user_id"] == ada["user"].user_id
    assert assigned.payload["assigned_by_user_id"] == bo.user_id
    left = handle([assigned])
    # High urgency (SEV1): Ada's SMS at once, her call scheduled five minutes out.
    page_text = (
        f"[SEV1] {number} Quiet: Checkout 500s.\nhttp://127.0.0.1:8000/app/incidents/{number}\n"
        "Reply 4 to ack, 6 to resolve."
    )
    assert sent_sms() == [(ADA_PHONE, page_text)]
    (step,) = [m for m in left if m.message_type == reach.RULE_STEP]
    assert step.payload["contact_method_id"] == ada["voice"].contact_method_id
    assert clock.parse(step.payload["due_at"]) == NOW + timedelta(minutes=5)
    assert (step.payload["assigned_to"], step.payload["run_token"]) == (ada["user"].user_id, None)
    assert "Paged Ada by sms (assigned by Bo)" in timeline_titles(org, number)

    run_step(step, timedelta(minutes=5))
    assert [call.form["To"] for call in ada["twilio"].requests] == [ADA_PHONE]
    assert "Paged Ada by voice (assigned by Bo)" in timeline_titles(org, number)


def test_a_redelivered_assignment_pages_once(org: Org, ada: dict[str, Any], bo: User, quiet_incident: str) -> None:
    (assigned,) = assign(org, quiet_incident, "ada@acme.test", person(org, bo))
    handle([assigned, assigned])
    handle([assigned])
    assert len(sent_sms()) == 1
    assert timeline_titles(org, quiet_incident).count("Paged Ada by sms (assigned by Bo)") == 1


def test_assigning_yourself_pages_nobody(org: Org, ada: dict[str, Any], quiet_incident: str) -> None:
    (assigned,) = assign(org, quiet_incident, "ada@acme.test", person(org, ada["user"]))
    assert assignment.assignee_to_page(assigned.payload) is None
    assert handle([assigned]) == [] and sent_sms() == []


def test_unassigning_or_assigning_the_same_person_pages_nobody(
    org: Org, ada: dict[str, Any], bo: User, quiet_incident: str
) -> None:
    handle(assign(org, quiet_incident, "ada@acme.test", person(org, bo)))
    assert len(sent_sms()) == 1
    assert assign(org, quiet_incident, "ada@acme.test", person(org, bo), timedelta(minutes=1)) == []  # no change
    (unassigned,) = assign(org, quiet_incident, None, person(org, bo), timedelta(minutes=2))
    assert unassigned.payload["assigned_user_id"] is None
    handle([unassigned], timedelta(minutes=2))
    assert len(sent_sms()) == 1


def test_a_service_key_assigning_pages_the_assignee(org: Org, ada: dict[str, Any], quiet_incident: str) -> None:
    handle(assign(org, quiet_incident, "ada@acme.test", principal(org)))
    assert len(sent_sms()) == 1
    assert "Paged Ada by sms (assigned by robot (API key))" in timeline_titles(org, quiet_incident)


def test_reassigning_stops_the_former_assignees_later_steps(
    org: Org, ada: dict[str, Any], bo: User, quiet_incident: str
) -> None:
    left = handle(assign(org, quiet_incident, "ada@acme.test", person(org, bo)))
    (step,) = [m for m in left if m.message_type == reach.RULE_STEP]
    handle(assign(org, quiet_incident, "bo@acme.test", person(org, ada["user"]), timedelta(minutes=1)))
    assert "Paged Bo by email (assigned by Ada)" in timeline_titles(org, quiet_incident)
    run_step(step, timedelta(minutes=5))
    assert ada["twilio"].requests == []  # the incident is Bo's now


def test_a_resolved_incident_pages_nobody(org: Org, ada: dict[str, Any], bo: User, quiet_incident: str) -> None:
    messages = assign(org, quiet_incident, "ada@acme.test", person(org, bo))
    commands.change_status(
        organization_id=org.organization_id,
        incident_number=quiet_incident,
        status="resolved",
        comment=None,
        principal=person(org, bo),
        now=NOW,
    )
    handle(messages)
    assert sent_sms() == []


def test_the_on_call_auto_assignment_does_not_page_twice(org: Org, ada: dict[str, Any]) -> None:
    """Ada, level 1 of Checkout, is auto-assigned and paged by the escalation: one SMS, not two."""
    from chalicelib.incident import service

    with clock.frozen(NOW):
        service.create_incident(
            organization_id=org.organization_id,
            request=service.NewIncident(
                title="Checkout 500s", service_keys=[ada["service"].service_key], severity="SEV1"
            ),
            now=NOW,
            actor="tester",
            settings=get_settings(),
        )
        created = next(m for m in drain() if m.message_type == "incident.created")
        handlers.on_incident_created(created, get_settings())
    queued = drain()
    (assigned,) = [m for m in queued if m.message_type == assignment.INCIDENT_ASSIGNED]
    assert assigned.payload["assigned_by_system"] is True
    assert assignment.assignee_to_page(assigned.payload) is None
    handle([assigned])
    assert sent_sms() == []  # the assignment paged nobody; the escalation's own page follows
    with clock.frozen(NOW):
        for message in queued:
            if message.message_type == escalation_runs.DELIVER_NOTIFICATION:
                handlers.on_deliver_notification(message, get_settings())
    assert len(sent_sms()) == 1


def test_an_acknowledged_incident_pages_the_assignee_now_but_not_later(
    org: Org, ada: dict[str, Any], bo: User, quiet_incident: str
) -> None:
    commands.acknowledge(
        organization_id=org.organization_id, incident_number=quiet_incident, principal=principal(org), now=NOW
    )
    left = handle(assign(org, quiet_incident, "ada@acme.test", person(org, bo)))
    assert len(sent_sms()) == 1  # told at once: the incident is hers now
    (step,) = [m for m in left if m.message_type == reach.RULE_STEP]
    run_step(step, timedelta(minutes=5))
    assert ada["twilio"].requests == []  # somebody acknowledged it: no call


def test_an_assignee_with_no_way_to_be_paged_is_said_on_the_timeline(
    org: Org, ada: dict[str, Any], bo: User, quiet_incident: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chalicelib.contact.profile import NotificationProfile

    def nothing(organization_id: str, user: User, *, now: Any) -> NotificationProfile:
        return NotificationProfile(organization_id, user.user_id, (), (), (), 0)

    monkeypatch.setattr(reach, "profile", nothing)
    (assigned,) = assign(org, quiet_incident, "ada@acme.test", person(org, bo))
    handle([assigned, assigned])
    titles = timeline_titles(org, quiet_incident)
    assert titles.count("Could not page Ada (assigned by Bo)") == 1
    assert sent_sms() == []
