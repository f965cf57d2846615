"""The custom webhook's shape rule and severity words (issue 26): the shape follows the signed
fields alone, and every severity vocabulary reads the same on either shape."""

from __future__ import annotations

import json

import pytest

from chalicelib.integration.parsers.custom import detect_schema, parse_custom
from tests.unit.test_integration_custom import reject

VALID = {"title": "Queue backlog", "service_id": "SER-00001"}


def body(payload: object) -> bytes:
    return json.dumps(payload).encode()


# --- shape detection --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("payload", "schema"),
    [
        # Neither schema's markers: legacy (a title alone is a valid legacy payload; issue 13).
        ({"title": "x"}, "legacy"),
        ({"title": "x", "description": "y"}, "legacy"),
        # Issue 26: the severity's vocabulary never picks the shape.
        ({"title": "x", "severity": "SEV1"}, "legacy"),
        ({"title": "x", "severity": "High"}, "legacy"),
        ({"title": "x", "severity": "pre-emptive"}, "legacy"),
        ({"title": "x", "severity": "critical", "service_id": "SER-00001"}, "signed"),
        ({"title": "x", "severity": "High", "service_id": "SER-00001"}, "signed"),
        ({"title": "x", "severity": "SEV1", "dedup_key": "k"}, "signed"),
        ({"title": "x", "service_id": "SER-00001"}, "signed"),
        ({"title": "x", "dedup_key": "k"}, "signed"),
        ({"title": "x", "status": "resolved"}, "signed"),
        ({"title": "x", "metadata": {}}, "signed"),
        ({"title": "x", "source_url": "https://e.org"}, "signed"),
        ({"title": "x", "service": "api"}, "legacy"),
        ({"title": "x", "affected_services": []}, "legacy"),
        ({"title": "x", "customer_impact": False}, "legacy"),
        ({"title": "x", "tags": {}}, "legacy"),
        ({"title": "x", "tags": {}, "dedup_key": "k"}, "signed"),
        ({"title": "x", "tags": {}, "service_id": "SER-00001"}, "signed"),
        ({"title": "x", "details": {"a": 1}}, "legacy"),
    ],
)
def test_detect_schema(payload, schema):
    assert detect_schema(payload) == schema


def test_a_title_alone_is_a_legacy_payload_with_the_medium_default():
    alert = parse_custom(body({"title": "x"}))
    assert (alert.source, alert.severity, alert.service_hint) == ("legacy", "SEV2", None)


def test_the_issue_26_body_routes_and_dedups_by_its_signed_fields():
    # A legacy severity word once switched this body to the legacy shape, which ignored
    # service_id and dedup_key: the alert paged the integration's default service, every time anew.
    alert = parse_custom(
        body({"title": "Search nodes down", "service_id": "SER-00003", "severity": "critical", "dedup_key": "es-nodes"})
    )
    assert (alert.source, alert.service_hint, alert.dedup_key, alert.severity) == (
        "custom",
        "SER-00003",
        "es-nodes",
        "SEV0",
    )
    assert alert.warnings == ()


WORDS = [
    *[(f"SEV{n}", f"SEV{n}") for n in range(5)],
    ("sev2", "SEV2"),
    (" SEV3 ", "SEV3"),
    ("Critical", "SEV0"),
    ("HIGH", "SEV1"),
    ("medium", "SEV2"),
    ("Low", "SEV3"),
    ("Pre-emptive", "SEV4"),
    ("critical", "SEV0"),
    ("error", "SEV1"),
    ("Warning", "SEV2"),
    ("INFO", "SEV3"),
    *[(f"P{n + 1}", f"SEV{n}") for n in range(5)],
    ("p3", "SEV2"),
]


@pytest.mark.parametrize(("word", "severity"), WORDS)
@pytest.mark.parametrize(
    "shape", [{"service_id": "SER-00001"}, {"service": "api"}, {}], ids=["signed", "legacy", "bare"]
)
def test_every_severity_word_on_either_shape(word, severity, shape):
    alert = parse_custom(body({"title": "x", "severity": word, **shape}))
    assert alert.severity == severity
    assert alert.warnings == ()


def test_signed_body_keeps_legacy_fields_as_labels():
    alert = parse_custom(
        body({**VALID, "tags": {"team": "search"}, "service": "es", "affected_services": ["es", "api"]})
    )
    assert (alert.source, alert.service_hint) == ("custom", "SER-00001")
    assert alert.metadata == {"tags.team": "search", "service": "es", "affected_services": "es, api"}
    assert alert.warnings == ()


def test_signed_body_without_service_id_may_name_its_service_the_legacy_way():
    alert = parse_custom(body({"title": "x", "dedup_key": "k", "tags": {"service_id": "SER-00007"}}))
    assert (alert.source, alert.service_hint, alert.dedup_key) == ("custom", "SER-00007", "k")
    assert parse_custom(body({"title": "x", "dedup_key": "k"})).service_hint is None  # the default service


def test_service_id_may_be_a_service_key():
    assert parse_custom(body({**VALID, "service_id": "svc_abcdefgh12"})).service_hint == "svc_abcdefgh12"
    for bad in ("svc_short", "svc_ABCDEFGH12", "svc_abcdefgh123"):
        assert "'service_id'" in reject({**VALID, "service_id": bad}).message


@pytest.mark.parametrize(("named", "hint"), [("ser-00042", "SER-00042"), ("Ser-00042", "SER-00042")])
def test_a_service_id_in_any_case(named, hint):
    assert parse_custom(body({**VALID, "service_id": named})).service_hint == hint
