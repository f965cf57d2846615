"""The `contact.send_verification` consumer on moto: the SMS and the call it sends (shared
contract 1), once per message, never the code in a log line, retries on provider failures."""

from __future__ import annotations

import logging
import re
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from chalicelib import clock
from chalicelib.delivery import claims
from chalicelib.local import outbox
from chalicelib.notification import deliveries, verification
from chalicelib.queue import consumers
from chalicelib.queue.messages import MAX_RECEIVE_COUNT, Message
from chalicelib.settings import get_settings
from tests.conftest import NOW, reconfigure
from tests.service.fake_twilio import FakeTwilio

CODE = "493817"
PHONE = "+15551234567"


@pytest.fixture
def frozen(aws_env: None) -> Iterator[None]:
    with clock.frozen(NOW):
        yield


@pytest.fixture
def twilio(aws_env: None) -> Iterator[FakeTwilio]:
    fake = FakeTwilio().start()
    reconfigure(VOICE_API_BASE_URL=fake.base_url, VOICE_TIMEOUT_SECONDS="1")
    yield fake
    fake.stop()


def message(kind: str = "sms", *, expires_in: timedelta = timedelta(minutes=10), **changes: Any) -> Message:
    payload = {
        "user_id": "usr_1",
        "contact_method_id": "cm_1",
        "type": kind,
        "address": PHONE,
        "code": CODE,
        "expires_at": clock.isoformat(NOW + expires_in),
        **changes,
    }
    return Message(verification.SEND_VERIFICATION, "org_1", payload)


def logged(caplog: pytest.LogCaptureFixture) -> str:
    """Every log record in full: message, extra fields and any traceback."""
    return caplog.text + "".join(repr(vars(record)) for record in caplog.records)


def shows_code(text: str) -> bool:
    """The code as a word of its own: not six digits that happen to stand inside a random hex id
    (a message id once held ...8049381788c9...)."""
    return re.search(rf"(?<![0-9a-fA-F]){CODE}(?![0-9a-fA-F])", text) is not None


def sent_sms() -> list[tuple[str, str]]:
    from moto.sns.models import sns_backends

    return list(sns_backends["123456789012"]["us-east-1"].sms_messages.values())


def test_the_consumer_is_registered_with_the_workers() -> None:
    import chalicelib.workers.handlers  # noqa: F401

    assert "chalicelib.notification.verification.on_send_verification" in consumers.consumers_of(
        "contact.send_verification"
    )


def test_an_sms_code_is_sent_once_with_its_expiry(frozen: None, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="tocsin")
    first = message()
    assert consumers.handle(first, settings=get_settings()) is True
    assert sent_sms() == [(PHONE, "Your Tocsin verification code is 493817. It expires in 10 minutes.")]
    assert consumers.handle(first, settings=get_settings()) is True  # SQS delivered it again: claimed, not sent twice
    assert len(sent_sms()) == 1
    [item] = outbox.list_outbox(channel="sms", to=PHONE)
    assert CODE in item.text  # the developer reads the code in the local outbox
    assert "verification code sent" in logged(caplog) and not shows_code(logged(caplog))


@pytest.mark.parametrize(
    ("expires_in", "said"),
    [
        (timedelta(minutes=9, seconds=30), "10 minutes"),
        (timedelta(seconds=20), "1 minute"),
        (timedelta(hours=1), "60 minutes"),
    ],
)
def test_the_expiry_is_counted_from_expires_at(frozen: None, expires_in: timedelta, said: str) -> None:
    consumers.handle(message(expires_in=expires_in), settings=get_settings())
    assert sent_sms()[-1][1].endswith(f"It expires in {said}.")


def test_a_new_code_for_the_same_method_is_a_new_delivery(frozen: None) -> None:
    consumers.handle(message(), settings=get_settings())
    consumers.handle(message(code="111222", expires_in=timedelta(minutes=11)), settings=get_settings())
    assert [text.split(" is ")[1][:6] for _, text in sent_sms()] == [CODE, "111222"]


def test_a_voice_code_is_read_digit_by_digit_twice(frozen: None, twilio: FakeTwilio) -> None:
    assert consumers.handle(message("voice"), settings=get_settings()) is True
    assert consumers.handle(message("voice"), settings=get_settings()) is True
    [request] = twilio.requests
    assert request.form["To"] == PHONE
    root = ElementTree.fromstring(request.form["Twiml"])
    [say] = root.iter("Say")
    assert say.text is not None and say.text.count("4, 9, 3, 8, 1, 7") == 2
    assert "expires in 10 minutes" in say.text
    assert sent_sms() == []


def test_an_expired_or_unusable_message_sends_nothing(frozen: None, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="tocsin")
    cases = [
        message(expires_in=timedelta(seconds=-1)),
        message("email"),
        message(address="5551234567"),
        message(code="12ab56"),
        message(expires_at="soon"),
        Message(verification.SEND_VERIFICATION, "org_1", {"type": "sms"}),
    ]
    for case in cases:
        assert consumers.handle(case, settings=get_settings()) is True
    assert sent_sms() == []
    assert caplog.records and not shows_code(logged(caplog))


def test_a_provider_failure_is_retried_then_given_up_without_the_code_in_logs(
    frozen: None, twilio: FakeTwilio, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="tocsin")
    twilio.behaviours[PHONE] = ("status", 503, b"")
    failing = message("voice")
    assert consumers.handle(failing, settings=get_settings()) is False  # back to SQS
    delivery = f"verify#cm_1#{failing.payload['expires_at']}"
    claim = deliveries.claim_of(delivery, NOW)
    assert claims.take(claim)  # released: the retry may claim it
    claims.release(claim)
    last = Message(failing.message_type, failing.organization_id, failing.payload, receive_count=MAX_RECEIVE_COUNT)
    assert consumers.handle(last, settings=get_settings()) is True  # the final receive gives up
    assert len(twilio.requests) == 2
    twilio.behaviours.pop(PHONE)
    assert consumers.handle(failing, settings=get_settings()) is True  # a later redelivery still sends
    assert len(twilio.requests) == 3
    assert not shows_code(logged(caplog)) and "4, 9, 3" not in logged(caplog)
    assert "VOICE_UNAVAILABLE" in logged(caplog)


def test_an_error_while_sending_releases_the_claim(frozen: None, monkeypatch: pytest.MonkeyPatch) -> None:
    def explode(request: Any, now: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr(verification, "send_code", explode)
    failing = message()
    assert consumers.handle(failing, settings=get_settings()) is False
    monkeypatch.undo()
    assert consumers.handle(failing, settings=get_settings()) is True
    assert len(sent_sms()) == 1


def test_the_request_never_shows_its_code() -> None:
    request = verification.parse_request(message().payload)
    assert request is not None and not shows_code(repr(request)) and not shows_code(request.delivery_id)
