"""Property fuzzing of every inbound webhook parser and both signature schemes (and SNS's).

Arbitrary bytes and headers, and valid payloads with mutated fields, give a normalized alert or a
4xx-class AppError; nothing else escapes. Bounded example counts (tests/fuzzing.py).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from cryptography.x509.oid import NameOID
from hypothesis import example, given
from hypothesis import strategies as st

from chalicelib.errors import AppError, InvalidSignature
from chalicelib.integration import signing
from chalicelib.integration.normalized import NormalizedAlert
from chalicelib.integration.parsers import parse, sns
from tests.fuzzing import (
    any_body,
    fuzz_settings,
    headers_strategy,
    json_values,
    mutated_body,
    nasty_text,
    only_4xx,
)

FIXTURES = Path(__file__).parent / "fixtures" / "integration"
NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
NOW_SECONDS = int(NOW.timestamp())
SECRET = "fuzz-signing-secret"
CERT_URL = "https://sns.eu-west-1.amazonaws.com/SimpleNotificationService-0123456789abcdef.pem"
TOPIC = "arn:aws:sns:eu-west-1:123456789012:tocsin-alarms"


def fixture(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((FIXTURES / name).read_text())
    return loaded


VALID: dict[str, list[dict[str, Any]]] = {
    "custom": [fixture("custom_signed_trigger.json"), fixture("custom_signed_resolve.json")],
    "legacy": [fixture("custom_legacy_trigger.json")],
    "newrelic": [fixture(f"newrelic_{n}.json") for n in ("workflow_trigger", "channel_trigger", "channel_resolve")],
    "sentry": [fixture(f"sentry_{n}.json") for n in ("issue_created", "event_alert", "metric_alert_critical")],
    "alertmanager": [fixture("alertmanager_firing.json"), fixture("grafana_firing.json")],
    "pagerduty": [fixture(f"pagerduty_{n}.json") for n in ("trigger", "resolve", "acknowledge")],
    "opsgenie": [fixture("opsgenie_create.json"), fixture("opsgenie_alertmanager_create.json")],
}
SENTRY_RESOURCES = st.sampled_from(["issue", "event_alert", "metric_alert", "installation", "comment", "", "x"])


def assert_normalized(result: NormalizedAlert | AppError) -> None:
    if isinstance(result, AppError):
        assert not result.retryable, f"{result!r} would be answered 5xx"
        return
    assert 1 <= len(result.title) <= 200
    assert result.action in ("trigger", "resolve", "acknowledge", "note", "ignore", "confirm_subscription")
    json.dumps(result.as_dict())


# --- every parser, unsigned ------------------------------------------------------------------------


@pytest.mark.parametrize("source_type", sorted(VALID))
def test_parser_gives_an_alert_or_a_4xx(source_type: str) -> None:
    @fuzz_settings()
    @given(body=any_body(VALID[source_type]), headers=headers_strategy, resource=SENTRY_RESOURCES)
    def prop(body: bytes, headers: dict[str, str], resource: str) -> None:
        if source_type == "sentry":
            headers = {**headers, "Sentry-Hook-Resource": resource}
        assert_normalized(only_4xx(lambda: parse(source_type, headers, body)))

    prop()


# --- the custom webhook's signature (X-Service-Signature over "<timestamp>." + body) -----------------


timestamps = st.one_of(
    st.integers(NOW_SECONDS - 400, NOW_SECONDS + 100).map(str),
    st.sampled_from(["", "0", "-1", "1e9", " 1", "99999999999999", "٣٤٥", "1.5", str(2**63)]),
    nasty_text,
)


@fuzz_settings()
@given(
    body=any_body(VALID["custom"]),
    timestamp=timestamps,
    secret=st.sampled_from([SECRET, "other-secret"]),
    tamper=st.sampled_from(["none", "upper", "prefix", "truncate", "body"]),
    extra=headers_strategy,
    source_type=st.sampled_from(["custom", "legacy"]),
)
@example(
    body=b'{"title": "x"}', timestamp="\u0663\u0664\u0665", secret=SECRET, tamper="none", extra={}, source_type="custom"
)
def test_signed_custom_webhook_gives_an_alert_or_a_4xx(
    body: bytes, timestamp: str, secret: str, tamper: str, extra: dict[str, str], source_type: str
) -> None:
    # The sender may put anything in the timestamp header: sign its bytes as a sender would.
    message = timestamp.encode("utf-8", "surrogatepass") + b"." + body
    signature = "sha256=" + hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()
    if tamper == "upper":
        signature = signature.upper()
    elif tamper == "prefix":
        signature = signature.removeprefix("sha256=")
    elif tamper == "truncate":
        signature = signature[:-1]
    headers = {**extra, signing.SIGNATURE_HEADER: signature, signing.TIMESTAMP_HEADER: timestamp}
    sent = body + b" " if tamper == "body" else body
    # The gate's order: the signature first, then the parse.
    result = only_4xx(
        lambda: (signing.verify_custom(SECRET, headers, sent, now=NOW), parse(source_type, headers, sent))[1]
    )
    assert_normalized(result)
    if not isinstance(result, AppError):
        # Accepted only when authentic and fresh.
        assert secret == SECRET and tamper in ("none", "upper")
        assert NOW_SECONDS - signing.MAX_AGE_SECONDS <= int(timestamp) <= NOW_SECONDS + signing.MAX_FUTURE_SECONDS


@fuzz_settings()
@given(headers=headers_strategy, body=st.binary(max_size=64), now=st.floats(-1e20, 1e20) | st.integers(-(2**70), 2**70))
def test_custom_signature_check_never_crashes(headers: dict[str, str], body: bytes, now: float) -> None:
    only_4xx(lambda: signing.verify_custom(SECRET, headers, body, now=now))


# --- Sentry's signature (Sentry-Hook-Signature, hex HMAC of the raw body) ---------------------------


@fuzz_settings()
@given(
    body=any_body(VALID["sentry"]),
    resource=SENTRY_RESOURCES,
    signature=st.sampled_from(["right", "upper", "wrong-secret", "none"]) | nasty_text,
    extra=headers_strategy,
)
def test_signed_sentry_webhook_gives_an_alert_or_a_4xx(
    body: bytes, resource: str, signature: str, extra: dict[str, str]
) -> None:
    computed = {
        "right": signing.sentry_signature(SECRET, body),
        "upper": signing.sentry_signature(SECRET, body).upper(),
        "wrong-secret": signing.sentry_signature("not-it", body),
    }
    headers = {**extra, "Sentry-Hook-Resource": resource}
    if signature != "none":
        headers[signing.SENTRY_SIGNATURE_HEADER] = computed.get(signature, signature)

    def gate_then_parse() -> NormalizedAlert:
        signing.verify_sentry(SECRET, headers, body)
        return parse("sentry", headers, body)

    result = only_4xx(gate_then_parse)
    assert_normalized(result)
    if not isinstance(result, AppError):
        assert signature in ("right", "upper")


# --- SNS (CloudWatch alarms): certificate signatures -------------------------------------------------


@pytest.fixture(scope="module")
def sns_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.fixture(scope="module")
def sns_pem(sns_key: rsa.RSAPrivateKey) -> bytes:
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "sns.amazonaws.com")])
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(sns_key.public_key())
        .serial_number(1)
        .not_valid_before(NOW - timedelta(days=1))
        .not_valid_after(NOW + timedelta(days=365))
        .sign(sns_key, hashes.SHA256())
    )
    return certificate.public_bytes(serialization.Encoding.PEM)


def sns_envelope(key: rsa.RSAPrivateKey, message: dict[str, Any]) -> dict[str, Any]:
    """`message` signed as SNS signs (SignatureVersion 2) with the test key."""
    signed = {"SignatureVersion": "2", "SigningCertURL": CERT_URL, **message}
    try:
        string = sns.string_to_sign(signed)
    except UnicodeEncodeError:  # a lone surrogate: no sender can sign it, send it unsigned
        return {**signed, "Signature": "AAAA"}
    signed["Signature"] = base64.b64encode(key.sign(string, padding.PKCS1v15(), hashes.SHA256())).decode()
    return signed


ALARM = fixture("cloudwatch_alarm.json")
SNS_BASES = [
    {
        "Type": "Notification",
        "MessageId": "22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324",
        "TopicArn": TOPIC,
        "Subject": "ALARM",
        "Message": json.dumps(ALARM),
        "Timestamp": "2026-11-22T12:00:00.000Z",
    },
    {
        "Type": "SubscriptionConfirmation",
        "MessageId": "165545c9-2a5c-472c-8df2-7ff2be2b3b1b",
        "TopicArn": TOPIC,
        "Message": "You have chosen to subscribe",
        "SubscribeURL": "https://sns.eu-west-1.amazonaws.com/?Action=ConfirmSubscription&Token=abc",
        "Token": "abc",
        "Timestamp": "2026-11-22T12:00:00.000Z",
    },
]


@st.composite
def sns_deliveries(draw: st.DrawFn, key: rsa.RSAPrivateKey) -> bytes:
    """A signed SNS message whose fields (the alarm inside `Message` too) were mutated before or after signing."""
    base = dict(draw(st.sampled_from(SNS_BASES)))
    if base["Type"] == "Notification" and draw(st.booleans()):
        raw = draw(mutated_body(ALARM))
        try:
            base["Message"] = json.dumps(json.loads(raw))
        except ValueError:  # a literal Python refuses (an integer past its digit limit): sent as it is
            base["Message"] = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
        if draw(st.booleans()):
            base["Message"] = draw(st.text(max_size=40))
    sign_after = draw(st.booleans())
    if sign_after:
        # Mutated, then signed: the signature verifies, the content is odd.
        field = draw(st.sampled_from(sorted(base)))
        base[field] = draw(json_values)
        envelope = sns_envelope(key, base) if all(isinstance(v, str) for v in base.values()) else base
    else:
        envelope = sns_envelope(key, base)
        field = draw(st.sampled_from(sorted(envelope)))
        envelope[field] = draw(json_values | st.sampled_from(["1", "2", "3", CERT_URL, "AAAA"]))
    return json.dumps(envelope).encode()


def test_cloudwatch_gives_an_alert_or_a_4xx(sns_key: rsa.RSAPrivateKey, sns_pem: bytes) -> None:
    def fetch(url: str) -> bytes:
        return sns_pem

    @fuzz_settings()
    @given(body=sns_deliveries(sns_key) | any_body(SNS_BASES), headers=headers_strategy)
    def prop(body: bytes, headers: dict[str, str]) -> None:
        result = only_4xx(lambda: parse("cloudwatch", headers, body, fetch_certificate=fetch, expected_topic_arn=TOPIC))
        assert_normalized(result)

    sns.clear_certificate_cache()
    try:
        prop()
    finally:
        sns.clear_certificate_cache()


@fuzz_settings()
@given(certificate=st.binary(max_size=300) | st.sampled_from([b"", b"-----BEGIN CERTIFICATE-----\nAAAA\n"]))
def test_a_garbage_certificate_is_a_4xx(certificate: bytes) -> None:
    sns.clear_certificate_cache()
    body = json.dumps({**SNS_BASES[0], "SignatureVersion": "2", "SigningCertURL": CERT_URL, "Signature": "AAAA"})
    result = only_4xx(lambda: parse("cloudwatch", None, body.encode(), fetch_certificate=lambda url: certificate))
    assert isinstance(result, InvalidSignature)
    sns.clear_certificate_cache()


hosts = st.sampled_from(["sns.eu-west-1.amazonaws.com", "sns.us-east-1.amazonaws.com.cn", "evil.com", ""])
ports = st.none() | st.sampled_from(["", ":443", ":8443", ":0", ":99999", ":x"])


@fuzz_settings()
@given(host=hosts, port=ports, path=st.sampled_from(["/cert.pem", "/a.pem?x=1", "/", "/cert.pem#f"]))
def test_sns_certificate_urls_name_the_sns_host_without_a_port(host: str, port: str | None, path: str) -> None:
    url = f"https://{host}{port or ''}{path}"
    accepted = only_4xx(lambda: sns.check_sns_url(url, what="SigningCertURL", require_pem=True))
    if not isinstance(accepted, AppError):
        assert port in (None, "", ":443") and host.startswith("sns.") and path == "/cert.pem"


def test_an_sns_certificate_lost_on_the_way_is_a_503_never_a_500() -> None:
    """Finding 3: a fetch that fails on the way (refused, timed out) may hide a genuine AWS message,
    so the parser marks its refusal retryable, which the webhook route answers 503 with Retry-After
    (tests/api/test_webhooks_sns_forgery_api.py); never an unhandled exception."""

    def unreachable(url: str) -> bytes:
        raise OSError("connection refused")

    sns.clear_certificate_cache()
    body = json.dumps({**SNS_BASES[0], "SignatureVersion": "2", "SigningCertURL": CERT_URL, "Signature": "AAAA"})
    with pytest.raises(InvalidSignature) as raised:
        parse("cloudwatch", None, body.encode(), fetch_certificate=unreachable)
    assert raised.value.retryable
