from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chalicelib.errors import DeliveryRejected
from chalicelib.integration.parsers.custom import parse_custom

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
    assert alert.warnings == ("'title' has 500 characters; the alert keeps the first 200.",)


# Issue 26: only what makes an alert impossible or wrong is refused; the rest is a warning.
@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"title": None}, "title"),
        ({"title": ""}, "title"),
        ({"title": "   "}, "title"),
        ({"title": {"text": "x"}}, "title"),
        ({"title": ["x"]}, "title"),
        ({"title": True}, "title"),
        ({"service_id": "payments"}, "service_id"),
        ({"service_id": "SER-123"}, "service_id"),
        ({"service_id": "SER-1234a"}, "service_id"),
        ({"service_id": "SER-00001\n"}, "service_id"),
        ({"service_id": "SER-" + "1" * 47}, "service_id"),
        ({"service_id": 12345}, "service_id"),
        ({"service_id": {"id": "SER-00001"}}, "service_id"),
        ({"dedup_key": "k" * 256}, "dedup_key"),
    ],
)
def test_signed_refusals_name_the_field(change, field):
    payload = {k: v for k, v in {**VALID, **change}.items() if v is not None or k != "title"}
    error = reject(payload)
    assert f"'{field}'" in error.message
    assert any(f"'{field}'" in detail for detail in error.details)


@pytest.mark.parametrize(
    ("change", "expected", "details", "warning"),
    [
        # wrong types: converted when nothing is lost, else kept in details
        ({"title": 5}, {"title": "5"}, {}, "'title' was a number"),
        ({"description": 2.5}, {"description": "2.5"}, {}, "'description' was a number"),
        ({"description": ["x"]}, {"description": None}, {"description": ["x"]}, "'description' must be text"),
        ({"dedup_key": 42}, {"dedup_key": "42"}, {}, "'dedup_key' was a number"),
        ({"dedup_key": {"a": 1}}, {"dedup_key": None}, {"dedup_key": {"a": 1}}, "'dedup_key' must be text"),
        ({"dedup_key": ""}, {"dedup_key": None}, {}, "'dedup_key' is blank"),
        ({"status": True}, {"status_hint": "new"}, {"status": True}, "'status' must be text"),
        ({"status": "closed"}, {"status_hint": "new"}, {"status": "closed"}, "'status' must be new"),
        ({"status": "acknowledged"}, {"action": "trigger"}, {"status": "acknowledged"}, "'status' must be new"),
        ({"metadata": "region=eu"}, {"metadata": {}}, {"metadata": "region=eu"}, "'metadata' must be an object"),
        ({"metadata": [["a", "b"]]}, {"metadata": {}}, {"metadata": [["a", "b"]]}, "'metadata' must be an object"),
        ({"metadata": {"count": 3}}, {"metadata": {"count": "3"}}, {}, "'metadata' values must be strings"),
        ({"metadata": {"on": True}}, {"metadata": {"on": "true"}}, {}, "'metadata' values must be strings"),
        ({"metadata": {"n": {"a": "b"}}}, {"metadata": {}}, {"metadata": {"n": {"a": "b"}}}, "'metadata' holds"),
        ({"metadata": {"": "v"}}, {"metadata": {}}, {"metadata": {"": "v"}}, "'metadata' holds"),
        # limits: cut, with a warning
        ({"description": "d" * 5001}, {"description": "d" * 5000}, {}, "'description' has 5001 characters"),
        ({"title": "t" * 501}, {"title": "t" * 199 + "\u2026"}, {}, "'title' has 501 characters"),
        (
            {"metadata": {f"k{i}": "v" for i in range(12)}},
            {"metadata": {f"k{i}": "v" for i in range(10)}},
            {"metadata": {"k10": "v", "k11": "v"}},
            "'metadata' holds at most 10",
        ),
        # unknown words: the default, with a warning
        ({"severity": "SEV5"}, {"severity": None}, {}, "'severity' 'SEV5' is not a severity word"),
        ({"severity": 1}, {"severity": None}, {}, "'severity' '1' is not a severity word"),
        ({"severity": ["SEV1"]}, {"severity": None}, {"severity": ["SEV1"]}, "'severity' must be a severity word"),
        # a link that is no http(s) URL is kept, but not as the alert's link
        ({"source_url": "ftp://example.org/x"}, {"source_url": None}, {"source_url": "ftp://example.org/x"}, "URL"),
        ({"source_url": "not a url"}, {"source_url": None}, {"source_url": "not a url"}, "URL"),
        ({"source_url": "javascript:alert(1)"}, {"source_url": None}, {"source_url": "javascript:alert(1)"}, "URL"),
        ({"source_url": "https://"}, {"source_url": None}, {"source_url": "https://"}, "URL"),
        ({"source_url": 7}, {"source_url": None}, {"source_url": 7}, "URL"),
    ],
)
def test_signed_field_problems_are_warnings_not_refusals(change, expected, details, warning):
    alert = parse_custom(body({**VALID, **change}))
    for name, value in expected.items():
        assert getattr(alert, name) == value, name
    assert alert.details == details
    assert any(warning in text for text in alert.warnings), alert.warnings
    assert alert.service_hint == "SER-00001"  # routing never depends on the other fields


def test_a_long_source_url_is_kept_in_details():
    url = "https://example.org/" + "a" * 2100
    alert = parse_custom(body({**VALID, "source_url": url}))
    assert (alert.source_url, alert.details) == (None, {"source_url": url})


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


def test_unknown_fields_are_kept_as_details_and_named():
    alert = parse_custom(body({**VALID, "priority": "P1", "assignee": {"name": "dana"}}))
    assert alert.details == {"priority": "P1", "assignee": {"name": "dana"}}
    assert alert.warnings == ("'priority', 'assignee' are not part of the custom webhook payload; kept in details.",)
    assert alert.service_hint == "SER-00001"


def test_a_details_object_is_merged_into_details():
    alert = parse_custom(body({**VALID, "details": {"host": "es-3", "shards": 12}, "region": "eu"}))
    assert alert.details == {"host": "es-3", "shards": 12, "region": "eu"}
    assert alert.warnings == ("'details', 'region' are not part of the custom webhook payload; kept in details.",)


def test_all_problems_are_collected():
    error = reject({"title": "", "service_id": "nope", "severity": "SEV9", "dedup_key": "k" * 300, "extra": 1})
    assert len(error.details) == 3  # title, service_id, dedup_key; the severity and extra are warnings


def test_runbook_url_comes_from_metadata():
    alert = parse_custom(body({**VALID, "metadata": {"runbook_url": "https://wiki.example.org/rb/queue"}}))
    assert alert.runbook_url == "https://wiki.example.org/rb/queue"
    assert alert.metadata == {"runbook_url": "https://wiki.example.org/rb/queue"}
    assert parse_custom(body({**VALID, "metadata": {"runbook_url": "wiki/rb"}})).runbook_url is None


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


@pytest.mark.parametrize("change", [{"title": None}, {"title": ""}, {"title": {"a": 1}}])
def test_legacy_refuses_only_a_missing_title(change):
    payload = {k: v for k, v in {"title": "x", "service": "api", **change}.items() if v is not None}
    assert "'title'" in reject(payload, schema="legacy").message


@pytest.mark.parametrize(
    ("change", "metadata", "details", "warning"),
    [
        ({"severity": "Urgent"}, {}, {}, "'severity' 'Urgent' is not a severity word"),
        ({"service": 3}, {"service": "3"}, {}, "'service' was a number"),
        ({"service": ["api"]}, {}, {"service": ["api"]}, "'service' must be text"),
        ({"affected_services": "api"}, {"affected_services": "api"}, {}, "'affected_services' was a string"),
        (
            {"affected_services": ["api", 3]},
            {"affected_services": "api"},
            {"affected_services": ["api", 3]},
            "'affected_services' must hold strings only",
        ),
        ({"customer_impact": "yes"}, {"customer_impact": "false"}, {"customer_impact": "yes"}, "'customer_impact'"),
        ({"customer_impact": "TRUE"}, {"customer_impact": "true"}, {}, "'customer_impact' was a string"),
        ({"tags": ["a"]}, {}, {"tags": ["a"]}, "'tags' must be an object"),
        ({"description": {"a": 1}}, {}, {"description": {"a": 1}}, "'description' must be text"),
    ],
)
def test_legacy_field_problems_are_warnings(change, metadata, details, warning):
    alert = parse_custom(body({"title": "x", **change}), schema="legacy")
    assert alert.source == "legacy"
    assert metadata.items() <= alert.metadata.items()
    assert alert.details == details
    assert any(warning in text for text in alert.warnings), alert.warnings


def test_legacy_other_fields_are_metadata_and_details():
    alert = parse_custom(body({"title": "x", "check_id": 88123, "env": {"name": "prod"}}))
    assert (alert.metadata["check_id"], alert.metadata["env"]) == ("88123", '{"name":"prod"}')
    assert alert.details == {"check_id": 88123, "env": {"name": "prod"}}
    assert alert.warnings == ("'check_id', 'env' are not part of the legacy payload; kept in details.",)


def test_legacy_extra_fields_are_bounded():
    payload = {"title": "x", "service": "api", **{f"extra{i}": "v" * 5000 for i in range(100)}}
    alert = parse_custom(body(payload))
    assert len(alert.metadata) <= 50
    assert all(len(v) <= 1000 for v in alert.metadata.values())


def test_forced_legacy_schema_accepts_anything_legacy():
    alert = parse_custom(body({"title": "x", "status": "whatever", "dedup_key": "k"}), schema="legacy")
    assert alert.source == "legacy"
    assert alert.metadata["status"] == "whatever"


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
