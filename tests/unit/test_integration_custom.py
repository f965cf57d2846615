from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chalicelib.errors import DeliveryRejected
from chalicelib.integration.parsers.custom import detect_schema, parse_custom

FIXTURES = Path(__file__).parent / "fixtures" / "integration"


def load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


def body(payload: object) -> bytes:
    return json.dumps(payload).encode()


def reject(payload: object, **kwargs) -> DeliveryRejected:
    raw = payload if isinstance(payload, bytes) else body(payload)
    with pytest.raises(DeliveryRejected) as caught:
        parse_custom(raw, **kwargs)
    assert caught.value.code == "INVALID_PAYLOAD"
    assert caught.value.status == 400
    return caught.value


VALID = {"title": "Queue backlog", "service_id": "SER-00001"}


# --- signed schema --------------------------------------------------------------------------------


def test_signed_trigger_fixture():
    alert = parse_custom((FIXTURES / "custom_signed_trigger.json").read_bytes())
    assert alert.source == "custom"
    assert alert.action == "trigger"
    assert alert.status_hint == "new"
    assert alert.title == "Checkout latency above 2s on eu-west"
    assert alert.description is not None and "p99" in alert.description
    assert alert.severity == "SEV1"
    assert alert.dedup_key == "checkout-latency-euw"
    assert alert.service_hint == "SER-00042"
    assert alert.source_url == "https://grafana.example.org/d/checkout?orgId=1"
    assert alert.metadata == {"region": "eu-west-1", "runbook": "https://wiki.example.org/runbooks/checkout"}
    assert alert.summary


def test_signed_resolve_fixture():
    alert = parse_custom((FIXTURES / "custom_signed_resolve.json").read_bytes())
    assert alert.action == "resolve"
    assert alert.status_hint == "resolved"
    assert alert.dedup_key == "checkout-latency-euw"
    assert alert.severity is None  # the service default applies


def test_investigating_is_a_trigger_with_a_status_hint():
    alert = parse_custom(body({**VALID, "status": "investigating"}))
    assert (alert.action, alert.status_hint) == ("trigger", "investigating")


def test_minimal_signed_payload_defaults():
    alert = parse_custom(body(VALID))
    assert alert.action == "trigger"
    assert alert.status_hint == "new"
    assert alert.severity is None
    assert alert.dedup_key is None
    assert alert.metadata == {}


@pytest.mark.parametrize("severity", ["SEV0", "SEV1", "SEV2", "SEV3", "SEV4", "sev2", " SEV3 "])
def test_signed_severities(severity):
    assert parse_custom(body({**VALID, "severity": severity})).severity == severity.strip().upper()


def test_signed_title_over_500_but_truncated_for_the_incident():
    alert = parse_custom(body({**VALID, "title": "t" * 500}))
    assert len(alert.title) == 200


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"title": None}, "title"),
        ({"title": ""}, "title"),
        ({"title": "   "}, "title"),
        ({"title": 5}, "title"),
        ({"title": "t" * 501}, "title"),
        # A title alone is a legacy payload now (issue 13); a signed marker keeps it signed.
        ({"service_id": None, "status": "new"}, "service_id"),
        ({"service_id": "payments"}, "service_id"),
        ({"service_id": "SER-123"}, "service_id"),
        ({"service_id": "SER-1234a"}, "service_id"),
        ({"service_id": "SER-00001\n"}, "service_id"),
        ({"service_id": "SER-" + "1" * 47}, "service_id"),
        ({"service_id": 12345}, "service_id"),
        ({"description": "d" * 5001}, "description"),
        ({"description": ["x"]}, "description"),
        ({"severity": "SEV5"}, "severity"),
        ({"severity": "P1"}, "severity"),
        ({"severity": 1}, "severity"),
        ({"status": "acknowledged"}, "status"),
        ({"status": "closed"}, "status"),
        ({"status": True}, "status"),
        ({"source_url": "ftp://example.org/x"}, "source_url"),
        ({"source_url": "not a url"}, "source_url"),
        ({"source_url": "javascript:alert(1)"}, "source_url"),
        ({"source_url": "https://"}, "source_url"),
        ({"source_url": "https://example.org/" + "a" * 2100}, "source_url"),
        ({"dedup_key": "k" * 256}, "dedup_key"),
        ({"dedup_key": ""}, "dedup_key"),
        ({"dedup_key": 42}, "dedup_key"),
        ({"metadata": "region=eu"}, "metadata"),
        ({"metadata": [["a", "b"]]}, "metadata"),
        ({"metadata": {f"k{i}": "v" for i in range(11)}}, "metadata"),
        ({"metadata": {"count": 3}}, "metadata"),
        ({"metadata": {"nested": {"a": "b"}}}, "metadata"),
        ({"metadata": {"": "v"}}, "metadata"),
    ],
)
def test_signed_rule_violations_name_the_field(change, field):
    payload = {**VALID, **change}
    payload = {k: v for k, v in payload.items() if v is not None or k not in ("title", "service_id")}
    error = reject(payload)
    assert f"'{field}'" in error.message
    assert any(f"'{field}'" in detail for detail in error.details)


def test_signed_limits_at_the_edge_are_accepted():
    alert = parse_custom(
        body(
            {
                **VALID,
                "service_id": "SER-" + "9" * 46,  # 50 characters
                "description": "d" * 5000,
                "dedup_key": "k" * 255,
                "metadata": {f"k{i}": "v" for i in range(10)},
            }
        )
    )
    assert alert.dedup_key == "k" * 255
    assert len(alert.metadata) == 10
    assert alert.description is not None and len(alert.description) == 5000


def test_null_optional_fields_are_absent():
    alert = parse_custom(
        body({**VALID, "description": None, "severity": None, "status": None, "dedup_key": None, "metadata": None})
    )
    assert alert.status_hint == "new"
    assert alert.severity is None


def test_unknown_fields_are_rejected_by_name():
    error = reject({**VALID, "priority": "P1", "assignee": "dana"})
    assert "'assignee'" in error.message and "'priority'" in error.message
    assert "Unknown field" in error.message


def test_all_problems_are_collected():
    error = reject({"title": "", "service_id": "nope", "severity": "SEV9", "extra": 1})
    assert len(error.details) == 4


# --- legacy schema --------------------------------------------------------------------------------


def test_legacy_fixture():
    alert = parse_custom((FIXTURES / "custom_legacy_trigger.json").read_bytes())
    assert alert.source == "legacy"
    assert alert.action == "trigger"
    assert alert.status_hint is None
    assert alert.title == "Payments API returning 503"
    assert alert.severity == "SEV1"
    assert alert.service_hint == "SER-00007"
    assert alert.metadata["service"] == "payments-api"
    assert alert.metadata["affected_services"] == "payments-api, checkout"
    assert alert.metadata["customer_impact"] == "true"
    assert alert.metadata["tags.team"] == "payments"
    # other fields are reference metadata, never rejected
    assert alert.metadata["check_id"] == "88123"
    assert alert.metadata["environment"] == "production"


@pytest.mark.parametrize(
    ("word", "severity"),
    [
        ("Critical", "SEV0"),
        ("HIGH", "SEV1"),
        ("medium", "SEV2"),
        ("Low", "SEV3"),
        ("Pre-emptive", "SEV4"),
        ("pre-emptive", "SEV4"),
        ("Preemptive", "SEV4"),
        (None, "SEV2"),
    ],
)
def test_legacy_severity_table(word, severity):
    payload = {"title": "x", "service": "api"}
    if word is not None:
        payload["severity"] = word
    assert parse_custom(body(payload)).severity == severity


def test_legacy_minimal_defaults_to_medium_and_no_customer_impact():
    alert = parse_custom(body({"title": "x", "severity": "Low"}))
    assert alert.source == "legacy"
    assert alert.severity == "SEV3"
    assert alert.metadata["customer_impact"] == "false"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"title": None}, "title"),
        ({"title": ""}, "title"),
        ({"severity": "Urgent"}, "severity"),
        ({"severity": "SEV1"}, "severity"),
        ({"service": 3}, "service"),
        ({"affected_services": "api"}, "affected_services"),
        ({"affected_services": ["api", 3]}, "affected_services"),
        ({"customer_impact": "yes"}, "customer_impact"),
        ({"tags": ["a"]}, "tags"),
        ({"description": {"a": 1}}, "description"),
    ],
)
def test_legacy_violations_name_the_field(change, field):
    payload = {k: v for k, v in {"title": "x", "service": "api", **change}.items() if v is not None}
    error = reject(payload, schema="legacy")
    assert f"'{field}'" in error.message


def test_legacy_extra_fields_are_bounded():
    payload = {"title": "x", "service": "api", **{f"extra{i}": "v" * 5000 for i in range(100)}}
    alert = parse_custom(body(payload))
    assert len(alert.metadata) <= 50
    assert all(len(v) <= 1000 for v in alert.metadata.values())


def test_forced_legacy_schema_accepts_anything_legacy():
    alert = parse_custom(body({"title": "x", "status": "whatever", "dedup_key": "k"}), schema="legacy")
    assert alert.source == "legacy"
    assert alert.metadata["status"] == "whatever"


# --- shape detection --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("payload", "schema"),
    [
        # Neither schema's markers: legacy (a title alone is a valid legacy payload; issue 13).
        ({"title": "x"}, "legacy"),
        ({"title": "x", "description": "y"}, "legacy"),
        ({"title": "x", "severity": "SEV1"}, "signed"),
        ({"title": "x", "severity": "High"}, "legacy"),
        ({"title": "x", "severity": "pre-emptive"}, "legacy"),
        ({"title": "x", "service_id": "SER-00001"}, "signed"),
        ({"title": "x", "dedup_key": "k"}, "signed"),
        ({"title": "x", "status": "resolved"}, "signed"),
        ({"title": "x", "metadata": {}}, "signed"),
        ({"title": "x", "source_url": "https://e.org"}, "signed"),
        ({"title": "x", "service": "api"}, "legacy"),
        ({"title": "x", "affected_services": []}, "legacy"),
        ({"title": "x", "customer_impact": False}, "legacy"),
        ({"title": "x", "tags": {}}, "legacy"),
        ({"title": "x", "tags": {}, "dedup_key": "k"}, "legacy"),
        ({"title": "x", "tags": {}, "service_id": "SER-00001"}, "signed"),
        ({"title": "x", "severity": "High", "service_id": "SER-00001"}, "legacy"),
    ],
)
def test_detect_schema(payload, schema):
    assert detect_schema(payload) == schema


def test_a_title_alone_is_a_legacy_payload_with_the_medium_default():
    alert = parse_custom(body({"title": "x"}))
    assert (alert.source, alert.severity, alert.service_hint) == ("legacy", "SEV2", None)


def test_a_sev_severity_without_service_id_fails_as_signed():
    error = reject({"title": "x", "severity": "SEV1"})
    assert "'service_id'" in error.message


def test_service_id_may_be_a_service_key():
    assert parse_custom(body({**VALID, "service_id": "svc_abcdefgh12"})).service_hint == "svc_abcdefgh12"
    for bad in ("svc_short", "svc_ABCDEFGH12", "svc_abcdefgh123"):
        assert "'service_id'" in reject({**VALID, "service_id": bad}).message


def test_signed_payload_with_a_legacy_field_names_it():
    error = reject({**VALID, "tags": {"a": "b"}})
    assert "'tags'" in error.message


# --- body errors --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [b"", b"   ", b"not json", b"[1, 2]", b'"title"', b"null", b"42", b'{"title": NaN}', b"\xff\xfe", b"{" * 5],
)
def test_body_must_be_a_json_object(raw):
    reject(raw)


def test_deeply_nested_body_is_rejected_not_crashing():
    reject(b"[" * 100_000 + b"]" * 100_000)


def test_utf8_bom_is_tolerated():
    assert parse_custom(b"\xef\xbb\xbf" + body(VALID)).title == "Queue backlog"


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=30),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=20,
)
field_names = st.sampled_from(
    [
        "title",
        "service_id",
        "description",
        "severity",
        "status",
        "source_url",
        "dedup_key",
        "metadata",
        "service",
        "affected_services",
        "customer_impact",
        "tags",
        "other",
    ]
) | st.text(max_size=12)
field_values = (
    json_values
    | st.sampled_from(["SER-00001", "SEV1", "High", "Pre-emptive", "resolved", "https://e.org/x", "svc_abcdefghij"])
    | st.dictionaries(st.text(max_size=8), st.text(max_size=8), max_size=12)
)


@settings(max_examples=300, deadline=None)
@given(payload=st.dictionaries(field_names, field_values, max_size=10))
def test_custom_parser_raises_only_delivery_rejected(payload):
    try:
        alert = parse_custom(json.dumps(payload).encode())
    except DeliveryRejected as rejected:
        assert rejected.code == "INVALID_PAYLOAD"
        assert rejected.message
        return
    assert alert.source in ("custom", "legacy")
    assert 1 <= len(alert.title) <= 200
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in alert.metadata.items())
    json.dumps(alert.as_dict())
