"""Paging runs each person's notification rules for the incident's urgency (on moto, time passed
in): steps at 0 minutes at once, later steps as delayed messages that acknowledging or resolving
stops, unverified methods never paged, and every step sent once."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from chalicelib import aws, clock
from chalicelib.contact import service as contacts
from chalicelib.contact.rules import Step
from chalicelib.escalation.steps import Level, Target
from chalicelib.incident import commands, repository
from chalicelib.paging import escalation_runs, handlers, reach
from chalicelib.queue.messages import EVENTS_QUEUE, Message
from chalicelib.settings import get_settings
from tests.conftest import NOW, Org, reconfigure
from tests.service.fake_twilio import FakeTwilio
from tests.service.test_escalation_runtime import _UndelayedSqs, drain
from tests.service.test_incident_service import principal
from tests.service.test_notification_phone import FROM, SID, TOKEN, sms_backend
from tests.service.test_notification_slack import FakeSlack

ADA_PHONE = "+15551230001"


@pytest.fixture
def providers(aws_env: None) -> Iterator[dict[str, Any]]:
    slack, twilio = FakeSlack().start(), FakeTwilio().start()
    reconfigure(
        SLACK_API_BASE_URL=slack.base_url,
        SLACK_BOT_TOKEN="xoxb-test",
        VOICE_API_BASE_URL=twilio.base_url,
        VOICE_ACCOUNT_SID=SID,
        VOICE_AUTH_TOKEN=TOKEN,
        VOICE_FROM_NUMBER=FROM,
    )
    sms_backend().sms_messages.clear()
    yield {"slack": slack, "twilio": twilio}
    slack.stop()
    twilio.stop()


@pytest.fixture
def sqs(aws_env: None) -> _UndelayedSqs:
    aws.queue_url(EVENTS_QUEUE)
    undelayed = _UndelayedSqs(aws.client("sqs"))
    aws.set_client("sqs", undelayed)
    return undelayed


@pytest.fixture
def ada(org: Org, providers: dict[str, Any], sqs: _UndelayedSqs) -> dict[str, Any]:
    """Ada: SMS at 0 and a call at 5 minutes for high urgency, email for low; level 1 of Checkout."""
    from chalicelib.catalog import service as services
    from chalicelib.directory import users
    from chalicelib.escalation import service as policies

    user = users.create_user(
        organization_id=org.organization_id, name="Ada", email="ada@acme.test", slack_user_id="U0ADA", now=NOW
    )
    sms = contacts.create_method(
        organization_id=org.organization_id,
        user_id=user.user_id,
        method_type="sms",
        address=ADA_PHONE,
        label="Mobile",
        now=NOW,
        proven_elsewhere=True,
        settings=get_settings(),
    )
    voice = contacts.create_method(
        organization_id=org.organization_id,
        user_id=user.user_id,
        method_type="voice",
        address=ADA_PHONE,
        label="Mobile",
        now=NOW,
        proven_elsewhere=True,
        settings=get_settings(),
    )
    contacts.put_rules(
        organization_id=org.organization_id,
        user_id=user.user_id,
        high=[Step(sms.contact_method_id, 0), Step(voice.contact_method_id, 5)],
        low=[Step("default-email", 0)],
        now=NOW,
    )
    policy = policies.create_policy(
        organization_id=org.organization_id,
        name="Checkout",
        levels=[Level((Target("user", user.user_id),), 30)],
        now=NOW,
    )
    service = services.create_service(
        organization_id=org.organization_id, name="Checkout", now=NOW, escalation_policy_id=policy.policy.policy_id
    )
    return {"user": user, "sms": sms, "voice": voice, "service": service, "sqs": sqs, **providers}


def open_incident(org: Org, setup: dict[str, Any], severity: str) -> tuple[str, list[Message]]:
    """A new incident, its post-create work and its pages handled at NOW; the messages they left."""
    from chalicelib.incident import service

    with clock.frozen(NOW):
        record = service.create_incident(
            organization_id=org.organization_id,
            request=service.NewIncident(
                title="Checkout 500s", service_keys=[setup["service"].service_key], severity=severity
            ),
            now=NOW,
            actor="tester",
            settings=get_settings(),
        )
        created = next(m for m in drain() if m.message_type == "incident.created")
        handlers.on_incident_created(created, get_settings())
        left = []
        for message in drain():
            if message.message_type == escalation_runs.DELIVER_NOTIFICATION:
                handlers.on_deliver_notification(message, get_settings())
            else:
                left.append(message)
    return record.incident_number, left + drain()


def sent_sms() -> list[tuple[str, str]]:
    return [(phone, text) for phone, text, *_ in sms_backend().sms_messages.values()]


def timeline_titles(org: Org, number: str) -> list[str]:
    entries = repository.get_with_timeline(org.organization_id, number).timeline
    return [str(entry.title) for entry in reversed(entries)]


def run_step(step: Message, at: timedelta) -> None:
    with clock.frozen(NOW + at):
        handlers.on_rule_step(step, get_settings())


def test_high_urgency_texts_at_once_and_calls_after_five_minutes(org: Org, ada: dict[str, Any]) -> None:
    number, left = open_incident(org, ada, "SEV1")
    console = f"http://127.0.0.1:8000/app/incidents/{number}"
    assert sent_sms() == [
        (ADA_PHONE, f"[SEV1] {number} Checkout: Checkout 500s.\n{console}\nReply 4 to ack, 6 to resolve.")
    ]
    assert ada["slack"].requests == []  # Slack is not among Ada's high-urgency steps
    (step,) = [m for m in left if m.message_type == reach.RULE_STEP]
    assert step.payload["contact_method_id"] == ada["voice"].contact_method_id
    assert clock.parse(step.payload["due_at"]) == NOW + timedelta(minutes=5)
    assert 300 in ada["sqs"].delays
    incident = repository.get_incident(org.organization_id, number)
    assert step.payload["run_token"] == escalation_runs.state_of(incident).run_token  # type: ignore[union-attr]
    assert "Paged Ada by sms" in timeline_titles(org, number)

    run_step(step, timedelta(minutes=5))
    (call,) = ada["twilio"].requests
    assert call.form["To"] == ADA_PHONE and "Press 4 to acknowledge" in call.form["Twiml"]
    assert "Paged Ada by voice" in timeline_titles(org, number)
    run_step(step, timedelta(minutes=6))  # the same step delivered again: sent once
    assert len(ada["twilio"].requests) == 1


def test_acknowledging_stops_the_pending_steps(org: Org, ada: dict[str, Any]) -> None:
    number, left = open_incident(org, ada, "SEV1")
    (step,) = [m for m in left if m.message_type == reach.RULE_STEP]
    commands.acknowledge(
        organization_id=org.organization_id,
        incident_number=number,
        principal=principal(org),
        now=NOW + timedelta(minutes=2),
    )
    run_step(step, timedelta(minutes=5))
    assert ada["twilio"].requests == []


def test_resolving_stops_the_pending_steps(org: Org, ada: dict[str, Any]) -> None:
    number, left = open_incident(org, ada, "SEV0")
    (step,) = [m for m in left if m.message_type == reach.RULE_STEP]
    commands.change_status(
        organization_id=org.organization_id,
        incident_number=number,
        status="resolved",
        comment=None,
        principal=principal(org),
        now=NOW + timedelta(minutes=1),
    )
    run_step(step, timedelta(minutes=5))
    assert ada["twilio"].requests == []


def test_low_urgency_follows_the_low_rules(org: Org, ada: dict[str, Any]) -> None:
    number, left = open_incident(org, ada, "SEV3")
    assert sent_sms() == []
    assert [m for m in left if m.message_type == reach.RULE_STEP] == []
    assert "Paged Ada by email" in timeline_titles(org, number)


def test_a_step_that_comes_early_waits_for_the_rest(org: Org, ada: dict[str, Any]) -> None:
    _, left = open_incident(org, ada, "SEV1")
    (step,) = [m for m in left if m.message_type == reach.RULE_STEP]
    ada["sqs"].delays.clear()
    run_step(step, timedelta(minutes=2))
    assert ada["twilio"].requests == []
    (again,) = [m for m in drain() if m.message_type == reach.RULE_STEP]
    assert again.payload == step.payload and ada["sqs"].delays == [180]


def test_an_unverified_method_is_never_paged(org: Org, ada: dict[str, Any]) -> None:
    user = ada["user"]
    unverified = contacts.create_method(
        organization_id=org.organization_id,
        user_id=user.user_id,
        method_type="sms",
        address="+15559990000",
        label="Spare",
        now=NOW,
        settings=get_settings(),
    )
    contacts.put_rules(
        organization_id=org.organization_id,
        user_id=user.user_id,
        high=[Step(unverified.contact_method_id, 0), Step(ada["sms"].contact_method_id, 0)],
        low=[Step("default-email", 0)],
        now=NOW,
    )
    open_incident(org, ada, "SEV1")
    assert [phone for phone, _ in sent_sms()] == [ADA_PHONE]


def test_nothing_pageable_for_the_urgency_falls_back_to_the_account_email(org: Org, ada: dict[str, Any]) -> None:
    contacts.put_rules(organization_id=org.organization_id, user_id=ada["user"].user_id, high=[], low=[], now=NOW)
    number, left = open_incident(org, ada, "SEV1")
    assert sent_sms() == [] and [m for m in left if m.message_type == reach.RULE_STEP] == []
    titles = timeline_titles(org, number)
    assert "Paged Ada by email" in titles


def test_a_removed_method_sends_nothing_when_its_step_comes_due(org: Org, ada: dict[str, Any]) -> None:
    _, left = open_incident(org, ada, "SEV1")
    (step,) = [m for m in left if m.message_type == reach.RULE_STEP]
    contacts.delete_method(
        organization_id=org.organization_id,
        user_id=ada["user"].user_id,
        contact_method_id=ada["voice"].contact_method_id,
        now=NOW,
    )
    run_step(step, timedelta(minutes=5))
    assert ada["twilio"].requests == []
