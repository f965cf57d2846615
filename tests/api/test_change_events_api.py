"""PagerDuty change events over HTTP: POST /v2/change/enqueue answers as PagerDuty does (202, every
400, 413, 429), records each change once (retries included) on the right service, and the list
GET /api/v1/change-events filters by service and time range."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any
from urllib.parse import quote

from chalicelib import clock
from chalicelib.catalog.service import Service
from chalicelib.settings import get_settings
from tests.api.test_webhooks_api import UNKNOWN_KEY, api, integrate, post, reconfigure

# Fixtures of test_webhooks_api, re-exported so pytest finds them here (frozen_clock is autouse).
from tests.api.test_webhooks_api import frozen_clock as frozen_clock
from tests.api.test_webhooks_api import services as services
from tests.conftest import NOW, Org, make_org

ENQUEUE = "/v2/change/enqueue"
LIST = "/api/v1/change-events"
ACCEPTED = {"status": "success", "message": "Change event processed"}
INVALID = {"status": "invalid event", "message": "Event object is invalid"}


def change(routing_key: str, summary: str = "Deployed checkout 1.4.2", **payload: Any) -> dict[str, Any]:
    return {
        "routing_key": routing_key,
        "payload": {
            "summary": summary,
            "timestamp": "2026-11-22T11:30:00.000+0000",
            "source": "deploy-pipeline",
            "custom_details": {"build": "1.4.2"},
            **payload,
        },
        "links": [{"href": "https://ci.example.org/builds/142", "text": "Build 142"}],
    }


def send(client: Any, body: Any, **kwargs: Any) -> Any:
    return post(client, ENQUEUE, body, **kwargs)


def accepted(response: Any) -> None:
    """PagerDuty's 202 body, exactly."""
    assert response.status_code == 202, response.body
    assert response.json == ACCEPTED
    assert response.headers["Content-Type"] == "application/json"


def invalid(response: Any) -> list[str]:
    assert response.status_code == 400, response.body
    assert set(response.json) == {"status", "message", "errors"}
    assert {k: response.json[k] for k in INVALID} == INVALID
    assert response.json["errors"] and all(isinstance(e, str) for e in response.json["errors"])
    return list(response.json["errors"])


def listed(client: Any, org: Org, query: str = "", key: str | None = None) -> dict[str, Any]:
    response = api(client, "get", LIST + query, key or org.owner_key)
    assert response.status_code == 200, response.body
    return dict(response.json["data"])


def pagerduty(client: Any, org: Org, service: Service | None) -> str:
    fields = {"default_service": service.service_key} if service else {}
    return str(integrate(client, org, "pagerduty", **fields)["routing_key"])


def test_a_change_is_accepted_and_listed(client: Any, org: Org, services: list[Service]) -> None:
    key = pagerduty(client, org, services[0])
    response = send(client, change(key))
    accepted(response)
    assert response.headers["X-RateLimit-Category"] == "webhook"
    page = listed(client, org)
    assert (page["total"], page["has_more"], page["next_offset"]) == (1, False, None)
    [item] = page["items"]
    assert item["id"].startswith("chg_")
    assert item | {"id": None, "integration_id": None} == {
        "id": None,
        "summary": "Deployed checkout 1.4.2",
        "source": "deploy-pipeline",
        "timestamp": "2026-11-22T11:30:00.000Z",
        "links": [{"href": "https://ci.example.org/builds/142", "text": "Build 142"}],
        "service_id": "SER-00001",
        "service_key": services[0].service_key,
        "integration_id": None,
        "custom_details": {"build": "1.4.2"},
        "received_at": "2026-11-22T12:00:00.000Z",
    }
    # The read-only key (incidents:read) may list too.
    assert listed(client, org, key=org.readonly_key)["total"] == 1


def test_an_untimed_change_is_placed_at_its_receipt(client: Any, org: Org, services: list[Service]) -> None:
    key = pagerduty(client, org, services[0])
    accepted(send(client, {"routing_key": key, "payload": {"summary": "Config flag on"}}))
    [item] = listed(client, org)["items"]
    assert (item["timestamp"], item["source"], item["links"], item["custom_details"]) == (
        "2026-11-22T12:00:00.000Z",
        None,
        [],
        None,
    )


def test_a_retried_delivery_records_the_change_once(client: Any, org: Org, services: list[Service]) -> None:
    key = pagerduty(client, org, services[0])
    body = change(key)
    accepted(send(client, body))
    accepted(send(client, body))
    accepted(send(client, json.dumps(dict(reversed(list(body.items()))), indent=2)))  # same JSON, other bytes
    with clock.frozen(NOW + timedelta(days=3)):
        accepted(send(client, body))  # a late retry of a timed change is still the same change
    assert listed(client, org)["total"] == 1
    accepted(send(client, change(key, "Deployed checkout 1.4.3")))
    assert listed(client, org)["total"] == 2


def test_untimed_changes_are_one_within_the_retry_window(client: Any, org: Org, services: list[Service]) -> None:
    key = pagerduty(client, org, services[0])
    body = {"routing_key": key, "payload": {"summary": "Nightly config sync"}}
    accepted(send(client, body))
    with clock.frozen(NOW + timedelta(minutes=30)):
        accepted(send(client, body))  # a retry
    assert listed(client, org)["total"] == 1
    with clock.frozen(NOW + timedelta(hours=2)):
        accepted(send(client, body))  # the same words later: another change
        assert [i["timestamp"] for i in listed(client, org)["items"]] == [
            "2026-11-22T14:00:00.000Z",
            "2026-11-22T12:00:00.000Z",
        ]


def test_custom_details_service_id_names_the_service(client: Any, org: Org, services: list[Service]) -> None:
    key = pagerduty(client, org, services[0])
    accepted(send(client, change(key, "on Pay by id", custom_details={"service_id": "SER-00002"})))
    accepted(send(client, change(key, "on Pay by key", custom_details={"service_id": services[1].service_key})))
    accepted(send(client, change(key, "on the default")))
    by_service = {item["summary"]: item["service_id"] for item in listed(client, org)["items"]}
    assert by_service == {"on Pay by id": "SER-00002", "on Pay by key": "SER-00002", "on the default": "SER-00001"}
    # Without a default service, the event must name one.
    bare = pagerduty(client, org, None)
    accepted(send(client, change(bare, "named", custom_details={"service_id": "ser-00001"})))
    errors = invalid(send(client, change(bare, "unnamed")))
    assert errors == [
        "The routing key's integration has no default service; name one in 'payload.custom_details.service_id'"
    ]


def test_an_unknown_or_foreign_service_is_400(client: Any, org: Org, services: list[Service]) -> None:
    key = pagerduty(client, org, services[0])
    errors = invalid(send(client, change(key, custom_details={"service_id": "SER-99999"})))
    assert errors == ["'payload.custom_details.service_id' names no active service: SER-99999"]
    other = make_org("Other")
    from chalicelib.catalog import service as catalog

    foreign = catalog.create_service(organization_id=other.organization_id, name="Theirs", now=NOW)
    assert invalid(send(client, change(key, custom_details={"service_id": foreign.service_key})))
    assert listed(client, org)["total"] == 0


def test_every_invalid_event_is_400_in_pagerduty_shape(client: Any, org: Org, services: list[Service]) -> None:
    key = pagerduty(client, org, services[0])
    good = change(key)
    cases: list[tuple[Any, str]] = [
        ("{not json", "Request body is not valid JSON"),
        ("[]", "'routing_key' is missing or blank"),
        ("", "'routing_key' is missing or blank"),
        ({k: v for k, v in good.items() if k != "routing_key"}, "'routing_key' is missing or blank"),
        (good | {"routing_key": 12345}, "'routing_key' is missing or blank"),
        (good | {"routing_key": UNKNOWN_KEY}, "No integration has this routing key"),
        (good | {"routing_key": "short"}, "No integration has this routing key"),
        ({"routing_key": key}, "'payload' is missing or not an object"),
        (change(key, ""), "'payload.summary' is missing or blank"),
        (change(key, "s" * 1025), "'payload.summary' is too long"),
        (change(key, timestamp="last tuesday"), "'payload.timestamp' is invalid"),
        (change(key, custom_details=["x"]), "'payload.custom_details' must be an object"),
        (change(key, custom_details={"service_id": "checkout"}), "'payload.custom_details.service_id' is invalid"),
        (good | {"links": [{"text": "no href"}]}, "'links[0].href' is missing or blank"),
        (good | {"links": [{"href": "javascript:alert(1)"}]}, "'links[0].href' must be an http or https URL"),
    ]
    for body, first_error in cases:
        errors = invalid(send(client, body))
        assert errors[0].startswith(first_error), (body, errors)
    # A routing key that is not a PagerDuty Events integration's.
    custom = integrate(client, org, "custom", default_service=services[0].service_key)
    assert "PagerDuty" in invalid(send(client, good | {"routing_key": custom["routing_key"]}))[0]
    # Revoked, and plain HTTP: PagerDuty's 400 as well.
    revoked = integrate(client, org, "pagerduty", default_service=services[0].service_key)
    assert api(client, "delete", f"/api/v1/integrations/{revoked['id']}", org.owner_key).status_code == 200
    assert invalid(send(client, change(revoked["routing_key"])))
    assert invalid(send(client, good, https=False))
    assert listed(client, org)["total"] == 0


def test_throttled_and_too_large(client: Any, org: Org, services: list[Service]) -> None:
    reconfigure(RATE_LIMIT_WEBHOOK="2")
    key = pagerduty(client, org, services[0])
    accepted(send(client, change(key, "one")))
    accepted(send(client, change(key, "two")))
    throttled = send(client, change(key, "three"))
    assert throttled.status_code == 429
    assert throttled.json == {
        "status": "throttle event",
        "message": "Requests for this service are arriving too quickly.  Please retry later.",
    }
    assert int(throttled.headers["Retry-After"]) > 0
    assert throttled.headers["X-RateLimit-Remaining"] == "0"
    # Invalid events count against the routing key's budget as well.
    assert send(client, change(key, "")).status_code == 429
    assert listed(client, org)["total"] == 2

    other = pagerduty(client, org, services[0])
    too_large = send(client, change(other) | {"padding": "p" * (257 * 1024)})
    assert too_large.status_code == 413
    assert too_large.json == {"status": "invalid event", "message": "Request entity too large"}


def test_the_list_filters_by_service_and_time(client: Any, org: Org, services: list[Service]) -> None:
    key = pagerduty(client, org, services[0])
    for minute in (0, 10, 20, 30):
        accepted(send(client, change(key, f"web at :{minute:02d}", timestamp=f"2026-11-22T10:{minute:02d}:00Z")))
    accepted(
        send(
            client,
            change(key, "pay at :15", timestamp="2026-11-22T10:15:00Z", custom_details={"service_id": "SER-00002"}),
        )
    )
    everything = listed(client, org)
    assert [i["summary"] for i in everything["items"]] == [
        "web at :30",
        "web at :20",
        "pay at :15",
        "web at :10",
        "web at :00",
    ]
    web = listed(client, org, f"?service_id={services[0].service_key}")
    assert [i["summary"] for i in web["items"]] == ["web at :30", "web at :20", "web at :10", "web at :00"]
    since, until = quote("2026-11-22T10:10:00Z"), quote("2026-11-22T12:20:00+02:00")  # both bounds inclusive
    ranged = listed(client, org, f"?service_id=SER-00001&since={since}&until={until}")
    assert [i["summary"] for i in ranged["items"]] == ["web at :20", "web at :10"]
    assert [i["summary"] for i in listed(client, org, f"?since={since}&until={until}")["items"]] == [
        "web at :20",
        "pay at :15",
        "web at :10",
    ]
    paged = listed(client, org, "?limit=2&offset=2")
    assert [i["summary"] for i in paged["items"]] == ["pay at :15", "web at :10"]
    assert (paged["total"], paged["has_more"], paged["next_offset"]) == (5, True, 4)
    # Another organization sees none of it.
    other = make_org("Other")
    assert listed(client, other)["total"] == 0


def test_the_list_refuses_bad_filters(client: Any, org: Org, services: list[Service]) -> None:
    unknown = api(client, "get", LIST + "?service_id=SER-99999", org.owner_key)
    assert unknown.status_code == 404 and unknown.json["error"]["code"] == "NOT_FOUND"
    backwards = api(client, "get", LIST + "?since=2026-11-22T10:00:00Z&until=2026-11-22T09:00:00Z", org.owner_key)
    assert backwards.status_code == 400 and backwards.json["error"]["code"] == "VALIDATION_ERROR"
    for query in ("?since=yesterday", "?until=1700000000", "?limit=0", "?service=SER-00001"):
        response = api(client, "get", LIST + query, org.owner_key)
        assert response.status_code == 400, (query, response.body)
    assert api(client, "get", LIST, None).status_code == 401


def test_the_list_needs_incidents_read(client: Any, org: Org, services: list[Service]) -> None:
    from chalicelib.apikey import service as apikeys

    _, services_only = apikeys.create_api_key(
        organization_id=org.organization_id,
        name="svc",
        kind="service_account",
        scopes=["services:read"],
        now=NOW,
        settings=get_settings(),
    )
    response = api(client, "get", LIST, services_only)
    assert response.status_code == 403
