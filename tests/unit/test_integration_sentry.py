from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from chalicelib.errors import DeliveryRejected
from chalicelib.integration.parsers.sentry import parse_sentry

FIXTURES = Path(__file__).parent / "fixtures" / "integration"


def load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


def hook(resource: str | None, payload: dict[str, Any], **extra: str):
    headers = {"Sentry-Hook-Resource": resource} if resource else {}
    headers |= extra
    return parse_sentry(headers, json.dumps(payload).encode())


def test_issue_created_fixture():
    alert = parse_sentry(
        {"sentry-hook-resource": "issue", "Request-ID": "0f1e2d3c4b5a69788796a5b4c3d2e1f0"},
        (FIXTURES / "sentry_issue_created.json").read_bytes(),
    )
    assert alert.source == "sentry"
    assert alert.action == "trigger"
    assert alert.title == "KeyError: 'currency'"
    assert alert.severity == "SEV1"
    assert alert.dedup_key == "4410923817"
    assert alert.source_url == "https://acme.sentry.io/issues/4410923817/"
    assert alert.metadata["short_id"] == "CHECKOUT-2F"
    assert alert.metadata["culprit"] == "checkout.pricing in compute_total"
    assert alert.metadata["project"] == "checkout"
    assert alert.description is not None and "in checkout.pricing" in alert.description
    assert alert.delivery_id == "0f1e2d3c4b5a69788796a5b4c3d2e1f0"
    assert "CHECKOUT-2F" in alert.summary


def test_issue_resolved_fixture():
    alert = hook("issue", load("sentry_issue_resolved.json"))
    assert alert.action == "resolve"
    assert alert.dedup_key == "4410923817"
    assert "Dana Whitfield" in alert.summary


@pytest.mark.parametrize(
    ("action", "expected"),
    [
        ("created", "trigger"),
        ("unresolved", "trigger"),
        ("resolved", "resolve"),
        ("assigned", "note"),
        ("archived", "note"),
        ("ignored", "note"),
        ("something_new", "note"),
    ],
)
def test_issue_action_table(action, expected):
    assert hook("issue", load("sentry_issue_created.json") | {"action": action}).action == expected


def test_assigned_names_the_assignee():
    payload = load("sentry_issue_created.json") | {"action": "assigned"}
    payload["data"]["issue"]["assignedTo"] = {"type": "user", "id": "51", "name": "Dana Whitfield"}
    alert = hook("issue", payload)
    assert alert.action == "note"
    assert "assigned to Dana Whitfield" in alert.summary


@pytest.mark.parametrize(
    ("level", "severity"),
    [
        ("fatal", "SEV0"),
        ("error", "SEV1"),
        ("warning", "SEV2"),
        ("info", "SEV3"),
        ("debug", "SEV4"),
        ("sample", "SEV4"),
        ("FATAL", "SEV0"),
        ("weird", None),
    ],
)
def test_level_table(level, severity):
    payload = load("sentry_issue_created.json")
    payload["data"]["issue"]["level"] = level
    assert hook("issue", payload).severity == severity


@pytest.mark.parametrize(
    ("mutate", "fragment"),
    [
        (lambda p: p["data"].pop("issue"), "'data.issue'"),
        (lambda p: p["data"]["issue"].pop("id"), "'data.issue.id'"),
        (lambda p: p.__setitem__("data", ["x"]), "'data'"),
    ],
)
def test_issue_without_its_id_is_rejected(mutate, fragment):
    payload = load("sentry_issue_created.json")
    mutate(payload)
    with pytest.raises(DeliveryRejected) as caught:
        hook("issue", payload)
    assert caught.value.code == "INVALID_PAYLOAD"
    assert fragment in caught.value.message


def test_event_alert_fixture():
    alert = hook("event_alert", load("sentry_event_alert.json"))
    assert alert.action == "trigger"
    assert alert.dedup_key == "4410923817"  # same key as the issue resource: issue resolved closes it
    assert alert.severity == "SEV0"
    assert alert.service_hint == "SER-00042"
    assert alert.title == "PaymentGatewayTimeout: upstream did not answer in 30s"
    assert alert.metadata["environment"] == "production"
    assert alert.metadata["release"] == "checkout@2026.11.3"
    assert alert.metadata["tags.server_name"] == "web-7"
    assert "Page on fatal checkout errors" in alert.summary
    assert alert.source_url is not None and "/events/" in alert.source_url


def test_event_alert_tags_as_objects():
    payload = load("sentry_event_alert.json")
    payload["data"]["event"]["tags"] = [{"key": "service_id", "value": "svc_0123456789"}]
    assert hook("event_alert", payload).service_hint == "svc_0123456789"


def test_event_alert_without_event_is_rejected():
    with pytest.raises(DeliveryRejected):
        hook("event_alert", {"action": "triggered", "data": {}})


def test_metric_alert_critical_fixture():
    alert = hook("metric_alert", load("sentry_metric_alert_critical.json"))
    assert alert.action == "trigger"
    assert alert.severity == "SEV1"
    assert alert.dedup_key == "metric_alert:88213"
    assert alert.title == "Critical: Checkout p95 duration"
    assert alert.description == "1840ms p95(transaction.duration) in the last 10 minutes"
    assert alert.source_url == "https://acme.sentry.io/organizations/acme/alerts/rules/details/7001/"


def test_metric_alert_resolved_fixture():
    alert = hook("metric_alert", load("sentry_metric_alert_resolved.json"))
    assert alert.action == "resolve"
    assert alert.dedup_key == "metric_alert:88213"


def test_metric_alert_warning():
    alert = hook("metric_alert", load("sentry_metric_alert_critical.json") | {"action": "warning"})
    assert (alert.action, alert.severity) == ("trigger", "SEV2")


def test_metric_alert_without_id_is_rejected():
    payload = load("sentry_metric_alert_critical.json")
    del payload["data"]["metric_alert"]["id"]
    with pytest.raises(DeliveryRejected):
        hook("metric_alert", payload)


@pytest.mark.parametrize("resource", ["installation", "error", "Installation", "something_new"])
def test_resources_that_are_acknowledged_and_ignored(resource):
    alert = hook(resource, load("sentry_installation.json"))
    assert alert.action == "ignore"


def test_comment_is_a_note_on_the_issue():
    payload = {
        "action": "created",
        "data": {"comment": "Rolling back 2026.11.3", "issue_id": 4410923817, "comment_id": "77"},
        "actor": {"type": "user", "id": "51", "name": "Dana Whitfield"},
    }
    alert = hook("comment", payload)
    assert alert.action == "note"
    assert alert.dedup_key == "4410923817"
    assert alert.description == "Rolling back 2026.11.3"


def test_legacy_plugin_body_without_resource_header():
    alert = parse_sentry({}, (FIXTURES / "sentry_plugin.json").read_bytes())
    assert alert.action == "trigger"
    assert alert.dedup_key == "4410923817"
    assert alert.severity == "SEV2"
    assert alert.title == "Currency missing on cart"
    assert alert.service_hint == "svc_ab12cd34ef"
    assert alert.source_url == "https://acme.sentry.io/organizations/acme/issues/4410923817/"
    assert alert.metadata["triggering_rules"] == "Notify on new warnings"


def test_no_header_and_not_a_plugin_body_is_rejected():
    with pytest.raises(DeliveryRejected) as caught:
        hook(None, {"action": "created", "data": {}})
    assert "Sentry-Hook-Resource" in caught.value.message


def test_non_json_body_is_rejected():
    with pytest.raises(DeliveryRejected):
        parse_sentry({"Sentry-Hook-Resource": "issue"}, b"<html>")


# --- issue 26: what Sentry carries beyond the mapped fields ---------------------------------------------


def test_event_alert_details_are_tags_extra_and_contexts():
    payload = load("sentry_event_alert.json")
    payload["data"]["event"] |= {"extra": {"order_id": "o-1"}, "contexts": {"os": {"name": "Linux"}}}
    alert = hook("event_alert", payload)
    assert alert.details["tags"]["server_name"] == "web-7"
    assert alert.details["extra"] == {"order_id": "o-1"}
    assert alert.details["contexts"] == {"os": {"name": "Linux"}}
    assert alert.source_url == payload["data"]["event"]["web_url"]


def test_issue_details_are_its_unmapped_fields():
    alert = hook("issue", load("sentry_issue_created.json"))
    issue = load("sentry_issue_created.json")["data"]["issue"]
    assert alert.details and set(alert.details) <= set(issue)
    assert "title" not in alert.details and "id" not in alert.details


def test_metric_alert_critical_stays_sev1():
    assert hook("metric_alert", load("sentry_metric_alert_critical.json")).severity == "SEV1"
