"""The Opsgenie drop-in's refusals, in Opsgenie's shape and with its status codes (the key, the body,
the identifiers, the rate limit), actions on alerts that do not exist, and heartbeat pings by name."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest

from chalicelib import clock
from chalicelib.catalog.service import Service
from tests.api.opsgenie_support import accepted, act, create, genie, refused, request_status
from tests.api.test_webhooks_api import UNKNOWN_KEY, api, integrate, post, reconfigure

# Fixtures of test_webhooks_api, re-exported so pytest finds them here (frozen_clock is autouse).
from tests.api.test_webhooks_api import frozen_clock as frozen_clock
from tests.api.test_webhooks_api import services as services
from tests.conftest import NOW, Org

ALERTS = "/v2/alerts"
BODY = {"message": "Disk full", "alias": "disk"}


@pytest.fixture
def hook(client: Any, org: Org, services: list[Service]) -> dict[str, Any]:
    return integrate(client, org, "opsgenie", default_service=services[0].service_key)


@pytest.fixture
def key(hook: dict[str, Any]) -> str:
    return str(hook["routing_key"])


def test_no_key_or_an_unknown_one_is_401_counted_against_the_address(client: Any, key: str) -> None:
    for authorization in (
        None,
        "",
        "GenieKey",
        "GenieKey   ",
        f"Bearer {key}",
        f"Basic {key}",
        f"GenieKey {UNKNOWN_KEY}",
    ):
        response = genie(client, "post", ALERTS, None, BODY, authorization=authorization)
        refused(response, 401)
        assert response.headers["X-RateLimit-Category"] == "anonymous"
    assert "GenieKey" in refused(genie(client, "get", "/v2/alerts/x", None), 401)["message"]
    assert refused(genie(client, "get", "/v2/alerts/x", UNKNOWN_KEY), 401)["message"] == (
        "No Opsgenie integration has this key (invalid, regenerated or deleted)."
    )


def test_the_key_is_read_in_any_scheme_case_and_in_opsgenies_dashed_form(client: Any, key: str) -> None:
    dashed = f"{key[:8]}-{key[8:12]}-{key[12:16]}-{key[16:20]}-{key[20:]}".upper()
    for authorization in (f"geniekey {key}", f"GENIEKEY {dashed}", f"  GenieKey  {key}  "):
        response = genie(client, "post", ALERTS, None, BODY, authorization=authorization)
        accepted(response)
        assert response.headers["X-RateLimit-Category"] == "webhook"


def test_a_revoked_or_regenerated_key_is_401(client: Any, org: Org, hook: dict[str, Any], key: str) -> None:
    regenerated = api(client, "post", f"/api/v1/integrations/{hook['id']}/regenerate", org.owner_key)
    assert regenerated.status_code == 200, regenerated.body
    refused(genie(client, "post", ALERTS, key, BODY), 401)
    new_key = regenerated.json["data"]["routing_key"]
    accepted(genie(client, "post", ALERTS, new_key, BODY))
    assert api(client, "delete", f"/api/v1/integrations/{hook['id']}", org.owner_key).status_code == 200
    assert refused(genie(client, "post", ALERTS, new_key, BODY), 401)["message"] == "This webhook has been revoked."


def test_another_integrations_key_is_403(client: Any, org: Org, services: list[Service]) -> None:
    other = integrate(client, org, "pagerduty", default_service=services[0].service_key)
    document = refused(genie(client, "post", ALERTS, other["routing_key"], BODY), 403)
    assert document["message"] == (
        "This key belongs to a pagerduty integration: only an Opsgenie integration's key may use the Opsgenie "
        "Alert API."
    )


def test_the_gates_other_checks(client: Any, org: Org, services: list[Service], key: str) -> None:
    refused(genie(client, "post", ALERTS, key, BODY, https=False), 403)
    locked = integrate(client, org, "opsgenie", default_service=services[0].service_key, ip_allowlist=["10.0.0.0/8"])
    refused(genie(client, "post", ALERTS, locked["routing_key"], BODY), 403)
    huge = json.dumps({"message": "x", "description": "d" * (300 * 1024)})
    refused(genie(client, "post", ALERTS, key, huge), 413)


@pytest.mark.parametrize("body", [b"{", b"[]", b'"text"', b"null"])
def test_a_body_that_is_not_a_json_object_is_400(client: Any, key: str, body: bytes) -> None:
    document = refused(genie(client, "post", ALERTS, key, body), 400)
    assert "errors" not in document


def test_invalid_fields_are_422_naming_each(client: Any, key: str) -> None:
    document = refused(genie(client, "post", ALERTS, key, {"priority": "P0", "tags": "x", "entity": ["e"]}), 422)
    assert document["message"] == "Request has invalid fields."
    assert document["errors"] == {
        "message": "is required and must not be blank",
        "priority": "must be one of P1, P2, P3, P4, P5",
        "entity": "must be a string, not an array",
    }
    created = create(client, key, {"message": "m"})
    noteless = refused(act(client, key, created["alertId"], "notes", {"user": "ana"}), 422)
    assert noteless["errors"] == {"note": "is required and must not be blank"}


def test_an_alert_without_a_service_is_422(client: Any, org: Org) -> None:
    bare = integrate(client, org, "opsgenie")["routing_key"]
    document = refused(genie(client, "post", ALERTS, bare, BODY), 422)
    assert document["message"].startswith("No service for this alert")
    unknown = refused(genie(client, "post", ALERTS, bare, BODY | {"details": {"service_id": "SER-09999"}}), 422)
    assert "SER-09999" in unknown["message"]


def test_an_unknown_identifier_type_is_422(client: Any, key: str) -> None:
    for method, path in (("get", "/v2/alerts/x"), ("post", "/v2/alerts/x/close"), ("post", "/v2/alerts/x/acknowledge")):
        document = refused(genie(client, method, f"{path}?identifierType=name", key), 422)
        assert document["errors"] == {"identifierType": "must be one of id, alias, tiny"}


@pytest.mark.parametrize(
    ("identifier", "identifier_type"),
    [
        ("alr_0123456789abcdef0123456789abcdef", "id"),
        ("not-an-id", ""),
        ("nope", "alias"),
        ("99", "tiny"),
        ("x1", "tiny"),
        ("1" * 40, "tiny"),
    ],
)
def test_an_alert_that_does_not_exist(client: Any, key: str, identifier: str, identifier_type: str) -> None:
    query = f"?identifierType={identifier_type}" if identifier_type else ""
    assert refused(genie(client, "get", f"/v2/alerts/{identifier}{query}", key), 404)["message"].startswith(
        "Alert does not exist"
    )
    for action, body in (("acknowledge", None), ("close", {}), ("notes", {"note": "n"})):
        status = request_status(client, key, accepted(act(client, key, identifier, action, body, identifier_type)))
        assert (status["isSuccess"], status["status"], status["alertId"], status["alias"]) == (
            False,
            "Alert does not exist",
            "",
            "",
        )


def test_another_organizations_alert_and_requests_are_not_found(client: Any, key: str) -> None:
    from tests.conftest import make_org

    created = create(client, key, BODY)
    other = make_org("Other")
    catalog_service = _service(other)
    stranger = integrate(client, other, "opsgenie", default_service=catalog_service)["routing_key"]
    refused(genie(client, "get", f"/v2/alerts/{created['alertId']}", stranger), 404)
    refused(genie(client, "get", "/v2/alerts/1?identifierType=tiny", stranger), 404)
    refused(genie(client, "get", f"/v2/alerts/requests/{created['alertId']}", stranger), 404)
    status = request_status(client, stranger, accepted(act(client, stranger, created["alertId"], "close")))
    assert status["isSuccess"] is False


def _service(org: Org) -> str:
    from chalicelib.catalog import service as catalog

    return catalog.create_service(organization_id=org.organization_id, name="Theirs", now=NOW).service_key


def test_an_unknown_or_expired_request_is_404(client: Any, key: str) -> None:
    refused(genie(client, "get", "/v2/alerts/requests/513085b8-caf3-4f91-aa23-be5fdefc3570", key), 404)
    refused(genie(client, "get", "/v2/alerts/requests/" + "a" * 80, key), 404)
    request_id = accepted(genie(client, "post", ALERTS, key, BODY))
    with clock.frozen(NOW + timedelta(days=7, seconds=1)):
        refused(genie(client, "get", f"/v2/alerts/requests/{request_id}", key), 404)


def test_a_note_on_a_suppressed_alert_says_it_has_no_incident(client: Any, org: Org, key: str) -> None:
    window = {
        "description": "Upgrade",
        "start": "2026-11-22T11:00:00Z",
        "end": "2026-11-22T13:00:00Z",
        "service_ids": ["SER-00001"],
    }
    assert api(client, "post", "/api/v1/maintenance-windows", org.owner_key, window).status_code == 201
    created = create(client, key, BODY)
    assert created["status"] == "Created alert, suppressed: no incident, nobody paged"
    noted = request_status(client, key, accepted(act(client, key, "disk", "notes", {"note": "n"}, "alias")))
    assert (noted["isSuccess"], noted["status"]) == (
        False,
        "The alert has no incident to add the note to (it was suppressed)",
    )
    closed = request_status(client, key, accepted(act(client, key, "disk", "close", None, "alias")))
    assert (closed["isSuccess"], closed["status"]) == (True, "Closed alert")


def test_over_the_integrations_rate_limit_is_429_with_retry_after(client: Any, key: str) -> None:
    reconfigure(RATE_LIMIT_WEBHOOK="2")
    accepted(genie(client, "post", ALERTS, key, BODY))
    accepted(genie(client, "post", ALERTS, key, BODY))
    limited = genie(client, "post", ALERTS, key, BODY)
    refused(limited, 429)
    assert int(limited.headers["Retry-After"]) > 0
    assert limited.headers["X-RateLimit-Remaining"] == "0"


def test_a_method_opsgenie_routes_lack_is_405_in_opsgenies_shape(client: Any, key: str) -> None:
    response = genie(client, "delete", "/v2/alerts/x", key)
    refused(response, 405)
    assert "GET" in response.headers["Allow"]


def test_the_integrations_webhook_url_takes_the_create_body_too(client: Any, key: str) -> None:
    delivered = post(client, key, {"message": "Via the webhook URL", "priority": "P1"})
    assert delivered.status_code == 201, delivered.body
    assert delivered.json["incident"]["severity"] == "SEV0"
    refusal = post(client, key, {"priority": "P1"})
    assert refusal.status_code == 400 and refusal.json["error"]["code"] == "INVALID_PAYLOAD"


# --- heartbeats ------------------------------------------------------------------------------------


def heartbeat(client: Any, org: Org, name: str) -> dict[str, Any]:
    body = {"name": name, "service": "SER-00001", "interval_seconds": 300, "grace_seconds": 60}
    response = api(client, "post", "/api/v1/heartbeats", org.owner_key, body)
    assert response.status_code == 201, response.body
    return dict(response.json["data"])


def last_ping(client: Any, org: Org, heartbeat_id: str) -> str | None:
    return api(client, "get", f"/api/v1/heartbeats/{heartbeat_id}", org.owner_key).json["data"]["last_ping_at"]


def test_a_heartbeat_is_pinged_by_its_name(client: Any, org: Org, key: str) -> None:
    nightly = heartbeat(client, org, "Nightly backup")
    other = heartbeat(client, org, "nightly")
    with clock.frozen(NOW + timedelta(minutes=1)):
        accepted(genie(client, "get", "/v2/heartbeats/Nightly%20backup/ping", key), "PONG - Heartbeat received")
    assert last_ping(client, org, nightly["id"]) == "2026-11-22T12:01:00Z"
    with clock.frozen(NOW + timedelta(minutes=2)):
        accepted(genie(client, "post", "/v2/heartbeats/nightly/ping", key, b""), "PONG - Heartbeat received")
    assert last_ping(client, org, other["id"]) == "2026-11-22T12:02:00Z"
    assert last_ping(client, org, nightly["id"]) == "2026-11-22T12:01:00Z"  # the exact name wins
    with clock.frozen(NOW + timedelta(minutes=3)):
        accepted(genie(client, "post", "/v2/heartbeats/NIGHTLY%20BACKUP/ping", key, b""), "PONG - Heartbeat received")
    assert last_ping(client, org, nightly["id"]) == "2026-11-22T12:03:00Z"  # else any case


def test_an_unknown_heartbeat_is_404_and_a_key_is_needed(client: Any, org: Org, key: str) -> None:
    heartbeat(client, org, "Nightly backup")
    assert refused(genie(client, "get", "/v2/heartbeats/Weekly/ping", key), 404)["message"] == (
        "Heartbeat with name 'Weekly' does not exist."
    )
    refused(genie(client, "get", "/v2/heartbeats/Nightly%20backup/ping", None), 401)
