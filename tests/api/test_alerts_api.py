"""Alerts through the API: the webhook's answer names its alert; lists and filters; grouping set
on the service; suppressed events answer 202 with incident null (and PagerDuty still as PagerDuty)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any
from unittest import mock

from chalicelib.catalog.service import Service
from chalicelib.maintenance.in_effect import WindowInEffect
from tests.api.test_webhooks_api import api, integrate, post

# Fixtures of test_webhooks_api, re-exported so pytest finds them here (frozen_clock is autouse).
from tests.api.test_webhooks_api import frozen_clock as frozen_clock
from tests.api.test_webhooks_api import services as services
from tests.conftest import NOW, Org


def custom(client: Any, org: Org, service: Service) -> str:
    hook = integrate(client, org, "custom", default_service=service.service_key)
    return str(hook["routing_key"])


def send(client: Any, key: str, title: str, dedup_key: str | None = None, **fields: Any) -> Any:
    body: dict[str, Any] = {"title": title, "service_id": "SER-00001", **fields}
    if dedup_key:
        body["dedup_key"] = dedup_key
    return post(client, key, body)


def test_the_answer_names_the_alert_and_the_lists_find_it(client: Any, org: Org, services: list[Service]) -> None:
    key = custom(client, org, services[0])
    opened = send(client, key, "Checkout 500s", "k1", metadata={"env": "prod"})
    assert opened.status_code == 201, opened.body
    alert = opened.json["alert"]
    assert alert["status"] == "triggered" and alert["count"] == 1 and alert["id"].startswith("alr_")
    assert (opened.json["suppressed"], opened.json["dropped"], opened.json["grouped"]) == (False, False, False)
    repeat = send(client, key, "Checkout 500s", "k1")
    assert repeat.status_code == 200 and repeat.json["alert"] == {**alert, "count": 2}
    number = opened.json["incident"]["id"]

    listed = api(client, "get", f"/api/v1/incidents/{number}/alerts", org.owner_key)
    assert listed.status_code == 200, listed.body
    [item] = listed.json["data"]["items"]
    assert (item["id"], item["count"], item["labels"], item["service_id"]) == (
        alert["id"],
        2,
        {"env": "prod"},
        "SER-00001",
    )
    assert item["integration"]["type"] == "custom" and item["incident_number"] == number

    one = api(client, "get", f"/api/v1/alerts/{alert['id']}", org.owner_key)
    assert one.status_code == 200 and one.json["data"]["title"] == "Checkout 500s"
    for path in ("/api/v1/alerts/alr_nope", "/api/v1/alerts/other", "/api/v1/incidents/INC-2020-9999/alerts"):
        assert api(client, "get", path, org.owner_key).status_code == 404, path

    everything = api(client, "get", "/api/v1/alerts", org.owner_key).json["data"]
    assert [a["id"] for a in everything["items"]] == [alert["id"]]
    by_service = api(client, "get", "/api/v1/alerts?service_id=SER-00002", org.owner_key).json["data"]
    assert by_service["items"] == []
    resolved_only = api(client, "get", "/api/v1/alerts?status=resolved", org.owner_key).json["data"]
    assert resolved_only["total"] == 0
    past = (NOW - timedelta(days=2)).isoformat().replace("+00:00", "Z")
    old = api(client, "get", f"/api/v1/alerts?until={past}", org.owner_key).json["data"]
    assert old["total"] == 0


def test_alert_list_errors(client: Any, org: Org, services: list[Service]) -> None:
    for query in (
        "status=open",
        "service_id=SER-99999",
        "since=2026-01-02T00:00:00Z&until=2026-01-01T00:00:00Z",
        "limit=0",
        "x=1",
    ):
        response = api(client, "get", f"/api/v1/alerts?{query}", org.owner_key)
        assert response.status_code == 400, (query, response.body)
        assert response.json["success"] is False
    assert api(client, "get", "/api/v1/alerts", None).status_code == 401


def test_time_grouping_set_on_the_service_joins_alerts(client: Any, org: Org, services: list[Service]) -> None:
    patch = {"alert_grouping": {"type": "time", "window_minutes": 15}}
    changed = api(client, "patch", "/api/v1/services/SER-00001", org.owner_key, patch)
    assert changed.status_code == 200, changed.body
    assert changed.json["data"]["alert_grouping"] == {"type": "time", "window_minutes": 15, "fields": None}
    key = custom(client, org, services[0])
    first = send(client, key, "Router down", "r1")
    second = send(client, key, "Switch down", "r2")
    assert (first.status_code, second.status_code) == (201, 200)
    assert second.json["grouped"] is True and second.json["deduplicated"] is False
    assert second.json["incident"]["id"] == first.json["incident"]["id"]
    listed = api(client, "get", f"/api/v1/incidents/{first.json['incident']['id']}/alerts", org.owner_key)
    # Both arrived at the same (frozen) time: which is listed first is not the point.
    assert {a["title"]: a["grouped"] for a in listed.json["data"]["items"]} == {
        "Switch down": True,
        "Router down": False,
    }
    resolved = [send(client, key, "x", k, status="resolved") for k in ("r1", "r2")]
    assert resolved[0].json["incident"]["status"] != "resolved"
    assert resolved[1].json["incident"]["status"] == "resolved"


def test_grouping_settings_are_checked(client: Any, org: Org, services: list[Service]) -> None:
    bad = [
        {"type": "time"},
        {"type": "time", "window_minutes": 0},
        {"type": "time", "window_minutes": 1441},
        {"type": "time", "window_minutes": 5, "fields": ["title"]},
        {"type": "content", "window_minutes": 5},
        {"type": "content", "fields": ["nope"]},
        {"type": "none", "window_minutes": 5},
        {"type": "sometimes"},
    ]
    for grouping in bad:
        response = api(client, "patch", "/api/v1/services/SER-00001", org.owner_key, {"alert_grouping": grouping})
        assert response.status_code == 400, (grouping, response.body)
    content = {"type": "content", "fields": ["labels.cluster", "title"], "window_minutes": None}
    made = api(client, "post", "/api/v1/services", org.owner_key, {"name": "Edge", "alert_grouping": content})
    assert made.status_code == 201, made.body
    assert made.json["data"]["alert_grouping"] == content
    plain = api(client, "get", "/api/v1/services/SER-00002", org.owner_key).json["data"]
    assert plain["alert_grouping"] == {"type": "none", "window_minutes": None, "fields": None}


def test_suppressed_events_answer_202_with_no_incident(client: Any, org: Org, services: list[Service]) -> None:
    key = custom(client, org, services[0])
    pagerduty = integrate(client, org, "pagerduty", default_service=services[0].service_key)
    window = WindowInEffect(window_id="mw_1", description=None, end_at=NOW + timedelta(hours=1))
    with mock.patch("chalicelib.integration.triggering.window_in_effect", return_value=window):
        quiet = send(client, key, "Planned restart", "p1")
        event = {
            "routing_key": pagerduty["routing_key"],
            "event_action": "trigger",
            "payload": {"summary": "Planned", "source": "db-1", "severity": "critical"},
        }
        drop_in = post(client, "/v2/enqueue", event)
    assert quiet.status_code == 202, quiet.body
    assert quiet.json["suppressed"] is True and quiet.json["incident"] is None
    assert quiet.json["alert"]["status"] == "suppressed"
    assert drop_in.status_code == 202 and drop_in.json["status"] == "success" and drop_in.json["dedup_key"]
    assert api(client, "get", "/api/v1/incidents", org.owner_key).json["data"]["items"] == []
    suppressed = api(client, "get", "/api/v1/alerts?status=suppressed", org.owner_key).json["data"]
    assert suppressed["total"] == 2
    assert {a["suppressed_by"]["window_id"] for a in suppressed["items"]} == {"mw_1"}
