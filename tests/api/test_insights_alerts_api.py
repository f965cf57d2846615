"""GET /api/v1/insights/alerts: real deliveries on a custom integration (new alerts, repeats on a
dedup key, an alert its source resolved at once) and a suppressed and a dropped event, counted by
hand; redeliveries count once; the error paths."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from chalicelib import clock
from chalicelib.integration.outcomes import ALERT_EVENT
from chalicelib.queue.messages import Message, publish
from tests.api.test_webhooks_api import integrate, post
from tests.conftest import NOW, Org
from tests.kit import factories as make
from tests.kit.api import call
from tests.service.insights_history import feed_rollups

DAY = "since=2026-11-22T00:00:00Z&until=2026-11-23T00:00:00Z"


@pytest.fixture(autouse=True)
def frozen_clock() -> Iterator[None]:
    with clock.frozen(NOW):
        yield


def other_event(org: Org, service_key: str, key: str, outcome: str, suppressed_by: str | None = None) -> None:
    payload = {"at": clock.isoformat(NOW), "source": "prometheus", "service_key": service_key, "key": key,
               "outcome": outcome, "suppressed_by": suppressed_by}  # fmt: skip
    publish(Message(ALERT_EVENT, org.organization_id, payload))


@pytest.fixture
def noise(client: Any, org: Org) -> dict[str, Any]:
    checkout = make.service(org, "Checkout")
    search = make.service(org, "Search")
    key = str(integrate(client, org, "custom", default_service=checkout.service_key)["routing_key"])
    for title, dedup in (("Disk full", "k1"), ("Disk full", "k1"), ("Disk full", "k1"), ("CPU", "k2"), ("Mem", "k3")):
        assert post(client, key, {"title": title, "dedup_key": dedup}).status_code in (200, 201, 202)
    resolved = post(client, key, {"title": "CPU", "dedup_key": "k2", "status": "resolved"})
    assert resolved.status_code in (200, 202), resolved.body
    other_event(org, search.service_key, "maint-1", "suppressed", "maintenance")
    other_event(org, search.service_key, "noise-1", "dropped")
    feed_rollups(times=2)
    return {"checkout": checkout, "search": search}


def test_top_lists_and_totals_match_the_deliveries(client: Any, org: Org, noise: dict) -> None:
    status, document = call(client, "GET", f"/api/v1/insights/alerts?{DAY}", org.owner_key)
    assert status == 200, document
    data = document["data"]
    assert data["flap_minutes"] == 10
    assert data["totals"] == {
        "events": 7, "alerts": 4, "incidents": 3, "suppressed_by_rules": 0, "suppressed_by_maintenance": 1,
        "dropped": 1, "auto_resolved": 1, "flapping": 1,
    }  # fmt: skip
    keys = [(entry["key"], entry["alerts"], entry["events"]) for entry in data["top_keys"]]
    assert keys[0] == ("k1", 1, 3)
    assert {key for key, _, _ in keys} == {"k1", "k2", "k3", "maint-1", "noise-1"}
    [k2] = [entry for entry in data["top_keys"] if entry["key"] == "k2"]
    assert (k2["auto_resolved"], k2["flapping"]) == (1, 1)
    services = {entry["service"]["name"]: entry for entry in data["top_services"]}
    assert (services["Checkout"]["alerts"], services["Checkout"]["incidents"]) == (3, 3)
    assert services["Search"]["dropped"] == 1 and services["Search"]["suppressed_by_maintenance"] == 1
    assert data["top_services"][0]["service"]["id"] == noise["checkout"].service_key
    assert sum(entry["events"] for entry in data["top_sources"]) == 7
    status, document = call(client, "GET", f"/api/v1/insights/alerts?{DAY}&limit=1", org.owner_key)
    assert status == 200 and len(document["data"]["top_keys"]) == 1


@pytest.mark.parametrize(("query", "field"), [("flap_minutes=11", "flap_minutes"), ("limit=0", "limit")])
def test_bad_requests_answer_400(client: Any, org: Org, query: str, field: str) -> None:
    reply = call(client, "GET", f"/api/v1/insights/alerts?{query}", org.owner_key)
    assert reply.status == 400 and reply.json["error"]["code"] == "VALIDATION_ERROR" and field in reply.fields


def test_alert_insights_need_insights_read(client: Any, org: Org) -> None:
    reply = call(client, "GET", "/api/v1/insights/alerts", org.readonly_key)
    assert reply.status == 403 and reply.json["error"]["code"] == "FORBIDDEN"
