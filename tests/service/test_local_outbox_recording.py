"""What SES and SNS accept is recorded in the local outbox as it is sent
(chalicelib/local/outbox_recording.py, installed for the whole test process as `make run` installs
it): what the outbox lists for each, and that recording never changes or fails a send."""

from __future__ import annotations

import logging
from types import SimpleNamespace
from typing import Any

import pytest
from botocore.exceptions import ClientError

from chalicelib import aws
from chalicelib.local import cognito_mail, outbox, outbox_recording, outbox_table
from chalicelib.settings import get_settings

PAGE_HTML = (
    '<p>Checkout is down.</p><p><a href="http://127.0.0.1:8000/app/email-actions/e1.x">Acknowledge</a></p>'
    '<footer><time datetime="2026-11-22T12:00:00.000Z">12:00</time></footer>'
)


def send_email(**message: Any) -> str:
    destination = {"ToAddresses": ["ana@example.com"], "CcAddresses": ["Bo@Example.com"]}
    answer = aws.client("ses").send_email(Source=get_settings().ses_sender, Destination=destination, Message=message)
    return str(answer["MessageId"])


def test_an_email_with_html_is_listed_as_ses_keeps_it(aws_env: None) -> None:
    message_id = send_email(
        Subject={"Data": "[SEV1][high] INC-2026-0042: Checkout down"},
        Body={"Text": {"Data": "the text part"}, "Html": {"Data": PAGE_HTML}},
    )
    [item] = outbox.list_outbox(channel="email", incident_number="INC-2026-0042")
    assert item.as_json() == {
        "channel": "email",
        "to": "ana@example.com, Bo@Example.com",
        "subject": "[SEV1][high] INC-2026-0042: Checkout down",
        "text": "Checkout is down.\nAcknowledge (http://127.0.0.1:8000/app/email-actions/e1.x)\n12:00",
        "sent_at": "2026-11-22T12:00:00.000Z",
        "incident_number": "INC-2026-0042",
        "id": message_id,
        "html": PAGE_HTML,
        "action_links": {"Acknowledge": "http://127.0.0.1:8000/app/email-actions/e1.x"},
    }
    assert [i.id for i in outbox.list_outbox(to="bo@example.com")] == [message_id]  # Cc is a recipient too


def test_a_text_only_email_has_no_time_and_comes_last(aws_env: None) -> None:
    text_only = send_email(Subject={"Data": "Your temporary password"}, Body={"Text": {"Data": "  Sign in: x  \n"}})
    timed = send_email(Subject={"Data": "INC-2026-0001"}, Body={"Html": {"Data": PAGE_HTML}})
    listed = outbox.list_outbox(channel="email")
    assert [i.id for i in listed] == [timed, text_only]
    assert (listed[1].text, listed[1].html, listed[1].sent_at, listed[1].incident_number) == (
        "Sign in: x",
        "  Sign in: x  \n",
        None,
        None,
    )


def test_a_cognito_invitation_shows_in_the_outbox(aws_env: None) -> None:
    context = {"tocsin_invitation": ("new@example.com", "Temp-Pass-123")}
    cognito_mail._send_invitation(http_response=SimpleNamespace(status_code=200), context=context)
    [item] = outbox.list_outbox(channel="email", to="new@example.com")
    assert "Temp-Pass-123" in item.text and item.sent_at is None


def test_a_refused_email_is_not_recorded_and_the_sender_sees_the_refusal(aws_env: None) -> None:
    with pytest.raises(ClientError) as refused:
        aws.client("ses").send_email(
            Source="someone@unverified.example",
            Destination={"ToAddresses": ["ana@example.com"]},
            Message={"Subject": {"Data": "s"}, "Body": {"Text": {"Data": "t"}}},
        )
    assert refused.value.response["Error"]["Code"] == "MessageRejected"
    assert outbox.list_outbox() == []


def test_an_sms_is_recorded_and_a_publish_to_a_topic_is_not(aws_env: None) -> None:
    sns = aws.client("sns")
    topic = sns.create_topic(Name="not-a-person")["TopicArn"]
    sns.publish(TopicArn=topic, Message="INC-2026-0001 to a topic")
    answer = sns.publish(PhoneNumber="+15555550100", Message="[SEV1] INC-2026-0001 Down. Reply 4 to ack.")
    assert outbox.list_outbox() == outbox.list_outbox(channel="sms", incident_number="INC-2026-0001")
    [item] = outbox.list_outbox(to="15555550100")
    assert (item.id, item.to, item.sent_at, item.subject) == (answer["MessageId"], "+15555550100", None, None)


def test_a_recording_failure_never_fails_the_send(aws_env: None, caplog: pytest.LogCaptureFixture) -> None:
    def broken(*_: Any, **__: Any) -> None:
        raise RuntimeError("the outbox broke")

    with pytest.MonkeyPatch.context() as patch, caplog.at_level(logging.WARNING, logger="tocsin.local.outbox"):
        patch.setattr(outbox_table, "record", broken)
        assert send_email(Subject={"Data": "s"}, Body={"Text": {"Data": "t"}})
    assert [r.getMessage() for r in caplog.records] == ["the local outbox could not record a message"]

    caplog.clear()
    aws.client("dynamodb").delete_table(TableName=outbox_table.outbox_table_name())
    with caplog.at_level(logging.WARNING, logger="tocsin.local.outbox"):
        assert aws.client("sns").publish(PhoneNumber="+15555550100", Message="hi")["MessageId"]
    assert caplog.records == []  # an account without the outbox table: nothing to say


def test_recording_is_set_up_on_every_client_built_until_it_is_removed(aws_env: None) -> None:
    aws.reset()  # clients built again, as after a change of settings: the recording is on them too
    aws.client("sns").publish(PhoneNumber="+15555550100", Message="after a reset")
    assert [i.text for i in outbox.list_outbox(channel="sms")] == ["after a reset"]
    outbox_recording.uninstall()
    try:
        aws.client("sns").publish(PhoneNumber="+15555550100", Message="not recorded")
        assert len(outbox.list_outbox(channel="sms")) == 1
    finally:
        outbox_recording.install()
    aws.client("sns").publish(PhoneNumber="+15555550100", Message="recorded again")
    assert len(outbox.list_outbox(channel="sms")) == 2
