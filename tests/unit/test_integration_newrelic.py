from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from chalicelib.errors import DeliveryRejected
from chalicelib.integration.parsers.newrelic import parse_newrelic

FIXTURES = Path(__file__).parent / "fixtures" / "integration"


def load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


def parse(payload: dict[str, Any]):
    return parse_newrelic(json.dumps(payload).encode())


def test_workflow_trigger_fixture():
    alert = parse_newrelic((FIXTURES / "newrelic_workflow_trigger.json").read_bytes())
    assert alert.source == "newrelic"
    assert alert.action == "trigger"
    assert alert.title == "Orders service error rate > 5%"
    assert alert.severity == "SEV1"
    assert alert.dedup_key == "7f3c2a10-5b1e-4c8e-9a44-2f6d1e0b9c31"
    assert alert.source_url is not None and alert.source_url.startswith("https://radar-api.service.newrelic.com/")
    assert alert.service_hint == "SER-00011"
    assert alert.metadata["is_correlated"] == "false"
    assert alert.metadata["impacted_entities"] == "orders-api-prod, orders-worker"
    assert alert.metadata["workflow"] == "Orders to Tocsin"
    assert alert.occurred_at == datetime.fromtimestamp(1795003260, tz=UTC)
    assert alert.description is not None and "Error rate" in alert.description
    assert "HIGH" in alert.summary


def test_workflow_resolve_fixture():
    alert = parse_newrelic((FIXTURES / "newrelic_workflow_resolve.json").read_bytes())
    assert alert.action == "resolve"
    assert alert.dedup_key == "7f3c2a10-5b1e-4c8e-9a44-2f6d1e0b9c31"
    assert alert.metadata["is_correlated"] == "false"
    assert alert.service_hint is None


@pytest.mark.parametrize(
    ("state", "trigger", "action"),
    [
        ("CREATED", "INCIDENT_ADDED", "trigger"),
        ("ACTIVATED", "STATE_CHANGE", "trigger"),
        ("ACTIVATED", "PRIORITY_CHANGED", "trigger"),
        ("ACTIVATED", "USER_ACTION", "acknowledge"),
        ("ACKNOWLEDGED", "USER_ACTION", "acknowledge"),
        ("CLOSED", "INCIDENT_CLOSED", "resolve"),
        ("CLOSED", "CLOSE_TTL", "resolve"),
        ("closed", None, "resolve"),
        ("DEACTIVATED", None, "note"),
        (None, None, "trigger"),
    ],
)
def test_workflow_state_table(state, trigger, action):
    payload = {"id": "issue-1", "title": "x", "priority": "LOW"}
    if state is not None:
        payload["state"] = state
    if trigger is not None:
        payload["trigger"] = trigger
    assert parse(payload).action == action


@pytest.mark.parametrize(
    ("priority", "severity"),
    [("CRITICAL", "SEV0"), ("HIGH", "SEV1"), ("MEDIUM", "SEV2"), ("LOW", "SEV3"), ("low", "SEV3"), ("URGENT", None)],
)
def test_priority_table(priority, severity):
    assert parse({"id": "i", "title": "x", "state": "CREATED", "priority": priority}).severity == severity


def test_missing_priority_uses_service_default():
    assert parse({"id": "i", "title": "x", "state": "CREATED"}).severity is None


def test_template_with_missing_and_extra_keys_is_tolerated():
    alert = parse({"id": "abc", "state": "CREATED", "customField": {"deep": [1, 2]}, "runbook": "https://x.example"})
    assert alert.title == "New Relic alert"
    assert alert.source_url is None
    assert alert.dedup_key == "abc"


def test_title_as_array_from_a_custom_template():
    assert parse({"id": "i", "state": "CREATED", "title": ["CPU high", "other"]}).title == "CPU high"


@pytest.mark.parametrize(
    "tags",
    [
        {"tags": {"service_id": "SER-00099"}},
        {"tags": {"service_id": ["SER-00099"]}},
        {"accumulations": {"tag": {"service_id": ["SER-00099", "SER-00100"]}}},
        {"accumulations": {"tag.service_id": ["SER-00099"]}},
        {"accumulations": {"tag": {"service_id": ["not-a-service", "ser-00099"]}}},
    ],
)
def test_service_hint_from_tags(tags):
    assert parse({"id": "i", "state": "CREATED", "title": "x", **tags}).service_hint == "SER-00099"


def test_service_key_hint():
    assert parse({"id": "i", "title": "x", "tags": {"service_id": "svc_abcdefghij"}}).service_hint == "svc_abcdefghij"


def test_free_form_service_name_is_not_a_hint():
    assert parse({"id": "i", "title": "x", "tags": {"service_id": "payments"}}).service_hint is None


@pytest.mark.parametrize("value", ["true", "True", True])
def test_is_correlated_string_or_bool(value):
    assert parse({"id": "i", "title": "x", "isCorrelated": value}).metadata["is_correlated"] == "true"


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"id": {"a": 1}, "title": "x"}, "id"),
        ({"id": "i", "state": ["CLOSED"]}, "state"),
        ({"priority": 5.5, "id": "i"}, "priority"),
    ],
)
def test_wrongly_typed_core_fields_are_rejected(payload, field):
    with pytest.raises(DeliveryRejected) as caught:
        parse(payload)
    assert caught.value.code == "INVALID_PAYLOAD"
    assert f"'{field}'" in caught.value.message


def test_unrecognised_body_is_rejected():
    with pytest.raises(DeliveryRejected) as caught:
        parse({"hello": "world"})
    assert "New Relic" in caught.value.message
    with pytest.raises(DeliveryRejected):
        parse_newrelic(b"[]")


# --- legacy notification channel -----------------------------------------------------------------------


def test_channel_trigger_fixture():
    alert = parse_newrelic((FIXTURES / "newrelic_channel_trigger.json").read_bytes())
    assert alert.action == "trigger"
    assert alert.severity == "SEV0"
    assert alert.dedup_key == "5550001"
    assert alert.title == "Host CPU > 90% (Database hosts)"
    assert alert.description == "CPU % > 90.0 for at least 5 minutes on 'db-primary-1'"
    assert alert.source_url == "https://alerts.newrelic.com/accounts/1234567/incidents/5550001"
    assert alert.service_hint == "SER-00003"
    assert alert.metadata["runbook_url"] == "https://wiki.example.org/runbooks/db-cpu"


def test_channel_resolve_fixture():
    alert = parse_newrelic((FIXTURES / "newrelic_channel_resolve.json").read_bytes())
    assert alert.action == "resolve"
    assert alert.dedup_key == "5550001"


@pytest.mark.parametrize(
    ("state", "action"),
    [("open", "trigger"), ("acknowledged", "acknowledge"), ("closed", "resolve"), ("OPEN", "trigger")],
)
def test_channel_states(state, action):
    payload = load("newrelic_channel_trigger.json") | {"current_state": state}
    assert parse(payload).action == action


@pytest.mark.parametrize(
    ("severity", "expected"), [("CRITICAL", "SEV0"), ("WARNING", "SEV2"), ("INFO", "SEV3"), ("X", None)]
)
def test_channel_severities(severity, expected):
    payload = load("newrelic_channel_trigger.json") | {"severity": severity}
    assert parse(payload).severity == expected


def test_channel_unknown_state_is_rejected():
    with pytest.raises(DeliveryRejected) as caught:
        parse(load("newrelic_channel_trigger.json") | {"current_state": "exploded"})
    assert "'current_state'" in caught.value.message


# --- issue 26: extra template fields are details; runbook links -------------------------------------------


def test_workflow_extra_fields_and_runbook():
    payload = load("newrelic_workflow_trigger.json") | {
        "runbookUrl": "https://wiki.example.org/rb/orders",
        "violationChartUrl": "https://chart.example/1",
        "owner": {"team": "orders"},
    }
    alert = parse(payload)
    assert alert.runbook_url == "https://wiki.example.org/rb/orders"
    assert alert.details["violationChartUrl"] == "https://chart.example/1"
    assert alert.details["owner"] == {"team": "orders"}
    assert "title" not in alert.details and "id" not in alert.details
    assert alert.details["accumulations"] == payload["accumulations"]


def test_workflow_runbook_from_accumulations():
    payload = load("newrelic_workflow_trigger.json")
    payload["accumulations"]["runbookUrl"] = ["not a url", "https://wiki.example.org/rb/1"]
    assert parse(payload).runbook_url == "https://wiki.example.org/rb/1"


def test_channel_runbook_and_extra_fields():
    payload = load("newrelic_channel_trigger.json") | {
        "runbook_url": "https://wiki.example.org/rb/2",
        "violation_chart_url": "https://chart.example/2",
    }
    alert = parse(payload)
    assert alert.runbook_url == "https://wiki.example.org/rb/2"
    assert alert.details["violation_chart_url"] == "https://chart.example/2"
    assert "incident_id" not in alert.details
