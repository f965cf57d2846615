"""Each inbound source opens, deduplicates, updates and closes its incident through the HTTP API:
custom (signed schema and legacy), New Relic, Sentry, Alertmanager and Grafana. CloudWatch and
PagerDuty have their own modules."""

from __future__ import annotations

import json
from typing import Any

from chalicelib.catalog.service import Service
from chalicelib.integration import signing
from tests.api.test_webhooks_api import (
    api,
    assert_accepted,
    drain_events,
    event_types,
    fixture,
    incident,
    integrate,
    post,
    record,
)

# Fixtures of test_webhooks_api, re-exported so pytest finds them here (frozen_clock is autouse).
from tests.api.test_webhooks_api import frozen_clock as frozen_clock
from tests.api.test_webhooks_api import services as services
from tests.conftest import NOW, Org

TIMESTAMP = int(NOW.timestamp())


def open_numbers(client: Any, org: Org) -> set[str]:
    response = api(client, "get", "/api/v1/incidents", org.owner_key)
    return {item["incident_number"] for item in response.json["data"]["items"]}


def test_custom_signed_schema_lifecycle(client: Any, org: Org, services: list[Service]) -> None:
    hook = integrate(client, org, "custom", signing=True)
    key, secret = hook["routing_key"], hook["signing_secret"]

    sent = iter(range(1000))

    def send(body: dict[str, Any]) -> Any:
        # Each send is a new delivery, signed a second later: the very same signed request again
        # would be a replay, answered with the first incident (test_webhooks_forgery_api).
        raw = json.dumps(body)
        return post(client, key, raw, signing.signed_headers(secret, TIMESTAMP - next(sent), raw))

    trigger = fixture("custom_signed_trigger.json") | {"service_id": "SER-00002"}
    created = assert_accepted(send(trigger), 201, deduplicated=False)
    assert (created["title"], created["severity"], created["status"]) == (trigger["title"], "SEV1", "new")
    number = created["id"]
    assert incident(client, org, number)["service_keys"] == [services[1].service_key]
    stored = record(org, number)
    assert stored.alert_count == 1
    assert stored.source["dedup_key"] == "checkout-latency-euw"
    assert stored.source["source_url"] == trigger["source_url"]
    assert stored.source["metadata"] == trigger["metadata"]

    again = assert_accepted(send(trigger), 200, deduplicated=True)
    assert again["id"] == number
    assert record(org, number).alert_count == 2
    assert "incident.alert_received" in drain_events()
    detail = incident(client, org, number)
    assert event_types(detail).count("alert_received") == 1

    moved = assert_accepted(send(trigger | {"status": "investigating"}), 200, deduplicated=True)
    assert (moved["id"], moved["status"]) == (number, "investigating")
    assert incident(client, org, number)["status"] == "investigating"

    resolve = fixture("custom_signed_resolve.json") | {"service_id": "SER-00002"}
    resolved = assert_accepted(send(resolve), 200, deduplicated=True)
    assert (resolved["id"], resolved["status"]) == (number, "resolved")
    assert incident(client, org, number)["resolved_at"] is not None
    response = send(resolve)
    assert assert_accepted(response, 200, deduplicated=True)["status"] == "resolved"
    assert response.json["message"] == "already resolved"

    # Not reopened: the same key after resolution opens a new incident.
    reopened = assert_accepted(send(trigger), 201, deduplicated=False)
    assert reopened["id"] != number
    assert incident(client, org, number)["status"] == "resolved"
    assert open_numbers(client, org) == {reopened["id"]}
    # A resolve with no open incident behind its key is accepted and changes nothing.
    response = send({"title": "x", "service_id": "SER-00001", "status": "resolved", "dedup_key": "never-seen"})
    assert response.status_code == 200 and response.json["incident"] is None


def test_custom_without_dedup_key_always_creates(client: Any, org: Org, services: list[Service]) -> None:
    hook = integrate(client, org, "custom")
    body = {"title": "Nightly job failed", "service_id": "SER-00001"}
    numbers = {assert_accepted(post(client, hook["routing_key"], body), 201, deduplicated=False)["id"] for _ in "ab"}
    assert len(numbers) == 2
    # status investigating on a new alert opens it and moves it at once.
    moved = assert_accepted(
        post(client, hook["routing_key"], body | {"status": "investigating"}), 201, deduplicated=False
    )
    assert moved["status"] == "investigating"


def test_custom_legacy_payloads(client: Any, org: Org, services: list[Service]) -> None:
    hook = integrate(client, org, "custom", default_service=services[0].service_key)
    key = hook["routing_key"]
    bearer = {"Authorization": f"Bearer {key}"}
    legacy = fixture("custom_legacy_trigger.json")
    legacy["tags"]["service_id"] = "SER-00002"

    response = post(client, "/v1/incidents", legacy, bearer)
    created = assert_accepted(response, 201, deduplicated=False)
    assert response.json["success"] is True and set(response.json) >= {"success", "incident"}
    assert (created["title"], created["severity"], created["status"]) == (legacy["title"], "SEV1", "new")
    assert incident(client, org, created["id"])["service_keys"] == [services[1].service_key]
    metadata = record(org, created["id"]).source["metadata"]
    assert metadata["check_id"] == "88123" and metadata["environment"] == "production"  # extra fields kept
    assert metadata["tags.team"] == "payments"
    assert metadata["customer_impact"] == "true"
    assert metadata["affected_services"] == "payments-api, checkout"

    # No dedup key in the legacy schema: every delivery opens an incident, on every path.
    for path, headers in ((key, {}), (f"/webhooks/custom/{key}", {}), ("/v1/incidents", bearer)):
        other = assert_accepted(post(client, path, legacy, headers), 201, deduplicated=False)
        assert other["id"] != created["id"]

    for word, severity in (
        ("Critical", "SEV0"),
        ("High", "SEV1"),
        ("Medium", "SEV2"),
        ("Low", "SEV3"),
        ("Pre-emptive", "SEV4"),
        ("critical", "SEV0"),
        (None, "SEV2"),
    ):
        body = {"title": f"Legacy {word}", "service": "web", **({"severity": word} if word else {})}
        made = assert_accepted(post(client, "/v1/incidents", body, bearer), 201, deduplicated=False)
        assert made["severity"] == severity, word
        assert incident(client, org, made["id"])["service_keys"] == [services[0].service_key]  # default service


def test_newrelic_lifecycle(client: Any, org: Org, services: list[Service]) -> None:
    hook = integrate(client, org, "newrelic", default_service=services[0].service_key)
    key = hook["routing_key"]
    trigger = fixture("newrelic_workflow_trigger.json")
    trigger["accumulations"]["tag"]["service_id"] = ["SER-00002"]

    created = assert_accepted(post(client, key, trigger), 201, deduplicated=False)
    assert (created["title"], created["severity"], created["status"]) == (trigger["title"], "SEV1", "new")
    number = created["id"]
    assert incident(client, org, number)["service_keys"] == [services[1].service_key]  # tag routing
    assert assert_accepted(post(client, key, trigger), 200, deduplicated=True)["id"] == number
    assert record(org, number).alert_count == 2
    drain_events()
    assert "alert_received" in event_types(incident(client, org, number))

    acknowledged = assert_accepted(post(client, key, trigger | {"state": "ACKNOWLEDGED"}), 200, deduplicated=True)
    assert acknowledged["status"] == "investigating"
    assert incident(client, org, number)["acknowledged_at"] is not None

    closed = assert_accepted(post(client, key, fixture("newrelic_workflow_resolve.json")), 200, deduplicated=True)
    assert (closed["id"], closed["status"]) == (number, "resolved")
    assert assert_accepted(post(client, key, trigger), 201, deduplicated=False)["id"] != number

    plain = {k: v for k, v in trigger.items() if k != "accumulations"}
    for priority, severity in (("CRITICAL", "SEV0"), ("HIGH", "SEV1"), ("MEDIUM", "SEV2"), ("LOW", "SEV3")):
        body = plain | {"id": f"issue-{priority}", "priority": priority}
        made = assert_accepted(post(client, key, body), 201, deduplicated=False)
        assert made["severity"] == severity
        assert incident(client, org, made["id"])["service_keys"] == [services[0].service_key]

    # The older notification channel format: open, then closed.
    channel = fixture("newrelic_channel_trigger.json")
    channel["targets"][0]["labels"]["service_id"] = "SER-00002"
    opened = assert_accepted(post(client, key, channel), 201, deduplicated=False)
    assert opened["severity"] == "SEV0"
    closed = assert_accepted(post(client, key, fixture("newrelic_channel_resolve.json")), 200, deduplicated=True)
    assert (closed["id"], closed["status"]) == (opened["id"], "resolved")


def test_sentry_lifecycle(client: Any, org: Org, services: list[Service]) -> None:
    secret = "sentry-client-secret-1"
    hook = integrate(client, org, "sentry", client_secret=secret, default_service=services[0].service_key)
    assert hook["has_client_secret"] is True

    def send(resource: str, body: dict[str, Any]) -> Any:
        raw = json.dumps(body).encode()
        headers = {
            "Sentry-Hook-Resource": resource,
            "Sentry-Hook-Signature": signing.sentry_signature(secret, raw),
            "Sentry-Hook-Timestamp": str(TIMESTAMP),
            "Request-ID": "0123456789abcdef0123456789abcdef",
        }
        return post(client, hook["routing_key"], raw, headers)

    created = assert_accepted(send("issue", fixture("sentry_issue_created.json")), 201, deduplicated=False)
    assert (created["title"], created["severity"]) == ("KeyError: 'currency'", "SEV1")  # level error
    number = created["id"]
    event_alert = fixture("sentry_event_alert.json")
    event_alert["data"]["event"]["tags"][2] = ["service_id", "SER-00002"]
    # The event alert carries the same issue id: it updates the same incident.
    assert assert_accepted(send("event_alert", event_alert), 200, deduplicated=True)["id"] == number
    assert record(org, number).alert_count == 2
    drain_events()
    assert "alert_received" in event_types(incident(client, org, number))

    resolved = assert_accepted(send("issue", fixture("sentry_issue_resolved.json")), 200, deduplicated=True)
    assert (resolved["id"], resolved["status"]) == (number, "resolved")
    again = assert_accepted(send("event_alert", event_alert), 201, deduplicated=False)
    assert again["id"] != number and again["severity"] == "SEV0"  # level fatal
    assert incident(client, org, again["id"])["service_keys"] == [services[1].service_key]  # service_id tag

    metric = assert_accepted(
        send("metric_alert", fixture("sentry_metric_alert_critical.json")), 201, deduplicated=False
    )
    assert metric["severity"] == "SEV1"
    assert assert_accepted(send("metric_alert", fixture("sentry_metric_alert_critical.json")), 200, deduplicated=True)
    closed = assert_accepted(send("metric_alert", fixture("sentry_metric_alert_resolved.json")), 200, deduplicated=True)
    assert (closed["id"], closed["status"]) == (metric["id"], "resolved")

    installation = send("installation", fixture("sentry_installation.json"))
    assert installation.status_code == 200
    assert installation.json["incident"] is None and installation.json["deduplicated"] is False

    # Without a client secret no signature is needed; the legacy WebHooks plugin has no resource header.
    unsigned = integrate(client, org, "sentry", default_service=services[0].service_key)
    assert unsigned["has_client_secret"] is False
    headers = {"Sentry-Hook-Resource": "issue", "Sentry-Hook-Signature": "0" * 64}
    issue = fixture("sentry_issue_created.json")
    opened = assert_accepted(post(client, unsigned["routing_key"], issue, headers), 201, deduplicated=False)
    plugin = fixture("sentry_plugin.json")
    made = assert_accepted(post(client, unsigned["routing_key"], plugin), 200, deduplicated=True)
    assert made["id"] == opened["id"]  # the same issue id: the existing incident


def _alertmanager(service_id: str | None, **changes: Any) -> dict[str, Any]:
    body = fixture("alertmanager_firing.json")
    for labels in (body["commonLabels"], *(alert["labels"] for alert in body["alerts"])):
        if service_id is None:
            labels.pop("service_id")
        else:
            labels["service_id"] = service_id
    return body | changes


def test_alertmanager_lifecycle(client: Any, org: Org, services: list[Service]) -> None:
    hook = integrate(client, org, "alertmanager", default_service=services[0].service_key)
    key = hook["routing_key"]
    firing = _alertmanager("SER-00002")
    created = assert_accepted(post(client, key, firing), 201, deduplicated=False)
    assert (created["title"], created["severity"]) == ("Disk almost full on storage nodes", "SEV0")
    number = created["id"]
    assert incident(client, org, number)["service_keys"] == [services[1].service_key]  # service_id label
    # Alertmanager re-sends the whole group: one incident per groupKey.
    for _ in range(2):
        assert assert_accepted(post(client, key, firing), 200, deduplicated=True)["id"] == number
    assert record(org, number).alert_count == 3
    drain_events()
    assert event_types(incident(client, org, number)).count("alert_received") == 2

    resolved = assert_accepted(post(client, key, fixture("alertmanager_resolved.json")), 200, deduplicated=True)
    assert (resolved["id"], resolved["status"]) == (number, "resolved")
    assert assert_accepted(post(client, key, firing), 201, deduplicated=False)["id"] != number

    warning = _alertmanager(None, groupKey='{}:{alertname="Latency"}')
    warning["commonLabels"]["severity"] = "warning"
    made = assert_accepted(post(client, key, warning), 201, deduplicated=False)
    assert made["severity"] == "SEV2"
    assert incident(client, org, made["id"])["service_keys"] == [services[0].service_key]  # default service


def test_grafana_v1_lifecycle(client: Any, org: Org, services: list[Service]) -> None:
    hook = integrate(client, org, "alertmanager")
    firing = json.loads(json.dumps(fixture("grafana_firing.json")).replace("svc_q1w2e3r4t5", services[1].service_key))
    created = assert_accepted(post(client, hook["routing_key"], firing), 201, deduplicated=False)
    assert created["severity"] == "SEV2" and "HighQueueDepth" in created["title"]
    assert incident(client, org, created["id"])["service_keys"] == [services[1].service_key]
    assert assert_accepted(post(client, hook["routing_key"], firing), 200, deduplicated=True)["id"] == created["id"]
    ok = firing | {"status": "resolved", "state": "ok", "alerts": [firing["alerts"][0] | {"status": "resolved"}]}
    resolved = assert_accepted(post(client, hook["routing_key"], ok), 200, deduplicated=True)
    assert (resolved["id"], resolved["status"]) == (created["id"], "resolved")
