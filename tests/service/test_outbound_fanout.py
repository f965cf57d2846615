"""The fan-out on moto: domain messages from the real incident commands become one delivery per
subscribed, enabled subscription; a redelivered message creates nothing new; loop prevention."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from chalicelib import clock
from chalicelib.catalog import service as services
from chalicelib.incident import commands
from chalicelib.incident import service as incidents
from chalicelib.integration import admin
from chalicelib.integration.ingest import ingest
from chalicelib.integration.normalized import NormalizedAlert
from chalicelib.integration.origin import AlertOrigin
from chalicelib.outbound import events, fanout, subscriptions
from chalicelib.outbound.tables import WebhookDeliveryRecord
from chalicelib.paging import escalation_runs, handlers
from chalicelib.queue.messages import Message
from chalicelib.settings import get_settings
from tests.conftest import NOW, Org
from tests.service import test_escalation_runtime as escalation_tests
from tests.service.outbound_fakes import Receiver, RecordingSqs, record_published_messages, subscribe
from tests.service.test_escalation_runtime import drain
from tests.service.test_incident_service import principal

# The escalation tests' fixtures (a policy of two levels, a Slack fake), for incident.escalated.
fake_slack = escalation_tests.fake_slack
setup = escalation_tests.setup


@pytest.fixture
def receiver(aws_env: None) -> Iterator[Receiver]:
    started = Receiver().start()
    yield started
    started.stop()


@pytest.fixture
def sqs(org: Org) -> RecordingSqs:
    return record_published_messages()


@pytest.fixture
def svc(org: Org, sqs: RecordingSqs) -> Any:
    return services.create_service(organization_id=org.organization_id, name="Checkout", now=NOW)


def create_incident(org: Org, svc: Any) -> str:
    with clock.frozen(NOW):
        record = incidents.create_incident(
            organization_id=org.organization_id,
            request=incidents.NewIncident(title="Checkout down", service_keys=[svc.service_key], severity="SEV1"),
            now=NOW,
            actor="tester",
            settings=get_settings(),
        )
    return record.incident_number


def published(sqs: RecordingSqs, message_type: str) -> list[Message]:
    return [message for message, _, _ in sqs.take(message_type)]


def deliveries(subscription_id: str) -> list[WebhookDeliveryRecord]:
    return list(WebhookDeliveryRecord.query(subscription_id, consistent_read=True))


def bodies(subscription_id: str) -> list[dict[str, Any]]:
    return sorted((json.loads(record.body) for record in deliveries(subscription_id)), key=lambda body: body["type"])


def fan_out_all(sqs: RecordingSqs, *message_types: str) -> list[fanout.FanOutResult]:
    results = []
    for message_type in message_types:
        for message in published(sqs, message_type):
            with clock.frozen(NOW):
                results.append(fanout.fan_out(message, now=NOW, settings=get_settings()))
    return results


def test_an_incident_goes_to_every_enabled_subscription_of_the_type(
    org: Org, receiver: Receiver, sqs: RecordingSqs, svc: Any
) -> None:
    everything = subscribe(org, receiver.url("/all"))
    triggered_only = subscribe(org, receiver.url("/triggered"), event_types=["incident.triggered"])
    resolved_only = subscribe(org, receiver.url("/resolved"), event_types=["incident.resolved"])
    switched_off = subscribe(org, receiver.url("/off"))
    subscriptions.update_subscription(
        organization_id=org.organization_id,
        subscription_id=switched_off.record.subscription_id,
        now=NOW,
        enabled=False,
        settings=get_settings(),
    )
    number = create_incident(org, svc)
    (result,) = fan_out_all(sqs, "incident.created")
    assert (result.created, result.enqueued) == (2, 2)
    assert deliveries(resolved_only.record.subscription_id) == []
    assert deliveries(switched_off.record.subscription_id) == []

    (record,) = deliveries(everything.record.subscription_id)
    assert (record.status, record.attempts, record.event_type) == ("pending", 0, "incident.triggered")
    assert record.organization_id == org.organization_id
    assert record.expires_at == NOW + timedelta(days=30)
    body = json.loads(record.body)
    assert body["id"] == record.event_id and record.delivery_key == f"{body['occurred_at']}#{body['id']}"
    assert body["type"] == "incident.triggered"
    assert body["organization"] == {"id": org.organization_id, "name": "Acme"}
    incident = body["data"]["incident"]
    assert (incident["incident_number"], incident["status"], incident["severity"]) == (number, "new", "SEV1")
    assert "sync_status" not in body["data"]
    # What a responder needs besides the incident: an API-made incident has no labels or alert links.
    assert body["data"]["service"] == {"service_key": svc.service_key, "name": "Checkout"}
    assert body["data"]["labels"] == {}
    assert body["data"]["links"] == {
        "console": f"http://127.0.0.1:8000/app/incidents/{number}",
        "source": None,
        "runbook": None,
    }
    assert list(body["data"]) == ["incident", "service", "labels", "links"]  # the incident first, as before
    # The same event (same id, same body) for both subscriptions.
    (other,) = deliveries(triggered_only.record.subscription_id)
    assert other.body == record.body

    attempts = published(sqs, fanout.DELIVER)
    assert sorted(m.payload["subscription_id"] for m in attempts) == sorted(
        [everything.record.subscription_id, triggered_only.record.subscription_id]
    )
    assert {m.payload["attempt"] for m in attempts} == {1}
    assert {m.payload["delivery_key"] for m in attempts} == {record.delivery_key}


def test_a_redelivered_domain_message_creates_no_second_delivery(
    org: Org, receiver: Receiver, sqs: RecordingSqs, svc: Any
) -> None:
    from chalicelib.outbound import delivery

    created = subscribe(org, receiver.url())
    create_incident(org, svc)
    (message,) = published(sqs, "incident.created")
    first = fanout.fan_out(message, now=NOW, settings=get_settings())
    # Redelivered before the first attempt ran: nothing new; the pending delivery is re-enqueued.
    again = fanout.fan_out(message, now=NOW + timedelta(seconds=30), settings=get_settings())
    assert (first.created, first.enqueued, again.created, again.enqueued) == (1, 1, 0, 1)
    (record,) = deliveries(created.record.subscription_id)
    assert record.created_at == NOW
    attempts = published(sqs, fanout.DELIVER)
    assert len(attempts) == 2 and attempts[0].payload == attempts[1].payload
    for attempt in attempts:  # both messages run: the receiver still sees one request
        with clock.frozen(NOW + timedelta(seconds=31)):
            delivery.handle(attempt, get_settings())
    assert len(receiver.requests) == 1
    # Redelivered once the attempt was made: nothing at all.
    late = fanout.fan_out(message, now=NOW + timedelta(minutes=5), settings=get_settings())
    assert (late.created, late.enqueued) == (0, 0)
    assert published(sqs, fanout.DELIVER) == []


def test_status_changes_resolve_and_reopen(org: Org, receiver: Receiver, sqs: RecordingSqs, svc: Any) -> None:
    created = subscribe(org, receiver.url())
    number = create_incident(org, svc)
    sqs.take()
    for status in ("monitoring", "resolved", "investigating"):
        commands.change_status(
            organization_id=org.organization_id,
            incident_number=number,
            status=status,
            comment=None,
            now=NOW,
            principal=principal(org),
        )
    messages = published(sqs, "incident.status_changed")
    assert [(m.payload["previous_status"], m.payload["status"]) for m in messages] == [
        ("new", "monitoring"),
        ("monitoring", "resolved"),
        ("resolved", "investigating"),
    ]
    assert [(m.payload["previous_category"], m.payload["category"]) for m in messages] == [
        ("triggered", "active"),
        ("active", "resolved"),
        ("resolved", "active"),
    ]
    for message in messages:
        fanout.fan_out(message, now=NOW, settings=get_settings())
    found = bodies(created.record.subscription_id)
    assert sorted(body["type"] for body in found) == [
        "incident.reopened",
        "incident.resolved",
        "incident.status_changed",
        "incident.status_changed",
        "incident.status_changed",
    ]
    resolved = next(body for body in found if body["type"] == "incident.resolved")
    assert (resolved["data"]["previous_status"], resolved["data"]["status"]) == ("monitoring", "resolved")
    # A move to the current status is a no-op: no message, no event.
    commands.change_status(
        organization_id=org.organization_id,
        incident_number=number,
        status="investigating",
        comment=None,
        now=NOW,
        principal=principal(org),
    )
    assert published(sqs, "incident.status_changed") == []


def test_acknowledge_assign_and_comment(org: Org, receiver: Receiver, sqs: RecordingSqs, svc: Any) -> None:
    from chalicelib.directory import users

    created = subscribe(org, receiver.url())
    number = create_incident(org, svc)
    users.create_user(organization_id=org.organization_id, name="Ana", email="ana@acme.test", now=NOW)
    sqs.take()
    commands.update_incident(
        organization_id=org.organization_id,
        incident_number=number,
        changes={"assigned_to": "ana@acme.test"},
        now=NOW,
        principal=principal(org),
    )
    commands.acknowledge(organization_id=org.organization_id, incident_number=number, principal=principal(org), now=NOW)
    commands.add_comment(
        organization_id=org.organization_id,
        incident_number=number,
        comment="Rolled back",
        now=NOW,
        principal=principal(org),
    )
    fan_out_all(sqs, "incident.assigned", "incident.acknowledged", "incident.annotated")
    found = {body["type"]: body["data"] for body in bodies(created.record.subscription_id)}
    assert set(found) == {
        "incident.assigned",
        "incident.acknowledged",
        "incident.status_changed",  # acknowledging moved it from new to investigating
        "incident.annotated",
    }
    assert found["incident.assigned"]["assigned_to"] == {"name": "Ana", "email": "ana@acme.test"}
    assert (found["incident.status_changed"]["previous_status"], found["incident.status_changed"]["status"]) == (
        "new",
        "investigating",
    )
    assert found["incident.acknowledged"]["incident"]["acknowledged_at"] is not None
    assert found["incident.annotated"]["comment"] == "Rolled back"


def test_an_organization_without_subscriptions_reads_nothing_more(org: Org, sqs: RecordingSqs, svc: Any) -> None:
    create_incident(org, svc)
    (message,) = published(sqs, "incident.created")
    assert fanout.fan_out(message, now=NOW, settings=get_settings()) == fanout.FanOutResult(0, 0)
    assert published(sqs, fanout.DELIVER) == []


def test_a_message_about_a_missing_incident_sends_nothing(org: Org, receiver: Receiver, sqs: RecordingSqs) -> None:
    created = subscribe(org, receiver.url())
    message = Message("incident.created", org.organization_id, {"incident_number": "INC-2026-9999"})
    assert fanout.fan_out(message, now=NOW, settings=get_settings()) == fanout.FanOutResult(0, 0)
    assert deliveries(created.record.subscription_id) == []


# ---------------------------------------------------------------- sync targets and loop prevention


@pytest.fixture
def tool(org: Org, svc: Any) -> Any:
    issued = admin.create_integration(
        organization_id=org.organization_id,
        integration_type="pagerduty",
        name="other tool",
        now=NOW,
        default_service_key=svc.service_key,
        settings=get_settings(),
    )
    found = admin.find_by_routing_key(issued.routing_key, settings=get_settings())
    assert found is not None
    return found


def alert(action: str) -> NormalizedAlert:
    return NormalizedAlert(source="pagerduty", action=action, title="Disk full", dedup_key="disk-1", summary=action)  # type: ignore[arg-type]


def test_the_tools_own_updates_do_not_echo_back_to_it(
    org: Org, receiver: Receiver, sqs: RecordingSqs, tool: Any
) -> None:
    sync = subscriptions.create_subscription(
        organization_id=org.organization_id,
        url=receiver.url("/tool"),
        event_types=["*"],
        now=NOW,
        sync_integration_id=tool.integration_id,
        settings=get_settings(),
    )
    plain = subscribe(org, receiver.url("/plain"))
    sqs.take()
    with clock.frozen(NOW):
        opened = ingest(AlertOrigin.of(tool), alert("trigger"), now=NOW, settings=get_settings())
    assert opened.incident is not None
    (created,) = published(sqs, "incident.created")
    assert created.payload["source_integration_id"] == tool.integration_id
    fanout.fan_out(created, now=NOW, settings=get_settings())
    assert deliveries(sync.record.subscription_id) == []
    assert [body["type"] for body in bodies(plain.record.subscription_id)] == ["incident.triggered"]

    # A person moves it: the tool hears, with the status mapped to its own.
    commands.change_status(
        organization_id=org.organization_id,
        incident_number=opened.incident.incident_number,
        status="identified",
        comment=None,
        now=NOW,
        principal=principal(org),
    )
    fan_out_all(sqs, "incident.status_changed")
    (changed,) = bodies(sync.record.subscription_id)
    assert (changed["type"], changed["data"]["status"], changed["data"]["sync_status"]) == (
        "incident.status_changed",
        "identified",
        "identified",
    )

    # The tool resolves it: every event of that change skips the tool, the others get them.
    with clock.frozen(NOW):
        ingest(AlertOrigin.of(tool), alert("resolve"), now=NOW, settings=get_settings())
    (resolved,) = published(sqs, "incident.status_changed")
    assert resolved.payload["source_integration_id"] == tool.integration_id
    assert (
        fanout.fan_out(resolved, now=NOW, settings=get_settings()).created == 2
    )  # status_changed and resolved, plain only
    assert len(deliveries(sync.record.subscription_id)) == 1
    assert sorted(body["type"] for body in bodies(plain.record.subscription_id)) == [
        "incident.resolved",
        "incident.status_changed",
        "incident.status_changed",
        "incident.triggered",
    ]


def test_an_alerts_labels_and_links_travel_with_every_incident_event(
    org: Org, receiver: Receiver, sqs: RecordingSqs, tool: Any
) -> None:
    everything = subscribe(org, receiver.url("/all"))
    sqs.take()
    labelled = NormalizedAlert(
        source="alertmanager",
        action="trigger",
        title="High error rate",
        dedup_key="g-1",
        source_url="https://alertmanager.example/#/alerts",
        metadata={
            "receiver": "tocsin",
            "labels.alertname": "HighErrorRate",
            "labels.env": "prod",
            "labels.severity": "critical",
            "annotations.runbook_url": "https://runbooks.example/high-error-rate",
            **{f"labels.l{i:02d}": str(i) for i in range(30)},
        },
    )
    with clock.frozen(NOW):
        opened = ingest(AlertOrigin.of(tool), labelled, now=NOW, settings=get_settings())
    assert opened.incident is not None
    number = opened.incident.incident_number
    commands.change_status(
        organization_id=org.organization_id,
        incident_number=number,
        status="identified",
        comment=None,
        now=NOW,
        principal=principal(org),
    )
    fan_out_all(sqs, "incident.created", "incident.status_changed")
    found = bodies(everything.record.subscription_id)
    assert [body["type"] for body in found] == ["incident.status_changed", "incident.triggered"]
    for body in found:
        data = body["data"]
        assert data["service"]["name"] == "Checkout"
        assert data["links"] == {
            "console": f"http://127.0.0.1:8000/app/incidents/{number}",
            "source": "https://alertmanager.example/#/alerts",
            "runbook": "https://runbooks.example/high-error-rate",
        }
        assert list(data["labels"])[:2] == ["alertname", "env"] and "severity" not in data["labels"]
        assert len(data["labels"]) == fanout.LABELS_SENT


def test_an_acknowledge_from_the_tool_is_not_echoed_either(
    org: Org, receiver: Receiver, sqs: RecordingSqs, tool: Any
) -> None:
    sync = subscriptions.create_subscription(
        organization_id=org.organization_id,
        url=receiver.url("/tool"),
        event_types=["*"],
        now=NOW,
        sync_integration_id=tool.integration_id,
        settings=get_settings(),
    )
    with clock.frozen(NOW):
        ingest(AlertOrigin.of(tool), alert("trigger"), now=NOW, settings=get_settings())
        ingest(AlertOrigin.of(tool), alert("acknowledge"), now=NOW, settings=get_settings())
    (acknowledged,) = published(sqs, "incident.acknowledged")
    assert acknowledged.payload["source_integration_id"] == tool.integration_id
    fan_out_all(sqs, "incident.created", "incident.acknowledged")
    assert deliveries(sync.record.subscription_id) == []


# ---------------------------------------------------------------- escalation


def test_escalating_a_level_publishes_incident_escalated(org: Org, setup: dict[str, Any]) -> None:
    def started() -> tuple[str, Message]:
        with clock.frozen(NOW):
            number = incidents.create_incident(
                organization_id=org.organization_id,
                request=incidents.NewIncident(title="Checkout down", service_keys=[setup["service"].service_key]),
                now=NOW,
                actor="tester",
                settings=get_settings(),
            ).incident_number
            (created,) = [m for m in drain() if m.message_type == "incident.created"]
            handlers.on_incident_created(created, get_settings())
        queued = drain()
        assert [m for m in queued if m.message_type == "incident.escalated"] == []  # level 1 is the first page
        return number, next(m for m in queued if m.message_type == escalation_runs.ESCALATION_TIMER)

    by_timer, timer = started()
    escalation_runs.on_timer(
        organization_id=org.organization_id,
        incident_number=by_timer,
        token=timer.payload["token"],
        now=NOW + timedelta(minutes=5),
        settings=get_settings(),
    )
    escalated = [m.payload for m in drain() if m.message_type == "incident.escalated"]
    by_hand, _ = started()
    escalation_runs.escalate(
        organization_id=org.organization_id,
        incident_number=by_hand,
        actor="me",
        now=NOW + timedelta(minutes=1),
        settings=get_settings(),
    )
    # The last level escalated again: nothing paged, no event.
    escalation_runs.escalate(
        organization_id=org.organization_id,
        incident_number=by_hand,
        actor="me",
        now=NOW + timedelta(minutes=2),
        settings=get_settings(),
    )
    escalated += [m.payload for m in drain() if m.message_type == "incident.escalated"]
    assert escalated == [
        {"incident_number": by_timer, "level": 2, "reason": "timeout"},
        {"incident_number": by_hand, "level": 2, "reason": "manual"},
    ]
    planned = events.plan_events(
        message_type="incident.escalated", message_id="m1", occurred_at="2026-11-22T12:05:00.000Z", payload=escalated[0]
    )
    assert [(event.event_type, event.data) for event in planned] == [("incident.escalated", {"level": 2})]
