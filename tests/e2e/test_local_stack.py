"""The foundation, tried as a new user would: make run's entry point, then real HTTP calls."""

from __future__ import annotations

import os
import time
from pathlib import Path

import requests
from openapi_spec_validator import validate

from tests.e2e.conftest import LocalStack, start_stack, stop_stack


def test_demo_file_has_what_the_contract_promises(stack: LocalStack) -> None:
    demo = stack.demo
    assert demo["base_url"].startswith("http://127.0.0.1:")
    assert demo["aws_endpoint_url"].startswith("http://127.0.0.1:")
    assert demo["organization_name"]
    assert set(demo["api_keys"]) >= {"owner", "readonly"}
    assert len(demo["services"]) >= 2
    assert all(s["service_key"].startswith("svc_") and s["service_id"].startswith("SER-") for s in demo["services"])
    assert any(u["slack_user_id"] is None for u in demo["users"])
    expected = {
        "custom",
        "custom_signed",
        "custom_ip_locked",
        "newrelic",
        "sentry",
        "alertmanager",
        "cloudwatch",
        "pagerduty",
        "opsgenie",
        "revoked",
    }
    assert set(demo["integrations"]) >= expected
    assert demo["integrations"]["custom_signed"]["signing_secret"]
    for integration in demo["integrations"].values():
        assert integration["url"] == f"{demo['base_url']}/webhooks/{integration['routing_key']}"


def test_verify_with_the_owner_key(stack: LocalStack) -> None:
    response = stack.get("/api/v1/auth/verify")
    assert response.status_code == 200
    body = response.json()
    assert body["success"] is True
    assert body["data"]["valid"] is True
    assert body["data"]["organization_name"] == stack.demo["organization_name"]
    assert "incidents:write" in body["data"]["scopes"]
    assert body["meta"]["request_id"] == response.headers["X-Request-Id"]
    assert response.headers["X-RateLimit-Category"] == "api_key"
    assert int(response.headers["X-RateLimit-Remaining"]) >= 0
    assert int(response.headers["X-RateLimit-Reset"]) > time.time() - 1


def test_missing_and_bad_credentials_are_401_with_headers(stack: LocalStack) -> None:
    for headers in ({}, {"Authorization": "Bearer tcs_nope"}, {"Authorization": "Basic abc"}):
        response = stack.get("/api/v1/auth/verify", headers=headers)
        assert response.status_code == 401
        assert response.json()["error"]["code"] == "UNAUTHORIZED"
        assert "X-RateLimit-Remaining" in response.headers


def test_readonly_key_gets_403_naming_the_scope(stack: LocalStack) -> None:
    response = stack.get("/api/v1/services", key=stack.demo["api_keys"]["readonly"])
    assert response.status_code == 403
    error = response.json()["error"]
    assert error["code"] == "FORBIDDEN"
    assert error["details"]["required_scope"] == "services:read"


def test_services_list_shows_the_demo_services(stack: LocalStack) -> None:
    response = stack.get("/api/v1/services")
    assert response.status_code == 200
    keys = {item["service_key"] for item in response.json()["data"]["items"]}
    assert {s["service_key"] for s in stack.demo["services"]} <= keys


def test_unknown_route_and_malformed_json_are_enveloped(stack: LocalStack) -> None:
    response = stack.get("/api/v1/no/such/route")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "NOT_FOUND"
    response = stack.post(
        "/api/v1/api-keys", data=b"{not json", headers={**stack.headers(), "Content-Type": "application/json"}
    )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "VALIDATION_ERROR"
    assert response.json()["error"]["details"]["fields"]


def test_client_request_id_is_echoed(stack: LocalStack) -> None:
    response = stack.get("/api/v1/auth/verify", headers={**stack.headers(), "X-Request-Id": "my-trace-123"})
    assert response.headers["X-Request-Id"] == "my-trace-123"
    assert response.json()["meta"]["request_id"] == "my-trace-123"


def test_openapi_document_is_served_and_valid(stack: LocalStack) -> None:
    response = requests.get(stack.base_url + "/api/v1/openapi.json", timeout=10)
    assert response.status_code == 200
    document = response.json()
    validate(document)
    assert document["openapi"] == "3.1.0"
    assert document["info"]["version"] == "1.0.0"
    assert "/api/v1/auth/verify" in document["paths"]


def test_created_key_works_then_revocation_is_immediate(stack: LocalStack) -> None:
    created = stack.post("/api/v1/api-keys", json={"name": "e2e", "scopes": ["services:read"]})
    assert created.status_code == 201, created.text
    key = created.json()["data"]["key"]
    assert stack.get("/api/v1/services", key=key).status_code == 200
    revoked = stack.session.delete(
        f"{stack.base_url}/api/v1/api-keys/{created.json()['data']['id']}", headers=stack.headers()
    )
    assert revoked.status_code == 200
    assert stack.get("/api/v1/services", key=key).status_code == 401


def test_rate_limit_answers_429_with_retry_after(tmp_path: Path) -> None:
    limited = start_stack(tmp_path, RATE_LIMIT_API_KEY="5")
    try:
        # Windows are fixed minutes: on a loaded machine six requests may straddle a minute's end,
        # so eleven are sent: two windows at most, one of them must see a sixth.
        statuses = [limited.get("/api/v1/auth/verify") for _ in range(11)]
        assert [r.status_code for r in statuses[:5]] == [200] * 5
        refused = [r for r in statuses if r.status_code == 429]
        assert refused and {r.status_code for r in statuses} == {200, 429}
        last = refused[0]
        assert last.json()["error"]["code"] == "RATE_LIMITED"
        assert int(last.headers["Retry-After"]) >= 1
        assert last.headers["X-RateLimit-Remaining"] == "0"
    finally:
        assert stop_stack(limited) == 0


def test_sigterm_stops_everything_without_orphans(tmp_path: Path) -> None:
    running = start_stack(tmp_path)
    emulator_port = int(running.demo["aws_endpoint_url"].rsplit(":", 1)[1])
    assert stop_stack(running) == 0
    # Both the API port and the emulator's port are free again: no process was left behind.
    for url in (running.base_url + "/api/v1/openapi.json", f"http://127.0.0.1:{emulator_port}/moto-api/"):
        deadline = time.monotonic() + 10
        while True:
            try:
                requests.get(url, timeout=1)
            except requests.ConnectionError:
                break
            assert time.monotonic() < deadline, f"{url} still answers after SIGTERM"
            time.sleep(0.2)
    assert os.path.exists(tmp_path / "local" / "demo.json")
