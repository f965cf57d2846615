"""PATCH /api/v1/integrations/{id}: rename, default service, IP allowlist and topic change; the
URL, type and secrets stay; a revoked integration is final; null clears only what may be cleared."""

from __future__ import annotations

from typing import Any

from chalicelib.catalog.service import Service
from tests.api.test_integrations_api import TOPIC, error_fields
from tests.api.test_webhooks_api import api, integrate, post

# Fixtures of test_webhooks_api, re-exported so pytest finds them here (frozen_clock is autouse).
from tests.api.test_webhooks_api import frozen_clock as frozen_clock
from tests.api.test_webhooks_api import services as services
from tests.conftest import Org, make_org

BASE = "/api/v1/integrations"


def test_update_changes_routing_and_keeps_the_url(client: Any, org: Org, services: list[Service]) -> None:
    created = integrate(client, org, "custom", signing=True, default_service=services[0].service_key)
    path = f"{BASE}/{created['id']}"
    response = api(
        client,
        "patch",
        path,
        org.owner_key,
        {"name": "Shop alerts", "default_service": services[1].service_id, "ip_allowlist": ["203.0.113.7"]},
    )
    assert response.status_code == 200, response.body
    changed = response.json["data"]
    assert changed["name"] == "Shop alerts"
    assert changed["default_service"] == services[1].service_key  # named by its id, shown by its key
    assert changed["ip_allowlist"] == ["203.0.113.7/32"]
    assert changed["signing"] is True and changed["type"] == "custom"
    assert changed["routing_key_hint"] == created["routing_key_hint"]
    assert "routing_key" not in changed and "signing_secret" not in changed
    assert api(client, "get", path, org.owner_key).json["data"] == changed

    cleared = api(client, "patch", path, org.owner_key, {"default_service": None, "ip_allowlist": []}).json["data"]
    assert cleared["default_service"] is None and cleared["ip_allowlist"] == []
    # The URL still routes, and still wants its signature: the secret stayed.
    delivered = post(client, created["routing_key"], {"title": "Disk full", "service_id": services[0].service_id})
    assert delivered.status_code == 401 and delivered.json["error"]["code"] == "INVALID_SIGNATURE"


def test_update_topic_and_validation(client: Any, org: Org, services: list[Service]) -> None:
    created = integrate(client, org, "cloudwatch")
    path = f"{BASE}/{created['id']}"
    assert (
        api(client, "patch", path, org.owner_key, {"expected_topic_arn": TOPIC}).json["data"]["expected_topic_arn"]
        == TOPIC
    )
    assert (
        api(client, "patch", path, org.owner_key, {"expected_topic_arn": None}).json["data"]["expected_topic_arn"]
        is None
    )

    for body, field in (
        ({}, None),
        ({"name": None}, "name"),
        ({"name": ""}, "name"),
        ({"ip_allowlist": ["not-an-ip"]}, "ip_allowlist.0"),
        ({"default_service": "SER-99999"}, "default_service"),
        ({"type": "custom"}, "type"),
        ({"signing": True}, "signing"),
    ):
        response = api(client, "patch", path, org.owner_key, body)
        assert response.status_code == 400, (body, response.body)
        assert response.json["error"]["code"] == "VALIDATION_ERROR"
        if field is not None:  # a union's branch may follow the name, as for every PATCH body
            named = error_fields(response)
            assert any(f == field or f.startswith(field + ".") for f in named), (body, named)


def test_update_refuses_revoked_other_organizations_and_missing_scope(
    client: Any, org: Org, services: list[Service]
) -> None:
    created = integrate(client, org, "alertmanager")
    path = f"{BASE}/{created['id']}"
    other = make_org("Other")
    assert api(client, "patch", path, other.owner_key, {"name": "x"}).status_code == 404
    assert api(client, "patch", f"{BASE}/nope", org.owner_key, {"name": "x"}).status_code == 404
    forbidden = api(client, "patch", path, org.readonly_key, {"name": "x"})
    assert forbidden.status_code == 403
    assert forbidden.json["error"]["details"]["required_scope"] == "integrations:write"
    assert api(client, "delete", path, org.owner_key).status_code == 200
    refused = api(client, "patch", path, org.owner_key, {"name": "x"})
    assert refused.status_code == 409 and refused.json["error"]["code"] == "CONFLICT"
    assert api(client, "get", path, org.owner_key).json["data"]["name"] == "alertmanager"


def test_update_after_regenerate_changes_the_current_key(client: Any, org: Org, services: list[Service]) -> None:
    created = integrate(client, org, "custom")
    path = f"{BASE}/{created['id']}"
    regenerated = api(client, "post", f"{path}/regenerate", org.owner_key).json["data"]
    changed = api(client, "patch", path, org.owner_key, {"name": "Renamed"}).json["data"]
    assert changed["name"] == "Renamed" and changed["routing_key_hint"] == regenerated["routing_key_hint"]
    listed = api(client, "get", BASE, org.owner_key).json["data"]["items"]
    assert [item["name"] for item in listed] == ["Renamed"]
