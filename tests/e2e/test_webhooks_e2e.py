"""Inbound webhooks against the real local stack over HTTP: CloudWatch through the emulator's SNS
(signature verified end to end), signed custom webhooks, the PagerDuty Events v2 drop-in, and the
alert_received timeline entry the SQS worker writes for a dedup hit."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from typing import Any, TypeVar

import boto3
import requests

from chalicelib.integration.signing import signed_headers
from tests.e2e.conftest import LocalStack

T = TypeVar("T")
POLL_SECONDS = 10.0


def _poll(what: str, probe: Callable[[], T | None], timeout: float = POLL_SECONDS) -> T:
    deadline = time.monotonic() + timeout
    while True:
        found = probe()
        if found is not None:
            return found
        assert time.monotonic() < deadline, f"timed out after {timeout:.0f}s waiting for {what}"
        time.sleep(0.2)


def _integration(stack: LocalStack, name: str) -> dict[str, Any]:
    return dict(stack.demo["integrations"][name])


def _open_incident_titled(stack: LocalStack, needle: str) -> dict[str, Any] | None:
    response = stack.get("/api/v1/incidents?limit=100")
    assert response.status_code == 200, response.text
    matches = [item for item in response.json()["data"]["items"] if needle in item["title"]]
    assert len(matches) <= 1, matches
    return matches[0] if matches else None


def _incident(stack: LocalStack, number: str) -> dict[str, Any]:
    response = stack.get(f"/api/v1/incidents/{number}")
    assert response.status_code == 200, response.text
    return dict(response.json()["data"])


def _status_becomes(stack: LocalStack, number: str, status: str) -> dict[str, Any]:
    def probe() -> dict[str, Any] | None:
        detail = _incident(stack, number)
        return detail if detail["status"] == status else None

    return _poll(f"{number} to be {status}", probe)


def _post_signed(
    stack: LocalStack, body: dict[str, Any], secret: str, *, timestamp: int | None = None
) -> requests.Response:
    raw = json.dumps(body).encode()
    headers = {"Content-Type": "application/json", **signed_headers(secret, timestamp or int(time.time()), raw)}
    return requests.post(_integration(stack, "custom_signed")["url"], data=raw, headers=headers, timeout=30)


# --- CloudWatch alarm through the emulator's SNS ---------------------------------------------------


def _alarm(name: str, arn: str, state: str, old_state: str) -> str:
    return json.dumps(
        {
            "AlarmName": name,
            "AlarmDescription": "e2e alarm through moto SNS",
            "AWSAccountId": "123456789012",
            "AlarmConfigurationUpdatedTimestamp": "2026-01-01T00:00:00.000+0000",
            "NewStateValue": state,
            "OldStateValue": old_state,
            "NewStateReason": f"Threshold crossed: moved to {state}",
            "StateChangeTime": "2026-01-01T00:05:00.000+0000",
            "Region": "US East (N. Virginia)",
            "AlarmArn": arn,
            "OKActions": [],
            "AlarmActions": [],
            "InsufficientDataActions": [],
            "Trigger": {
                "MetricName": "5XXError",
                "Namespace": "AWS/ApiGateway",
                "StatisticType": "Statistic",
                "Statistic": "SUM",
                "Unit": None,
                "Dimensions": [{"name": "ApiName", "value": "checkout"}],
                "Period": 60,
                "EvaluationPeriods": 1,
                "ComparisonOperator": "GreaterThanThreshold",
                "Threshold": 10.0,
                "TreatMissingData": "missing",
            },
        }
    )


def _sns(stack: LocalStack) -> Any:
    return boto3.client(
        "sns",
        endpoint_url=stack.demo["aws_endpoint_url"],
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )


def _webhook_statuses(stack: LocalStack, integration: str) -> list[int]:
    """Statuses the stack's access log recorded for deliveries to an integration's URL, in order."""
    path = "/webhooks/" + _integration(stack, integration)["routing_key"]
    statuses = []
    for line in stack.log().splitlines():
        if not line.startswith("{"):
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if record.get("logger") == "tocsin.access" and record.get("path") == path:
            statuses.append(int(record["status"]))
    return statuses


def test_cloudwatch_alarm_through_emulator_sns_opens_then_resolves(stack: LocalStack) -> None:
    sns = _sns(stack)
    topic_arn = sns.create_topic(Name=f"e2e-alarms-{uuid.uuid4().hex[:8]}")["TopicArn"]
    sns.subscribe(TopicArn=topic_arn, Protocol="http", Endpoint=_integration(stack, "cloudwatch")["url"])
    name = f"e2e-checkout-5xx-{uuid.uuid4().hex[:8]}"
    arn = f"arn:aws:cloudwatch:us-east-1:123456789012:alarm:{name}"

    # No Subject: moto leaves it out of the string it signs, so a correct verifier would reject it.
    sns.publish(TopicArn=topic_arn, Message=_alarm(name, arn, "ALARM", "OK"))
    opened = _poll("the CloudWatch incident", lambda: _open_incident_titled(stack, name))
    assert name in opened["title"]
    number = opened["incident_number"]
    assert opened["status"] == "new"

    # The same alarm going OK resolves that incident (dedup key: the AlarmArn).
    sns.publish(TopicArn=topic_arn, Message=_alarm(name, arn, "OK", "ALARM"))
    resolved = _status_becomes(stack, number, "resolved")
    assert resolved["resolved_at"]
    assert _open_incident_titled(stack, name) is None
    # Both deliveries went through the webhook route: 201 (created), then 200 (resolved by dedup).
    assert _webhook_statuses(stack, "cloudwatch")[-2:] == [201, 200]


def test_sns_signature_is_really_checked(stack: LocalStack) -> None:
    """moto signs without the Subject but sends it: a verifier that checks the signature refuses it."""
    sns = _sns(stack)
    topic_arn = sns.create_topic(Name=f"e2e-subject-{uuid.uuid4().hex[:8]}")["TopicArn"]
    sns.subscribe(TopicArn=topic_arn, Protocol="http", Endpoint=_integration(stack, "cloudwatch")["url"])
    name = f"e2e-with-subject-{uuid.uuid4().hex[:8]}"
    arn = f"arn:aws:cloudwatch:us-east-1:123456789012:alarm:{name}"
    before = len(_webhook_statuses(stack, "cloudwatch"))
    sns.publish(TopicArn=topic_arn, Message=_alarm(name, arn, "ALARM", "OK"), Subject=f"ALARM: {name}")
    statuses = _poll(
        "moto's delivery to be answered",
        lambda: _webhook_statuses(stack, "cloudwatch")[before:] or None,
    )
    assert statuses == [401], f"expected INVALID_SIGNATURE for moto's Subject-less signature, got {statuses}"
    assert _open_incident_titled(stack, name) is None


# --- custom webhooks ---------------------------------------------------------------------------------


def test_signed_custom_webhook_creates_then_deduplicates(stack: LocalStack) -> None:
    secret = _integration(stack, "custom_signed")["signing_secret"]
    service_id = stack.demo["services"][0]["service_id"]
    dedup_key = f"e2e-signed-{uuid.uuid4().hex}"
    body = {"title": f"Signed alert {dedup_key}", "service_id": service_id, "severity": "SEV1", "dedup_key": dedup_key}

    created = _post_signed(stack, body, secret)
    assert created.status_code == 201, created.text
    first = created.json()
    assert first["success"] is True and first["deduplicated"] is False
    assert first["incident"]["severity"] == "SEV1"
    assert first["incident"]["url"].endswith(f"/api/v1/incidents/{first['incident']['id']}")

    again = _post_signed(stack, body, secret)
    assert again.status_code == 200, again.text
    assert again.json()["deduplicated"] is True
    assert again.json()["incident"]["id"] == first["incident"]["id"]


def test_signed_custom_webhook_with_a_wrong_signature_is_401(stack: LocalStack) -> None:
    service_id = stack.demo["services"][0]["service_id"]
    body = {"title": "Forged", "service_id": service_id, "dedup_key": f"e2e-forged-{uuid.uuid4().hex}"}
    wrong = _post_signed(stack, body, "whsec_not_the_secret")
    assert wrong.status_code == 401, wrong.text
    assert wrong.json()["success"] is False
    assert wrong.json()["error"]["code"] == "INVALID_SIGNATURE"
    secret = _integration(stack, "custom_signed")["signing_secret"]
    stale = _post_signed(stack, body, secret, timestamp=int(time.time()) - 600)
    assert stale.status_code == 401, stale.text
    assert stale.json()["error"]["code"] == "SIGNATURE_EXPIRED"
    unsigned = requests.post(_integration(stack, "custom_signed")["url"], json=body, timeout=30)
    assert unsigned.status_code == 401
    assert unsigned.json()["error"]["code"] == "INVALID_SIGNATURE"
    assert _open_incident_titled(stack, "Forged") is None


def test_revoked_integration_is_410(stack: LocalStack) -> None:
    body = {"title": "To a revoked webhook", "service_id": stack.demo["services"][0]["service_id"]}
    response = requests.post(_integration(stack, "revoked")["url"], json=body, timeout=30)
    assert response.status_code == 410, response.text
    assert response.json()["error"]["code"] == "WEBHOOK_REVOKED"


def test_ip_locked_integration_refuses_loopback(stack: LocalStack) -> None:
    body = {"title": "From outside the allow-list", "service_id": stack.demo["services"][0]["service_id"]}
    # X-Forwarded-For is never trusted for the allow-list: the peer address (127.0.0.1) counts.
    response = requests.post(
        _integration(stack, "custom_ip_locked")["url"],
        json=body,
        headers={"X-Forwarded-For": "203.0.113.7"},
        timeout=30,
    )
    assert response.status_code == 403, response.text
    assert response.json()["error"]["code"] == "IP_NOT_ALLOWED"


# --- PagerDuty Events API v2 drop-in -----------------------------------------------------------------


def test_pagerduty_enqueue_trigger_then_resolve(stack: LocalStack) -> None:
    routing_key = _integration(stack, "pagerduty")["routing_key"]
    summary = f"e2e PagerDuty drop-in {uuid.uuid4().hex[:8]}"
    trigger = requests.post(
        f"{stack.base_url}/v2/enqueue",
        json={
            "routing_key": routing_key,
            "event_action": "trigger",
            "payload": {"summary": summary, "source": "e2e-host-1", "severity": "critical"},
        },
        timeout=30,
    )
    assert trigger.status_code == 202, trigger.text
    accepted = trigger.json()
    assert accepted["status"] == "success"
    assert accepted["message"] == "Event processed"
    dedup_key = accepted["dedup_key"]
    assert dedup_key

    opened = _open_incident_titled(stack, summary)
    assert opened is not None
    assert opened["severity"] == "SEV0"
    number = opened["incident_number"]

    resolve = requests.post(
        f"{stack.base_url}/v2/enqueue",
        json={"routing_key": routing_key, "event_action": "resolve", "dedup_key": dedup_key},
        timeout=30,
    )
    assert resolve.status_code == 202, resolve.text
    assert resolve.json() == {"status": "success", "message": "Event processed", "dedup_key": dedup_key}
    assert _status_becomes(stack, number, "resolved")["resolved_at"]


def test_pagerduty_enqueue_invalid_event_is_400_in_pagerduty_shape(stack: LocalStack) -> None:
    routing_key = _integration(stack, "pagerduty")["routing_key"]
    response = requests.post(
        f"{stack.base_url}/v2/enqueue", json={"routing_key": routing_key, "event_action": "trigger"}, timeout=30
    )
    assert response.status_code == 400, response.text
    body = response.json()
    assert body["status"] == "invalid event"
    assert body["message"] == "Event object is invalid"
    assert body["errors"]


# --- the worker loop writes the alert_received entry of a dedup hit ----------------------------------


def test_dedup_hit_timeline_entry_is_written_by_the_worker(stack: LocalStack) -> None:
    url = _integration(stack, "custom")["url"]
    dedup_key = f"e2e-timeline-{uuid.uuid4().hex}"
    body = {"title": f"Timeline {dedup_key}", "service_id": stack.demo["services"][0]["service_id"]}
    created = requests.post(url, json={**body, "dedup_key": dedup_key}, timeout=30)
    assert created.status_code == 201, created.text
    number = created.json()["incident"]["id"]
    assert "alert_received" not in [e["event_type"] for e in _incident(stack, number)["timeline"]]

    hit = requests.post(url, json={**body, "dedup_key": dedup_key, "description": "second occurrence"}, timeout=30)
    assert hit.status_code == 200, hit.text
    assert hit.json()["deduplicated"] is True
    assert hit.json()["incident"]["id"] == number

    def entry() -> dict[str, Any] | None:
        timeline = _incident(stack, number)["timeline"]
        found = [e for e in timeline if e["event_type"] == "alert_received"]
        return found[0] if found else None

    started = time.monotonic()
    received = _poll("the alert_received timeline entry", entry, timeout=8)
    assert time.monotonic() - started < 8
    assert received["title"].startswith("Alert received")
    # Exactly one entry for one hit (the worker's write is keyed by the message id).
    time.sleep(1.0)
    timeline = _incident(stack, number)["timeline"]
    assert [e["event_type"] for e in timeline].count("alert_received") == 1
