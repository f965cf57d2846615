from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from chalicelib.errors import DeliveryRejected
from chalicelib.integration.parsers.pagerduty import invalid_event_body, parse_pagerduty, routing_key_problems

FIXTURES = Path(__file__).parent / "fixtures" / "integration"
ROUTING_KEY = "R0ut1ngK3yR0ut1ngK3yR0ut1ngK3y12"


def load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


def parse(payload: dict[str, Any]):
    return parse_pagerduty(json.dumps(payload).encode())


def errors_of(payload: dict[str, Any]) -> list[str]:
    with pytest.raises(DeliveryRejected) as caught:
        parse(payload)
    assert caught.value.code == "INVALID_PAYLOAD"
    return caught.value.details


def test_trigger_fixture():
    alert = parse_pagerduty((FIXTURES / "pagerduty_trigger.json").read_bytes())
    assert alert.source == "pagerduty"
    assert alert.action == "trigger"
    assert alert.title == "HTTP check failed on srv01.example.org: 502 Bad Gateway"
    assert alert.severity == "SEV1"
    assert alert.dedup_key == "srv01/HTTP-check"
    assert alert.routing_key == ROUTING_KEY
    assert alert.service_hint == "SER-00021"
    assert alert.source_url == "https://nagios.example.org/cgi-bin/status.cgi?host=srv01"
    assert alert.occurred_at == datetime(2026, 11, 22, 11, 58, tzinfo=UTC)
    assert alert.metadata["component"] == "nginx"
    assert alert.metadata["details.status_code"] == "502"
    assert alert.description is not None and "Source: srv01.example.org" in alert.description
    assert "Nagios" in alert.summary


def test_routing_key_never_leaks_into_metadata_or_details():
    alert = parse(load("pagerduty_trigger.json"))
    assert ROUTING_KEY not in json.dumps(alert.metadata)
    assert ROUTING_KEY not in json.dumps(alert.raw_details)


@pytest.mark.parametrize("name", ["pagerduty_resolve.json", "pagerduty_acknowledge.json"])
def test_resolve_and_acknowledge_fixtures(name):
    alert = parse_pagerduty((FIXTURES / name).read_bytes())
    assert alert.action == name.split("_")[1].removesuffix(".json")
    assert alert.dedup_key == "srv01/HTTP-check"
    assert alert.severity is None
    assert alert.routing_key == ROUTING_KEY


def test_trigger_without_dedup_key_leaves_it_to_the_service():
    payload = load("pagerduty_trigger.json")
    del payload["dedup_key"]
    assert parse(payload).dedup_key is None


@pytest.mark.parametrize(
    ("severity", "expected"),
    [("critical", "SEV0"), ("error", "SEV1"), ("warning", "SEV2"), ("info", "SEV3"), ("Critical", "SEV0")],
)
def test_severity_table(severity, expected):
    payload = load("pagerduty_trigger.json")
    payload["payload"]["severity"] = severity
    assert parse(payload).severity == expected


def test_link_is_the_source_url_without_client_url():
    payload = load("pagerduty_trigger.json")
    del payload["client_url"]
    assert parse(payload).source_url == "https://wiki.example.org/runbooks/http-check"


def test_string_custom_details():
    payload = load("pagerduty_trigger.json")
    payload["payload"]["custom_details"] = "disk /var at 97%"
    alert = parse(payload)
    assert alert.service_hint is None
    assert alert.description is not None and "disk /var at 97%" in alert.description


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda p: p["payload"].pop("summary"), ["'payload.summary' is missing or blank"]),
        (lambda p: p["payload"].__setitem__("summary", "  "), ["'payload.summary' is missing or blank"]),
        (
            lambda p: p["payload"].__setitem__("summary", "s" * 1025),
            ["'payload.summary' is too long (must be at most 1024 characters)"],
        ),
        (lambda p: p["payload"].pop("source"), ["'payload.source' is missing or blank"]),
        (lambda p: p["payload"].pop("severity"), ["'payload.severity' is missing or blank"]),
        (
            lambda p: p["payload"].__setitem__("severity", "major"),
            ["'payload.severity' is invalid (must be one of 'critical', 'error', 'warning', 'info')"],
        ),
        (lambda p: p.pop("event_action"), ["'event_action' is missing or blank"]),
        (
            lambda p: p.__setitem__("event_action", "escalate"),
            ["'event_action' is invalid (must be one of 'trigger', 'acknowledge', 'resolve')"],
        ),
        (
            lambda p: p.__setitem__("dedup_key", "d" * 256),
            ["'dedup_key' is too long (must be at most 255 characters)"],
        ),
        (lambda p: p.__setitem__("dedup_key", 7), ["'dedup_key' must be a string"]),
    ],
)
def test_trigger_validation_errors(mutate, expected):
    payload = load("pagerduty_trigger.json")
    mutate(payload)
    assert errors_of(payload) == expected


def test_missing_payload_lists_every_required_field():
    payload = load("pagerduty_trigger.json")
    del payload["payload"]
    assert errors_of(payload) == [
        "'payload.summary' is missing or blank",
        "'payload.source' is missing or blank",
        "'payload.severity' is missing or blank",
    ]


def test_summary_of_exactly_1024_is_accepted():
    payload = load("pagerduty_trigger.json")
    payload["payload"]["summary"] = "s" * 1024
    assert len(parse(payload).title) == 200


@pytest.mark.parametrize("action", ["acknowledge", "resolve"])
def test_acknowledge_and_resolve_need_a_dedup_key(action):
    assert errors_of({"routing_key": ROUTING_KEY, "event_action": action}) == ["'dedup_key' is missing or blank"]
    assert errors_of({"routing_key": ROUTING_KEY, "event_action": action, "dedup_key": " "}) == [
        "'dedup_key' is missing or blank"
    ]


def test_invalid_event_body_matches_pagerduty():
    with pytest.raises(DeliveryRejected) as caught:
        parse({"event_action": "trigger"})
    body = invalid_event_body(caught.value)
    assert body["status"] == "invalid event"
    assert body["message"] == "Event object is invalid"
    assert len(body["errors"]) == 3


def test_routing_key_problems():
    assert routing_key_problems(ROUTING_KEY) == []
    assert routing_key_problems(None) == ["'routing_key' is missing or blank"]
    assert routing_key_problems("") == ["'routing_key' is missing or blank"]
    assert routing_key_problems("short") == ["Length of 'routing_key' is incorrect (should be 32 characters)"]


def test_routing_key_is_only_exposed():
    alert = parse(load("pagerduty_resolve.json") | {"routing_key": 12})
    assert alert.routing_key is None


def test_non_object_body_is_rejected():
    with pytest.raises(DeliveryRejected):
        parse_pagerduty(b"[]")


# --- issue 26: custom_details are the alert's details, a runbook link its runbook_url ---------------------


def test_custom_details_and_runbook_link():
    alert = parse(load("pagerduty_trigger.json"))
    assert alert.details == {"service_id": "SER-00021", "status_code": 502, "checked_from": ["fra", "iad"]}
    assert alert.runbook_url == "https://wiki.example.org/runbooks/http-check"


def test_string_custom_details_are_kept_under_their_name():
    payload = load("pagerduty_trigger.json")
    payload["payload"]["custom_details"] = "disk at 97%"
    payload["links"] = []
    alert = parse(payload)
    assert (alert.details, alert.runbook_url) == ({"custom_details": "disk at 97%"}, None)


def test_runbook_url_in_custom_details():
    payload = load("pagerduty_trigger.json")
    payload["links"] = [{"href": "https://graphs.example.org/x", "text": "Graph"}]
    payload["payload"]["custom_details"]["runbook_url"] = "https://wiki.example.org/rb"
    assert parse(payload).runbook_url == "https://wiki.example.org/rb"


@pytest.mark.parametrize("word", ["SEV1", "P1", "high", "fatal"])
def test_only_pagerdutys_four_words(word):
    payload = load("pagerduty_trigger.json")
    payload["payload"]["severity"] = word
    assert any("'payload.severity' is invalid" in error for error in errors_of(payload))
