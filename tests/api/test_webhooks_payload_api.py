"""Inbound webhooks over HTTP: INVALID_SIGNATURE, SIGNATURE_EXPIRED and INVALID_PAYLOAD, and no
500 for any malformed body on any path."""

from __future__ import annotations

import json
from typing import Any

from chalicelib.catalog.service import Service
from chalicelib.integration import signing
from tests.api.test_webhooks_api import (
    FIXTURES,
    UNKNOWN_KEY,
    assert_accepted,
    assert_error,
    fixture,
    integrate,
    post,
    reconfigure,
    signed_trigger,
)

# Fixtures of test_webhooks_api, re-exported so pytest finds them here (frozen_clock is autouse).
from tests.api.test_webhooks_api import frozen_clock as frozen_clock
from tests.api.test_webhooks_api import no_network as no_network
from tests.api.test_webhooks_api import services as services
from tests.conftest import NOW, Org

# --- INVALID_SIGNATURE and SIGNATURE_EXPIRED -----------------------------------------------------------


def test_signed_custom_webhook_signatures(client: Any, org: Org, services: list[Service]) -> None:
    hook = integrate(client, org, "custom", signing=True)
    secret, key = hook["signing_secret"], hook["routing_key"]
    body = json.dumps(signed_trigger(services[0], dedup_key="sig"))
    now = int(NOW.timestamp())
    good = signing.signed_headers(secret, now, body)
    for headers in (
        {},
        {"X-Service-Signature": good["X-Service-Signature"]},
        {"X-Service-Timestamp": good["X-Service-Timestamp"]},
        signing.signed_headers("whsec_another-secret", now, body),
        signing.signed_headers(secret, now, body + " "),  # another body
        {**good, "X-Service-Timestamp": str(now + 1)},  # another timestamp
        {**good, "X-Service-Signature": "sha256=zz"},
        {**good, "X-Service-Signature": good["X-Service-Signature"].removeprefix("sha256=")},
        {**good, "X-Service-Timestamp": "12.5"},
        {**good, "X-Service-Timestamp": "-1"},
    ):
        assert_error(post(client, key, body, headers), "INVALID_SIGNATURE")
    assert_error(post(client, key, body, signing.signed_headers(secret, now - 301, body)), "SIGNATURE_EXPIRED")
    assert_error(post(client, key, body, signing.signed_headers(secret, now + 61, body)), "SIGNATURE_EXPIRED")
    # Edges are inclusive: 300 s old and 60 s ahead are accepted.
    assert post(client, key, body, signing.signed_headers(secret, now - 300, body)).status_code == 201
    assert post(client, key, body, signing.signed_headers(secret, now + 60, body)).status_code == 200
    assert post(client, f"/webhooks/custom/{key}", body, good).status_code == 200
    # The signature is checked before the payload; an authentic bad payload is INVALID_PAYLOAD.
    bad = json.dumps({"title": 5})
    assert_error(post(client, key, bad), "INVALID_SIGNATURE")
    assert_error(post(client, key, bad, signing.signed_headers(secret, now - 301, bad)), "SIGNATURE_EXPIRED")
    assert_error(post(client, key, bad, signing.signed_headers(secret, now, bad)), "INVALID_PAYLOAD")

    # Without a signing secret the routing key alone authenticates; a stray signature is ignored.
    unsigned = integrate(client, org, "custom")
    assert unsigned["signing"] is False and unsigned["signing_secret"] is None
    stray = {"X-Service-Signature": "sha256=00"}
    assert post(client, unsigned["routing_key"], signed_trigger(services[0]), stray).status_code == 201


def test_signing_secret_also_guards_the_legacy_path(client: Any, org: Org, services: list[Service]) -> None:
    """With a signing secret configured the routing key alone no longer authenticates, on any path."""
    hook = integrate(client, org, "custom", signing=True, default_service=services[0].service_key)
    bearer = {"Authorization": f"Bearer {hook['routing_key']}"}
    body = json.dumps({"title": "Legacy alert", "severity": "High"})
    assert_error(post(client, "/v1/incidents", body, bearer), "INVALID_SIGNATURE")
    headers = {**bearer, **signing.signed_headers(hook["signing_secret"], int(NOW.timestamp()), body)}
    assert post(client, "/v1/incidents", body, headers).status_code == 201
    # The legacy path is the custom webhook's: a native integration's key cannot skip its checks there.
    for type_, fields in (("sentry", {"client_secret": "sentry-secret"}), ("cloudwatch", {}), ("newrelic", {})):
        native = integrate(client, org, type_, default_service=services[0].service_key, **fields)
        bearer = {"Authorization": f"Bearer {native['routing_key']}"}
        assert_error(post(client, "/v1/incidents", body, bearer), "ROUTE_NOT_FOUND")


def test_sentry_client_secret_checks_the_hook_signature(client: Any, org: Org, services: list[Service]) -> None:
    hook = integrate(
        client, org, "sentry", client_secret="sentry-client-secret", default_service=services[0].service_key
    )
    body = (FIXTURES / "sentry_issue_created.json").read_bytes()
    resource = {"Sentry-Hook-Resource": "issue"}
    for signature in (None, "0" * 64, signing.sentry_signature("another-secret", body), "not-hex"):
        headers = {**resource, **({"Sentry-Hook-Signature": signature} if signature is not None else {})}
        assert_error(post(client, hook["routing_key"], body, headers), "INVALID_SIGNATURE")
    tampered = body.replace(b"KeyError", b"KeyErrors")
    headers = {**resource, "Sentry-Hook-Signature": signing.sentry_signature("sentry-client-secret", body)}
    assert_error(post(client, hook["routing_key"], tampered, headers), "INVALID_SIGNATURE")
    response = post(client, hook["routing_key"], body, headers)
    assert_accepted(response, 201, deduplicated=False)


# --- INVALID_PAYLOAD -------------------------------------------------------------------------------------


def test_invalid_custom_payloads(client: Any, org: Org, services: list[Service]) -> None:
    # Issue 26: refused only when no alert can be made, or only a wrong one (see docs/INTAKE.md).
    hook = integrate(client, org, "custom", default_service=services[0].service_key)
    key = hook["routing_key"]
    good = signed_trigger(services[0])
    for body in (
        "{not json",
        "",
        "[]",
        '"title"',
        {**good, "title": ""},
        {**good, "title": {"text": "x"}},
        {**good, "service_id": "payments"},
        {**good, "service_id": "SER-" + "1" * 50},
        {**good, "dedup_key": "d" * 256},  # cutting it would merge distinct alerts
        {"service_id": services[0].service_id},
    ):
        assert_error(post(client, key, body), "INVALID_PAYLOAD")
    # Well formed, not a service of this organization: the default service, with a warning (issue 26);
    # refused only by an integration without a default service.
    unknown = {**good, "service_id": "SER-99999"}
    routed = post(client, key, unknown)
    assert routed.status_code == 201 and "routed to the integration's default service" in routed.json["warnings"][-1]
    assert_error(post(client, integrate(client, org, "custom")["routing_key"], unknown), "INVALID_PAYLOAD")
    too_long = post(client, key, {**good, "dedup_key": "d" * 256})
    assert "'dedup_key' must be at most 255 characters" in too_long.json["error"]["message"]
    # Exactly ten metadata keys, a 500-character title and a 255-character dedup key are fine.
    fine = {**good, "title": "t" * 500, "dedup_key": "d" * 255, "metadata": {f"k{i}": "v" for i in range(10)}}
    assert post(client, key, fine).status_code == 201
    assert post(client, key, {**good, "service_id": "SER-00002"}).status_code == 201


def test_custom_payload_problems_that_once_lost_the_alert_are_warnings(
    client: Any, org: Org, services: list[Service]
) -> None:
    hook = integrate(client, org, "custom", default_service=services[0].service_key)
    good = signed_trigger(services[0])
    for body, warning in (
        ({**good, "title": "t" * 501}, "'title' has 501 characters"),
        ({**good, "metadata": {f"k{i}": "v" for i in range(11)}}, "'metadata' holds at most 10"),
        ({**good, "metadata": {"k": 1}}, "'metadata' values must be strings"),
        ({**good, "priority": "P1"}, "'priority' is not part of the custom webhook payload"),
        ({**good, "severity": "SEV9"}, "'severity' 'SEV9' is not a severity word"),
        ({**good, "status": "closed"}, "'status' must be new, investigating or resolved"),
        ({**good, "description": "d" * 5001}, "'description' has 5001 characters; cut to 5000"),
        ({**good, "source_url": "javascript:alert(1)"}, "'source_url' is not an absolute http or https URL"),
        ({"title": "Legacy", "severity": "Urgent"}, "'severity' 'Urgent' is not a severity word"),
        ({"title": "Legacy", "service": "web", "customer_impact": "yes"}, "'customer_impact' must be true or false"),
    ):
        response = post(client, hook["routing_key"], body)
        made = assert_accepted(response, 201, deduplicated=False)
        assert any(warning in text for text in response.json["warnings"]), (body, response.json["warnings"])
        assert made["title"]
    clean = post(client, hook["routing_key"], good)
    assert clean.status_code == 201 and clean.json["warnings"] == []


def test_an_alert_with_no_resolvable_service_is_invalid(client: Any, org: Org, services: list[Service]) -> None:
    custom = integrate(client, org, "custom")  # no default service
    assert_error(post(client, custom["routing_key"], {"title": "Legacy, no service"}), "INVALID_PAYLOAD")
    bearer = {"Authorization": f"Bearer {custom['routing_key']}"}
    assert_error(post(client, "/v1/incidents", {"title": "x", "service": "web"}, bearer), "INVALID_PAYLOAD")
    newrelic = integrate(client, org, "newrelic")
    body = fixture("newrelic_workflow_trigger.json")
    del body["accumulations"]
    assert_error(post(client, newrelic["routing_key"], body), "INVALID_PAYLOAD")
    body["tags"] = {"service_id": "SER-00077"}  # a tag naming no service of this organization
    assert_error(post(client, newrelic["routing_key"], body), "INVALID_PAYLOAD")
    alertmanager = integrate(client, org, "alertmanager")
    am = fixture("alertmanager_firing.json")
    am["commonLabels"].pop("service_id")
    for alert in am["alerts"]:
        alert["labels"].pop("service_id")
    assert_error(post(client, alertmanager["routing_key"], am), "INVALID_PAYLOAD")


# --- never a 500 ------------------------------------------------------------------------------------------

MALFORMED: tuple[bytes, ...] = (
    b"",
    b"   ",
    b"{",
    b"null",
    b"[]",
    b"42",
    b'"text"',
    b"true",
    b"\xff\xfe\x00garbage",
    b"[" * 5000,
    b'{"a":' * 3000,
    b"NaN",
    b'{"title": NaN}',
    b"{}",
    b'{"title": null}',
    b'{"title": {"nested": [1, 2]}, "service_id": ["SER-00001"]}',
    b'{"title": "\\ud800 lone surrogate", "service_id": "SER-00001", "dedup_key": "\\udfff"}',
    b'{"title": 1e999, "description": 123456789012345678901234567890}',
    b'{"title": "t", "metadata": [], "tags": "x", "affected_services": [1]}',
    b'{"status": "firing", "alerts": "many", "groupLabels": []}',
    b'{"status": "resolved", "alerts": [1, null, "x"]}',
    b'{"version": "4", "status": "firing", "alerts": [{"labels": [], "status": 5}], "commonLabels": {"severity": 7}}',
    b'{"id": [], "state": {}, "priority": 1.5, "title": ["a"]}',
    b'{"incident_id": {}, "current_state": "weird", "severity": []}',
    b'{"action": "created", "data": {"issue": {"id": {}}}}',
    b'{"action": "created", "data": []}',
    b'{"action": "triggered", "data": {"event": {"tags": [[1], {"key": null}], "level": []}}}',
    b'{"action": 5, "data": {"metric_alert": {"id": null}}}',
    b'{"Type": "Notification", "Message": 5}',
    b'{"Type": "Notification", "MessageId": "m", "TopicArn": "t", "Message": "{}", "Timestamp": "x",'
    b' "SignatureVersion": "2", "Signature": "!!", "SigningCertURL": "https://sns.us-east-1.amazonaws.com/c.pem"}',
    b'{"Type": "Notification", "MessageId": "m", "TopicArn": "t", "Message": "{}", "Timestamp": "x",'
    b' "SignatureVersion": "2", "Signature": "AAAA", "SigningCertURL": "https://sns.us-east-1.amazonaws.com/c.pem"}',
    b'{"Type": "SubscriptionConfirmation", "SubscribeURL": "file:///etc/passwd"}',
    b'{"event_action": "trigger", "payload": "text"}',
    b'{"event_action": ["trigger"], "dedup_key": 5}',
    b'{"event_action": "resolve", "dedup_key": ""}',
)

SENTRY_RESOURCES = ("issue", "event_alert", "metric_alert", "comment")


def _objects(bodies: tuple[bytes, ...]) -> list[bytes]:
    objects = []
    for body in bodies:
        try:
            if isinstance(json.loads(body), dict):
                objects.append(body)
        except (ValueError, RecursionError):
            continue
    return objects


def test_no_500_for_malformed_bodies_on_any_path(
    client: Any, org: Org, services: list[Service], no_network: None
) -> None:
    reconfigure(RATE_LIMIT_WEBHOOK="1000")
    default = {"default_service": services[0].service_key}
    few = MALFORMED[:4] + MALFORMED[9:11] + MALFORMED[16:18]
    failures: list[tuple[Any, ...]] = []

    def check(path: str, body: bytes, headers: dict[str, str] | None = None) -> None:
        response = post(client, path, body, headers)
        document = response.json
        if response.status_code >= 500 or not isinstance(document, dict) or "success" not in document:
            failures.append((path, headers, body[:60], response.status_code, response.body[:200]))
        elif document["success"] is False:
            assert set(document) == {"success", "error"} and set(document["error"]) == {"code", "message"}

    for type_ in ("custom", "newrelic", "sentry", "alertmanager", "cloudwatch", "pagerduty"):
        key = integrate(client, org, type_, **default)["routing_key"]
        headers = {"x-amz-sns-message-type": "Notification"} if type_ == "cloudwatch" else {}
        for body in MALFORMED:
            check(key, body, headers)
        for body in few:
            check(f"/webhooks/custom/{key}", body, headers)
            check("/v1/incidents", body, {"Authorization": f"Bearer {key}"})
        if type_ == "custom":
            for body in MALFORMED:
                check("/v1/incidents", body, {"Authorization": f"Bearer {key}"})
        if type_ == "sentry":
            for body in _objects(MALFORMED):
                for resource in SENTRY_RESOURCES:
                    check(key, body, {"Sentry-Hook-Resource": resource})
    for type_, fields in (("custom", {"signing": True}), ("sentry", {"client_secret": "sentry-secret"})):
        key = integrate(client, org, type_, **default, **fields)["routing_key"]
        for body in few:
            check(key, body, {"Sentry-Hook-Resource": "issue"})

    pagerduty = integrate(client, org, "pagerduty", **default)["routing_key"]
    custom = integrate(client, org, "custom", **default)["routing_key"]
    for body in MALFORMED:
        parsed = json.loads(body) if body in _objects(MALFORMED) else None
        keys = (pagerduty, None) if body not in few else (pagerduty, custom, UNKNOWN_KEY, None)
        for routing_key in keys:
            document = json.dumps({**parsed, "routing_key": routing_key}) if parsed and routing_key else body
            response = post(client, "/v2/enqueue", document)
            if response.status_code >= 500 or not isinstance(response.json, dict) or "status" not in response.json:
                failures.append(("enqueue", routing_key, body[:60], response.status_code, response.body[:200]))
    assert failures == []
