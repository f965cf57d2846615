"""The worker logs one EMF line per incident opened, acknowledged and resolved (with the time it
took), per notification sent or failed, and per inbound event by outcome, when EMF is on; and
none, reading nothing more, when it is off (the test stage's default)."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from chalicelib import clock, logs
from chalicelib.incident import repository
from chalicelib.queue.messages import Message
from chalicelib.settings import get_settings
from chalicelib.workers import dispatch
from tests.conftest import NOW, Org, reconfigure
from tests.kit import factories


class Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.setFormatter(logs.JsonFormatter())
        self.lines: list[dict[str, Any]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(json.loads(self.format(record)))

    def metrics(self) -> list[dict[str, Any]]:
        return [line for line in self.lines if "_aws" in line]


@pytest.fixture
def lines(aws_env: None) -> Iterator[Lines]:
    handler = Lines()
    logger = logging.getLogger("tocsin.metrics")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    yield handler
    logger.removeHandler(handler)
    logger.setLevel(level)


def run(message: Message) -> None:
    with clock.frozen(NOW + timedelta(hours=2)):
        assert dispatch.handle_records([{"messageId": message.message_id, "body": message.to_json()}]) == {
            "batchItemFailures": []
        }


def test_incident_lines_from_the_worker(org: Org, lines: Lines) -> None:
    reconfigure(EMF_METRICS="true")
    web = factories.service(org, "Web")
    incident = factories.incident(org, web, severity="SEV2", now=NOW)
    record = repository.get_incident(org.organization_id, incident.incident_number)
    record.acknowledged_at = NOW + timedelta(minutes=4)
    record.resolved_at = NOW + timedelta(hours=1)
    record.save()
    number = {"incident_number": incident.incident_number}
    run(Message("incident.created", org.organization_id, number))
    run(Message("incident.acknowledged", org.organization_id, number))
    run(
        Message(
            "incident.status_changed",
            org.organization_id,
            {**number, "previous_category": "acknowledged", "category": "investigating"},
        )
    )
    run(
        Message(
            "incident.status_changed",
            org.organization_id,
            {**number, "previous_category": "acknowledged", "category": "resolved"},
        )
    )
    found = [line for line in lines.metrics() if line.get("Severity")]
    assert [sorted(k for k in line if k[0].isupper()) for line in found] == [
        ["IncidentsOpened", "Service", "Severity"],
        ["IncidentsAcknowledged", "Service", "Severity", "TimeToAcknowledge"],
        ["IncidentsResolved", "Service", "Severity", "TimeToResolve"],
    ]
    assert {(line["Service"], line["Severity"]) for line in found} == {(web.service_key, "SEV2")}
    assert (found[1]["TimeToAcknowledge"], found[2]["TimeToResolve"]) == (240.0, 3600.0)
    assert all(line["_aws"]["CloudWatchMetrics"][0]["Namespace"] == "Tocsin" for line in found)


def test_inbound_and_notification_lines(org: Org, lines: Lines) -> None:
    from chalicelib.notification.channels import DeliveryResult
    from chalicelib.notification.service import Recipient, Target, notify_targets

    reconfigure(EMF_METRICS="true")
    origin = factories.integration(org, integration_type="custom")
    factories.alert(origin, "db1", now=NOW)
    factories.alert(origin, "db1", now=NOW)
    factories.alert(origin, "gone", action="resolve", now=NOW)
    inbound = [(line["Source"], line["Outcome"]) for line in lines.metrics() if "InboundEvents" in line]
    assert inbound == [("custom", "created"), ("custom", "deduplicated"), ("custom", "ignored")]

    class Fake:
        def __init__(self, result: DeliveryResult) -> None:
            self.result = result

        def send(self, notification: Any, address: Any) -> DeliveryResult:
            return self.result

    incident = repository.get_incident(org.organization_id, factories.incident(org, now=NOW).incident_number)
    ada = Recipient(user_id="usr_ada", name="Ada", email="ada@example.com", slack_user_id=None, phone="+15555550100")
    providers: dict[str, Any] = {
        "email": Fake(DeliveryResult.delivered("email")),
        "sms": Fake(DeliveryResult("sms", False, error_code="DELIVERY_FAILED", provider_failure=True)),
    }
    notify_targets(
        incident=incident,
        recipient=ada,
        targets=[Target("email", ada), Target("sms", ada)],
        message=None,
        now=NOW,
        actor="test",
        providers=providers,
        settings=get_settings(),
    )
    sent = [(line["Channel"], "NotificationsSent" in line) for line in lines.metrics() if "Channel" in line]
    assert sent == [("email", True), ("sms", False)]


def test_nothing_is_logged_when_off(org: Org, lines: Lines) -> None:
    incident = factories.incident(org, now=NOW)
    run(Message("incident.created", org.organization_id, {"incident_number": incident.incident_number}))
    factories.alert(factories.integration(org), "db1", now=NOW)
    assert lines.metrics() == []
