from __future__ import annotations

import hashlib
import hmac
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chalicelib.errors import DeliveryRejected
from chalicelib.integration import signing
from chalicelib.integration.parsers import SOURCE_TYPES, parse
from chalicelib.integration.parsers.cloudwatch import _alarm, alarm_to_alert

FIXTURES = Path(__file__).parent / "fixtures" / "integration"
NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
SECRET = "signing-secret-for-tests"


def raw(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


@pytest.mark.parametrize(
    ("source_type", "fixture", "headers", "action"),
    [
        ("custom", "custom_signed_trigger.json", {}, "trigger"),
        ("custom", "custom_signed_resolve.json", {}, "resolve"),
        ("custom", "custom_legacy_trigger.json", {}, "trigger"),
        ("legacy", "custom_legacy_trigger.json", {}, "trigger"),
        ("newrelic", "newrelic_workflow_trigger.json", {}, "trigger"),
        ("newrelic", "newrelic_workflow_resolve.json", {}, "resolve"),
        ("sentry", "sentry_issue_created.json", {"Sentry-Hook-Resource": "issue"}, "trigger"),
        ("sentry", "sentry_issue_resolved.json", {"Sentry-Hook-Resource": "issue"}, "resolve"),
        ("sentry", "sentry_installation.json", {"Sentry-Hook-Resource": "installation"}, "ignore"),
        ("alertmanager", "alertmanager_firing.json", {}, "trigger"),
        ("alertmanager", "alertmanager_resolved.json", {}, "resolve"),
        ("pagerduty", "pagerduty_trigger.json", {}, "trigger"),
        ("pagerduty", "pagerduty_resolve.json", {}, "resolve"),
    ],
)
def test_dispatch(source_type, fixture, headers, action):
    alert = parse(source_type, headers, raw(fixture))
    assert alert.action == action
    assert alert.source == ("legacy" if fixture.startswith("custom_legacy") else source_type)


def test_legacy_path_detects_the_shape_like_custom():
    # Issue 13: the legacy path no longer forces the legacy schema (it silently ignored an unknown
    # service_id, a bad status or dedup_key); one body gets one answer on every path.
    body = json.dumps({"title": "x", "dedup_key": "k"}).encode()
    for source_type in ("legacy", "custom"):
        alert = parse(source_type, None, body)  # signed schema (issue 26: service_id may be left out)
        assert (alert.source, alert.dedup_key, alert.service_hint) == ("custom", "k", None)
    too_long = json.dumps({"title": "x", "dedup_key": "k" * 256}).encode()
    for source_type in ("legacy", "custom"):
        with pytest.raises(DeliveryRejected):
            parse(source_type, None, too_long)
    legacy = json.dumps({"title": "x", "service": "web"}).encode()
    assert parse("legacy", None, legacy).source == parse("custom", None, legacy).source == "legacy"


def test_signed_custom_webhook():
    # The gate checks the signature (integration/gate.py verify_signature), then the body is parsed.
    body = raw("custom_signed_trigger.json")
    headers = signing.signed_headers(SECRET, int(NOW.timestamp()), body)
    signing.verify_custom(SECRET, headers, body, now=NOW)
    assert parse("custom", headers, body).action == "trigger"
    with pytest.raises(DeliveryRejected) as caught:
        signing.verify_custom(SECRET, {}, body, now=NOW)
    assert caught.value.code == "INVALID_SIGNATURE"
    stale = signing.signed_headers(SECRET, int(NOW.timestamp()) - 301, body)
    with pytest.raises(DeliveryRejected) as caught:
        signing.verify_custom(SECRET, stale, body, now=NOW)
    assert caught.value.code == "SIGNATURE_EXPIRED"


def test_the_signature_check_needs_no_parseable_payload():
    body = b"not json"
    with pytest.raises(DeliveryRejected) as caught:
        signing.verify_custom(SECRET, {}, body, now=NOW)
    assert caught.value.code == "INVALID_SIGNATURE"


def test_unsigned_custom_webhook_ignores_signature_headers():
    body = raw("custom_signed_trigger.json")
    assert parse("custom", {"X-Service-Signature": "garbage"}, body).action == "trigger"


def test_sentry_with_client_secret():
    body = raw("sentry_issue_created.json")
    good = {"Sentry-Hook-Resource": "issue", "Sentry-Hook-Signature": hmac.new(b"cs", body, hashlib.sha256).hexdigest()}
    signing.verify_sentry("cs", good, body)
    assert parse("sentry", good, body).dedup_key == "4410923817"
    with pytest.raises(DeliveryRejected) as caught:
        signing.verify_sentry("cs", {"Sentry-Hook-Resource": "issue"}, body)
    assert caught.value.code == "INVALID_SIGNATURE"


def test_programming_errors():
    with pytest.raises(ValueError):
        parse("nagios", {}, b"{}")
    with pytest.raises(TypeError):
        parse("custom", {}, b"{}", signing_secret=SECRET)  # type: ignore[call-arg]  # the gate checks signatures
    with pytest.raises(ValueError):
        parse("cloudwatch", {}, b"{}")  # fetch_certificate missing


def test_source_types():
    assert set(SOURCE_TYPES) == {
        "custom",
        "legacy",
        "newrelic",
        "sentry",
        "alertmanager",
        "cloudwatch",
        "pagerduty",
        "opsgenie",
    }


@pytest.mark.parametrize("source_type", [s for s in SOURCE_TYPES if s != "cloudwatch"])
@pytest.mark.parametrize("body", [b"", b"\x00\xff", b"[]", b"null", b'"x"', b"{"])
def test_every_source_rejects_non_object_bodies(source_type, body):
    with pytest.raises(DeliveryRejected) as caught:
        parse(source_type, {"Sentry-Hook-Resource": "issue"}, body)
    assert caught.value.code == "INVALID_PAYLOAD"


def test_cloudwatch_rejects_non_object_bodies():
    with pytest.raises(DeliveryRejected) as caught:
        parse("cloudwatch", {}, b"[]", fetch_certificate=lambda url: b"")
    assert caught.value.code == "INVALID_PAYLOAD"


# --- robustness: arbitrary JSON never escapes as anything but DeliveryRejected ---------------------------


_scalars = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20)
)
_json = st.recursive(
    _scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=25,
)
_keys = st.sampled_from(
    [
        "id",
        "title",
        "state",
        "priority",
        "trigger",
        "issueUrl",
        "tags",
        "accumulations",
        "incident_id",
        "current_state",
        "severity",
        "action",
        "data",
        "version",
        "status",
        "alerts",
        "groupKey",
        "commonLabels",
        "groupLabels",
        "commonAnnotations",
        "event_action",
        "dedup_key",
        "payload",
        "links",
        "client_url",
        "project",
        "event",
        "level",
        "url",
        "message",
        "targets",
        "createdAt",
        "isCorrelated",
        "truncatedAlerts",
    ]
) | st.text(max_size=8)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    source_type=st.sampled_from(["newrelic", "sentry", "alertmanager", "pagerduty", "legacy"]),
    resource=st.sampled_from(["issue", "event_alert", "metric_alert", "comment", "installation", ""]),
    payload=st.dictionaries(_keys, _json, max_size=8),
)
def test_parsers_raise_only_webhook_rejected(source_type, resource, payload):
    try:
        alert = parse(source_type, {"Sentry-Hook-Resource": resource}, json.dumps(payload).encode())
    except DeliveryRejected as rejected:
        assert rejected.code == "INVALID_PAYLOAD"
        return
    assert 1 <= len(alert.title) <= 200
    json.dumps(alert.as_dict())


@settings(max_examples=200, deadline=None)
@given(
    payload=st.dictionaries(
        st.sampled_from(
            [
                "AlarmName",
                "AlarmDescription",
                "NewStateValue",
                "AlarmArn",
                "Trigger",
                "TriggeringChildren",
                "StateChangeTime",
                "AWSAccountId",
                "OldStateValue",
            ]
        )
        | st.text(max_size=8),
        _json | st.sampled_from(["ALARM", "OK", "INSUFFICIENT_DATA", "SEV2 service_id=SER-00001"]),
        max_size=8,
    )
)
def test_alarm_parser_raises_only_delivery_rejected(payload):
    try:
        alert = alarm_to_alert(_alarm(json.dumps(payload)))
    except DeliveryRejected as rejected:
        assert rejected.code == "INVALID_PAYLOAD"
        return
    assert alert.action in ("trigger", "resolve", "note")
