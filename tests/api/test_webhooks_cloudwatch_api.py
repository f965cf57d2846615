"""CloudWatch alarms through SNS over HTTP, signed with a throwaway RSA key and self-signed
certificate; the certificate fetch is replaced, so nothing leaves the process."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from cryptography.x509.oid import NameOID

from chalicelib.catalog.service import Service
from chalicelib.integration import fetch
from chalicelib.integration.parsers import sns
from chalicelib.settings import Settings
from tests.api.test_webhooks_api import (
    assert_accepted,
    assert_error,
    drain_events,
    event_types,
    fixture,
    incident,
    integrate,
    post,
    record,
)

# Fixtures of test_webhooks_api, re-exported so pytest finds them here (frozen_clock is autouse).
from tests.api.test_webhooks_api import frozen_clock as frozen_clock
from tests.api.test_webhooks_api import services as services
from tests.conftest import NOW, Org

CERT_URL = "https://sns.eu-west-1.amazonaws.com/SimpleNotificationService-0123456789abcdef.pem"
TOPIC = "arn:aws:sns:eu-west-1:123456789012:tocsin-alarms"
SUBSCRIBE_URL = f"https://sns.eu-west-1.amazonaws.com/?Action=ConfirmSubscription&TopicArn={TOPIC}&Token=abc"
NOTIFICATION_KEYS = ("Message", "MessageId", "Subject", "Timestamp", "TopicArn", "Type")
CONFIRMATION_KEYS = ("Message", "MessageId", "SubscribeURL", "Timestamp", "Token", "TopicArn", "Type")


@pytest.fixture(scope="module")
def key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@dataclass
class FakeSns:
    pem: bytes
    fetched: list[str] = field(default_factory=list)
    confirmed: list[str] = field(default_factory=list)

    def fetch(self, url: str, settings: Settings) -> bytes:
        self.fetched.append(url)
        return self.pem


@pytest.fixture
def fake_sns(key: rsa.RSAPrivateKey, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeSns]:
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "sns.amazonaws.com")])
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(NOW - timedelta(days=1))
        .not_valid_after(NOW + timedelta(days=365))
        .sign(key, hashes.SHA256())
    )
    fake = FakeSns(certificate.public_bytes(serialization.Encoding.PEM))
    sns.clear_certificate_cache()
    monkeypatch.setattr(fetch, "fetch_certificate", fake.fetch)
    monkeypatch.setattr(fetch, "confirm_subscription", lambda url, settings: fake.confirmed.append(url))
    yield fake
    sns.clear_certificate_cache()


def signed(key: rsa.RSAPrivateKey, message: dict[str, Any], **overrides: Any) -> dict[str, Any]:
    keys = NOTIFICATION_KEYS if message["Type"] == "Notification" else CONFIRMATION_KEYS
    canonical = "".join(f"{k}\n{message[k]}\n" for k in keys if k in message).encode()
    signature = key.sign(canonical, padding.PKCS1v15(), hashes.SHA256())
    return message | {
        "SignatureVersion": "2",
        "Signature": base64.b64encode(signature).decode(),
        "SigningCertURL": CERT_URL,
        **overrides,
    }


def notification(alarm: dict[str, Any], message_id: str, topic: str = TOPIC) -> dict[str, Any]:
    return {
        "Type": "Notification",
        "MessageId": message_id,
        "TopicArn": topic,
        "Subject": f'{alarm["NewStateValue"]}: "{alarm["AlarmName"]}" in EU (Ireland)',
        "Message": json.dumps(alarm),
        "Timestamp": "2026-11-22T11:58:08.123Z",
        "UnsubscribeURL": f"https://sns.eu-west-1.amazonaws.com/?Action=Unsubscribe&SubscriptionArn={TOPIC}:1a2b",
    }


def deliver(client: Any, routing_key: str, message: dict[str, Any]) -> Any:
    headers = {
        "Content-Type": "text/plain; charset=UTF-8",
        "x-amz-sns-message-type": message["Type"],
        "x-amz-sns-message-id": message["MessageId"],
        "x-amz-sns-topic-arn": message["TopicArn"],
    }
    return post(client, routing_key, json.dumps(message), headers)


def alarm(state: str = "ALARM") -> dict[str, Any]:
    body = fixture("cloudwatch_alarm.json")
    body["AlarmDescription"] = body["AlarmDescription"].replace("SER-00011", "SER-00002")
    return body | {"NewStateValue": state}


def test_cloudwatch_alarm_lifecycle(
    client: Any, org: Org, services: list[Service], key: Any, fake_sns: FakeSns
) -> None:
    hook = integrate(client, org, "cloudwatch", default_service=services[0].service_key)
    routing_key = hook["routing_key"]

    created = assert_accepted(
        deliver(client, routing_key, signed(key, notification(alarm(), "m-1"))), 201, deduplicated=False
    )
    assert "orders-api-5xx-rate" in created["title"]
    assert (created["severity"], created["status"]) == ("SEV1", "new")  # SEV1 token in the description
    number = created["id"]
    assert incident(client, org, number)["service_keys"] == [services[1].service_key]  # service_id=SER-00002
    assert record(org, number).source["dedup_key"] == alarm()["AlarmArn"]

    # The same alarm again (a repeat, or an SNS retry) counts on the same incident.
    again = deliver(client, routing_key, signed(key, notification(alarm(), "m-2")))
    assert assert_accepted(again, 200, deduplicated=True)["id"] == number
    # INSUFFICIENT_DATA is a note on the open incident, not a change of status.
    note = deliver(client, routing_key, signed(key, notification(alarm("INSUFFICIENT_DATA"), "m-3")))
    assert assert_accepted(note, 200, deduplicated=True)["status"] == "new"
    drain_events()
    assert event_types(incident(client, org, number)).count("alert_received") == 2
    assert record(org, number).alert_count == 2

    ok = fixture("cloudwatch_ok.json")
    resolved = assert_accepted(
        deliver(client, routing_key, signed(key, notification(ok, "m-4"))), 200, deduplicated=True
    )
    assert (resolved["id"], resolved["status"]) == (number, "resolved")
    assert incident(client, org, number)["resolved_at"] is not None

    reopened = deliver(client, routing_key, signed(key, notification(alarm(), "m-5")))
    assert assert_accepted(reopened, 201, deduplicated=False)["id"] != number
    assert fake_sns.fetched == [CERT_URL]  # the certificate is cached

    composite = fixture("cloudwatch_composite.json")
    made = assert_accepted(
        deliver(client, routing_key, signed(key, notification(composite, "m-6"))), 201, deduplicated=False
    )
    assert made["severity"] == "SEV0" and "checkout-degraded-sev0" in made["title"]
    assert incident(client, org, made["id"])["service_keys"] == [services[0].service_key]  # default service


def test_cloudwatch_signature_failures(
    client: Any, org: Org, services: list[Service], key: Any, fake_sns: FakeSns
) -> None:
    hook = integrate(client, org, "cloudwatch", default_service=services[0].service_key)
    routing_key = hook["routing_key"]
    good = signed(key, notification(alarm(), "m-1"))
    other_key = rsa.generate_private_key(public_exponent=65537, key_size=1024)
    for message in (
        good | {"Message": good["Message"].replace("ALARM", "OK")},  # tampered after signing
        good | {"Subject": "changed"},
        signed(other_key, notification(alarm(), "m-1")),
        good | {"SignatureVersion": "3"},
        good | {"Signature": "not base64!"},
        good | {"SigningCertURL": "https://sns.eu-west-1.amazonaws.com.evil.example/cert.pem"},
        good | {"SigningCertURL": "http://sns.eu-west-1.amazonaws.com/cert.pem"},
        good | {"SigningCertURL": "https://sns.eu-west-1.amazonaws.com/cert.txt"},
        {k: v for k, v in good.items() if k != "Signature"},
    ):
        assert_error(deliver(client, routing_key, message), "INVALID_SIGNATURE")
    # An integration that expects one topic refuses another one's notifications.
    pinned = integrate(
        client, org, "cloudwatch", default_service=services[0].service_key, expected_topic_arn=TOPIC + "-other"
    )
    assert pinned["expected_topic_arn"] == TOPIC + "-other"
    assert_error(deliver(client, pinned["routing_key"], good), "INVALID_SIGNATURE")
    # A well-signed message that is not an alarm is an invalid payload.
    not_alarm = signed(key, notification(alarm(), "m-9") | {"Message": "hello"})
    assert_error(deliver(client, routing_key, not_alarm), "INVALID_PAYLOAD")
    assert deliver(client, routing_key, good).status_code == 201


def test_sns_subscription_confirmation(
    client: Any, org: Org, services: list[Service], key: Any, fake_sns: FakeSns
) -> None:
    hook = integrate(client, org, "cloudwatch", default_service=services[0].service_key)
    confirmation = {
        "Type": "SubscriptionConfirmation",
        "MessageId": "165545c9-2a5c-472c-8df2-7ff2be2b3b1b",
        "Token": "abc",
        "TopicArn": TOPIC,
        "Message": f"You have chosen to subscribe to the topic {TOPIC}.",
        "SubscribeURL": SUBSCRIBE_URL,
        "Timestamp": "2026-11-22T11:50:00.000Z",
    }
    response = deliver(client, hook["routing_key"], signed(key, confirmation))
    assert response.status_code == 200, response.body
    assert response.json["incident"] is None and response.json["message"] == "subscription confirmed"
    assert fake_sns.confirmed == [SUBSCRIBE_URL]
    # A SubscribeURL off the SNS hosts is never fetched.
    evil = signed(key, confirmation | {"SubscribeURL": "https://attacker.example/confirm"})
    assert_error(deliver(client, hook["routing_key"], evil), "INVALID_SIGNATURE")
    assert fake_sns.confirmed == [SUBSCRIBE_URL]
