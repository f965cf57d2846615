"""Verifying a phone number on moto: the right code, wrong codes with attempts left, spent and
expired codes, racing guesses, the resend cooldown and the hourly cap, and the message sent."""

from __future__ import annotations

import logging
from datetime import timedelta

import pytest

from chalicelib import aws
from chalicelib.contact import rules, service, verification
from chalicelib.contact.profile import ContactMethod
from chalicelib.contact.tables import ContactRecord, method_item_key, user_key
from chalicelib.directory import users
from chalicelib.directory.users import User
from chalicelib.errors import Conflict, InvalidVerificationCode, NotFound, NoVerificationCode, RateLimited
from chalicelib.queue.messages import EVENTS_QUEUE, Message
from chalicelib.settings import get_settings
from tests.conftest import NOW, Org, reconfigure
from tests.service.test_contact_service import _race


def _user(org: Org) -> User:
    ann = users.create_user(organization_id=org.organization_id, name="Ann", email="ann@example.com", now=NOW)
    _drain()  # her console invitation (directory.user_created): setup, not the codes under test
    return ann


def _phone(org: Org, user: User, method_type: str = "sms") -> ContactMethod:
    return service.create_method(
        organization_id=org.organization_id,
        user_id=user.user_id,
        method_type=method_type,
        address="+15551234567",
        label=None,
        now=NOW,
        settings=get_settings(),
    )


def _drain() -> list[Message]:
    sqs = aws.client("sqs")
    url = aws.queue_url(EVENTS_QUEUE)
    found = []
    for _ in range(5):
        for raw in sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=0).get("Messages", []):
            found.append(Message.from_json(raw["Body"]))
            sqs.delete_message(QueueUrl=url, ReceiptHandle=raw["ReceiptHandle"])
    return found


def _send(org: Org, user: User, method: ContactMethod, at: timedelta = timedelta()) -> str:
    """Send a code and return it, read from the published message."""
    verification.send_verification(
        organization_id=org.organization_id,
        user_id=user.user_id,
        contact_method_id=method.contact_method_id,
        now=NOW + at,
        settings=get_settings(),
    )
    (message,) = [m for m in _drain() if m.message_type == verification.SEND_VERIFICATION]
    return str(message.payload["code"])


def _verify(org: Org, user: User, method: ContactMethod, code: str, at: timedelta = timedelta()) -> ContactMethod:
    return verification.verify(
        organization_id=org.organization_id,
        user_id=user.user_id,
        contact_method_id=method.contact_method_id,
        code=code,
        now=NOW + at,
        settings=get_settings(),
    )


def _wrong(code: str) -> str:
    return f"{(int(code) + 1) % 10**6:06d}"


def _stored(org: Org, user: User, method: ContactMethod) -> ContactRecord:
    return ContactRecord.get(
        user_key(org.organization_id, user.user_id), method_item_key(method.contact_method_id), consistent_read=True
    )


def test_send_publishes_the_contract_message_and_stores_only_a_digest(
    org: Org, caplog: pytest.LogCaptureFixture
) -> None:
    ann = _user(org)
    sms = _phone(org, ann)
    with caplog.at_level(logging.DEBUG, logger="tocsin"):
        sent = verification.send_verification(
            organization_id=org.organization_id,
            user_id=ann.user_id,
            contact_method_id=sms.contact_method_id,
            now=NOW,
            settings=get_settings(),
        )
    assert (sent.expires_at, sent.resend_available_at, sent.attempts_allowed) == (
        NOW + timedelta(minutes=10),
        NOW + timedelta(seconds=30),
        5,
    )
    (message,) = _drain()
    assert (message.message_type, message.organization_id) == ("contact.send_verification", org.organization_id)
    code = message.payload["code"]
    assert message.payload == {
        "user_id": ann.user_id,
        "contact_method_id": sms.contact_method_id,
        "type": "sms",
        "address": "+15551234567",
        "code": code,
        "expires_at": "2026-11-22T12:10:00.000Z",
        "budget_charged": True,  # this request charged the outbound budget; the sender does not again
    }
    record = _stored(org, ann, sms)
    stored_text = str(record.serialize())
    assert code not in stored_text
    assert record.code_digest and len(record.code_digest) == 64
    assert code not in caplog.text


def test_the_right_code_verifies_and_indexes_the_number(org: Org) -> None:
    ann = _user(org)
    voice = _phone(org, ann, "voice")
    code = _send(org, ann, voice)
    verified = _verify(org, ann, voice, code, timedelta(minutes=9))
    assert verified.verified is True
    assert service.owners_of_phone(method_type="voice", address="+15551234567") == [
        (org.organization_id, ann.user_id, voice.contact_method_id)
    ]
    record = _stored(org, ann, voice)
    assert (record.code_digest, record.code_attempts) == (None, None)
    with pytest.raises(Conflict):
        _verify(org, ann, voice, code)
    with pytest.raises(Conflict):
        _send(org, ann, voice, timedelta(minutes=5))


def test_wrong_codes_count_down_then_the_code_is_void(org: Org) -> None:
    ann = _user(org)
    sms = _phone(org, ann)
    code = _send(org, ann, sms)
    for left in (4, 3, 2, 1, 0):
        with pytest.raises(InvalidVerificationCode) as wrong:
            _verify(org, ann, sms, _wrong(code))
        assert wrong.value.details == {"attempts_left": left}
        assert wrong.value.status == 400
    with pytest.raises(NoVerificationCode) as spent:
        _verify(org, ann, sms, code)  # even the right one: the code is void
    assert spent.value.details == {"reason": "attempts_exhausted"}
    # A new code (after the cooldown) starts over.
    fresh = _send(org, ann, sms, timedelta(seconds=30))
    assert _verify(org, ann, sms, fresh, timedelta(seconds=31)).verified is True


def test_an_expired_code_and_no_code(org: Org) -> None:
    ann = _user(org)
    sms = _phone(org, ann)
    with pytest.raises(NoVerificationCode) as none:
        _verify(org, ann, sms, "123456")
    assert none.value.details == {"reason": "not_sent"}
    code = _send(org, ann, sms)
    with pytest.raises(NoVerificationCode) as expired:
        _verify(org, ann, sms, code, timedelta(minutes=10))
    assert expired.value.details == {"reason": "expired"}
    assert _stored(org, ann, sms).verified is False


def test_racing_guesses_never_exceed_the_attempt_limit(org: Org) -> None:
    ann = _user(org)
    sms = _phone(org, ann)
    code = _send(org, ann, sms)
    wrong = [f"{(int(code) + n) % 10**6:06d}" for n in range(1, 13)]
    results, errors = _race(12, lambda n: _verify(org, ann, sms, wrong[n]))
    assert results == []
    assert sum(isinstance(e, InvalidVerificationCode) for e in errors) == rules.MAX_ATTEMPTS
    assert sum(isinstance(e, NoVerificationCode) for e in errors) == 12 - rules.MAX_ATTEMPTS
    assert _stored(org, ann, sms).code_attempts == rules.MAX_ATTEMPTS
    with pytest.raises(NoVerificationCode):
        _verify(org, ann, sms, code)


def test_resend_cooldown_hourly_cap_and_the_new_code_replaces_the_old(org: Org) -> None:
    # The method's own cooldown and cap, apart from the outbound budget's (tighter by default, and
    # tested in tests/service/test_budget_verification.py).
    reconfigure(BUDGET_VERIFICATION_PER_DESTINATION="20", BUDGET_VERIFICATION_PER_PERSON="20")
    ann = _user(org)
    sms = _phone(org, ann)
    first = _send(org, ann, sms)
    with pytest.raises(RateLimited) as soon:
        _send(org, ann, sms, timedelta(seconds=29))
    assert soon.value.headers["Retry-After"] == "1"
    assert _drain() == []  # nothing sent when refused
    second = _send(org, ann, sms, timedelta(seconds=30))
    if second != first:
        with pytest.raises(InvalidVerificationCode):
            _verify(org, ann, sms, first, timedelta(seconds=31))
    for n in range(2, rules.SENDS_PER_WINDOW):
        _send(org, ann, sms, timedelta(minutes=n))
    with pytest.raises(RateLimited) as capped:
        _send(org, ann, sms, timedelta(minutes=30))
    assert capped.value.headers["Retry-After"] == str(30 * 60)
    _send(org, ann, sms, timedelta(hours=1))


def test_racing_sends_store_one_code(org: Org) -> None:
    ann = _user(org)
    sms = _phone(org, ann)
    results, errors = _race(
        4,
        lambda _: verification.send_verification(
            organization_id=org.organization_id,
            user_id=ann.user_id,
            contact_method_id=sms.contact_method_id,
            now=NOW,
            settings=get_settings(),
        ),
    )
    assert len(results) == 1 and len(errors) == 3 and all(isinstance(e, RateLimited) for e in errors)
    assert len(_drain()) == 1


def test_email_and_slack_need_no_code_and_unknown_methods_are_404(org: Org) -> None:
    ann = users.create_user(
        organization_id=org.organization_id, name="Ann", email="ann@example.com", slack_user_id="U1", now=NOW
    )
    for method_id in ("default-email", "default-slack"):
        with pytest.raises(Conflict):
            verification.send_verification(
                organization_id=org.organization_id,
                user_id=ann.user_id,
                contact_method_id=method_id,
                now=NOW,
                settings=get_settings(),
            )
    for method_id in ("nope", "bad id!"):
        with pytest.raises(NotFound):
            verification.send_verification(
                organization_id=org.organization_id,
                user_id=ann.user_id,
                contact_method_id=method_id,
                now=NOW,
                settings=get_settings(),
            )
    with pytest.raises(NotFound):
        verification.verify(
            organization_id=org.organization_id,
            user_id="ghost",
            contact_method_id="nope",
            code="123456",
            now=NOW,
            settings=get_settings(),
        )


def test_a_new_address_voids_the_pending_code(org: Org) -> None:
    ann = _user(org)
    sms = _phone(org, ann)
    code = _send(org, ann, sms)
    service.update_method(
        organization_id=org.organization_id,
        user_id=ann.user_id,
        contact_method_id=sms.contact_method_id,
        address="+15557654321",
        now=NOW,
        settings=get_settings(),
    )
    with pytest.raises(NoVerificationCode) as raised:
        _verify(org, ann, sms, code)
    assert raised.value.details == {"reason": "not_sent"}
