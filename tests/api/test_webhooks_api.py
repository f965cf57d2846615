"""Inbound webhooks over HTTP: the gate's error codes (ROUTE_NOT_FOUND, WEBHOOK_REVOKED,
HTTPS_REQUIRED, IP_NOT_ALLOWED, RATE_LIMITED, PAYLOAD_TOO_LARGE) and the order of its checks.

The helpers and fixtures here are shared with the other webhook modules: test_webhooks_payload_api
(signatures, invalid payloads, no 500 for malformed bodies), test_webhooks_sources_api,
test_webhooks_cloudwatch_api and test_webhooks_pagerduty_api (each source's lifecycle), and
test_integrations_api (the admin API)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from chalicelib import aws, clock
from chalicelib.catalog.service import Service
from chalicelib.integration import fetch
from chalicelib.integration.parsers import sns
from chalicelib.settings import get_settings
from tests.conftest import NOW, Org
from tests.conftest import reconfigure as _reconfigure

FIXTURES = Path(__file__).parent.parent / "unit" / "fixtures" / "integration"
HTTPS = {"X-Forwarded-Proto": "https"}
UNKNOWN_KEY = "0123456789abcdef0123456789abcdef"
ERROR_CODES = {
    "ROUTE_NOT_FOUND": 404,
    "WEBHOOK_REVOKED": 410,
    "INVALID_PAYLOAD": 400,
    "INVALID_SIGNATURE": 401,
    "SIGNATURE_EXPIRED": 401,
    "IP_NOT_ALLOWED": 403,
    "HTTPS_REQUIRED": 403,
    "RATE_LIMITED": 429,
    "PAYLOAD_TOO_LARGE": 413,
}


# --- helpers shared by the webhook test modules ----------------------------------------------------


def reconfigure(**environment: str) -> None:
    """conftest.reconfigure, then read settings outside a chalice.test call."""
    from chalicelib.settings import get_settings

    _reconfigure(**environment)
    get_settings()
    aws.bind_tables()


def fixture(name: str) -> dict[str, Any]:
    return dict(json.loads((FIXTURES / name).read_text()))


def api(client: Any, method: str, path: str, key: str | None, body: Any = None) -> Any:
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    raw = body if isinstance(body, str | bytes) else (json.dumps(body) if body is not None else None)
    response = getattr(client.http, method)(path, headers=headers, body=raw)
    response.json = json.loads(response.body) if response.body else None
    return response


def integrate(client: Any, org: Org, type_: str, **fields: Any) -> dict[str, Any]:
    """Create an integration through the admin API; the answer holds the routing key (once)."""
    response = api(client, "post", "/api/v1/integrations", org.owner_key, {"type": type_, "name": type_, **fields})
    assert response.status_code == 201, response.body
    return dict(response.json["data"])


def post(client: Any, path: str, body: Any, headers: dict[str, str] | None = None, *, https: bool = True) -> Any:
    """POST a delivery; `path` is a full path, or a routing key (then /webhooks/<key>)."""
    if not path.startswith("/"):
        path = f"/webhooks/{path}"
    raw = body if isinstance(body, str | bytes) else json.dumps(body)
    all_headers = {"Content-Type": "application/json", **(HTTPS if https else {}), **(headers or {})}
    response = client.http.post(path, headers=all_headers, body=raw)
    try:
        response.json = json.loads(response.body) if response.body else None
    except ValueError:
        response.json = None
    return response


def assert_error(response: Any, code: str) -> None:
    """The webhook error body, exactly: {success: false, error: {code, message}}."""
    assert response.status_code == ERROR_CODES[code], (response.status_code, response.body)
    assert response.headers["Content-Type"] == "application/json"
    document = response.json
    assert set(document) == {"success", "error"}, document
    assert document["success"] is False
    assert set(document["error"]) == {"code", "message"}
    assert document["error"]["code"] == code
    assert isinstance(document["error"]["message"], str) and document["error"]["message"]


def assert_accepted(response: Any, status: int, *, deduplicated: bool) -> dict[str, Any]:
    """The accepted body; returns its incident."""
    assert response.status_code == status, response.body
    document = response.json
    assert document["success"] is True
    assert document["deduplicated"] is deduplicated
    incident = document["incident"]
    assert set(incident) == {"id", "title", "severity", "status", "url"}
    assert incident["url"].endswith(f"/api/v1/incidents/{incident['id']}")
    return dict(incident)


def incident(client: Any, org: Org, number: str) -> dict[str, Any]:
    """The incident's detail (with timeline) through the API."""
    response = api(client, "get", f"/api/v1/incidents/{number}", org.owner_key)
    assert response.status_code == 200, response.body
    return dict(response.json["data"])


def record(org: Org, number: str) -> Any:
    from chalicelib.incident import repository

    return repository.get_incident(org.organization_id, number)


def event_types(detail: dict[str, Any]) -> list[str]:
    return [entry["event_type"] for entry in detail["timeline"]]


def drain_events() -> list[str]:
    """Run the events worker over everything visible on the events queue (as Lambda would)."""
    from chalicelib.queue.messages import EVENTS_QUEUE
    from chalicelib.workers import dispatch

    sqs, url = aws.client("sqs"), aws.queue_url(EVENTS_QUEUE)
    handled: list[str] = []
    for _ in range(20):
        messages = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=0).get("Messages", [])
        if not messages:
            return handled
        records = [{"messageId": m["MessageId"], "body": m["Body"]} for m in messages]
        assert dispatch.handle_records(records) == {"batchItemFailures": []}
        for message in messages:
            sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
            handled.append(json.loads(message["Body"])["message_type"])
    raise AssertionError("the events queue never emptied")


@pytest.fixture(autouse=True)
def frozen_clock() -> Iterator[None]:
    with clock.frozen(NOW):
        yield


@pytest.fixture
def services(org: Org) -> list[Service]:
    """Two services: SER-00001 and SER-00002."""
    from chalicelib.catalog import service as catalog

    made = [catalog.create_service(organization_id=org.organization_id, name=n, now=NOW) for n in ("Web", "Pay")]
    assert [s.service_id for s in made] == ["SER-00001", "SER-00002"]
    return made


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """SNS certificates and confirmations never leave the process."""
    sns.clear_certificate_cache()
    monkeypatch.setattr(fetch, "fetch_certificate", lambda url, settings: b"not a certificate")
    monkeypatch.setattr(fetch, "confirm_subscription", lambda url, settings: None)


def signed_trigger(service: Service, **fields: Any) -> dict[str, Any]:
    return {"title": "Checkout latency", "service_id": service.service_id, **fields}


# --- ROUTE_NOT_FOUND, WEBHOOK_REVOKED, HTTPS_REQUIRED ----------------------------------------------


def test_unknown_and_malformed_routing_keys_are_route_not_found(client: Any, org: Org, services: list[Service]) -> None:
    body = signed_trigger(services[0])
    for path in (
        f"/webhooks/{UNKNOWN_KEY}",
        f"/webhooks/custom/{UNKNOWN_KEY}",
        "/webhooks/short",
        "/webhooks/" + "A" * 32,  # keys are lowercase hex
        "/webhooks/" + "g" * 32,
        "/webhooks/" + "0" * 33,
        "/webhooks/custom/%20",
    ):
        assert_error(post(client, path, body), "ROUTE_NOT_FOUND")
        assert_error(post(client, path, body, https=False), "ROUTE_NOT_FOUND")  # before the HTTPS check
    for authorization in (None, f"Bearer {UNKNOWN_KEY}", "Bearer ", "Bearer short", f"Basic {UNKNOWN_KEY}", "x"):
        headers = {"Authorization": authorization} if authorization is not None else {}
        assert_error(post(client, "/v1/incidents", body, headers), "ROUTE_NOT_FOUND")


def test_a_revoked_webhook_answers_410_before_any_other_check(client: Any, org: Org, services: list[Service]) -> None:
    hook = integrate(client, org, "custom", default_service=services[0].service_key, ip_allowlist=["203.0.113.0/24"])
    assert api(client, "delete", f"/api/v1/integrations/{hook['id']}", org.owner_key).status_code == 200
    key = hook["routing_key"]
    huge = b"{" + b" " * (300 * 1024) + b"}"
    for path, headers in (
        (key, {}),
        (f"/webhooks/custom/{key}", {}),
        ("/v1/incidents", {"Authorization": f"Bearer {key}"}),
    ):
        assert_error(post(client, path, signed_trigger(services[0]), headers), "WEBHOOK_REVOKED")
        # Revoked, plain HTTP, from a blocked address, over-size and malformed: still 410.
        response = post(client, path, huge, headers, https=False)
        assert_error(response, "WEBHOOK_REVOKED")
        assert "X-RateLimit-Remaining" not in response.headers


def test_plain_http_is_refused(client: Any, org: Org, services: list[Service]) -> None:
    hook = integrate(client, org, "custom", default_service=services[0].service_key)
    key = hook["routing_key"]
    body = signed_trigger(services[0])
    for proto in (None, "http", "HTTP", "http, https", "", "ftp"):
        headers = {"X-Forwarded-Proto": proto} if proto is not None else {}
        for path, extra in (
            (key, {}),
            (f"/webhooks/custom/{key}", {}),
            ("/v1/incidents", {"Authorization": f"Bearer {key}"}),
        ):
            response = post(client, path, body, {**headers, **extra}, https=False)
            assert_error(response, "HTTPS_REQUIRED")
            assert "X-RateLimit-Remaining" not in response.headers  # refused before the rate limit
    for proto in ("https", "HTTPS", "https, http", " https "):
        response = post(client, key, body, {"X-Forwarded-Proto": proto}, https=False)
        assert response.status_code == 201, (proto, response.body)


# --- IP_NOT_ALLOWED and RATE_LIMITED -----------------------------------------------------------------


def test_ip_allowlist(client: Any, org: Org, services: list[Service]) -> None:
    default = {"default_service": services[0].service_key}
    body = signed_trigger(services[0])
    locked = integrate(client, org, "custom", ip_allowlist=["203.0.113.0/24"], **default)
    response = post(client, locked["routing_key"], body, {"X-Forwarded-For": "203.0.113.9"})  # never trusted
    assert_error(response, "IP_NOT_ALLOWED")
    assert "127.0.0.1" in response.json["error"]["message"]
    assert_error(post(client, f"/webhooks/custom/{locked['routing_key']}", body), "IP_NOT_ALLOWED")
    legacy = {"Authorization": f"Bearer {locked['routing_key']}"}
    assert_error(post(client, "/v1/incidents", {"title": "x"}, legacy), "IP_NOT_ALLOWED")

    ipv6_only = integrate(client, org, "custom", ip_allowlist=["2001:db8::/32"], **default)
    assert ipv6_only["ip_allowlist"] == ["2001:db8::/32"]
    assert_error(post(client, ipv6_only["routing_key"], body), "IP_NOT_ALLOWED")

    loopback = integrate(client, org, "custom", ip_allowlist=["203.0.113.0/24", "127.0.0.1/32"], **default)
    assert post(client, loopback["routing_key"], body).status_code == 201
    single = integrate(client, org, "custom", ip_allowlist=["10.0.0.0/8", "127.0.0.1"], **default)
    assert single["ip_allowlist"] == ["10.0.0.0/8", "127.0.0.1/32"]
    assert post(client, single["routing_key"], body).status_code == 201


def test_rate_limit_per_routing_key(client: Any, org: Org, services: list[Service]) -> None:
    from chalicelib.ratelimit import buckets

    reconfigure(RATE_LIMIT_WEBHOOK="3")
    first = integrate(client, org, "custom", default_service=services[0].service_key)
    other = integrate(client, org, "custom", default_service=services[0].service_key)
    body = signed_trigger(services[0], dedup_key="same")
    reset = str(int(NOW.timestamp()) // 60 * 60 + 60)
    remaining = []
    for _ in range(3):
        response = post(client, first["routing_key"], body)
        assert response.status_code in (200, 201)
        assert response.headers["X-RateLimit-Category"] == "webhook"
        remaining.append(response.headers["X-RateLimit-Remaining"])
    assert remaining == ["2", "1", "0"]
    for path in (first["routing_key"], f"/webhooks/custom/{first['routing_key']}"):
        response = post(client, path, body)
        assert_error(response, "RATE_LIMITED")
        assert int(response.headers["Retry-After"]) > 0
        assert response.headers["X-RateLimit-Limit"] == "3"
        assert response.headers["X-RateLimit-Remaining"] == "0"
        assert response.headers["X-RateLimit-Reset"] == reset
    # Invalid deliveries are counted too: the limit protects the service, not only the incidents.
    legacy = post(client, "/v1/incidents", {"title": "x"}, {"Authorization": f"Bearer {first['routing_key']}"})
    assert_error(legacy, "RATE_LIMITED")
    assert post(client, other["routing_key"], body).status_code == 201  # its own bucket
    with clock.frozen(NOW + timedelta(seconds=60)):
        assert post(client, first["routing_key"], body).status_code == 200

    # Deliveries refused by the allow-list never reach the rate limit.
    locked = integrate(client, org, "custom", ip_allowlist=["203.0.113.0/24"])
    for _ in range(5):
        response = post(client, locked["routing_key"], body)
        assert_error(response, "IP_NOT_ALLOWED")
        assert "X-RateLimit-Remaining" not in response.headers
    decision = buckets.charge(category="webhook", identity=locked["id"], now=NOW, settings=get_settings())
    assert decision.remaining == 2  # only this charge was counted


# --- PAYLOAD_TOO_LARGE ---------------------------------------------------------------------------------


def test_bodies_over_256_kib_are_refused(client: Any, org: Org, services: list[Service]) -> None:
    hook = integrate(client, org, "custom", default_service=services[0].service_key)
    key = hook["routing_key"]
    limit = 256 * 1024
    skeleton = json.dumps({"title": "Big", "service": "web", "padding": ""})
    exact = json.dumps({"title": "Big", "service": "web", "padding": "p" * (limit - len(skeleton))})
    assert len(exact.encode()) == limit
    assert post(client, key, exact).status_code == 201  # legacy body: extra fields are kept
    over = exact[:-2] + "p" + exact[-2:]
    for path, headers in (
        (key, {}),
        (f"/webhooks/custom/{key}", {}),
        ("/v1/incidents", {"Authorization": f"Bearer {key}"}),
    ):
        assert_error(post(client, path, over, headers), "PAYLOAD_TOO_LARGE")
    assert_error(post(client, key, b"\xff" * (limit + 1)), "PAYLOAD_TOO_LARGE")


# --- the order of the checks ------------------------------------------------------------------------------


def test_order_of_checks(client: Any, org: Org, services: list[Service]) -> None:
    reconfigure(RATE_LIMIT_WEBHOOK="2")
    huge = "x" * (257 * 1024)
    # Unknown key over plain HTTP: the route comes first.
    assert_error(post(client, UNKNOWN_KEY, huge, https=False), "ROUTE_NOT_FOUND")
    # HTTPS before the allow-list, the allow-list before the size.
    locked = integrate(client, org, "custom", ip_allowlist=["203.0.113.0/24"])
    assert_error(post(client, locked["routing_key"], huge, https=False), "HTTPS_REQUIRED")
    assert_error(post(client, locked["routing_key"], huge), "IP_NOT_ALLOWED")
    # The size before the signature and the payload. (Issue 13: the size now comes before the
    # rate limit too, so the signature can be checked before the routing key's bucket is charged.)
    signed = integrate(client, org, "custom", signing=True)
    for _ in range(3):
        assert_error(post(client, signed["routing_key"], huge), "PAYLOAD_TOO_LARGE")
    # The signature before the rate limit: bad signatures never spend the routing key's bucket (2).
    for _ in range(3):
        response = post(client, signed["routing_key"], {"title": "x"})
        assert_error(response, "INVALID_SIGNATURE")
        assert response.headers["X-RateLimit-Category"] == "webhook_unverified"
    # The rate limit before the payload: two signed deliveries with a bad payload spend the bucket.
    from chalicelib.integration import signing

    bad = json.dumps({"title": ""})
    for offset in range(3):
        headers = signing.signed_headers(signed["signing_secret"], int(NOW.timestamp()) - offset, bad)
        assert_error(
            post(client, signed["routing_key"], bad, headers), "INVALID_PAYLOAD" if offset < 2 else "RATE_LIMITED"
        )
