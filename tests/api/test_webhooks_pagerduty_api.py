"""The PagerDuty Events API v2 drop-in, POST /v2/enqueue: PagerDuty's own answers, and the
incident lifecycle trigger -> acknowledge -> resolve."""

from __future__ import annotations

import json
import re
from typing import Any

from chalicelib.catalog.service import Service
from tests.api.test_webhooks_api import (
    UNKNOWN_KEY,
    api,
    assert_accepted,
    drain_events,
    event_types,
    fixture,
    incident,
    integrate,
    post,
    reconfigure,
    record,
)

# Fixtures of test_webhooks_api, re-exported so pytest finds them here (frozen_clock is autouse).
from tests.api.test_webhooks_api import frozen_clock as frozen_clock
from tests.api.test_webhooks_api import services as services
from tests.conftest import Org

ENQUEUE = "/v2/enqueue"
INVALID = {"status": "invalid event", "message": "Event object is invalid"}


def event(routing_key: str, action: str = "trigger", **changes: Any) -> dict[str, Any]:
    body = fixture("pagerduty_trigger.json") | {"routing_key": routing_key, "event_action": action}
    body["payload"]["custom_details"]["service_id"] = "SER-00002"
    if action != "trigger":
        body.pop("payload")
    return body | changes


def enqueue(client: Any, body: Any) -> Any:
    return post(client, ENQUEUE, body)


def accepted(response: Any) -> str:
    """PagerDuty's 202 body, exactly; returns the dedup key."""
    assert response.status_code == 202, response.body
    assert set(response.json) == {"status", "message", "dedup_key"}
    assert (response.json["status"], response.json["message"]) == ("success", "Event processed")
    return str(response.json["dedup_key"])


def invalid(response: Any) -> list[str]:
    assert response.status_code == 400, response.body
    assert set(response.json) == {"status", "message", "errors"}
    assert {k: response.json[k] for k in INVALID} == INVALID
    assert response.json["errors"] and all(isinstance(e, str) for e in response.json["errors"])
    return list(response.json["errors"])


def incident_of(org: Org, integration_id: str, dedup_key: str) -> Any:
    from chalicelib.incident.tables import IncidentRecord

    found = [
        item
        for item in IncidentRecord.scan(IncidentRecord.organization_id == org.organization_id)
        if item.source and item.source["integration_id"] == integration_id and item.source["dedup_key"] == dedup_key
    ]
    return sorted(found, key=lambda item: item.incident_number)


def test_trigger_acknowledge_resolve(client: Any, org: Org, services: list[Service]) -> None:
    hook = integrate(client, org, "pagerduty", default_service=services[0].service_key)
    key = hook["routing_key"]
    assert accepted(enqueue(client, event(key))) == "srv01/HTTP-check"
    [opened] = incident_of(org, hook["id"], "srv01/HTTP-check")
    number = opened.incident_number
    detail = incident(client, org, number)
    assert (detail["title"], detail["severity"], detail["status"]) == (
        "HTTP check failed on srv01.example.org: 502 Bad Gateway",
        "SEV1",  # error
        "new",
    )
    assert detail["service_keys"] == [services[1].service_key]  # payload.custom_details.service_id

    assert accepted(enqueue(client, event(key))) == "srv01/HTTP-check"
    assert record(org, number).alert_count == 2
    drain_events()
    assert "alert_received" in event_types(incident(client, org, number))

    assert accepted(enqueue(client, event(key, "acknowledge"))) == "srv01/HTTP-check"
    detail = incident(client, org, number)
    assert detail["status"] == "investigating" and detail["acknowledged_at"] is not None

    assert accepted(enqueue(client, event(key, "resolve"))) == "srv01/HTTP-check"
    detail = incident(client, org, number)
    assert detail["status"] == "resolved" and detail["resolved_at"] is not None
    # Resolving again, or acknowledging now, is accepted and changes nothing.
    assert accepted(enqueue(client, event(key, "resolve"))) == "srv01/HTTP-check"
    assert accepted(enqueue(client, event(key, "acknowledge"))) == "srv01/HTTP-check"
    assert incident(client, org, number)["status"] == "resolved"

    # After the resolve, a trigger with the same key opens a new incident.
    assert accepted(enqueue(client, event(key))) == "srv01/HTTP-check"
    first, second = incident_of(org, hook["id"], "srv01/HTTP-check")
    assert first.incident_number == number and first.status == "resolved"
    assert second.status == "new"


def test_trigger_without_dedup_key_gets_one(client: Any, org: Org, services: list[Service]) -> None:
    hook = integrate(client, org, "pagerduty", default_service=services[0].service_key)
    key = hook["routing_key"]
    body = event(key)
    body.pop("dedup_key")
    generated = accepted(enqueue(client, body))
    assert re.fullmatch(r"[0-9a-f]{32}", generated)
    other = accepted(enqueue(client, body))
    assert other != generated  # no key: every trigger is a new alert
    [opened] = incident_of(org, hook["id"], generated)
    assert accepted(enqueue(client, event(key, "resolve", dedup_key=generated))) == generated
    assert record(org, opened.incident_number).status == "resolved"
    # Acknowledging the resolved alert is accepted and ignored: no acknowledgement is stamped.
    assert accepted(enqueue(client, event(key, "acknowledge", dedup_key=generated))) == generated
    after = record(org, opened.incident_number)
    assert after.status == "resolved" and after.acknowledged_at is None
    assert "acknowledged" not in event_types(incident(client, org, opened.incident_number))
    # Unknown keys: accepted and ignored.
    assert accepted(enqueue(client, event(key, "acknowledge", dedup_key="never-triggered"))) == "never-triggered"
    assert accepted(enqueue(client, event(key, "resolve", dedup_key="never-triggered"))) == "never-triggered"
    assert incident_of(org, hook["id"], "never-triggered") == []


def test_invalid_events(client: Any, org: Org, services: list[Service]) -> None:
    hook = integrate(client, org, "pagerduty", default_service=services[0].service_key)
    key = hook["routing_key"]
    trigger = event(key)
    errors = invalid(enqueue(client, trigger | {"payload": {"source": "x", "severity": "fatal"}}))
    assert "'payload.summary' is missing or blank" in errors
    assert any("'payload.severity' is invalid" in e for e in errors)
    assert invalid(enqueue(client, trigger | {"event_action": "explode"}))
    assert invalid(enqueue(client, event(key, "resolve", dedup_key=None))) == ["'dedup_key' is missing or blank"]
    assert invalid(enqueue(client, trigger | {"dedup_key": "d" * 256}))
    assert invalid(enqueue(client, trigger | {"payload": "text"}))
    assert invalid(enqueue(client, {k: v for k, v in trigger.items() if k != "routing_key"}))
    assert invalid(enqueue(client, "{not json"))
    assert invalid(enqueue(client, "[]"))
    assert invalid(enqueue(client, trigger | {"routing_key": UNKNOWN_KEY}))
    assert invalid(enqueue(client, trigger | {"routing_key": "R0ut1ngK3yR0ut1ngK3yR0ut1ngK3y12"}))
    assert invalid(enqueue(client, trigger | {"routing_key": 12345}))
    # A routing key that is not a PagerDuty Events integration's.
    custom = integrate(client, org, "custom", default_service=services[0].service_key)
    assert "PagerDuty" in invalid(enqueue(client, trigger | {"routing_key": custom["routing_key"]}))[0]
    # No service: neither a service_id detail nor a default service.
    bare = integrate(client, org, "pagerduty")
    body = event(bare["routing_key"])
    body["payload"]["custom_details"].pop("service_id")
    assert invalid(enqueue(client, body))
    assert incident_of(org, hook["id"], "srv01/HTTP-check") == []


def test_gate_answers_in_pagerduty_shapes(client: Any, org: Org, services: list[Service]) -> None:
    reconfigure(RATE_LIMIT_WEBHOOK="2")
    hook = integrate(client, org, "pagerduty", default_service=services[0].service_key)
    key = hook["routing_key"]
    accepted(enqueue(client, event(key)))
    accepted(enqueue(client, event(key)))
    throttled = enqueue(client, event(key))
    assert throttled.status_code == 429
    assert throttled.json["status"] == "throttle event" and throttled.json["message"]
    assert int(throttled.headers["Retry-After"]) > 0
    assert throttled.headers["X-RateLimit-Remaining"] == "0"

    other = integrate(client, org, "pagerduty", default_service=services[0].service_key)
    huge = event(other["routing_key"]) | {"padding": "p" * (257 * 1024)}
    too_large = enqueue(client, huge)
    assert too_large.status_code == 413 and too_large.json["status"] == "invalid event"
    plain = post(client, ENQUEUE, event(other["routing_key"]), https=False)
    assert invalid(plain)
    revoked = integrate(client, org, "pagerduty", default_service=services[0].service_key)
    assert api(client, "delete", f"/api/v1/integrations/{revoked['id']}", org.owner_key).status_code == 200
    assert invalid(enqueue(client, event(revoked["routing_key"])))


def test_events_v2_body_on_the_webhook_url(client: Any, org: Org, services: list[Service]) -> None:
    """A PagerDuty integration's own URL takes the same Events v2 bodies, in the webhook answer shape."""
    hook = integrate(client, org, "pagerduty", default_service=services[0].service_key)
    created = assert_accepted(post(client, hook["routing_key"], event(hook["routing_key"])), 201, deduplicated=False)
    assert created["severity"] == "SEV1"
    body = json.loads(json.dumps(event(hook["routing_key"], "resolve")))
    resolved = assert_accepted(post(client, hook["routing_key"], body), 200, deduplicated=True)
    assert (resolved["id"], resolved["status"]) == (created["id"], "resolved")
