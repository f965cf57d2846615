"""Notification rendering, escaping and result classification. No AWS, no network."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from botocore.exceptions import ClientError, EndpointConnectionError, ReadTimeoutError

from chalicelib.local import outbox
from chalicelib.notification import email_ses, slack
from chalicelib.notification.channels import DeliveryResult, Notification, Recipient, classify, subject_line
from chalicelib.notification.email_ses import SesEmailChannel
from chalicelib.settings import get_settings

AT = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
NOTE = Notification(
    incident_number="INC-2026-0001",
    title="Checkout <script>alert(1)</script> & co",
    severity="SEV1",
    urgency="high",
    message='Customers see "500" <b>now</b>',
    url="http://127.0.0.1:8000/app/incidents/INC-2026-0001",
    at=AT,
)
ANA = Recipient("u1", "Ana <Ops>", "ana@example.com", "U1")


class ExplodingClient:
    """An SES client that must not be called, or that fails the way it is told to."""

    def __init__(self, error: Exception | None = None) -> None:
        self.error = error
        self.calls: list[dict[str, Any]] = []

    def send_email(self, **arguments: Any) -> dict[str, Any]:
        self.calls.append(arguments)
        if self.error is not None:
            raise self.error
        return {"MessageId": "m-1"}


def test_subject_names_severity_urgency_number_and_title_on_one_line() -> None:
    note = Notification("INC-2026-0001", "Checkout\ndown\r\n  now", "SEV1", "high", None, "http://x")
    assert subject_line(note) == "[SEV1][high] INC-2026-0001: Checkout down now"


def test_email_html_escapes_every_user_string_and_text_keeps_them() -> None:
    rendered = email_ses.render(NOTE, ANA, settings=get_settings())
    assert "<script>" not in rendered.html and "&lt;script&gt;" in rendered.html
    assert "&lt;b&gt;now&lt;/b&gt;" in rendered.html and "&quot;500&quot;" in rendered.html
    assert "Ana &lt;Ops&gt;" in rendered.html
    assert '<time datetime="2026-11-22T12:00:00.000Z">' in rendered.html
    assert 'Customers see "500" <b>now</b>' in rendered.text
    assert NOTE.url in rendered.text and NOTE.url in rendered.html
    assert rendered.subject == "[SEV1][high] INC-2026-0001: Checkout <script>alert(1)</script> & co"


def test_email_without_message_or_time_renders_cleanly() -> None:
    note = Notification("INC-2026-0002", "Down", "SEV3", "low", None, "http://x/y")
    rendered = email_ses.render(note, Recipient("u", None, "a@example.com", None), settings=get_settings())
    assert "None" not in rendered.text and "None" not in rendered.html
    assert "<time" not in rendered.html
    assert rendered.subject == "[SEV3][low] INC-2026-0002: Down"


def test_email_send_builds_one_ses_call_with_text_and_html() -> None:
    client = ExplodingClient()
    result = SesEmailChannel(client=client, sender="pager@example.com", settings=get_settings()).send(NOTE, ANA)
    assert result == DeliveryResult("email", True, provider_message_id="m-1")
    [call] = client.calls
    assert call["Source"] == "pager@example.com"
    assert call["Destination"] == {"ToAddresses": ["ana@example.com"]}
    assert set(call["Message"]["Body"]) == {"Text", "Html"}
    assert call["Message"]["Subject"]["Data"].startswith("[SEV1][high] INC-2026-0001")


def test_email_without_address_is_missing_contact_and_never_calls_ses() -> None:
    client = ExplodingClient(RuntimeError("must not be called"))
    result = SesEmailChannel(client=client, settings=get_settings()).send(NOTE, Recipient("u", "Bo", None, "U2"))
    assert (result.sent, result.missing_contact, result.provider_failure) == (False, True, False)
    assert result.error_code == "CONTACT_DETAILS_MISSING"
    assert client.calls == []


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (
            ClientError({"Error": {"Code": "MessageRejected", "Message": "Email address not verified"}}, "SendEmail"),
            "SES_MessageRejected",
        ),
        (ClientError({"Error": {"Code": "Throttling", "Message": "Slow down"}}, "SendEmail"), "SES_Throttling"),
        (EndpointConnectionError(endpoint_url="https://email.us-east-1.amazonaws.com"), "PROVIDER_ERROR"),
        (ReadTimeoutError(endpoint_url="https://email.us-east-1.amazonaws.com"), "PROVIDER_ERROR"),
    ],
)
def test_ses_errors_are_provider_failures(error: Exception, code: str) -> None:
    result = SesEmailChannel(client=ExplodingClient(error), sender="pager@example.com", settings=get_settings()).send(
        NOTE, ANA
    )
    assert (result.sent, result.provider_failure, result.missing_contact, result.error_code) == (
        False,
        True,
        False,
        code,
    )
    assert result.message


def test_slack_render_escapes_control_characters_and_targets_the_user() -> None:
    body = slack.render(NOTE, ANA)
    assert body["channel"] == "U1"
    assert "<script>" not in body["text"] and "&lt;script&gt;" in body["text"]
    assert "&amp; co" in body["text"]
    section = body["blocks"][0]["text"]["text"]
    assert f"<{NOTE.url}|INC-2026-0001>" in section  # the only link is ours
    [message] = [b for b in body["blocks"] if b["type"] == "section" and "text" in b and "now" in b["text"]["text"]]
    assert "&lt;b&gt;now&lt;/b&gt;" in message["text"]["text"]
    assert body["metadata"] == {
        "event_type": "tocsin_incident_paged",
        "event_payload": {"incident_number": "INC-2026-0001", "severity": "SEV1"},
    }


def test_low_urgency_slack_message_has_no_message_block_when_no_message() -> None:
    note = Notification("INC-2026-0003", "Slow", "SEV4", "low", None, "http://x")
    body = slack.render(note, ANA)
    assert [block["type"] for block in body["blocks"]] == ["section", "section", "actions"]  # no message block
    assert body["text"] == "[SEV4][low] INC-2026-0003: Slow"


def _ok(channel: str = "email") -> DeliveryResult:
    return DeliveryResult.delivered(channel)  # type: ignore[arg-type]


def _missing(channel: str = "slack") -> DeliveryResult:
    return DeliveryResult.contact_missing(channel, "x")  # type: ignore[arg-type]


def _failed(channel: str = "slack") -> DeliveryResult:
    return DeliveryResult.provider_failed(channel, "SLACK_UNAVAILABLE", "down")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("results", "outcome"),
    [
        ([_ok()], "delivered"),
        ([_ok(), _missing()], "delivered"),
        ([_failed("email"), _ok("slack")], "delivered"),
        ([_missing("email"), _missing("slack")], "missing_contact"),
        ([_missing()], "missing_contact"),
        ([_failed()], "provider_failure"),
        ([_failed("email"), _failed("slack")], "provider_failure"),
        ([_missing("email"), _failed("slack")], "provider_failure"),
        ([], "provider_failure"),
    ],
)
def test_classification_follows_the_spec(results: list[DeliveryResult], outcome: str) -> None:
    assert classify(results) == outcome


def test_outbox_reads_html_emails_back_as_text() -> None:
    rendered = email_ses.render(NOTE, ANA, settings=get_settings())
    text = outbox.html_to_text(rendered.html)
    assert "INC-2026-0001: Checkout <script>alert(1)</script> & co" in text
    assert 'Customers see "500" <b>now</b>' in text
    assert f"Open the incident ({NOTE.url})" in text
    assert outbox.html_to_text("plain\n") == "plain"


def test_outbox_finds_the_incident_number_in_metadata_or_text() -> None:
    meta = {"event_payload": {"incident_number": "INC-2026-0009"}}
    assert outbox._incident_number_of(meta, "", None) == "INC-2026-0009"
    assert outbox._incident_number_of(None, "about INC-2026-0010 now", None) == "INC-2026-0010"
    assert outbox._incident_number_of(None, "", [{"text": "INC-2026-0011"}]) == "INC-2026-0011"
    assert outbox._incident_number_of(None, "nothing", None) is None
