"""SES and Slack failures are retried through SQS redelivery; after the last receive
(MAX_RECEIVE_COUNT) they end as `notification_failed` on the incident's timeline, once."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from chalicelib import clock
from chalicelib.incident import repository
from chalicelib.notification.service import NotSentYet
from chalicelib.paging import escalation_runs, handlers
from chalicelib.queue.messages import MAX_RECEIVE_COUNT, Message
from chalicelib.settings import get_settings
from chalicelib.workers import dispatch
from tests.conftest import NOW, Org, reconfigure
from tests.service.test_notification_slack import FakeSlack


@pytest.fixture
def fake_slack(aws_env: None) -> Iterator[FakeSlack]:
    fake = FakeSlack().start()
    reconfigure(SLACK_API_BASE_URL=fake.base_url, SLACK_BOT_TOKEN="xoxb-test", SLACK_TIMEOUT_SECONDS="1")
    yield fake
    fake.stop()


@pytest.fixture
def paged(org: Org, fake_slack: FakeSlack) -> dict[str, Any]:
    """An incident and the DELIVER_NOTIFICATION message for Ana (email and Slack)."""
    from chalicelib.catalog import service as services
    from chalicelib.directory import users
    from chalicelib.incident import service

    ana = users.create_user(
        organization_id=org.organization_id, name="Ana", email="ana@acme.test", slack_user_id="U0ANA", now=NOW
    )
    checkout = services.create_service(organization_id=org.organization_id, name="Checkout", now=NOW)
    with clock.frozen(NOW):
        incident = service.create_incident(
            organization_id=org.organization_id,
            request=service.NewIncident(title="Checkout down", service_keys=[checkout.service_key], severity="SEV1"),
            now=NOW,
            actor="tester",
            settings=get_settings(),
        )
    payload = {
        "incident_number": incident.incident_number,
        "user_id": ana.user_id,
        "channels": ["email", "slack"],
        "level": 1,
        "delivery_id": f"{org.organization_id}#{incident.incident_number}#1#{ana.user_id}",
        "reason": "Escalation level 1",
    }
    body = Message(escalation_runs.DELIVER_NOTIFICATION, org.organization_id, payload).to_json()
    return {"org": org, "number": incident.incident_number, "body": body, "slack": fake_slack}


def providers_down(slack: FakeSlack) -> None:
    slack.behaviours["U0ANA"] = ("status", 503)
    reconfigure(SES_SENDER="nobody@unverified.example")  # SES answers MessageRejected


def events(paged: dict[str, Any]) -> list[str]:
    found = repository.get_with_timeline(paged["org"].organization_id, paged["number"])
    return [entry.event_type for entry in found.timeline]


def receive(paged: dict[str, Any], count: int) -> None:
    with clock.frozen(NOW):
        handlers.on_deliver_notification(Message.from_json(paged["body"], receive_count=count), get_settings())


def test_failures_are_retried_then_recorded_once_after_the_last_receive(paged: dict[str, Any]) -> None:
    providers_down(paged["slack"])
    for count in range(1, MAX_RECEIVE_COUNT):
        with pytest.raises(NotSentYet):
            receive(paged, count)
        assert "notification_failed" not in events(paged)  # not yet: SQS will deliver it again
    receive(paged, MAX_RECEIVE_COUNT)  # the last receive: recorded, not raised (no DLQ)
    assert sorted(e for e in events(paged) if e == "notification_failed") == ["notification_failed"] * 2
    assert len(paged["slack"].requests) == MAX_RECEIVE_COUNT
    receive(paged, MAX_RECEIVE_COUNT + 1)  # a redelivery after that sends nothing and records nothing
    assert len(paged["slack"].requests) == MAX_RECEIVE_COUNT
    assert events(paged).count("notification_failed") == 2


def test_a_provider_back_before_the_last_receive_pages_without_failures(paged: dict[str, Any]) -> None:
    providers_down(paged["slack"])
    with pytest.raises(NotSentYet):
        receive(paged, 1)
    paged["slack"].behaviours.pop("U0ANA")  # Slack recovers; SES still refuses
    receive(paged, 2)
    timeline = events(paged)
    assert "paged" in timeline
    assert timeline.count("notification_failed") == 1  # the email, final: a channel delivered


def test_the_receive_count_comes_from_the_sqs_record(paged: dict[str, Any]) -> None:
    providers_down(paged["slack"])

    def record(count: str) -> dict[str, Any]:
        return {"messageId": f"m{count}", "body": paged["body"], "attributes": {"ApproximateReceiveCount": count}}

    with clock.frozen(NOW):
        assert dispatch.handle_records([record("1")]) == {"batchItemFailures": [{"itemIdentifier": "m1"}]}
        assert "notification_failed" not in events(paged)
        assert dispatch.handle_records([record(str(MAX_RECEIVE_COUNT))]) == {"batchItemFailures": []}
    assert events(paged).count("notification_failed") == 2


@pytest.mark.parametrize(("attributes", "count"), [({}, 1), ({"ApproximateReceiveCount": "3"}, 3), (None, 1)])
def test_receive_count_of_odd_records(attributes: Any, count: int) -> None:
    assert dispatch.receive_count({"attributes": attributes}) == count
    assert dispatch.receive_count({"attributes": {"ApproximateReceiveCount": "x"}}) == 1
