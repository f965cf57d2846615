"""Issue 26: an inbound alert is never lost to its shape, and never misrouted by its severity word.

- The body that paged the wrong team (a legacy severity word beside service_id and dedup_key)
  lands on the service it names and deduplicates by its key.
- Fields a source's format does not define are kept as the alert's details (32 keys, 16 KiB),
  shown on the alert and on the incident, and named in the answer's `warnings`.
- Native sources keep what their formats carry beyond what is mapped, and their runbook links.
- Refused only when no alert can be made: not JSON, no title, too large, a dedup_key too long.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from chalicelib.catalog import service as catalog
from chalicelib.catalog.service import Service
from chalicelib.integration import signing
from tests.api.test_webhooks_api import api, assert_accepted, assert_error, fixture, incident, integrate, post

# Fixtures of test_webhooks_api, re-exported so pytest finds them here (frozen_clock is autouse).
from tests.api.test_webhooks_api import frozen_clock as frozen_clock
from tests.conftest import NOW, Org

WHY = {"title": "Search nodes down", "service_id": "SER-00003", "severity": "critical", "dedup_key": "es-nodes"}


@pytest.fixture
def services(org: Org) -> list[Service]:
    """Checkout API (SER-00001), Payments (SER-00002), Search (SER-00003)."""
    names = ("Checkout API", "Payments", "Search")
    made = [catalog.create_service(organization_id=org.organization_id, name=n, now=NOW) for n in names]
    assert [s.service_id for s in made] == ["SER-00001", "SER-00002", "SER-00003"]
    return made


def alert_of(client: Any, org: Org, response: Any) -> dict[str, Any]:
    found = api(client, "get", f"/api/v1/alerts/{response.json['alert']['id']}", org.owner_key)
    assert found.status_code == 200, found.body
    return dict(found.json["data"])


# --- routing and dedup never depend on the severity's vocabulary ------------------------------------


@pytest.mark.parametrize("default", [True, False], ids=["with-default-service", "without-default-service"])
def test_the_body_that_paged_the_wrong_team_lands_on_its_service_and_deduplicates(
    client: Any, org: Org, services: list[Service], default: bool
) -> None:
    fields = {"default_service": services[0].service_key} if default else {}
    hook = integrate(client, org, "custom", **fields)
    first = post(client, hook["routing_key"], WHY)
    made = assert_accepted(first, 201, deduplicated=False)
    assert made["severity"] == "SEV0"
    assert first.json["warnings"] == []
    assert incident(client, org, made["id"])["service_keys"] == [services[2].service_key]
    alert = alert_of(client, org, first)
    assert (alert["service_id"], alert["dedup_key"], alert["source"]) == ("SER-00003", "es-nodes", "custom")
    again = post(client, hook["routing_key"], WHY)
    assert assert_accepted(again, 200, deduplicated=True)["id"] == made["id"]
    assert again.json["alert"]["count"] == 2


@pytest.mark.parametrize("word", ["SEV1", "High", "error", "P2", "sev-1", "HIGH"])
def test_any_vocabulary_routes_by_service_id_and_dedups_by_key(
    client: Any, org: Org, services: list[Service], word: str
) -> None:
    hook = integrate(client, org, "custom", default_service=services[0].service_key)
    body = {"title": "Card auth failing", "service_id": services[1].service_key, "severity": word, "dedup_key": "c"}
    made = assert_accepted(post(client, hook["routing_key"], body), 201, deduplicated=False)
    assert made["severity"] == "SEV1"
    assert incident(client, org, made["id"])["service_keys"] == [services[1].service_key]
    assert assert_accepted(post(client, hook["routing_key"], body), 200, deduplicated=True)["id"] == made["id"]


def test_an_unknown_severity_word_uses_the_service_default_with_a_warning(
    client: Any, org: Org, services: list[Service]
) -> None:
    catalog.update_service(
        organization_id=org.organization_id, service_ref="SER-00003", now=NOW, default_severity="SEV2"
    )
    hook = integrate(client, org, "custom")
    response = post(client, hook["routing_key"], {**WHY, "severity": "catastrophic"})
    assert assert_accepted(response, 201, deduplicated=False)["severity"] == "SEV2"
    assert response.json["warnings"] == [
        "'severity' 'catastrophic' is not a severity word we know; the service's default is used."
    ]


# --- unknown fields never lose an alert ------------------------------------------------------------------


def test_unknown_fields_are_kept_as_details_on_the_alert_and_the_incident(
    client: Any, org: Org, services: list[Service]
) -> None:
    hook = integrate(client, org, "custom", default_service=services[0].service_key)
    body = {
        **WHY,
        "details": {"cluster": "es-prod", "red_shards": 12, "nodes": ["es-3", "es-4"]},
        "team": "search",
        "metadata": {"runbook_url": "https://wiki.example.org/runbooks/es-red"},
        "source_url": "https://grafana.example.org/d/es",
    }
    response = post(client, hook["routing_key"], body)
    made = assert_accepted(response, 201, deduplicated=False)
    assert response.json["warnings"] == [
        "'details', 'team' are not part of the custom webhook payload; kept in details."
    ]
    details = {"cluster": "es-prod", "red_shards": 12, "nodes": ["es-3", "es-4"], "team": "search"}
    alert = alert_of(client, org, response)
    assert alert["details"] == details
    assert alert["runbook_url"] == "https://wiki.example.org/runbooks/es-red"
    assert alert["source_url"] == "https://grafana.example.org/d/es"
    detail = incident(client, org, made["id"])
    assert detail["details"] == details
    assert (detail["runbook_url"], detail["source_url"]) == (alert["runbook_url"], alert["source_url"])
    assert detail["service_keys"] == [services[2].service_key]
    listed = api(client, "get", "/api/v1/incidents", org.owner_key).json["data"]["items"]
    assert listed[0]["runbook_url"] == "https://wiki.example.org/runbooks/es-red"


def test_a_legacy_body_with_details_answers_201_with_a_warning(client: Any, org: Org, services: list[Service]) -> None:
    hook = integrate(client, org, "custom", default_service=services[0].service_key)
    body = {"title": "Checkout slow", "severity": "High", "details": {"p99_ms": 2300}}
    response = post(client, hook["routing_key"], body)
    assert assert_accepted(response, 201, deduplicated=False)["severity"] == "SEV1"
    assert response.json["warnings"] == ["'details' is not part of the legacy payload; kept in details."]
    assert alert_of(client, org, response)["details"] == {"p99_ms": 2300}


def test_details_are_bounded_and_what_is_cut_is_named(client: Any, org: Org, services: list[Service]) -> None:
    hook = integrate(client, org, "custom", default_service=services[0].service_key)
    extra = {f"field{i:02d}": i for i in range(40)} | {"field03": "x" * 17_000}
    response = post(client, hook["routing_key"], {**WHY, **extra})
    assert_accepted(response, 201, deduplicated=False)
    warnings = response.json["warnings"]
    assert "details keep at most 32 keys; 7 more were cut: 'field33', 'field34'" in warnings[1]
    assert warnings[2] == "details keep at most 16 KiB as JSON; cut to fit: 'field03'."
    details = alert_of(client, org, response)["details"]
    assert len(details) == 32 and "field03" not in details and details["field32"] == 32
    assert len(json.dumps(details, separators=(",", ":")).encode()) <= 16 * 1024


def test_a_replayed_signed_delivery_answers_the_same_warnings(client: Any, org: Org, services: list[Service]) -> None:
    hook = integrate(client, org, "custom", signing=True, default_service=services[0].service_key)
    raw = json.dumps({**WHY, "owner": "search-team"})
    headers = signing.signed_headers(hook["signing_secret"], int(NOW.timestamp()), raw)
    first = post(client, hook["routing_key"], raw, headers)
    replay = post(client, hook["routing_key"], raw, headers)
    assert first.status_code == 201 and replay.status_code == 200
    assert (
        first.json["warnings"]
        == replay.json["warnings"]
        == ["'owner' is not part of the custom webhook payload; kept in details."]
    )


# --- what is still refused ----------------------------------------------------------------------------------


def test_only_what_cannot_make_an_alert_is_refused(client: Any, org: Org, services: list[Service]) -> None:
    hook = integrate(client, org, "custom", default_service=services[0].service_key)
    key = hook["routing_key"]
    for body, words in (
        ("{not json", "not valid JSON"),
        ({"description": "no title"}, "'title' is required"),
        ({**WHY, "title": "  "}, "'title' is required"),
        ({**WHY, "dedup_key": "k" * 256}, "'dedup_key' must be at most 255 characters"),
    ):
        response = post(client, key, body)
        assert_error(response, "INVALID_PAYLOAD")
        assert words in response.json["error"]["message"], response.json
    assert_error(post(client, key, {**WHY, "description": "d" * (256 * 1024)}), "PAYLOAD_TOO_LARGE")


# --- native sources keep what they carry beyond what is mapped ----------------------------------------------


def test_pagerduty_custom_details_and_runbook_link(client: Any, org: Org, services: list[Service]) -> None:
    hook = integrate(client, org, "pagerduty", default_service=services[0].service_key)
    event = fixture("pagerduty_trigger.json") | {"routing_key": hook["routing_key"]}
    event["payload"]["custom_details"] = {"service_id": "SER-00002", "status_code": 502, "checked_from": ["fra"]}
    response = post(client, hook["routing_key"], event)
    assert_accepted(response, 201, deduplicated=False)
    alert = alert_of(client, org, response)
    assert alert["details"] == {"service_id": "SER-00002", "status_code": 502, "checked_from": ["fra"]}
    assert alert["runbook_url"] == "https://wiki.example.org/runbooks/http-check"
    assert alert["service_id"] == "SER-00002"
    # The drop-in keeps PagerDuty's own answer; the details land on the alert all the same.
    dropped_in = post(client, "/v2/enqueue", event | {"dedup_key": "other"})
    assert dropped_in.status_code == 202 and set(dropped_in.json) == {"status", "message", "dedup_key"}


def test_alertmanager_labels_annotations_and_runbook(client: Any, org: Org, services: list[Service]) -> None:
    hook = integrate(client, org, "alertmanager", default_service=services[0].service_key)
    body = fixture("alertmanager_firing.json")
    for alert in body["alerts"]:
        alert["labels"]["service_id"] = "SER-00003"
        alert["annotations"]["runbook_url"] = "https://runbooks.example.org/disk-full"
    body["commonLabels"]["service_id"] = "SER-00003"
    response = post(client, hook["routing_key"], body)
    assert_accepted(response, 201, deduplicated=False)
    alert = alert_of(client, org, response)
    assert alert["runbook_url"] == "https://runbooks.example.org/disk-full"
    assert alert["details"]["labels"]["instance"] == "store-1:9100"
    assert alert["details"]["annotations"]["description"] == "/var/lib/data is 96% full on store-1"
    assert [other["labels"]["instance"] for other in alert["details"]["other_alerts"]] == [
        "store-2:9100",
        "store-3:9100",
    ]
    assert alert["labels"]["alertname"] == "DiskFull"


def test_new_relic_extra_template_fields(client: Any, org: Org, services: list[Service]) -> None:
    hook = integrate(client, org, "newrelic", default_service=services[0].service_key)
    body = fixture("newrelic_workflow_trigger.json")
    body["accumulations"]["tag"]["service_id"] = ["SER-00003"]
    body |= {"runbookUrl": "https://wiki.example.org/rb/orders", "violationChartUrl": "https://chart.example/1"}
    response = post(client, hook["routing_key"], body)
    assert_accepted(response, 201, deduplicated=False)
    alert = alert_of(client, org, response)
    assert alert["runbook_url"] == "https://wiki.example.org/rb/orders"
    assert alert["details"]["violationChartUrl"] == "https://chart.example/1"
    assert alert["source_url"].startswith("https://radar-api.service.newrelic.com/")


def test_sentry_event_tags_and_extra(client: Any, org: Org, services: list[Service]) -> None:
    hook = integrate(client, org, "sentry", default_service=services[0].service_key)
    body = fixture("sentry_event_alert.json")
    event = body["data"]["event"]
    event["tags"] = [["environment", "production"], ["service_id", "SER-00003"]]
    event["extra"] = {"order_id": "o-991", "attempt": 3}
    headers = {"Sentry-Hook-Resource": "event_alert"}
    response = post(client, hook["routing_key"], body, headers)
    assert_accepted(response, 201, deduplicated=False)
    alert = alert_of(client, org, response)
    assert alert["details"]["extra"] == {"order_id": "o-991", "attempt": 3}
    assert alert["details"]["tags"] == {"environment": "production", "service_id": "SER-00003"}
    assert alert["source_url"] == event["web_url"]
    assert alert["service_id"] == "SER-00003"
