"""The official `pagerduty` client's change events, in process: its requests go through
chalice.test.Client (the same check runs against the real local stack in
tests/e2e/test_pagerduty_client_e2e.py)."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest
from pagerduty import EventsApiV2Client, HttpError

from chalicelib.catalog.service import Service
from tests.api.test_change_events_api import LIST, pagerduty
from tests.api.test_webhooks_api import api

# Fixtures of test_webhooks_api, re-exported so pytest finds them here (frozen_clock is autouse).
from tests.api.test_webhooks_api import frozen_clock as frozen_clock
from tests.api.test_webhooks_api import services as services
from tests.conftest import Org


def official_client(client: Any, routing_key: str) -> EventsApiV2Client:
    def forward(request: httpx2.Request) -> httpx2.Response:
        assert request.url.host == "events.tocsin.test"
        # What API Gateway adds in front of the app: the client spoke https.
        headers = {**dict(request.headers), "X-Forwarded-Proto": "https"}
        answer = client.http.request(
            request.method, request.url.raw_path.decode(), headers=headers, body=request.content
        )
        return httpx2.Response(answer.status_code, headers=answer.headers, content=answer.body)

    events = EventsApiV2Client(
        routing_key, base_url="https://events.tocsin.test", transport=httpx2.MockTransport(forward)
    )
    events.max_http_attempts = 1
    return events


def test_send_change_event_and_submit(client: Any, org: Org, services: list[Service]) -> None:
    events = official_client(client, pagerduty(client, org, services[0]))
    events.send_change_event(
        payload={"summary": "Deployed api 3.1", "timestamp": "2026-11-22T11:55:00Z", "source": "ci"},
        links=[{"href": "https://ci.example.org/31", "text": "Build 31"}],
    )
    events.submit(summary="Flag checkout-v2 on", source="flags", timestamp="2026-11-22T11:56:00Z")
    listed = api(client, "get", LIST, org.owner_key).json["data"]["items"]
    assert [(item["summary"], item["source"], item["service_id"]) for item in listed] == [
        ("Flag checkout-v2 on", "flags", "SER-00001"),
        ("Deployed api 3.1", "ci", "SER-00001"),
    ]


def test_errors_reach_the_client_as_pagerdutys(client: Any, org: Org, services: list[Service]) -> None:
    events = official_client(client, pagerduty(client, org, services[0]))
    with pytest.raises(HttpError) as refused:
        events.send_change_event(payload={"summary": "x" * 1025})
    assert refused.value.response.status_code == 400
    assert refused.value.response.json()["errors"] == [
        "'payload.summary' is too long (must be at most 1024 characters)"
    ]
