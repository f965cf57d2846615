"""The official `pagerduty` Python client (PyPI `pagerduty`) against the real local stack: its
change events (`send_change_event`, `submit`) are recorded and show in the next incident's
recent_changes, its alert events (`trigger`, `resolve`) work, and PagerDuty's errors reach it as
PagerDuty's. The client accepts only an https base URL: its transport stands in for the TLS
front (API Gateway), passing the client's own request, unchanged but for the address, to the
stack's HTTP port with X-Forwarded-Proto: https."""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime
from typing import Any

import httpx2
import pytest
from pagerduty import EventsApiV2Client, HttpError

from tests.e2e.conftest import LocalStack

BASE_URL = "https://events.tocsin.test"


class TlsFront(httpx2.BaseTransport):
    """Sends the client's https requests to the local stack's HTTP port, as a TLS-terminating front would."""

    def __init__(self, stack_url: str) -> None:
        self.target = httpx2.URL(stack_url)
        self.inner = httpx2.HTTPTransport()
        self.seen: list[httpx2.Request] = []

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        self.seen.append(request)
        assert request.url.scheme == "https" and request.url.host == "events.tocsin.test"
        request.url = request.url.copy_with(scheme=self.target.scheme, host=self.target.host, port=self.target.port)
        request.headers["Host"] = self.target.netloc.decode()
        request.headers["X-Forwarded-Proto"] = "https"
        return self.inner.handle_request(request)


def official_client(stack: LocalStack, routing_key: str) -> tuple[EventsApiV2Client, TlsFront]:
    front = TlsFront(stack.base_url)
    client = EventsApiV2Client(routing_key, base_url=BASE_URL, transport=front)
    client.max_http_attempts = 1  # an error must surface, not be retried for minutes
    return client, front


def pagerduty_key(stack: LocalStack) -> str:
    return str(stack.demo["integrations"]["pagerduty"]["routing_key"])


def changes(stack: LocalStack, query: str) -> list[dict[str, Any]]:
    response = stack.get(f"/api/v1/change-events{query}")
    assert response.status_code == 200, response.text
    return list(response.json()["data"]["items"])


def incident_titled(stack: LocalStack, title: str) -> dict[str, Any]:
    deadline = time.monotonic() + 10
    while True:
        response = stack.get("/api/v1/incidents?limit=100")
        assert response.status_code == 200, response.text
        found = [item for item in response.json()["data"]["items"] if item["title"] == title]
        if found:
            detail = stack.get(f"/api/v1/incidents/{found[0]['incident_number']}")
            assert detail.status_code == 200, detail.text
            return dict(detail.json()["data"])
        assert time.monotonic() < deadline, f"no incident titled {title!r}"
        time.sleep(0.2)


def test_change_events_from_the_official_client(stack: LocalStack) -> None:
    run = uuid.uuid4().hex[:8]
    client, front = official_client(stack, pagerduty_key(stack))
    moment = datetime.now(UTC).replace(microsecond=0)
    client.send_change_event(
        payload={
            "summary": f"e2e deploy {run}",
            "timestamp": moment.isoformat(),
            "source": "e2e-pipeline",
            "custom_details": {"build": "7"},
        },
        links=[{"href": "https://ci.example.org/builds/7", "text": "Build 7"}],
    )
    # submit() builds the payload from arguments (its own default timestamp is broken in 7.2.0; pass one).
    client.submit(
        summary=f"e2e config {run}",
        source="e2e-config",
        custom_details={"flag": "on"},
        links=[{"href": "https://ci.example.org/flags/1"}],
        timestamp=moment.isoformat().replace("+00:00", "Z"),
    )
    # What the client sent: its own URL, headers, and the routing key it put in the body.
    first = front.seen[0]
    assert (first.method, first.url.path) == ("POST", "/v2/change/enqueue")
    assert first.headers["Content-Type"] == "application/json"
    assert first.headers["User-Agent"].startswith("python-pagerduty/")

    since = moment.isoformat().replace("+00:00", "Z")
    recorded = {item["summary"]: item for item in changes(stack, f"?since={since}") if run in item["summary"]}
    assert set(recorded) == {f"e2e deploy {run}", f"e2e config {run}"}
    deploy = recorded[f"e2e deploy {run}"]
    assert deploy["service_id"] == stack.demo["services"][0]["service_id"]  # the integration's default service
    assert deploy["links"] == [{"href": "https://ci.example.org/builds/7", "text": "Build 7"}]
    assert deploy["custom_details"] == {"build": "7"}

    # The same client raises an alert; the incident it opens shows the changes just before it.
    title = f"e2e checkout errors {run}"
    dedup_key = client.trigger(summary=title, source="e2e-host", severity="error")
    detail = incident_titled(stack, title)
    recent = [item["summary"] for item in detail["recent_changes"] if run in item["summary"]]
    assert sorted(recent) == sorted(recorded)
    assert client.resolve(dedup_key) == dedup_key


def test_pagerdutys_errors_reach_the_official_client(stack: LocalStack) -> None:
    client, _ = official_client(stack, pagerduty_key(stack))
    with pytest.raises(HttpError) as missing_summary:
        client.send_change_event(payload={"source": "e2e"})
    assert missing_summary.value.response.status_code == 400
    body = missing_summary.value.response.json()
    assert (body["status"], body["errors"]) == ("invalid event", ["'payload.summary' is missing or blank"])

    stranger, _ = official_client(stack, "0123456789abcdef0123456789abcdef")
    with pytest.raises(HttpError) as unknown_key:
        stranger.send_change_event(payload={"summary": "from nowhere"})
    assert unknown_key.value.response.status_code == 400
    assert unknown_key.value.response.json()["status"] == "invalid event"
