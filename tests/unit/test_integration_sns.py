"""SNS signature verification and CloudWatch alarms, with a throwaway key and self-signed certificate."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.x509.oid import NameOID

from chalicelib.errors import DeliveryRejected
from chalicelib.integration.parsers import cloudwatch, sns

FIXTURES = Path(__file__).parent / "fixtures" / "integration"
NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
CERT_URL = "https://sns.eu-west-1.amazonaws.com/SimpleNotificationService-0123456789abcdef.pem"
TOPIC = "arn:aws:sns:eu-west-1:123456789012:tocsin-alarms"
SUBSCRIBE_URL = (
    "https://sns.eu-west-1.amazonaws.com/?Action=ConfirmSubscription&TopicArn="
    + TOPIC
    + "&Token=2336412f37fb687f5d51e6e2"
)


def self_signed(key, *, days: int = 365, start: datetime | None = None) -> bytes:
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "sns.amazonaws.com")])
    start = start or NOW - timedelta(days=1)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(start + timedelta(days=days))
        .sign(key, hashes.SHA256())
    )
    return cert.public_bytes(serialization.Encoding.PEM)


@pytest.fixture(scope="module")
def key():
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.fixture(scope="module")
def pem(key):
    return self_signed(key)


class Fetcher:
    def __init__(self, certificates: dict[str, bytes]):
        self.certificates = certificates
        self.calls: list[str] = []

    def __call__(self, url: str) -> bytes:
        self.calls.append(url)
        return self.certificates[url]


@pytest.fixture
def fetch(pem):
    sns.clear_certificate_cache()
    yield Fetcher({CERT_URL: pem})
    sns.clear_certificate_cache()


def canonical(message: dict[str, Any], keys: list[str]) -> bytes:
    """Written from the documentation, independently of the code under test."""
    return "".join(f"{k}\n{message[k]}\n" for k in keys if k in message).encode()


def signed(
    message: dict[str, Any], key, *, version: str = "2", keys: list[str] | None = None, cert_url: str = CERT_URL
) -> dict[str, Any]:
    if keys is None:
        keys = (
            ["Message", "MessageId", "Subject", "Timestamp", "TopicArn", "Type"]
            if message["Type"] == "Notification"
            else ["Message", "MessageId", "SubscribeURL", "Timestamp", "Token", "TopicArn", "Type"]
        )
    algorithm = hashes.SHA1() if version == "1" else hashes.SHA256()
    signature = key.sign(canonical(message, keys), padding.PKCS1v15(), algorithm)
    return message | {
        "SignatureVersion": version,
        "Signature": base64.b64encode(signature).decode(),
        "SigningCertURL": cert_url,
    }


def notification(alarm_fixture: str = "cloudwatch_alarm.json", **extra) -> dict[str, Any]:
    return {
        "Type": "Notification",
        "MessageId": "4d6f7a1e-93c2-5b8e-a0d4-6c1f2e3d4b5a",
        "TopicArn": TOPIC,
        "Message": (FIXTURES / alarm_fixture).read_text(),
        "Timestamp": "2026-11-22T11:58:08.123Z",
        "UnsubscribeURL": "https://sns.eu-west-1.amazonaws.com/?Action=Unsubscribe&SubscriptionArn=" + TOPIC + ":1a2b",
        **extra,
    }


def confirmation(kind: str = "SubscriptionConfirmation") -> dict[str, Any]:
    return {
        "Type": kind,
        "MessageId": "165545c9-2a5c-472c-8df2-7ff2be2b3b1b",
        "Token": "2336412f37fb687f5d51e6e2",
        "TopicArn": TOPIC,
        "Message": (
            f"You have chosen to subscribe to the topic {TOPIC}.\nTo confirm the subscription, visit the SubscribeURL."
        ),
        "SubscribeURL": SUBSCRIBE_URL,
        "Timestamp": "2026-11-22T11:50:00.000Z",
    }


def body(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode()


def verify(message: dict[str, Any], fetch, **kwargs) -> sns.SnsMessage:
    headers = {"x-amz-sns-message-type": message.get("Type", ""), "Content-Type": "text/plain; charset=UTF-8"}
    return sns.verify_sns_message(headers, body(message), fetch_certificate=fetch, **kwargs)


def rejected(message: dict[str, Any], fetch, **kwargs) -> DeliveryRejected:
    with pytest.raises(DeliveryRejected) as caught:
        verify(message, fetch, **kwargs)
    return caught.value


# --- signatures ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", ["1", "2"])
def test_notification_verifies(version, key, fetch):
    result = verify(signed(notification(), key, version=version), fetch)
    assert result.type == "Notification"
    assert result.message_id == "4d6f7a1e-93c2-5b8e-a0d4-6c1f2e3d4b5a"
    assert result.topic_arn == TOPIC
    assert result.signature_version == version
    assert json.loads(result.message)["AlarmName"] == "orders-api-5xx-rate"


def test_string_to_sign_is_the_documented_one():
    message = notification(Subject="ALARM: x")
    expected = (
        f"Message\n{message['Message']}\nMessageId\n{message['MessageId']}\nSubject\nALARM: x\n"
        f"Timestamp\n{message['Timestamp']}\nTopicArn\n{TOPIC}\nType\nNotification\n"
    ).encode()
    assert sns.string_to_sign(message) == expected
    conf = confirmation()
    assert (
        sns.string_to_sign(conf)
        == (
            f"Message\n{conf['Message']}\nMessageId\n{conf['MessageId']}\nSubscribeURL\n{SUBSCRIBE_URL}\n"
            f"Timestamp\n{conf['Timestamp']}\nToken\n{conf['Token']}\nTopicArn\n{TOPIC}\nType\nSubscriptionConfirmation\n"
        ).encode()
    )


def test_subscription_confirmation_verifies(key, fetch):
    result = verify(signed(confirmation(), key), fetch)
    assert result.type == "SubscriptionConfirmation"
    assert result.subscribe_url == SUBSCRIBE_URL
    assert result.token == "2336412f37fb687f5d51e6e2"


def test_tampered_message_fails(key, fetch):
    message = signed(notification(), key)
    message["Message"] = message["Message"].replace('"ALARM"', '"OK"')
    error = rejected(message, fetch)
    assert error.code == "INVALID_SIGNATURE"
    assert error.status == 401


@pytest.mark.parametrize("field", ["MessageId", "Timestamp", "TopicArn"])
def test_any_signed_field_tampered_fails(field, key, fetch):
    message = signed(notification(), key)
    message[field] = message[field] + "x"
    assert rejected(message, fetch).code == "INVALID_SIGNATURE"


def test_signature_from_another_key_fails(fetch):
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    assert rejected(signed(notification(), other), fetch).code == "INVALID_SIGNATURE"


def test_version_mismatch_fails(key, fetch):
    message = signed(notification(), key, version="1")
    message["SignatureVersion"] = "2"
    assert rejected(message, fetch).code == "INVALID_SIGNATURE"


@pytest.mark.parametrize("version", ["3", "0", "", None, 2])
def test_unknown_signature_version_fails(version, key, fetch):
    message = signed(notification(), key)
    if version is None:
        del message["SignatureVersion"]
    else:
        message["SignatureVersion"] = version
    error = rejected(message, fetch)
    assert error.code == "INVALID_SIGNATURE"
    assert "SignatureVersion" in error.message
    assert fetch.calls == []


def test_subject_is_part_of_the_string_to_sign(key, fetch):
    message = notification(Subject='ALARM: "orders-api-5xx-rate" in EU (Ireland)')
    assert verify(signed(message, key), fetch).subject == message["Subject"]


def test_subject_omitted_by_the_signer_fails(key, fetch):
    message = notification(Subject="ALARM: orders")
    keys = ["Message", "MessageId", "Timestamp", "TopicArn", "Type"]  # what moto signs
    assert rejected(signed(message, key, keys=keys), fetch).code == "INVALID_SIGNATURE"


def test_null_subject_is_absent(key, fetch):
    message = signed(notification(), key) | {"Subject": None}
    assert verify(message, fetch).subject is None


@pytest.mark.parametrize(
    "url",
    [
        "https://sns.eu-west-1.amazonaws.com.evil.example/cert.pem",
        "https://evil.example/SimpleNotificationService-1.pem",
        "https://sns.eu-west-1.amazonaws.com@evil.example/cert.pem",
        "https://user:pw@sns.eu-west-1.amazonaws.com/cert.pem",
        "https://s3.eu-west-1.amazonaws.com/cert.pem",
        "https://sns.amazonaws.com/cert.pem",
        "https://sns.eu-west-1.amazonaws.com/cert.txt",
        "https://sns.eu-west-1.amazonaws.com/cert.pem?x=1.txt#",
        "ftp://sns.eu-west-1.amazonaws.com/cert.pem",
        "sns.eu-west-1.amazonaws.com/cert.pem",
        "https://[sns.eu-west-1.amazonaws.com/cert.pem",
    ],
)
def test_bad_certificate_url_fails_before_fetching(url, key, pem):
    sns.clear_certificate_cache()
    fetch = Fetcher({url: pem})
    error = rejected(signed(notification(), key, cert_url=url), fetch)
    assert error.code == "INVALID_SIGNATURE"
    assert fetch.calls == []


def test_china_region_host_is_accepted(key, pem):
    sns.clear_certificate_cache()
    url = "https://sns.cn-north-1.amazonaws.com.cn/SimpleNotificationService-1.pem"
    assert verify(signed(notification(), key, cert_url=url), Fetcher({url: pem})).type == "Notification"


def test_http_certificate_url_only_when_allowed(key, pem):
    sns.clear_certificate_cache()
    url = "http://127.0.0.1:4566/SimpleNotificationService-local.pem"
    fetch = Fetcher({url: pem})
    message = signed(notification(), key, cert_url=url)
    assert rejected(message, fetch, allowed_cert_host_pattern=r"^127\.0\.0\.1$").code == "INVALID_SIGNATURE"
    assert fetch.calls == []
    result = verify(message, fetch, allowed_cert_host_pattern=r"^127\.0\.0\.1$", allow_http_cert_url=True)
    assert result.type == "Notification"
    # allowing http does not widen the host pattern
    assert rejected(message, fetch, allow_http_cert_url=True).code == "INVALID_SIGNATURE"


def test_http_sns_host_needs_the_flag(key, pem):
    sns.clear_certificate_cache()
    url = CERT_URL.replace("https://", "http://")
    message = signed(notification(), key, cert_url=url)
    assert rejected(message, Fetcher({url: pem})).code == "INVALID_SIGNATURE"


def test_subscribe_url_must_be_on_an_sns_host(key, fetch):
    message = confirmation() | {"SubscribeURL": "https://evil.example/?Action=ConfirmSubscription"}
    error = rejected(signed(message, key), fetch)
    assert error.code == "INVALID_SIGNATURE"
    assert "SubscribeURL" in error.message


def test_http_subscribe_url_needs_the_flag(key, fetch):
    message = signed(confirmation() | {"SubscribeURL": SUBSCRIBE_URL.replace("https", "http")}, key)
    assert rejected(message, fetch).code == "INVALID_SIGNATURE"
    assert verify(message, fetch, allow_http_cert_url=True).subscribe_url is not None


def test_expected_topic(key, fetch):
    message = signed(notification(), key)
    assert verify(message, fetch, expected_topic_arn=TOPIC).topic_arn == TOPIC
    error = rejected(message, fetch, expected_topic_arn=TOPIC + "-other")
    assert error.code == "INVALID_SIGNATURE"
    assert "topic" in error.message


def test_certificate_is_cached_by_url(key, fetch):
    message = signed(notification(), key)
    verify(message, fetch)
    verify(message, fetch)
    assert fetch.calls == [CERT_URL]


def test_certificate_cache_is_bounded(key, pem):
    sns.clear_certificate_cache()
    urls = [
        f"https://sns.eu-west-1.amazonaws.com/SimpleNotificationService-{i}.pem" for i in range(sns.CERT_CACHE_MAX + 8)
    ]
    fetch = Fetcher(dict.fromkeys(urls, pem))
    for url in urls:
        verify(signed(notification(), key, cert_url=url), fetch)
    assert len(sns._cert_cache) == sns.CERT_CACHE_MAX
    verify(signed(notification(), key, cert_url=urls[0]), fetch)  # evicted: fetched again
    assert fetch.calls.count(urls[0]) == 2


def test_fetch_failure_is_invalid_and_retryable(key):
    sns.clear_certificate_cache()

    def broken(url: str) -> bytes:
        raise TimeoutError("no route")

    with pytest.raises(DeliveryRejected) as caught:
        verify(signed(notification(), key), broken)
    assert caught.value.code == "INVALID_SIGNATURE"
    assert caught.value.retryable


@pytest.mark.parametrize(
    "content", [b"", b"not a certificate", b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"]
)
def test_garbage_certificate_fails(content, key):
    sns.clear_certificate_cache()
    assert rejected(signed(notification(), key), Fetcher({CERT_URL: content})).code == "INVALID_SIGNATURE"


def test_der_certificate_is_accepted(key, pem):
    sns.clear_certificate_cache()
    der = x509.load_pem_x509_certificate(pem).public_bytes(serialization.Encoding.DER)
    assert verify(signed(notification(), key), Fetcher({CERT_URL: der})).type == "Notification"


def test_non_rsa_certificate_fails(key):
    sns.clear_certificate_cache()
    ec_key = ec.generate_private_key(ec.SECP256R1())
    error = rejected(signed(notification(), key), Fetcher({CERT_URL: self_signed(ec_key)}))
    assert error.code == "INVALID_SIGNATURE"
    assert "RSA" in error.message


def test_certificate_validity_is_checked_when_now_is_given(key, pem):
    sns.clear_certificate_cache()
    message = signed(notification(), key)
    assert verify(message, Fetcher({CERT_URL: pem}), now=NOW).type == "Notification"
    assert rejected(message, Fetcher({CERT_URL: pem}), now=NOW + timedelta(days=400)).code == "INVALID_SIGNATURE"


@pytest.mark.parametrize("signature", ["", "not base64!!", None])
def test_bad_signature_encoding_fails(signature, key, fetch):
    message = signed(notification(), key)
    if signature is None:
        del message["Signature"]
    else:
        message["Signature"] = signature
    assert rejected(message, fetch).code == "INVALID_SIGNATURE"


@pytest.mark.parametrize(
    "message",
    [
        {"Type": "Notification"},
        {"Type": "Bogus", "Message": "x"},
        {"Message": "x"},
        notification() | {"Message": {"AlarmName": "x"}},
        notification() | {"Subject": 5},
    ],
)
def test_malformed_envelopes_are_invalid_payloads(message, key, fetch):
    assert rejected(message, fetch).code == "INVALID_PAYLOAD"


def test_message_type_header_must_match(key, fetch):
    message = signed(notification(), key)
    with pytest.raises(DeliveryRejected) as caught:
        sns.verify_sns_message(
            {"x-amz-sns-message-type": "SubscriptionConfirmation"}, body(message), fetch_certificate=fetch
        )
    assert caught.value.code == "INVALID_PAYLOAD"
    # no header at all (moto sends none) is fine
    assert sns.verify_sns_message({}, body(message), fetch_certificate=fetch).type == "Notification"


def test_non_json_body(fetch):
    with pytest.raises(DeliveryRejected) as caught:
        sns.verify_sns_message({}, b"Type=Notification", fetch_certificate=fetch)
    assert caught.value.code == "INVALID_PAYLOAD"


# --- CloudWatch alarms ----------------------------------------------------------------------------------


def alarm(message: dict[str, Any], fetch, **kwargs):
    return cloudwatch.parse_cloudwatch(
        {"x-amz-sns-message-type": message["Type"]}, body(message), fetch_certificate=fetch, **kwargs
    )


def test_alarm_triggers(key, fetch):
    alert = alarm(signed(notification(), key), fetch)
    assert alert.source == "cloudwatch"
    assert alert.action == "trigger"
    assert alert.title == "CloudWatch alarm: orders-api-5xx-rate"
    assert alert.dedup_key == "arn:aws:cloudwatch:eu-west-1:123456789012:alarm:orders-api-5xx-rate"
    assert alert.severity == "SEV1"  # token in AlarmDescription
    assert alert.service_hint == "SER-00011"
    assert alert.delivery_id == "4d6f7a1e-93c2-5b8e-a0d4-6c1f2e3d4b5a"
    assert alert.metadata["region"] == "eu-west-1"
    assert alert.metadata["region_name"] == "EU (Ireland)"
    assert alert.metadata["metric_name"] == "5XXError"
    assert alert.metadata["dimensions"] == "ApiName=orders-api"
    assert alert.description is not None
    assert alert.description.startswith("5xx rate above 2%") and "Threshold Crossed" in alert.description
    assert alert.occurred_at == datetime(2026, 11, 22, 11, 58, 7, 512000, tzinfo=UTC)
    assert alert.summary == "CloudWatch alarm orders-api-5xx-rate: OK -> ALARM"
    assert alert.source_url is not None and alert.source_url.startswith("https://eu-west-1.console.aws.amazon.com/")


def test_alarm_ok_resolves(key, fetch):
    alert = alarm(signed(notification("cloudwatch_ok.json"), key), fetch)
    assert alert.action == "resolve"
    assert alert.severity is None  # no token: the service default
    assert alert.service_hint is None
    assert alert.dedup_key == "arn:aws:cloudwatch:eu-west-1:123456789012:alarm:orders-api-5xx-rate"


def test_insufficient_data_is_a_note(key, fetch):
    data = json.loads((FIXTURES / "cloudwatch_alarm.json").read_text()) | {"NewStateValue": "INSUFFICIENT_DATA"}
    alert = alarm(signed(notification() | {"Message": json.dumps(data)}, key), fetch)
    assert alert.action == "note"


def test_composite_alarm(key, fetch):
    alert = alarm(signed(notification("cloudwatch_composite.json"), key), fetch)
    assert alert.action == "trigger"
    assert alert.severity == "SEV0"  # token in the alarm name
    assert alert.metadata["region"] == "us-east-1"
    assert alert.metadata["alarm_rule"].startswith('ALARM("checkout-latency")')
    children = alert.metadata["triggering_children"]
    assert "checkout-latency (ALARM)" in children and children.endswith("alarm:checkout-errors")


def test_very_long_alarm_name_is_still_in_the_title(key, fetch):
    name = "a" * 190
    data = json.loads((FIXTURES / "cloudwatch_ok.json").read_text()) | {"AlarmName": name}
    alert = alarm(signed(notification() | {"Message": json.dumps(data)}, key), fetch)
    assert name[:150] in alert.title
    assert len(alert.title) <= 200


def test_subscription_confirmation_returns_the_url(key, fetch):
    alert = alarm(signed(confirmation(), key), fetch)
    assert alert.action == "confirm_subscription"
    assert alert.subscribe_url == SUBSCRIBE_URL
    assert alert.delivery_id == "165545c9-2a5c-472c-8df2-7ff2be2b3b1b"


def test_unsubscribe_confirmation_is_ignored(key, fetch):
    assert alarm(signed(confirmation("UnsubscribeConfirmation"), key), fetch).action == "ignore"


@pytest.mark.parametrize(
    "payload",
    [
        "plain text published to the topic",
        "[1, 2]",
        json.dumps({"AlarmName": "x"}),
        json.dumps({"NewStateValue": "ALARM"}),
    ],
)
def test_non_alarm_messages_are_invalid_payloads(payload, key, fetch):
    with pytest.raises(DeliveryRejected) as caught:
        alarm(signed(notification() | {"Message": payload}, key), fetch)
    assert caught.value.code == "INVALID_PAYLOAD"


def test_tampered_alarm_is_rejected_before_parsing(key, fetch):
    message = signed(notification(), key)
    message["Message"] = "not json"
    with pytest.raises(DeliveryRejected) as caught:
        alarm(message, fetch)
    assert caught.value.code == "INVALID_SIGNATURE"


def test_alarm_fields_beyond_the_mapped_ones_are_details(key, fetch):
    data = json.loads((FIXTURES / "cloudwatch_alarm.json").read_text()) | {
        "AlarmConfigurationUpdatedTimestamp": "2026-11-01T10:00:00.000+0000",
        "AlarmActions": ["arn:aws:sns:eu-west-1:123456789012:tocsin-alarms"],
    }
    alert = alarm(signed(notification() | {"Message": json.dumps(data)}, key), fetch)
    assert alert.details["Trigger"]["MetricName"] == "5XXError"  # the whole Trigger, as sent
    assert alert.details["AlarmActions"] == ["arn:aws:sns:eu-west-1:123456789012:tocsin-alarms"]
    assert "AlarmName" not in alert.details and "NewStateReason" not in alert.details
