"""POST /integrations/sms/inbound: AWS two-way SMS through SNS over HTTPS, signed with a throwaway
RSA key and self-signed certificate (the certificate fetch is replaced, nothing leaves the process)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from chalicelib import clock
from chalicelib.incident import repository
from chalicelib.paging.sms_reply import remember_page
from tests.api.test_webhooks_api import assert_error, post
from tests.api.test_webhooks_cloudwatch_api import SUBSCRIBE_URL, FakeSns, signed
from tests.api.test_webhooks_cloudwatch_api import fake_sns as fake_sns
from tests.api.test_webhooks_cloudwatch_api import key as key
from tests.conftest import NOW, Org, reconfigure
from tests.service.test_notification_phone import sms_backend
from tests.service.test_sms_reply import PHONE, _incident, _person

TOPIC = "arn:aws:sns:eu-west-1:123456789012:tocsin-sms-inbound"
PATH = "/integrations/sms/inbound"


@pytest.fixture(autouse=True)
def configured(aws_env: None) -> Iterator[None]:
    reconfigure(SMS_INBOUND_TOPIC_ARN=TOPIC)
    sms_backend().sms_messages.clear()
    with clock.frozen(NOW):
        yield


def inbound(body: str, sender: str = PHONE, message_id: str = "in-1", topic: str = TOPIC) -> dict[str, Any]:
    sms = {
        "originationNumber": sender,
        "destinationNumber": "+15550009999",
        "messageKeyword": "KEYWORD_123456789012",
        "messageBody": body,
        "inboundMessageId": message_id,
        "previousPublishedMessageId": "p-1",
    }
    return {
        "Type": "Notification",
        "MessageId": f"sns-{message_id}",
        "TopicArn": topic,
        "Message": json.dumps(sms),
        "Timestamp": "2026-11-22T11:58:08.123Z",
    }


def deliver(client: Any, message: dict[str, Any]) -> Any:
    headers = {"Content-Type": "text/plain; charset=UTF-8", "x-amz-sns-message-type": message["Type"]}
    return post(client, PATH, json.dumps(message), headers)


def replies() -> list[tuple[str, str]]:
    return [(phone, text) for phone, text, *_ in sms_backend().sms_messages.values()]


def test_a_verified_sender_acknowledges(client: Any, org: Org, key: Any, fake_sns: FakeSns) -> None:
    grace = _person(org, "Grace")
    number = _incident(org)
    remember_page(
        phone=PHONE, organization_id=org.organization_id, incident_number=number, user_id=grace.user_id, now=NOW
    )
    response = deliver(client, signed(key, inbound("ack")))
    assert response.status_code == 200, response.body
    assert response.json == {
        "success": True,
        "message": "reply sent",
        "reply": f"{number} acknowledged by grace@acme.test.",
    }
    assert replies() == [(PHONE, f"{number} acknowledged by grace@acme.test.")]
    assert repository.get_incident(org.organization_id, number).acknowledged_at is not None
    # SNS delivers the same message again: nothing is done or texted twice.
    again = deliver(client, signed(key, inbound("ack")))
    assert again.status_code == 200 and again.json["reply"] is None
    assert len(replies()) == 1


def test_an_unknown_number_is_told_and_nothing_changes(client: Any, org: Org, key: Any, fake_sns: FakeSns) -> None:
    grace = _person(org, "Grace")
    number = _incident(org)
    remember_page(
        phone=PHONE, organization_id=org.organization_id, incident_number=number, user_id=grace.user_id, now=NOW
    )
    response = deliver(client, signed(key, inbound("ack", sender="+15559999999")))
    assert response.status_code == 200
    assert replies() == [("+15559999999", "This number is not a verified Tocsin SMS contact; nothing was changed.")]
    assert repository.get_incident(org.organization_id, number).acknowledged_at is None


def test_a_bad_signature_or_another_topic_is_refused(client: Any, org: Org, key: Any, fake_sns: FakeSns) -> None:
    grace = _person(org, "Grace")
    number = _incident(org)
    remember_page(
        phone=PHONE, organization_id=org.organization_id, incident_number=number, user_id=grace.user_id, now=NOW
    )
    good = signed(key, inbound("ack"))
    forged = good | {"Message": good["Message"].replace('"ack"', '"6"')}  # changed after signing
    assert_error(deliver(client, forged), "INVALID_SIGNATURE")
    # Correctly signed by SNS, but from a topic anyone could create and subscribe us to.
    assert_error(deliver(client, signed(key, inbound("ack", topic=TOPIC + "-mine"))), "INVALID_SIGNATURE")
    unsigned = {k: v for k, v in good.items() if k != "Signature"}
    assert_error(deliver(client, unsigned), "INVALID_SIGNATURE")
    assert replies() == []
    assert repository.get_incident(org.organization_id, number).acknowledged_at is None


def test_malformed_messages_are_400(client: Any, org: Org, key: Any, fake_sns: FakeSns) -> None:
    assert_error(post(client, PATH, "not json"), "INVALID_PAYLOAD")
    message = inbound("ack") | {"Message": json.dumps({"messageBody": "ack"})}
    assert_error(deliver(client, signed(key, message)), "INVALID_PAYLOAD")
    assert_error(deliver(client, signed(key, inbound("ack") | {"Message": "[1]"})), "INVALID_PAYLOAD")


def test_the_subscription_is_confirmed(client: Any, key: Any, fake_sns: FakeSns) -> None:
    confirmation = {
        "Type": "SubscriptionConfirmation",
        "MessageId": "c-1",
        "Token": "abc",
        "TopicArn": TOPIC,
        "Message": "You have chosen to subscribe to the topic.",
        "SubscribeURL": SUBSCRIBE_URL,
        "Timestamp": "2026-11-22T11:58:08.123Z",
    }
    response = deliver(client, signed(key, confirmation))
    assert response.status_code == 200 and response.json["message"] == "subscription confirmed"
    assert fake_sns.confirmed == [SUBSCRIBE_URL]


def test_unconfigured_replies_are_404(client: Any, key: Any, fake_sns: FakeSns) -> None:
    reconfigure(SMS_INBOUND_TOPIC_ARN="")
    response = deliver(client, signed(key, inbound("ack")))
    assert response.status_code == 404
    assert response.json["error"]["code"] == "NOT_FOUND"
