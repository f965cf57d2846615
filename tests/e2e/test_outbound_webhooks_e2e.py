"""Outbound webhooks on the real local stack: the demo subscription delivers signed events to the
built-in sink (visible in GET /local/outbox), and a subscription whose receiver fails shows attempt 1
failed with the retry one minute later.

The signature is checked here with hmac alone, from the secret demo.json records, as a receiver
written from the README would check it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any, TypeVar

import requests

from tests.e2e.conftest import LocalStack

DELIVERY_WAIT_SECONDS = 30
T = TypeVar("T")


def wait_for(condition: Callable[[], T | None], seconds: float = DELIVERY_WAIT_SECONDS) -> T | None:
    deadline = time.monotonic() + seconds
    while True:
        value = condition()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.3)


def sink_deliveries(stack: LocalStack, incident_number: str) -> list[dict[str, Any]]:
    answer = requests.get(
        f"{stack.base_url}/local/outbox",
        params={"channel": "webhook", "incident_number": incident_number},
        timeout=10,
    )
    assert answer.status_code == 200, answer.text
    return list(answer.json()["data"]["items"])


def delivered(stack: LocalStack, incident_number: str, event_type: str, sink: str = "demo") -> dict[str, Any] | None:
    found = [
        item for item in sink_deliveries(stack, incident_number) if item["subject"] == event_type and item["to"] == sink
    ]
    return found[0] if found else None


def parse_time(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def create_incident(stack: LocalStack, title: str) -> str:
    service_key = stack.demo["services"][0]["service_key"]
    created = stack.post("/api/v1/incidents", json={"title": title, "service_ids": [service_key], "severity": "SEV2"})
    assert created.status_code == 201, created.text
    return str(created.json()["data"]["incident_number"])


def assert_signed_event(stack: LocalStack, item: dict[str, Any], event_type: str, incident_number: str) -> None:
    """The request as the sink received it: headers, signature over `timestamp.body`, event shape."""
    headers, body = item["webhook"]["headers"], item["text"]
    secret = stack.demo["webhook_subscription"]["secret"]
    timestamp = headers["x-service-timestamp"]
    expected = hmac.new(secret.encode(), f"{timestamp}.".encode() + body.encode(), hashlib.sha256).hexdigest()
    assert headers["x-service-signature"] == f"sha256={expected}"
    assert abs(time.time() - int(timestamp)) < 120
    assert headers["content-type"].startswith("application/json")
    assert headers["user-agent"] == "Tocsin-Webhooks/1.0"
    assert headers["x-tocsin-event-type"] == event_type
    assert headers["x-tocsin-delivery-attempt"] == "1"

    event = json.loads(body)
    assert set(event) == {"id", "type", "occurred_at", "organization", "data"}
    assert event["id"].startswith("evt_") and headers["x-tocsin-event-id"] == event["id"]
    assert event["type"] == event_type
    assert parse_time(event["occurred_at"]).tzinfo is not None
    assert event["organization"] == {"id": stack.demo["organization_id"], "name": stack.demo["organization_name"]}
    assert event["data"]["incident"]["incident_number"] == incident_number
    # The sink checked it too, against the demo subscription's secret.
    assert item["webhook"]["signature_verified"] is True
    assert item["webhook"]["subscription_id"] == stack.demo["webhook_subscription"]["subscription_id"]


def test_the_demo_subscription_delivers_signed_events_to_the_sink(stack: LocalStack) -> None:
    demo_subscription = stack.demo["webhook_subscription"]
    assert demo_subscription["url"] == f"{stack.base_url}/local/webhook-sink/demo"

    number = create_incident(stack, "Outbound webhook e2e")
    triggered = wait_for(lambda: delivered(stack, number, "incident.triggered"))
    assert triggered, f"no incident.triggered delivery for {number}: {sink_deliveries(stack, number)}"
    assert_signed_event(stack, triggered, "incident.triggered", number)
    event = json.loads(triggered["text"])
    assert event["data"]["incident"]["title"] == "Outbound webhook e2e"
    assert event["data"]["incident"]["severity"] == "SEV2"

    assert stack.post(f"/api/v1/incidents/{number}/acknowledge").status_code == 200
    acknowledged = wait_for(lambda: delivered(stack, number, "incident.acknowledged"))
    assert acknowledged, f"no incident.acknowledged delivery for {number}: {sink_deliveries(stack, number)}"
    assert_signed_event(stack, acknowledged, "incident.acknowledged", number)
    assert json.loads(acknowledged["text"])["data"]["incident"]["acknowledged_at"] is not None

    # The subscription's own record of the delivery: one attempt, answered 204.
    listing = stack.get(f"/api/v1/webhook-subscriptions/{demo_subscription['subscription_id']}/deliveries")
    assert listing.status_code == 200, listing.text
    by_event = {d["event_id"]: d for d in listing.json()["data"]["items"]}
    record = by_event[json.loads(triggered["text"])["id"]]
    assert (record["event_type"], record["status"], record["attempts"]) == ("incident.triggered", "succeeded", 1)
    assert record["response_code"] == 204


def test_a_failing_receiver_shows_attempt_one_failed_and_a_retry_a_minute_later(stack: LocalStack) -> None:
    created = stack.post(
        "/api/v1/webhook-subscriptions",
        json={
            "url": f"{stack.base_url}/local/webhook-sink/failing?fail=500",
            "event_types": ["incident.triggered"],
            "description": "Always 500",
        },
    )
    assert created.status_code == 201, created.text
    subscription = created.json()["data"]
    assert subscription["secret"].startswith("whsec_") and subscription["enabled"] is True
    subscription_id = subscription["subscription_id"]

    number = create_incident(stack, "Receiver is down")

    def first_attempt() -> dict[str, Any] | None:
        listing = stack.get(f"/api/v1/webhook-subscriptions/{subscription_id}/deliveries")
        assert listing.status_code == 200, listing.text
        items = [d for d in listing.json()["data"]["items"] if d["attempts"] >= 1]
        return items[0] if items else None

    delivery = wait_for(first_attempt)
    assert delivery, "attempt 1 was not recorded"
    assert (delivery["event_type"], delivery["status"], delivery["attempts"]) == ("incident.triggered", "retrying", 1)
    assert delivery["response_code"] == 500
    assert delivery["last_error"]
    wait = parse_time(delivery["next_attempt_at"]) - parse_time(delivery["last_attempt_at"])
    assert 58 <= wait.total_seconds() <= 62, wait

    # The sink saw that attempt, answered 500, and the signature verified with this subscription's secret.
    received = wait_for(lambda: delivered(stack, number, "incident.triggered", sink="failing"))
    assert received, "the failing sink did not record attempt 1"
    receipt = received["webhook"]
    assert (receipt["answered_status"], receipt["attempt"]) == (500, 1)
    assert (receipt["signature_verified"], receipt["subscription_id"]) == (True, subscription_id)
    assert receipt["event_id"] == delivery["event_id"]

    # Nothing else is attempted before the minute is up.
    time.sleep(3)
    assert [r["webhook"]["attempt"] for r in sink_deliveries(stack, number) if r["to"] == "failing"] == [1]
    assert stack.session.delete(
        f"{stack.base_url}/api/v1/webhook-subscriptions/{subscription_id}", headers=stack.headers()
    ).ok
