"""Noise control end to end through the API, nothing mocked: a maintenance window and event rules
shape real webhook deliveries, and an overdue heartbeat's outage is an alert like any other."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from chalicelib import clock
from chalicelib.catalog.service import Service
from chalicelib.workers import scheduled
from tests.api.test_webhooks_api import api, integrate, post

# Fixtures of test_webhooks_api, re-exported so pytest finds them here (frozen_clock is autouse).
from tests.api.test_webhooks_api import frozen_clock as frozen_clock
from tests.api.test_webhooks_api import services as services
from tests.conftest import NOW, Org


def iso(moment: Any) -> str:
    return str(moment.isoformat().replace("+00:00", "Z"))


def ok(response: Any, status: int = 200) -> Any:
    assert response.status_code == status, response.body
    return response.json["data"] if "data" in (response.json or {}) else response.json


def custom_hook(client: Any, org: Org, service: Service) -> dict[str, Any]:
    return integrate(client, org, "custom", default_service=service.service_key)


def send(client: Any, hook: dict[str, Any], title: str, key: str, **fields: Any) -> Any:
    return post(client, hook["routing_key"], {"title": title, "service_id": "SER-00001", "dedup_key": key, **fields})


def test_a_maintenance_window_silences_its_service_until_it_ends(
    client: Any, org: Org, services: list[Service]
) -> None:
    hook = custom_hook(client, org, services[0])
    window = ok(
        api(
            client,
            "post",
            "/api/v1/maintenance-windows",
            org.owner_key,
            {
                "service_ids": ["SER-00001"],
                "start": iso(NOW),
                "end": iso(NOW + timedelta(hours=1)),
                "description": "DB upgrade",
            },
        ),
        201,
    )
    quiet = send(client, hook, "DB restarting", "db-1")
    assert quiet.status_code == 202, quiet.body
    assert (quiet.json["suppressed"], quiet.json["incident"]) == (True, None)
    alert = ok(api(client, "get", f"/api/v1/alerts/{quiet.json['alert']['id']}", org.owner_key))
    assert alert["suppressed_by"] == {"kind": "maintenance", "window_id": window["id"]}
    other = post(client, hook["routing_key"], {"title": "Pay down", "service_id": "SER-00002", "dedup_key": "p"})
    assert other.status_code == 201  # another service is not in maintenance
    assert send(client, hook, "DB restarting", "db-1").json["alert"]["count"] == 2  # still quiet

    with clock.frozen(NOW + timedelta(minutes=10)):
        ended = api(client, "delete", f"/api/v1/maintenance-windows/{window['id']}", org.owner_key)
        assert ended.status_code in (200, 204), ended.body
        pages = send(client, hook, "DB still down", "db-1")
    assert pages.status_code == 201, pages.body  # the window is over: the same key now pages
    assert pages.json["alert"]["id"] != alert["id"]


def test_event_rules_drop_suppress_and_route(client: Any, org: Org, services: list[Service]) -> None:
    hook = custom_hook(client, org, services[0])
    rules = f"/api/v1/integrations/{hook['id']}/event-rules"
    ok(
        api(
            client,
            "post",
            rules,
            org.owner_key,
            {"conditions": [{"field": "title", "op": "contains", "value": "watchdog"}], "actions": {"drop": True}},
        ),
        201,
    )
    staging = {
        "conditions": [{"field": "labels.env", "op": "equals", "value": "staging"}],
        "actions": {"suppress": True, "note": "staging never pages"},
    }
    payments = {
        "conditions": [{"field": "labels.team", "op": "matches", "value": "^pay(ments)?$"}],
        "actions": {"route_to_service": "SER-00002", "severity": "SEV1", "note": "Runbook: wiki/pay"},
    }
    for body in (staging, payments):
        ok(api(client, "post", "/api/v1/event-rules", org.owner_key, body), 201)

    dropped = send(client, hook, "Watchdog heartbeat", "w")
    assert dropped.status_code == 202 and dropped.json["dropped"] is True and dropped.json["alert"] is None
    quiet = send(client, hook, "Disk full", "s", metadata={"env": "staging"})
    assert quiet.status_code == 202 and quiet.json["suppressed"] is True
    routed = send(client, hook, "Card auth failing", "r", metadata={"team": "payments"})
    assert routed.status_code == 201, routed.body
    assert routed.json["incident"]["severity"] == "SEV1"
    alert = ok(api(client, "get", f"/api/v1/alerts/{routed.json['alert']['id']}", org.owner_key))
    assert (alert["service_id"], alert["rule_notes"]) == ("SER-00002", ["Runbook: wiki/pay"])
    listed = ok(api(client, "get", "/api/v1/alerts", org.owner_key))
    assert listed["total"] == 2  # the dropped event left no alert


def test_an_overdue_heartbeat_is_an_alert_and_its_next_ping_resolves_it(
    client: Any, org: Org, services: list[Service]
) -> None:
    made = ok(
        api(
            client,
            "post",
            "/api/v1/heartbeats",
            org.owner_key,
            {"name": "nightly backup", "service": "SER-00001", "interval_seconds": 3600, "grace_seconds": 60},
        ),
        201,
    )
    ping_path = "/" + made["ping_url"].split("/", 3)[3]
    assert post(client, ping_path, {}).status_code == 200
    late = NOW + timedelta(hours=1, minutes=2)
    with clock.frozen(late):
        scheduled.check_heartbeats()
        scheduled.check_heartbeats()  # a second run opens nothing more
    down = ok(api(client, "get", f"/api/v1/heartbeats/{made['id']}", org.owner_key))
    assert down["status"] == "down" and down["incident_number"]
    [alert] = ok(api(client, "get", f"/api/v1/incidents/{down['incident_number']}/alerts", org.owner_key))["items"]
    assert (alert["source"], alert["integration"]["id"], alert["status"]) == ("heartbeat", None, "triggered")
    with clock.frozen(late + timedelta(minutes=5)):
        assert post(client, ping_path, {}).status_code == 200
        from tests.api.test_webhooks_api import drain_events

        drain_events()  # the ping's recovery goes through the events queue
    incident = ok(api(client, "get", f"/api/v1/incidents/{down['incident_number']}", org.owner_key))
    assert incident["status"] == "resolved"
    [alert] = ok(api(client, "get", f"/api/v1/incidents/{down['incident_number']}/alerts", org.owner_key))["items"]
    assert alert["status"] == "resolved"


def test_numbers_must_be_json_integers_not_booleans_or_strings(client: Any, org: Org, services: list[Service]) -> None:
    """Found by the contract sweep: `grace_seconds: false` was read as 0."""
    made = ok(
        api(
            client,
            "post",
            "/api/v1/heartbeats",
            org.owner_key,
            {"name": "cron", "service": "SER-00001", "interval_seconds": 600},
        ),
        201,
    )
    for patch in ({"grace_seconds": False}, {"interval_seconds": "600"}, {"interval_seconds": True}):
        response = api(client, "patch", f"/api/v1/heartbeats/{made['id']}", org.owner_key, patch)
        assert response.status_code == 400, (patch, response.body)
    grouping = {"alert_grouping": {"type": "time", "window_minutes": True}}
    assert api(client, "patch", "/api/v1/services/SER-00001", org.owner_key, grouping).status_code == 400
    rule = {"conditions": [], "actions": {"suppress": True}, "position": "0"}
    assert api(client, "post", "/api/v1/event-rules", org.owner_key, rule).status_code == 400


def test_a_number_without_a_fraction_is_a_json_integer(client: Any, org: Org, services: list[Service]) -> None:
    """Found by the contract sweep: JSON Schema counts 600.0 as an integer, so the API takes it as 600."""
    body = {"name": "cron", "service": "SER-00001", "interval_seconds": 600.0, "grace_seconds": 30.0}
    made = ok(api(client, "post", "/api/v1/heartbeats", org.owner_key, body), 201)
    assert (made["interval_seconds"], made["grace_seconds"]) == (600, 30)
    assert type(made["interval_seconds"]) is int
    half = api(client, "patch", f"/api/v1/heartbeats/{made['id']}", org.owner_key, {"grace_seconds": 30.5})
    assert half.status_code == 400, half.body
    rule = {"conditions": [], "actions": {"suppress": True}, "position": 0.0}
    assert ok(api(client, "post", "/api/v1/event-rules", org.owner_key, rule), 201)["position"] == 0


def test_the_document_keeps_the_bounds_of_json_integers(client: Any) -> None:
    """Refusing true and "600" must not cost the served document its minimum and maximum."""
    schemas = json.loads(client.http.get("/api/v1/openapi.json").body)["components"]["schemas"]

    def bounds(schema: dict[str, Any]) -> tuple[Any, Any, Any]:
        branch = next((b for b in schema.get("anyOf", [schema]) if b.get("type") == "integer"), schema)
        return branch.get("type"), branch.get("minimum"), branch.get("maximum")

    assert bounds(schemas["HeartbeatCreate"]["properties"]["grace_seconds"]) == ("integer", 0, 86400)
    assert bounds(schemas["HeartbeatCreate"]["properties"]["interval_seconds"]) == ("integer", 60, 604800)
    assert bounds(schemas["AlertGroupingIn"]["properties"]["window_minutes"]) == ("integer", 1, 1440)
    for request in ("EventRuleCreate", "EventRulePatch"):
        assert bounds(schemas[request]["properties"]["position"]) == ("integer", 0, 100)


def test_the_demo_drops_a_real_kube_prometheus_watchdog(client: Any, org: Org, services: list[Service]) -> None:
    # Issue 26: the demo's rule matched the title, but a Watchdog's title is its summary
    # annotation; the real kube-prometheus Watchdog paged. The rule now reads labels.alertname.
    from chalicelib.eventrule import service as event_rules
    from chalicelib.eventrule.rules import Actions
    from chalicelib.local import demo_noise
    from tests.api.test_webhooks_api import fixture

    hook = integrate(client, org, "alertmanager", default_service=services[0].service_key)
    # A demo seeded before the fix: its rule still reads the title, and is corrected on the next start.
    event_rules.create_rule(
        organization_id=org.organization_id,
        integration_id=hook["id"],
        now=NOW,
        conditions=[("title", "contains", "Watchdog")],
        actions=Actions(drop=True),
        description=demo_noise.INTEGRATION_RULE,
    )
    watchdog = fixture("alertmanager_watchdog.json")
    paged = post(client, hook["routing_key"], watchdog)
    assert paged.status_code == 201, paged.body  # what the old rule let through
    with clock.frozen(NOW + timedelta(minutes=1)):
        demo_noise.seed_noise_control(org.organization_id, services[1], hook["id"], NOW + timedelta(minutes=1))
        [rule] = event_rules.list_rules(organization_id=org.organization_id, integration_id=hook["id"])
        assert [(c.field, c.op, c.value) for c in rule.conditions] == [("labels.alertname", "equals", "Watchdog")]
        watchdog["groupKey"] = '{}:{alertname="Watchdog"}'  # another group, so no dedup hides the answer
        dropped = post(client, hook["routing_key"], watchdog)
        assert dropped.status_code == 202, dropped.body
        assert (dropped.json["dropped"], dropped.json["incident"], dropped.json["alert"]) == (True, None, None)
        other = fixture("alertmanager_firing.json")
        for labels in [other["commonLabels"], *(alert["labels"] for alert in other["alerts"])]:
            labels.pop("service_id")  # the integration's default service
        assert post(client, hook["routing_key"], other).status_code == 201  # other alerts still page
