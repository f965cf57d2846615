"""The `oncall.handoff_notice` consumer on moto: each person is told once, through the first
verified method of their low-urgency rules (else their account email), nobody deactivated is
told, a provider failure is retried and then logged; and the whole path from a schedule's due
boundary through the queue to the outbox."""

from __future__ import annotations

import logging
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from chalicelib import aws, clock
from chalicelib.contact import service as contacts
from chalicelib.contact import verification as phone_verification
from chalicelib.contact.profile import ContactMethod
from chalicelib.contact.rules import Step
from chalicelib.delivery import claims
from chalicelib.directory import users
from chalicelib.directory.users import User
from chalicelib.local import outbox
from chalicelib.notification import deliveries
from chalicelib.oncall import Layer
from chalicelib.oncall import handoff_notices as producer
from chalicelib.oncall import service as schedules
from chalicelib.paging import handoffs
from chalicelib.queue import consumers
from chalicelib.queue.messages import EVENTS_QUEUE, MAX_RECEIVE_COUNT, Message
from chalicelib.settings import get_settings
from chalicelib.workers import dispatch
from tests.conftest import NOW, Org, reconfigure
from tests.service.fake_twilio import FakeTwilio
from tests.service.test_notification_slack import TOKEN, FakeSlack

AT = NOW + timedelta(minutes=30)  # the boundary; NOW is when the notice is handled (a 30-minute lead)
ON_CALL_SHORT = "Tocsin: you are on call for Primary from Sun 22 Nov 13:30 to Sun 29 Nov 13:30 (Europe/Berlin)."
PHONE = "+15551234567"


@pytest.fixture
def frozen(aws_env: None) -> Iterator[None]:
    with clock.frozen(NOW):
        yield


@pytest.fixture
def fake_slack(aws_env: None) -> Iterator[FakeSlack]:
    fake = FakeSlack().start()
    reconfigure(SLACK_API_BASE_URL=fake.base_url, SLACK_BOT_TOKEN=TOKEN, SLACK_TIMEOUT_SECONDS="1")
    yield fake
    fake.stop()


@pytest.fixture
def twilio(aws_env: None) -> Iterator[FakeTwilio]:
    fake = FakeTwilio().start()
    reconfigure(VOICE_API_BASE_URL=fake.base_url, VOICE_TIMEOUT_SECONDS="1")
    yield fake
    fake.stop()


def drain() -> list[dict[str, Any]]:
    """Every message on the events queue, as the SQS records Lambda would get."""
    sqs = aws.client("sqs")
    url = aws.queue_url(EVENTS_QUEUE)
    records = []
    for _ in range(5):
        received = sqs.receive_message(
            QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=0, AttributeNames=["ApproximateReceiveCount"]
        ).get("Messages", [])
        for raw in received:
            records.append({"messageId": raw["MessageId"], "body": raw["Body"], "attributes": raw.get("Attributes")})
            sqs.delete_message(QueueUrl=url, ReceiptHandle=raw["ReceiptHandle"])
    return records


def person(org: Org, name: str, slack_user_id: str | None = None) -> User:
    made = users.create_user(
        organization_id=org.organization_id, name=name, email=f"{name.lower()}@example.com", now=NOW
    )
    if slack_user_id is None:
        return made
    return users.update_user(
        organization_id=org.organization_id, user_id=made.user_id, now=NOW, slack_user_id=slack_user_id
    )


def phone_method(org: Org, user: User, method_type: str = "sms", *, verified: bool = True) -> ContactMethod:
    """A phone method, verified through the real flow (the code read from the published message)."""
    method = contacts.create_method(
        organization_id=org.organization_id,
        user_id=user.user_id,
        method_type=method_type,
        address=PHONE,
        label=None,
        now=NOW,
        settings=get_settings(),
    )
    if not verified:
        return method
    where = {"organization_id": org.organization_id, "user_id": user.user_id}
    phone_verification.send_verification(
        **where, contact_method_id=method.contact_method_id, now=NOW, settings=get_settings()
    )
    [code] = [
        Message.from_json(record["body"]).payload["code"]
        for record in drain()
        if Message.from_json(record["body"]).message_type == phone_verification.SEND_VERIFICATION
    ]
    return phone_verification.verify(
        **where, contact_method_id=method.contact_method_id, code=code, now=NOW, settings=get_settings()
    )


def low_rules(org: Org, user: User, *steps: tuple[ContactMethod | str, int]) -> None:
    ids = [(m if isinstance(m, str) else m.contact_method_id, delay) for m, delay in steps]
    contacts.put_rules(
        organization_id=org.organization_id,
        user_id=user.user_id,
        high=[Step("default-email", 0)],
        low=[Step(method_id, delay) for method_id, delay in ids],
        now=NOW,
    )


def notice(org: Org, user: User, kind: str = "on_call", *, at: datetime = AT, receive_count: int = 1) -> Message:
    payload = {
        "user_id": user.user_id,
        "schedule_id": "sch_1",
        "schedule_name": "Primary",
        "kind": kind,
        "at": clock.isoformat(at),
        "shift_ends_at": clock.isoformat(at + timedelta(days=7)) if kind == "on_call" else None,
        "time_zone": "Europe/Berlin",
        "notice_id": f"sch_1#{clock.isoformat(at)}#{user.user_id}#{kind}",
        "subject": "You are on call for Primary from Sun 22 Nov 13:30 (Europe/Berlin)",
        "text": "You are on call for the schedule Primary.\nFrom: Sun 22 Nov 2026 13:30 CET\n"
        "Until: Sun 29 Nov 2026 13:30 CET\nTimes are in Europe/Berlin.",
        "short_text": ON_CALL_SHORT,
    }
    return Message(producer.HANDOFF_NOTICE, org.organization_id, payload, receive_count=receive_count)


def sent_sms() -> list[tuple[str, str]]:
    from moto.sns.models import sns_backends

    return list(sns_backends["123456789012"]["us-east-1"].sms_messages.values())


def emails_to(address: str) -> list[outbox.OutboxItem]:
    return outbox.list_outbox(channel="email", to=address)


def test_the_consumer_is_registered_with_the_workers() -> None:
    import chalicelib.workers.handlers  # noqa: F401

    assert consumers.consumers_of("oncall.handoff_notice") == ["chalicelib.paging.handoffs.on_handoff_notice"]


def test_sms_first_in_the_low_rules_gets_the_short_text_by_sms(org: Org, frozen: None) -> None:
    ada = person(org, "Ada")
    sms = phone_method(org, ada)
    low_rules(org, ada, (sms, 0), ("default-email", 5))
    assert consumers.handle(notice(org, ada), settings=get_settings()) is True
    assert sent_sms() == [(PHONE, ON_CALL_SHORT)]
    assert emails_to("ada@example.com") == []  # the first usable step only


def test_default_rules_tell_by_email_with_the_schedule_link(org: Org, frozen: None) -> None:
    linus = person(org, "Linus")
    assert consumers.handle(notice(org, linus), settings=get_settings()) is True
    [email] = emails_to("linus@example.com")
    assert email.subject == "You are on call for Primary from Sun 22 Nov 13:30 (Europe/Berlin)"
    assert email.text.startswith(
        "Hi Linus,\nYou are on call for Primary from Sun 22 Nov 13:30 (Europe/Berlin)\n"
        "You are on call for the schedule Primary.\nFrom: Sun 22 Nov 2026 13:30 CET\n"
    )
    assert "Open the schedule (http://127.0.0.1:8000/app/schedules/sch_1)" in email.text
    assert email.sent_at == clock.isoformat(NOW) and email.incident_number is None
    assert sent_sms() == []


def test_an_unverified_first_method_is_skipped_for_the_next_verified_one(
    org: Org, frozen: None, fake_slack: FakeSlack
) -> None:
    grace = person(org, "Grace", slack_user_id="U0GRACE")
    sms = phone_method(org, grace, verified=False)
    low_rules(org, grace, (sms, 0), ("default-slack", 0), ("default-email", 10))
    assert consumers.handle(notice(org, grace), settings=get_settings()) is True
    [request] = fake_slack.requests
    assert request.body["channel"] == "U0GRACE"
    assert request.body["text"] == "You are on call for Primary from Sun 22 Nov 13:30 (Europe/Berlin)"
    assert "<http://127.0.0.1:8000/app/schedules/sch_1|Open the schedule>" in request.body["blocks"][0]["text"]["text"]
    assert sent_sms() == [] and emails_to("grace@example.com") == []


def test_no_usable_low_step_falls_back_to_the_account_email(org: Org, frozen: None) -> None:
    ada = person(org, "Ada")
    sms = phone_method(org, ada, verified=False)
    low_rules(org, ada, (sms, 0))
    assert consumers.handle(notice(org, ada), settings=get_settings()) is True
    assert [e.subject for e in emails_to("ada@example.com")] == [
        "You are on call for Primary from Sun 22 Nov 13:30 (Europe/Berlin)"
    ]
    assert sent_sms() == []


def test_voice_first_places_a_call_that_says_the_notice_twice(org: Org, frozen: None, twilio: FakeTwilio) -> None:
    ada = person(org, "Ada")
    voice = phone_method(org, ada, "voice")
    low_rules(org, ada, (voice, 0))
    assert consumers.handle(notice(org, ada), settings=get_settings()) is True
    [call] = twilio.requests
    assert call.form["To"] == PHONE
    [say] = ElementTree.fromstring(call.form["Twiml"]).iter("Say")
    assert say.get("loop") == "2"
    assert say.text == (
        "This is Tocsin. You are on call for Primary from Sunday 22 November 13:30 "
        "to Sunday 29 November 13:30 (Europe Berlin)."
    )


def test_a_deactivated_or_unknown_person_is_told_nothing(
    org: Org, frozen: None, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="tocsin")
    bob = person(org, "Bob")
    users.update_user(organization_id=org.organization_id, user_id=bob.user_id, now=NOW, is_active=False)
    assert consumers.handle(notice(org, bob), settings=get_settings()) is True
    ghost = User("usr_gone", org.organization_id, "Ghost", "ghost@example.com", None, "member", True, NOW)
    assert consumers.handle(notice(org, ghost), settings=get_settings()) is True
    assert outbox.list_outbox(channel="email") == [] and sent_sms() == []
    assert "deactivated person" in caplog.text and "person who is gone" in caplog.text


def test_the_same_notice_twice_is_sent_once(org: Org, frozen: None) -> None:
    ada = person(org, "Ada")
    sms = phone_method(org, ada)
    low_rules(org, ada, (sms, 0))
    first = notice(org, ada)
    assert consumers.handle(first, settings=get_settings()) is True
    again = Message(first.message_type, first.organization_id, dict(first.payload))  # published again
    assert consumers.handle(again, settings=get_settings()) is True
    assert consumers.handle(first, settings=get_settings()) is True  # SQS delivered it again
    assert sent_sms() == [(PHONE, ON_CALL_SHORT)]
    assert (
        consumers.handle(notice(org, ada, "off_call"), settings=get_settings()) is True
    )  # another notice is another delivery
    assert len(sent_sms()) == 2


def test_a_provider_failure_is_retried_then_logged_on_the_final_attempt(
    org: Org, frozen: None, fake_slack: FakeSlack, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="tocsin")
    grace = person(org, "Grace", slack_user_id="U0GRACE")
    low_rules(org, grace, ("default-slack", 0))
    fake_slack.behaviours["U0GRACE"] = ("status", 503)
    failing = notice(org, grace)
    assert consumers.handle(failing, settings=get_settings()) is False  # back to SQS
    delivery = f"handoff#{failing.payload['notice_id']}"
    claim = deliveries.claim_of(delivery, NOW)
    assert claims.take(claim)  # released: the retry may claim it
    claims.release(claim)
    assert "not sent yet; retrying" in caplog.text
    last = notice(org, grace, receive_count=MAX_RECEIVE_COUNT)
    assert consumers.handle(last, settings=get_settings()) is True  # the final receive gives up, logged
    [record] = [r for r in caplog.records if r.getMessage() == "handoff notice not sent"]
    assert (getattr(record, "error_code", None), getattr(record, "channel", None)) == ("SLACK_UNAVAILABLE", "slack")
    assert len(fake_slack.requests) == 2
    fake_slack.behaviours.pop("U0GRACE")
    assert consumers.handle(failing, settings=get_settings()) is True  # a later redelivery still sends
    assert len(fake_slack.requests) == 3
    assert consumers.handle(failing, settings=get_settings()) is True
    assert len(fake_slack.requests) == 3  # and only once


def test_an_error_while_sending_releases_the_claim(org: Org, frozen: None, monkeypatch: pytest.MonkeyPatch) -> None:
    linus = person(org, "Linus")

    def explode(*_: Any, **__: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr(handoffs, "send_notice", explode)
    assert consumers.handle(notice(org, linus), settings=get_settings()) is False
    monkeypatch.undo()
    assert consumers.handle(notice(org, linus), settings=get_settings()) is True
    assert len(emails_to("linus@example.com")) == 1


def test_unusable_or_long_past_notices_are_dropped(org: Org, frozen: None) -> None:
    linus = person(org, "Linus")
    stale = notice(org, linus, at=NOW - producer.MAX_LATENESS - timedelta(minutes=1))
    broken = [
        Message(producer.HANDOFF_NOTICE, org.organization_id, {"user_id": linus.user_id}),
        Message(producer.HANDOFF_NOTICE, org.organization_id, {**notice(org, linus).payload, "kind": "maybe"}),
        Message(producer.HANDOFF_NOTICE, org.organization_id, {**notice(org, linus).payload, "at": "soon"}),
    ]
    for message in [stale, *broken]:
        assert consumers.handle(message, settings=get_settings()) is True
    assert outbox.list_outbox(channel="email") == []
    # A boundary within the lateness allowed is still told.
    assert (
        consumers.handle(
            notice(org, linus, at=NOW - producer.MAX_LATENESS + timedelta(minutes=1)), settings=get_settings()
        )
        is True
    )
    assert len(emails_to("linus@example.com")) == 1


# ---------------------------------------------------------------- end to end


MONDAY = datetime(2026, 11, 16, 8, 0, tzinfo=UTC)  # 09:00 in Europe/Berlin
HANDOFF = MONDAY + timedelta(days=7)  # ada -> linus


def test_a_due_boundary_reaches_each_person_through_the_queue(org: Org, aws_env: None) -> None:
    ada, linus = person(org, "Ada"), person(org, "Linus")
    sms = phone_method(org, ada)
    low_rules(org, ada, (sms, 0), ("default-email", 0))
    layer = Layer("lyr_week", "Weekly", (ada.user_id, linus.user_id), "weekly", "09:00", MONDAY)
    stored = schedules.create_schedule(
        organization_id=org.organization_id,
        name="Primary",
        time_zone="Europe/Berlin",
        layers=[layer],
        now=NOW,
        handoff_notice_lead_minutes=15,
    )
    drain()  # whatever the setup published
    now = HANDOFF - timedelta(minutes=15)
    with clock.frozen(now):
        run = producer.send_due_notices(now=now)
        assert (run.boundaries, run.published) == (1, 2)
        records = drain()
        assert dispatch.handle_records(records) == {"batchItemFailures": []}
        assert dispatch.handle_records(records) == {"batchItemFailures": []}  # redelivered: told once
    [text] = outbox.list_outbox(channel="sms", to=PHONE)
    assert text.text == "Tocsin: you are off call for Primary from Mon 23 Nov 09:00 (Europe/Berlin)."
    assert emails_to("ada@example.com") == []  # the first low step only
    [email] = emails_to("linus@example.com")
    assert email.subject == "You are on call for Primary from Mon 23 Nov 09:00 (Europe/Berlin)"
    assert "Until: Mon 30 Nov 2026 09:00 CET" in email.text
    assert f"/app/schedules/{stored.schedule_id})" in email.text
    assert len(outbox.list_outbox(channel="sms")) == 1
