"""Escalation at run time on moto, time passed in: start on trigger, advance on timers, stale
timers do nothing, acknowledge stops it, manual escalate, deliveries never sent twice, SLA breach."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from chalicelib import aws, clock
from chalicelib.escalation.steps import Level, Target
from chalicelib.incident import commands, repository
from chalicelib.paging import escalation_runs, handlers
from chalicelib.queue.messages import EVENTS_QUEUE, Message
from chalicelib.settings import get_settings
from tests.conftest import NOW, Org, reconfigure
from tests.service.test_incident_service import principal
from tests.service.test_notification_slack import FakeSlack


@pytest.fixture
def fake_slack(aws_env: None) -> Iterator[FakeSlack]:
    fake = FakeSlack().start()
    reconfigure(SLACK_API_BASE_URL=fake.base_url, SLACK_BOT_TOKEN="xoxb-test", SLACK_TIMEOUT_SECONDS="1")
    yield fake
    fake.stop()


class _UndelayedSqs:
    """Sends every message without its delay (recorded instead): the test drives time itself."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.delays: list[int] = []

    def send_message(self, **arguments: Any) -> Any:
        self.delays.append(int(arguments.pop("DelaySeconds", 0)))
        return self.real.send_message(**arguments)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


@pytest.fixture
def setup(org: Org, fake_slack: FakeSlack) -> dict[str, Any]:
    aws.queue_url(EVENTS_QUEUE)
    aws.set_client("sqs", _UndelayedSqs(aws.client("sqs")))
    from chalicelib.catalog import service as services
    from chalicelib.directory import users
    from chalicelib.escalation import service as policies

    ana = users.create_user(
        organization_id=org.organization_id, name="Ana", email="ana@acme.test", slack_user_id="U0ANA", now=NOW
    )
    bo = users.create_user(organization_id=org.organization_id, name="Bo", email="bo@acme.test", now=NOW)
    policy = policies.create_policy(
        organization_id=org.organization_id,
        name="Checkout",
        levels=[Level((Target("user", ana.user_id),), 5), Level((Target("user", bo.user_id),), 10)],
        now=NOW,
    )
    service = services.create_service(
        organization_id=org.organization_id, name="Checkout", now=NOW, escalation_policy_id=policy.policy.policy_id
    )
    return {"ana": ana, "bo": bo, "service": service, "slack": fake_slack}


def drain() -> list[Message]:
    """Messages on the events queue (delays ignored: the test drives time itself)."""
    sqs = aws.client("sqs")
    url = aws.queue_url(EVENTS_QUEUE)
    found = []
    for _ in range(5):
        received = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=0).get("Messages", [])
        for raw in received:
            found.append(Message.from_json(raw["Body"]))
            sqs.delete_message(QueueUrl=url, ReceiptHandle=raw["ReceiptHandle"])
    return found


def create(org: Org, setup: dict[str, Any]) -> str:
    from chalicelib.incident import service

    with clock.frozen(NOW):
        record = service.create_incident(
            organization_id=org.organization_id,
            request=service.NewIncident(
                title="Checkout down", service_keys=[setup["service"].service_key], severity="SEV1"
            ),
            now=NOW,
            actor="tester",
            settings=get_settings(),
        )
    return record.incident_number


def deliver_all(messages: list[Message], at: Any) -> None:
    with clock.frozen(at):
        for message in messages:
            if message.message_type == escalation_runs.DELIVER_NOTIFICATION:
                handlers.on_deliver_notification(message, get_settings())


def test_trigger_pages_level_one_then_level_two_after_the_delay(org: Org, setup: dict[str, Any]) -> None:
    number = create(org, setup)
    created = [m for m in drain() if m.message_type == "incident.created"]
    with clock.frozen(NOW):
        handlers.on_incident_created(created[0], get_settings())
    queued = drain()
    deliveries = [m for m in queued if m.message_type == escalation_runs.DELIVER_NOTIFICATION]
    assert [m.payload["level"] for m in deliveries] == [1]
    deliver_all(deliveries, NOW)
    assert [r.body["channel"] for r in setup["slack"].requests] == ["U0ANA"]
    incident = repository.get_incident(org.organization_id, number)
    assert incident.assigned_email == "ana@acme.test"  # auto-assigned to the primary on call (level 1)
    timer = next(m for m in queued if m.message_type == escalation_runs.ESCALATION_TIMER)
    # Early: nothing happens, the timer is re-enqueued for the remainder.
    assert (
        escalation_runs.on_timer(
            organization_id=org.organization_id,
            incident_number=number,
            token=timer.payload["token"],
            now=NOW + timedelta(minutes=4),
            settings=get_settings(),
        )
        is None
    )
    step = escalation_runs.on_timer(
        organization_id=org.organization_id,
        incident_number=number,
        token=timer.payload["token"],
        now=NOW + timedelta(minutes=5),
        settings=get_settings(),
    )
    assert step is not None and step.level == 2
    # The same (now stale) timer delivered again does nothing.
    assert (
        escalation_runs.on_timer(
            organization_id=org.organization_id,
            incident_number=number,
            token=timer.payload["token"],
            now=NOW + timedelta(minutes=6),
            settings=get_settings(),
        )
        is None
    )
    level_two = [m for m in drain() if m.message_type == escalation_runs.DELIVER_NOTIFICATION]
    assert [m.payload["level"] for m in level_two] == [2]
    types = [e.event_type for e in repository.get_with_timeline(org.organization_id, number).timeline]
    assert types.count("escalated") == 2


def test_acknowledge_stops_escalation_and_manual_escalate_still_works(org: Org, setup: dict[str, Any]) -> None:
    number = create(org, setup)
    created = [m for m in drain() if m.message_type == "incident.created"]
    with clock.frozen(NOW):
        handlers.on_incident_created(created[0], get_settings())
    timer = next(m for m in drain() if m.message_type == escalation_runs.ESCALATION_TIMER)
    commands.acknowledge(
        organization_id=org.organization_id,
        incident_number=number,
        principal=principal(org),
        now=NOW + timedelta(minutes=1),
    )
    assert (
        escalation_runs.on_timer(
            organization_id=org.organization_id,
            incident_number=number,
            token=timer.payload["token"],
            now=NOW + timedelta(minutes=30),
            settings=get_settings(),
        )
        is None
    )
    outcome = escalation_runs.escalate(
        organization_id=org.organization_id,
        incident_number=number,
        actor="me",
        now=NOW + timedelta(minutes=31),
        settings=get_settings(),
    )
    assert (outcome.escalated, outcome.notified_emails, outcome.current_level, outcome.next_level) == (
        True,
        ["bo@acme.test"],
        2,
        None,
    )
    again = escalation_runs.escalate(
        organization_id=org.organization_id,
        incident_number=number,
        actor="me",
        now=NOW + timedelta(minutes=32),
        settings=get_settings(),
    )
    assert (again.escalated, again.notified_emails) == (False, [])


def test_a_redelivered_notification_is_not_sent_twice(org: Org, setup: dict[str, Any]) -> None:
    create(org, setup)
    created = [m for m in drain() if m.message_type == "incident.created"]
    with clock.frozen(NOW):
        handlers.on_incident_created(created[0], get_settings())
    delivery = next(m for m in drain() if m.message_type == escalation_runs.DELIVER_NOTIFICATION)
    deliver_all([delivery, delivery], NOW)
    assert len(setup["slack"].requests) == 1


def test_unacknowledged_incident_breaches_its_sla(org: Org, setup: dict[str, Any]) -> None:
    number = create(org, setup)
    created = [m for m in drain() if m.message_type == "incident.created"]
    with clock.frozen(NOW):
        handlers.on_incident_created(created[0], get_settings())
    check = next(m for m in drain() if m.message_type == handlers.SLA_CHECK)
    with clock.frozen(NOW + timedelta(minutes=16)):  # SEV1 acknowledge target: 15 minutes
        handlers.on_sla_check(check, get_settings())
    found = repository.get_with_timeline(org.organization_id, number)
    assert found.timeline[0].event_type == "sla_breached"
    assert found.incident.sla["acknowledge_breached"] is True
    assert any(m.payload.get("delivery_id", "").endswith("sla") for m in drain())
