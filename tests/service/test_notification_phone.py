"""SMS through SNS on moto (moto records it; the outbox reads it back) and voice calls against a
loopback server playing Twilio: what is sent, and how each failure is reported."""

from __future__ import annotations

import base64
import logging
import time
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError, ConnectTimeoutError

from chalicelib.local import outbox
from chalicelib.notification.channels import Notification, Recipient
from chalicelib.notification.sms import SnsSmsChannel
from chalicelib.notification.voice import TwilioVoiceChannel
from chalicelib.settings import get_settings
from tests.conftest import reconfigure
from tests.service.fake_twilio import FakeTwilio

CONSOLE = "http://127.0.0.1:8000/app/incidents/INC-2026-0042"
NOTE = Notification("INC-2026-0042", "Checkout 500s", "SEV1", "high", "ignored by SMS", CONSOLE, organization_id="org1")
ADA = Recipient("u1", "Ada", "ada@example.com", None, "+15551234567")
SID, TOKEN, FROM = "AC0123456789abcdef0123456789abcdef", "twilio-secret-token-42", "+15550009999"


def sms_backend() -> Any:
    from moto.sns.models import sns_backends

    return sns_backends["123456789012"]["us-east-1"]


# ---------------------------------------------------------------- SMS


def test_an_sms_page_is_published_to_the_phone_number_and_listed_in_the_outbox(aws_env: None) -> None:
    result = SnsSmsChannel(settings=get_settings()).send(NOTE, ADA)
    assert (result.channel, result.sent, result.error_code) == ("sms", True, None)
    assert result.provider_message_id
    assert list(sms_backend().sms_messages.values()) == [
        ("+15551234567", f"[SEV1] INC-2026-0042 Checkout 500s.\n{CONSOLE}\nReply 4 to ack, 6 to resolve.")
    ]
    [item] = outbox.list_outbox(channel="sms")
    assert (item.channel, item.to, item.incident_number, item.id) == (
        "sms",
        "+15551234567",
        "INC-2026-0042",
        result.provider_message_id,
    )
    assert item.text == f"[SEV1] INC-2026-0042 Checkout 500s.\n{CONSOLE}\nReply 4 to ack, 6 to resolve."
    assert item.sent_at is None and item.as_json()["channel"] == "sms" and "blocks" not in item.as_json()


class RecordingSns:
    def __init__(self, error: Exception | None = None) -> None:
        self.error = error
        self.calls: list[dict[str, Any]] = []

    def publish(self, **arguments: Any) -> dict[str, Any]:
        self.calls.append(arguments)
        if self.error is not None:
            raise self.error
        return {"MessageId": "sms-1"}


def test_the_sms_is_transactional_with_the_optional_sender_settings(aws_env: None) -> None:
    client = RecordingSns()
    assert SnsSmsChannel(client=client, settings=get_settings()).send(NOTE, ADA).sent
    [call] = client.calls
    assert call["PhoneNumber"] == "+15551234567"
    assert call["MessageAttributes"] == {"AWS.SNS.SMS.SMSType": {"DataType": "String", "StringValue": "Transactional"}}
    reconfigure(SMS_SENDER_ID="Tocsin", SMS_ORIGINATION_NUMBER="+15550001234")
    assert SnsSmsChannel(client=client, settings=get_settings()).send(NOTE, ADA).sent
    attributes = client.calls[-1]["MessageAttributes"]
    assert attributes["AWS.SNS.SMS.SenderID"]["StringValue"] == "Tocsin"
    assert attributes["AWS.MM.SMS.OriginationNumber"]["StringValue"] == "+15550001234"


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (ClientError({"Error": {"Code": "InvalidParameter", "Message": "bad"}}, "Publish"), "SNS_InvalidParameter"),
        (ClientError({"Error": {"Code": "Throttling", "Message": "slow down"}}, "Publish"), "SNS_Throttling"),
        (ConnectTimeoutError(endpoint_url="https://sns.us-east-1.amazonaws.com"), "PROVIDER_ERROR"),
    ],
)
def test_sns_errors_are_provider_failures(aws_env: None, error: Exception, code: str) -> None:
    result = SnsSmsChannel(client=RecordingSns(error), settings=get_settings()).send(NOTE, ADA)
    outcome = (result.sent, result.provider_failure, result.missing_contact, result.error_code)
    assert outcome == (False, True, False, code)


@pytest.mark.parametrize("phone", [None, "", "5551234567", "+1 555 123 4567"])
def test_no_usable_phone_number_is_missing_contact_and_sends_nothing(aws_env: None, phone: str | None) -> None:
    client = RecordingSns(RuntimeError("must not be called"))
    for channel in (
        SnsSmsChannel(client=client, settings=get_settings()),
        TwilioVoiceChannel(base_url="http://127.0.0.1:9", settings=get_settings()),
    ):
        result = channel.send(NOTE, Recipient("u", "Bo", "bo@example.com", None, phone))
        assert (result.sent, result.missing_contact, result.error_code) == (False, True, "CONTACT_DETAILS_MISSING")
    assert client.calls == []


# ---------------------------------------------------------------- voice


@pytest.fixture
def twilio() -> Iterator[FakeTwilio]:
    fake = FakeTwilio().start()
    yield fake
    fake.stop()


def channel(fake: FakeTwilio, timeout: float = 2.0) -> TwilioVoiceChannel:
    return TwilioVoiceChannel(
        base_url=fake.base_url + "/", credentials=(SID, TOKEN, FROM), timeout=timeout, settings=get_settings()
    )


def test_a_call_posts_to_the_calls_api_with_basic_auth_and_inline_twiml(twilio: FakeTwilio) -> None:
    result = channel(twilio).send(NOTE, ADA)
    assert (result.channel, result.sent, result.provider_message_id) == ("voice", True, "CA" + "f" * 32)
    [request] = twilio.requests
    assert request.path == f"/2010-04-01/Accounts/{SID}/Calls.json"
    assert request.headers["authorization"] == "Basic " + base64.b64encode(f"{SID}:{TOKEN}".encode()).decode()
    assert request.headers["content-type"] == "application/x-www-form-urlencoded"
    assert (request.form["To"], request.form["From"]) == ("+15551234567", FROM)
    root = ElementTree.fromstring(request.form["Twiml"])
    gather = root.find("Gather")
    assert gather is not None and gather.get("numDigits") == "1"
    # Issue 16: the callback also names the organization and the person, signed (voice_link.py).
    assert "/integrations/voice/callback?incident_number=INC-2026-0042&organization_id=org1&user_id=u1&" in str(
        gather.get("action")
    )
    said = root.find("Gather/Say")
    assert said is not None and "Checkout 500s" in str(said.text)


@pytest.mark.parametrize(
    ("behaviour", "code"),
    [
        (("status", 401, b'{"code": 20003, "message": "Authenticate", "status": 401}'), "VOICE_20003"),
        (("status", 400, b'{"code": 21211, "message": "Invalid \'To\' Phone Number", "status": 400}'), "VOICE_21211"),
        (("status", 401, b"Unauthorized"), "VOICE_UNAVAILABLE"),
        (("status", 429, b'{"message": "Too Many Requests"}'), "VOICE_UNAVAILABLE"),
        (("status", 500, b'{"code": 20500, "message": "Internal Server Error"}'), "VOICE_UNAVAILABLE"),
        (("status", 503, b""), "VOICE_UNAVAILABLE"),
        ("garbage", "VOICE_UNAVAILABLE"),
    ],
)
def test_twilio_refusals_and_errors_are_provider_failures(twilio: FakeTwilio, behaviour: Any, code: str) -> None:
    twilio.behaviours["+15551234567"] = behaviour
    result = channel(twilio).send(NOTE, ADA)
    outcome = (result.sent, result.provider_failure, result.missing_contact, result.error_code)
    assert outcome == (False, True, False, code)
    assert result.message


def test_a_slow_provider_times_out_as_unavailable(twilio: FakeTwilio) -> None:
    twilio.behaviours["+15551234567"] = ("slow", 1.5)
    started = time.monotonic()
    result = channel(twilio, timeout=0.3).send(NOTE, ADA)
    assert time.monotonic() - started < 1.2
    assert (result.sent, result.provider_failure, result.error_code) == (False, True, "VOICE_UNAVAILABLE")


def test_nothing_listening_is_unavailable() -> None:
    fake = FakeTwilio().start()
    fake.stop()
    result = channel(fake, timeout=1).send(NOTE, ADA)
    assert (result.sent, result.provider_failure, result.error_code) == (False, True, "VOICE_UNAVAILABLE")


def test_the_auth_token_never_reaches_logs_or_results(twilio: FakeTwilio, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    outcomes = []
    for behaviour in ["ok", ("status", 401, b'{"code": 20003, "message": "Authenticate"}'), ("slow", 1.0)]:
        twilio.behaviours["+15551234567"] = behaviour
        outcomes.append(channel(twilio, timeout=0.3).send(NOTE, ADA))
    assert TOKEN not in caplog.text and base64.b64encode(f"{SID}:{TOKEN}".encode()).decode() not in caplog.text
    assert all(TOKEN not in repr(outcome) for outcome in outcomes)


def test_outside_the_local_stage_without_credentials_nothing_is_called(twilio: FakeTwilio) -> None:

    from chalicelib.settings import from_environment

    prod = from_environment({"TOCSIN_STAGE": "prod", "API_KEY_HMAC_SECRET": "x"})
    result = TwilioVoiceChannel(base_url=twilio.base_url, settings=prod).send(NOTE, ADA)
    assert (result.sent, result.provider_failure, result.error_code) == (False, True, "VOICE_NOT_CONFIGURED")
    assert twilio.requests == []


def test_settings_give_base_url_credentials_and_timeout(aws_env: None, twilio: FakeTwilio) -> None:
    reconfigure(
        VOICE_API_BASE_URL=twilio.base_url,
        VOICE_ACCOUNT_SID=SID,
        VOICE_AUTH_TOKEN=TOKEN,
        VOICE_FROM_NUMBER=FROM,
        VOICE_TIMEOUT_SECONDS="2",
    )
    assert TwilioVoiceChannel(settings=get_settings()).send(NOTE, ADA).sent
    [request] = twilio.requests
    assert request.path == f"/2010-04-01/Accounts/{SID}/Calls.json" and request.form["From"] == FROM
