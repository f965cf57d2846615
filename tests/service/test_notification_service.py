"""Notify and page on moto: SES (verified sender, read back from moto's SES backend), Slack on a
real loopback server, timeline entries, the page outcome rules, and the local outbox."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from chalicelib import aws
from chalicelib.auth.principal import Principal
from chalicelib.auth.scopes import ALL_SCOPES
from chalicelib.errors import ContactDetailsMissing, DeliveryFailed, NotFound, ValidationFailed
from chalicelib.incident import repository
from chalicelib.incident import service as incidents
from chalicelib.incident.tables import IncidentRecord
from chalicelib.local import outbox
from chalicelib.notification import service
from chalicelib.notification.channels import Recipient
from chalicelib.settings import get_settings
from tests.conftest import NOW, Org, reconfigure
from tests.service.test_notification_slack import FakeSlack

SENDER = "tocsin@localhost.localdomain"


@pytest.fixture
def fake_slack(aws_env: None) -> Iterator[FakeSlack]:
    fake = FakeSlack().start()
    reconfigure(SLACK_API_BASE_URL=fake.base_url, SLACK_BOT_TOKEN="xoxb-test", SLACK_TIMEOUT_SECONDS="1")
    yield fake
    fake.stop()


@pytest.fixture
def people(org: Org) -> dict[str, Any]:
    from chalicelib.directory import users

    def make(name: str, email: str, slack: str | None) -> Any:
        return users.create_user(
            organization_id=org.organization_id, name=name, email=email, slack_user_id=slack, now=NOW
        )

    return {
        "ana": make("Ana Lima", "ana@example.com", "U0ANA"),
        "bo": make("Bo Chen", "bo@example.com", None),
        "fail": make("Fay Lure", "fay@example.com", "U_FAIL_FAKE"),
    }


def new_incident(org: Org, severity: str = "SEV1", title: str = "Checkout <down>") -> IncidentRecord:
    from chalicelib.catalog import service as services

    svc = services.create_service(organization_id=org.organization_id, name=f"Svc {title[:5]}", now=NOW)
    return incidents.create_incident(
        organization_id=org.organization_id,
        request=incidents.NewIncident(title=title, service_keys=[svc.service_key], severity=severity),
        now=NOW,
        actor="tester",
        settings=get_settings(),
    )


def principal(org: Org) -> Principal:
    return Principal(
        organization_id=org.organization_id,
        credential_kind="api_key",
        scopes=frozenset(ALL_SCOPES),
        key_id="k1",
        display_name="pager (API key)",
    )


def sent_emails() -> list[Any]:
    from moto.ses.models import ses_backends

    return list(ses_backends["123456789012"]["us-east-1"].sent_messages)


def timeline(org: Org, number: str) -> list[Any]:
    return repository.get_with_timeline(org.organization_id, number).timeline


def recipient(user: Any) -> Recipient:
    return Recipient(user.user_id, user.name, user.email, user.slack_user_id)


def test_provision_verifies_the_sender_on_the_emulator(aws_env: None) -> None:
    assert SENDER in aws.client("ses").list_verified_email_addresses()["VerifiedEmailAddresses"]


def test_notify_sends_both_channels_and_records_one_paged_entry(
    org: Org, people: dict[str, Any], fake_slack: FakeSlack
) -> None:
    incident = new_incident(org)
    at = NOW + timedelta(minutes=3)
    results = service.notify(
        organization_id=org.organization_id,
        incident=incident,
        recipient=recipient(people["ana"]),
        channels=["email", "slack"],
        message="Please look <now>",
        now=at,
        actor="pager (API key)",
        settings=get_settings(),
    )
    assert [(r.channel, r.sent, r.error_code) for r in results] == [("email", True, None), ("slack", True, None)]

    [email] = sent_emails()
    assert email.source == SENDER
    assert email.destinations["ToAddresses"] == ["ana@example.com"]
    assert email.subject == f"[SEV1][high] {incident.incident_number}: Checkout <down>"
    assert "Checkout &lt;down&gt;" in email.body and "Please look &lt;now&gt;" in email.body  # moto keeps the HTML

    [request] = fake_slack.requests
    assert request.body["channel"] == "U0ANA"
    assert request.headers["authorization"] == "Bearer xoxb-test"

    entries = [e for e in timeline(org, incident.incident_number) if e.event_type != "created"]
    assert [(e.event_type, e.title) for e in entries] == [("paged", "Paged Ana Lima by email, slack")]
    assert entries[0].user == "pager (API key)"
    assert entries[0].description == "Please look <now>"
    assert entries[0].created_at == at
    assert entries[0].details["channels"] == ["email", "slack"]
    assert entries[0].details["urgency"] == "high"


def test_low_urgency_below_sev1(org: Org, people: dict[str, Any], fake_slack: FakeSlack) -> None:
    incident = new_incident(org, severity="SEV2")
    service.notify(
        organization_id=org.organization_id,
        incident=incident,
        recipient=recipient(people["ana"]),
        channels=["email"],
        message=None,
        now=NOW,
        actor="t",
        settings=get_settings(),
    )
    assert sent_emails()[0].subject.startswith("[SEV2][low] ")


def test_missing_slack_id_is_a_failure_entry_next_to_the_delivered_email(
    org: Org, people: dict[str, Any], fake_slack: FakeSlack
) -> None:
    incident = new_incident(org)
    results = service.notify(
        organization_id=org.organization_id,
        incident=incident,
        recipient=recipient(people["bo"]),
        channels=["email", "slack"],
        message="",
        now=NOW,
        actor="escalation",
        settings=get_settings(),
    )
    assert [(r.channel, r.sent, r.missing_contact) for r in results] == [("email", True, False), ("slack", False, True)]
    assert fake_slack.requests == []
    entries = {e.event_type: e for e in timeline(org, incident.incident_number)}
    assert entries["paged"].title == "Paged Bo Chen by email"
    assert entries["paged"].description is None  # an empty message is no message
    failed = entries["notification_failed"]
    assert failed.title == "Slack notification to Bo Chen failed"
    assert failed.description.startswith("CONTACT_DETAILS_MISSING")
    assert failed.details["channel"] == "slack" and failed.details["missing_contact"] is True


def test_unverified_sender_is_rejected_by_ses(org: Org, people: dict[str, Any], fake_slack: FakeSlack) -> None:
    incident = new_incident(org)
    reconfigure(SES_SENDER="nobody@unverified.example")
    [result] = service.notify(
        organization_id=org.organization_id,
        incident=incident,
        recipient=recipient(people["ana"]),
        channels=["email"],
        message=None,
        now=NOW,
        actor="t",
        settings=get_settings(),
    )
    assert (result.sent, result.provider_failure, result.error_code) == (False, True, "SES_MessageRejected")
    assert sent_emails() == []
    [failed] = [e for e in timeline(org, incident.incident_number) if e.event_type == "notification_failed"]
    assert failed.title == "Email notification to Ana Lima failed"
    assert failed.description.startswith("SES_MessageRejected: ")


def test_notify_on_a_vanished_incident_is_not_found(org: Org, people: dict[str, Any], fake_slack: FakeSlack) -> None:
    ghost = new_incident(org)
    ghost.incident_key = f"{org.organization_id}#INC-2026-9999"
    with pytest.raises(NotFound):
        service.notify(
            organization_id=org.organization_id,
            incident=ghost,
            recipient=recipient(people["bo"]),
            channels=["email"],
            message=None,
            now=NOW,
            actor="t",
            settings=get_settings(),
        )


def page(org: Org, number: str, email: str, channels: list[str], message: str | None = None) -> Any:
    return service.page(
        organization_id=org.organization_id,
        incident_number=number,
        email=email,
        channels=channels,
        message=message,
        now=NOW,
        principal=principal(org),
        settings=get_settings(),
    )


def test_page_delivered_on_any_channel(org: Org, people: dict[str, Any], fake_slack: FakeSlack) -> None:
    incident = new_incident(org)
    outcome = page(org, incident.incident_number, "BO@example.com", ["slack", "email"])
    assert outcome.sent is True
    assert outcome.channels == ["slack", "email"]
    assert [(r.channel, r.sent) for r in outcome.results] == [("slack", False), ("email", True)]


def test_page_all_missing_contact_is_409_with_deliveries(
    org: Org, people: dict[str, Any], fake_slack: FakeSlack
) -> None:
    incident = new_incident(org)
    with pytest.raises(ContactDetailsMissing) as raised:
        page(org, incident.incident_number, "bo@example.com", ["slack"])
    assert raised.value.status == 409
    assert raised.value.details == {
        "incident_number": incident.incident_number,
        "channels": ["slack"],
        "deliveries": [
            {
                "channel": "slack",
                "sent": False,
                "error_code": "CONTACT_DETAILS_MISSING",
                "message": "The person has no Slack user id.",
            }
        ],
    }
    assert "notification_failed" in [e.event_type for e in timeline(org, incident.incident_number)]


def test_page_provider_failures_are_502(org: Org, people: dict[str, Any], fake_slack: FakeSlack) -> None:
    incident = new_incident(org)
    fake_slack.behaviours["U_FAIL_FAKE"] = ("error", "channel_not_found")
    with pytest.raises(DeliveryFailed) as raised:
        page(org, incident.incident_number, "fay@example.com", ["slack"])
    assert raised.value.status == 502
    assert raised.value.details is not None
    assert raised.value.details["deliveries"][0]["error_code"] == "SLACK_channel_not_found"


def test_page_mixed_missing_and_provider_failure_is_502(
    org: Org, people: dict[str, Any], fake_slack: FakeSlack
) -> None:
    incident = new_incident(org)
    reconfigure(SES_SENDER="nobody@unverified.example")
    with pytest.raises(DeliveryFailed) as raised:
        page(org, incident.incident_number, "bo@example.com", ["email", "slack"])
    assert raised.value.details is not None
    assert [d["error_code"] for d in raised.value.details["deliveries"]] == [
        "SES_MessageRejected",
        "CONTACT_DETAILS_MISSING",
    ]
    failures = [e for e in timeline(org, incident.incident_number) if e.event_type == "notification_failed"]
    assert len(failures) == 2


def test_page_unknown_or_inactive_person_is_a_validation_error(
    org: Org, people: dict[str, Any], fake_slack: FakeSlack
) -> None:
    from chalicelib.directory import users

    incident = new_incident(org)
    with pytest.raises(ValidationFailed) as raised:
        page(org, incident.incident_number, "nobody@example.com", ["email"])
    assert raised.value.details == {
        "fields": [{"field": "email", "message": "no person with this email in the organization"}]
    }
    users.update_user(organization_id=org.organization_id, user_id=people["ana"].user_id, now=NOW, is_active=False)
    with pytest.raises(ValidationFailed):
        page(org, incident.incident_number, "ana@example.com", ["email"])
    assert sent_emails() == []


def test_page_unknown_incident_is_not_found(org: Org, people: dict[str, Any], fake_slack: FakeSlack) -> None:
    with pytest.raises(NotFound):
        page(org, "INC-2026-4242", "ana@example.com", ["email"])


def test_page_refuses_unknown_channels(org: Org, people: dict[str, Any], fake_slack: FakeSlack) -> None:
    incident = new_incident(org)
    with pytest.raises(ValidationFailed):
        page(org, incident.incident_number, "ana@example.com", ["sms"])
    with pytest.raises(ValidationFailed):
        page(org, incident.incident_number, "ana@example.com", [])


def test_outbox_lists_emails_from_ses_and_slack_sink_messages_newest_first(
    org: Org, people: dict[str, Any], fake_slack: FakeSlack
) -> None:
    first = new_incident(org, title="First")
    second = new_incident(org, title="Second")
    service.notify(
        organization_id=org.organization_id,
        incident=first,
        recipient=recipient(people["ana"]),
        channels=["email"],
        message="one",
        now=NOW,
        actor="t",
        settings=get_settings(),
    )
    outbox.record_slack_message(
        channel="U0ANA",
        text="slack about it",
        blocks=None,
        metadata={"event_payload": {"incident_number": first.incident_number}},
        now=NOW + timedelta(seconds=1),
    )
    service.notify(
        organization_id=org.organization_id,
        incident=second,
        recipient=recipient(people["bo"]),
        channels=["email"],
        message="two",
        now=NOW + timedelta(seconds=2),
        actor="t",
        settings=get_settings(),
    )
    items = outbox.list_outbox()
    assert [(i.channel, i.to, i.incident_number) for i in items] == [
        ("email", "bo@example.com", second.incident_number),
        ("slack", "U0ANA", first.incident_number),
        ("email", "ana@example.com", first.incident_number),
    ]
    assert items[0].sent_at == "2026-11-22T12:00:02.000Z"
    assert items[0].subject == f"[SEV1][high] {second.incident_number}: Second"
    assert "two" in items[0].text and "<" not in items[0].text
    assert [i.channel for i in outbox.list_outbox(channel="slack")] == ["slack"]
    assert [i.to for i in outbox.list_outbox(incident_number=first.incident_number.lower())] == [
        "U0ANA",
        "ana@example.com",
    ]
    assert [i.to for i in outbox.list_outbox(to="BO@example.com")] == ["bo@example.com"]
    assert len(outbox.list_outbox(limit=1)) == 1


def test_outbox_is_empty_before_anything_was_sent(aws_env: None) -> None:
    assert outbox.list_outbox() == []


def test_a_transient_timeline_failure_is_retried_not_resent(
    org: Org, people: dict[str, Any], fake_slack: FakeSlack, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pynamodb.exceptions import CancellationReason, TransactWriteError, VerboseClientError
    from pynamodb.transactions import TransactWrite

    from chalicelib.store import transactions

    failures = ["TransactionConflict"]

    class FlakyOnce(TransactWrite):
        def _commit(self) -> Any:
            if failures:
                # What DynamoDB answers when another transaction writes the same item meanwhile.
                cancelled = VerboseClientError(
                    {"Error": {"Code": "TransactionCanceledException", "Message": "conflict"}},
                    "TransactWriteItems",
                    cancellation_reasons=[CancellationReason(failures.pop()), None],
                )
                raise TransactWriteError("Failed to write transaction items", cause=cancelled)
            return super()._commit()

    monkeypatch.setattr(transactions, "TransactWrite", FlakyOnce)
    incident = new_incident(org)
    [result] = service.notify(
        organization_id=org.organization_id,
        incident=incident,
        recipient=recipient(people["ana"]),
        channels=["slack"],
        message=None,
        now=NOW,
        actor="t",
        settings=get_settings(),
    )
    assert result.sent and failures == []
    assert len(fake_slack.requests) == 1
    assert [e.title for e in timeline(org, incident.incident_number) if e.event_type == "paged"] == [
        "Paged Ana Lima by slack"
    ]
