"""Integration admin API: create (routing key, URL and signing secret shown once), list, get,
regenerate and revoke; scopes, validation, other organizations, and what is stored."""

from __future__ import annotations

import json
import re
from typing import Any

from chalicelib import aws, clock
from chalicelib.apikey import service as apikeys
from chalicelib.catalog.service import Service
from chalicelib.integration import routing_keys
from chalicelib.integration.admin import reveal_client_secret, reveal_signing_secret
from chalicelib.settings import get_settings
from tests.api.test_webhooks_api import api, assert_error, integrate, post

# Fixtures of test_webhooks_api, re-exported so pytest finds them here (frozen_clock is autouse).
from tests.api.test_webhooks_api import frozen_clock as frozen_clock
from tests.api.test_webhooks_api import services as services
from tests.conftest import NOW, Org, make_org

BASE = "/api/v1/integrations"
LISTED_FIELDS = {
    "id",
    "type",
    "name",
    "state",
    "default_service",
    "signing",
    "has_client_secret",
    "ip_allowlist",
    "expected_topic_arn",
    "routing_key_hint",
    "created_at",
    "revoked_at",
}
SHOWN_ONCE = {"routing_key", "url", "signing_secret"}
TOPIC = "arn:aws:sns:eu-west-1:123456789012:tocsin-alarms"


def error_fields(response: Any) -> list[str]:
    return [f["field"] for f in response.json["error"]["details"]["fields"]]


def trigger(services: list[Service]) -> dict[str, Any]:
    return {"title": "Disk full", "service_id": services[0].service_id}


def test_create_each_type_shows_secrets_once(client: Any, org: Org, services: list[Service]) -> None:
    default = services[0].service_key
    created = [
        integrate(client, org, "custom", default_service=default),
        integrate(client, org, "custom", signing=True),
        integrate(client, org, "newrelic", default_service=default),
        integrate(client, org, "sentry", client_secret="sentry-client-secret"),
        integrate(client, org, "alertmanager", ip_allowlist=["203.0.113.0/24"]),
        integrate(client, org, "cloudwatch", expected_topic_arn=TOPIC),
        integrate(client, org, "pagerduty", default_service=default),
        integrate(client, org, "opsgenie", default_service=default),
    ]
    for data in created:
        assert set(data) == LISTED_FIELDS | SHOWN_ONCE
        assert re.fullmatch(r"[0-9a-f]{32}", data["routing_key"])
        assert data["url"] == f"http://127.0.0.1:8000/webhooks/{data['routing_key']}"
        assert data["routing_key_hint"] == data["routing_key"][:6]
        assert (data["state"], data["revoked_at"]) == ("active", None)
    assert len({data["routing_key"] for data in created}) == len(created)
    custom, signed, newrelic, sentry, alertmanager, cloudwatch, pagerduty, opsgenie = created
    assert custom["default_service"] == default and custom["signing"] is False and custom["signing_secret"] is None
    assert signed["signing"] is True and signed["signing_secret"].startswith("whsec_")
    assert sentry["has_client_secret"] is True and "sentry-client-secret" not in json.dumps(sentry)
    assert alertmanager["ip_allowlist"] == ["203.0.113.0/24"]
    assert cloudwatch["expected_topic_arn"] == TOPIC
    assert newrelic["default_service"] == pagerduty["default_service"] == opsgenie["default_service"] == default
    assert sentry["default_service"] is None and newrelic["signing"] is False
    assert [d["type"] for d in created] == [
        "custom",
        "custom",
        "newrelic",
        "sentry",
        "alertmanager",
        "cloudwatch",
        "pagerduty",
        "opsgenie",
    ]

    # Listing and getting never show the routing key, the URL or a secret again.
    listing = api(client, "get", BASE, org.owner_key)
    assert listing.status_code == 200
    assert listing.json["data"]["total"] == 8 and listing.json["data"]["has_more"] is False
    assert {item["id"] for item in listing.json["data"]["items"]} == {d["id"] for d in created}
    answers = [listing]
    for data in created:
        answer = api(client, "get", f"{BASE}/{data['id']}", org.owner_key)
        assert answer.status_code == 200 and set(answer.json["data"]) == LISTED_FIELDS
        assert answer.json["data"] == {k: v for k, v in data.items() if k not in SHOWN_ONCE}
        answers.append(answer)
    for item in listing.json["data"]["items"]:
        assert set(item) == LISTED_FIELDS
    for answer in answers:
        text = answer.body.decode()
        for data in created:
            assert data["routing_key"] not in text
            assert not data["signing_secret"] or data["signing_secret"] not in text
        assert "sentry-client-secret" not in text
    paged = api(client, "get", f"{BASE}?limit=2&offset=1", org.owner_key).json["data"]
    assert len(paged["items"]) == 2 and paged["has_more"] is True and paged["next_offset"] == 3


def test_create_validation_errors(client: Any, org: Org, services: list[Service]) -> None:
    other_org_service = _other_org_service()
    for body, field in (
        ({"type": "victorops", "name": "x"}, "type"),
        ({"name": "x"}, "type"),
        ({"type": "custom"}, "name"),
        ({"type": "custom", "name": "  "}, "name"),
        ({"type": "custom", "name": "n" * 101}, "name"),
        ({"type": "newrelic", "name": "x", "signing": True}, "signing"),
        ({"type": "pagerduty", "name": "x", "signing": True}, "signing"),
        ({"type": "opsgenie", "name": "x", "signing": True}, "signing"),
        ({"type": "custom", "name": "x", "client_secret": "sentry-client-secret"}, "client_secret"),
        ({"type": "sentry", "name": "x", "client_secret": "short"}, "client_secret"),
        ({"type": "custom", "name": "x", "ip_allowlist": ["10.0.0.0/33"]}, "ip_allowlist.0"),
        ({"type": "custom", "name": "x", "ip_allowlist": ["203.0.113.0/24", "nonsense"]}, "ip_allowlist.1"),
        ({"type": "custom", "name": "x", "ip_allowlist": ["300.1.1.1"]}, "ip_allowlist.0"),
        ({"type": "custom", "name": "x", "ip_allowlist": ["10.0.0.1"] * 51}, "ip_allowlist"),
        ({"type": "custom", "name": "x", "default_service": "svc_zzzzzzzzzz"}, "default_service"),
        ({"type": "custom", "name": "x", "default_service": "SER-99999"}, "default_service"),
        ({"type": "custom", "name": "x", "default_service": "Web"}, "default_service"),  # a name is no reference
        ({"type": "custom", "name": "x", "default_service": other_org_service}, "default_service"),
        ({"type": "custom", "name": "x", "routing_key": "0" * 32}, "routing_key"),  # unknown field
    ):
        response = api(client, "post", BASE, org.owner_key, body)
        assert response.status_code == 400, (body, response.body)
        assert response.json["error"]["code"] == "VALIDATION_ERROR"
        assert field in error_fields(response), (body, response.json)
    for raw in ("{not json", "[]", "", "null"):
        response = api(client, "post", BASE, org.owner_key, raw)
        assert response.status_code == 400 and response.json["error"]["code"] == "VALIDATION_ERROR"
    assert api(client, "get", BASE, org.owner_key).json["data"]["total"] == 0
    # Valid entries, IPv4 and IPv6, single addresses and ranges, are normalized and deduplicated.
    entries = ["2001:db8::/32", "127.0.0.1", "2001:db8::1", " 10.1.2.3/8 ", "127.0.0.1"]
    data = integrate(client, org, "custom", ip_allowlist=entries)
    assert data["ip_allowlist"] == ["2001:db8::/32", "127.0.0.1/32", "2001:db8::1/128", "10.0.0.0/8"]


def _other_org_service() -> str:
    from chalicelib.catalog import service as catalog

    other = make_org("Elsewhere")
    return catalog.create_service(organization_id=other.organization_id, name="Theirs", now=NOW).service_key


def test_scopes(client: Any, org: Org) -> None:
    _, reader = apikeys.create_api_key(
        organization_id=org.organization_id,
        name="r",
        kind="service_account",
        scopes=["integrations:read"],
        now=NOW,
        settings=get_settings(),
    )
    _, writer = apikeys.create_api_key(
        organization_id=org.organization_id,
        name="w",
        kind="service_account",
        scopes=["integrations:write"],
        now=NOW,
        settings=get_settings(),
    )
    hook = integrate(client, org, "custom")
    item = f"{BASE}/{hook['id']}"
    reads = [("get", BASE), ("get", item)]
    writes = [("post", BASE), ("post", f"{item}/regenerate"), ("delete", item)]
    body = {"type": "custom", "name": "x"}
    for method, path in reads + writes:
        for credential in (None, "tcs_" + "a" * 40, "garbage"):
            response = api(client, method, path, credential, body if method == "post" else None)
            assert response.status_code == 401 and response.json["error"]["code"] == "UNAUTHORIZED"
        response = api(client, method, path, org.readonly_key, body if method == "post" else None)
        assert response.status_code == 403 and response.json["error"]["code"] == "FORBIDDEN"
        required = "integrations:read" if (method, path) in reads else "integrations:write"
        assert response.json["error"]["details"]["required_scope"] == required
    for method, path in reads:
        assert api(client, method, path, reader).status_code == 200
        forbidden = api(client, method, path, writer)
        assert forbidden.status_code == 403
        assert forbidden.json["error"]["details"]["required_scope"] == "integrations:read"
    for method, path in writes:
        response = api(client, method, path, reader, body if method == "post" else None)
        assert response.status_code == 403
        assert response.json["error"]["details"]["required_scope"] == "integrations:write"
    assert api(client, "post", BASE, writer, body).status_code == 201
    assert api(client, "post", f"{item}/regenerate", writer).status_code == 200
    assert api(client, "delete", item, writer).status_code == 200


def test_other_organizations_integrations_are_not_found(client: Any, org: Org) -> None:
    hook = integrate(client, org, "custom")
    other = make_org("Other")
    item = f"{BASE}/{hook['id']}"
    for method, path in (("get", item), ("post", f"{item}/regenerate"), ("delete", item)):
        response = api(client, method, path, other.owner_key)
        assert response.status_code == 404 and response.json["error"]["code"] == "NOT_FOUND"
    for unknown in ("00000000-0000-0000-0000-000000000000", "not-a-uuid"):
        assert api(client, "get", f"{BASE}/{unknown}", org.owner_key).status_code == 404
    assert api(client, "get", BASE, other.owner_key).json["data"]["items"] == []
    assert api(client, "get", item, org.owner_key).json["data"]["state"] == "active"  # untouched


def test_regenerate_stops_the_old_key_at_once(client: Any, org: Org, services: list[Service]) -> None:
    from chalicelib.integration import signing

    hook = integrate(client, org, "custom", signing=True, ip_allowlist=["127.0.0.1/32"])
    old, secret = hook["routing_key"], hook["signing_secret"]
    raw = json.dumps(trigger(services) | {"dedup_key": "disk"})
    headers = signing.signed_headers(secret, int(NOW.timestamp()), raw)
    assert post(client, old, raw, headers).status_code == 201

    response = api(client, "post", f"{BASE}/{hook['id']}/regenerate", org.owner_key)
    assert response.status_code == 200
    fresh = response.json["data"]
    assert set(fresh) == LISTED_FIELDS | SHOWN_ONCE
    assert fresh["id"] == hook["id"] and fresh["routing_key"] != old
    assert fresh["url"].endswith(f"/webhooks/{fresh['routing_key']}")
    assert fresh["routing_key_hint"] == fresh["routing_key"][:6]
    assert fresh["signing_secret"] is None and fresh["signing"] is True  # the secret is kept, not re-shown
    assert fresh["ip_allowlist"] == ["127.0.0.1/32"] and fresh["created_at"] == hook["created_at"]

    for path in (old, f"/webhooks/custom/{old}"):
        assert_error(post(client, path, raw, headers), "ROUTE_NOT_FOUND")
    assert_error(post(client, "/v1/incidents", raw, {"Authorization": f"Bearer {old}", **headers}), "ROUTE_NOT_FOUND")
    # The same secret signs, and the integration's open alerts still deduplicate under the new key.
    assert post(client, fresh["routing_key"], raw, headers).json["deduplicated"] is True

    listing = api(client, "get", BASE, org.owner_key).json["data"]
    assert listing["total"] == 1 and listing["items"][0]["routing_key_hint"] == fresh["routing_key_hint"]

    newer = api(client, "post", f"{BASE}/{hook['id']}/regenerate", org.owner_key).json["data"]
    for key in (old, fresh["routing_key"]):
        assert_error(post(client, key, raw, headers), "ROUTE_NOT_FOUND")
    assert post(client, newer["routing_key"], raw, headers).status_code == 200

    # Revoked: every key answers as before (old ones 404, the current one 410), and no new URL.
    assert api(client, "delete", f"{BASE}/{hook['id']}", org.owner_key).status_code == 200
    assert_error(post(client, old, raw, headers), "ROUTE_NOT_FOUND")
    assert_error(post(client, newer["routing_key"], raw, headers), "WEBHOOK_REVOKED")
    conflict = api(client, "post", f"{BASE}/{hook['id']}/regenerate", org.owner_key)
    assert conflict.status_code == 409


def test_revoke(client: Any, org: Org, services: list[Service]) -> None:
    hook = integrate(client, org, "custom", default_service=services[0].service_key)
    item = f"{BASE}/{hook['id']}"
    response = api(client, "delete", item, org.owner_key)
    assert response.status_code == 200
    revoked = response.json["data"]
    assert set(revoked) == LISTED_FIELDS
    assert revoked["state"] == "revoked" and revoked["revoked_at"] is not None
    assert_error(post(client, hook["routing_key"], trigger(services)), "WEBHOOK_REVOKED")
    with clock.frozen(NOW.replace(hour=13)):
        again = api(client, "delete", item, org.owner_key)
    assert again.status_code == 200
    assert again.json["data"]["revoked_at"] == revoked["revoked_at"]  # the first revocation time stays
    assert api(client, "get", item, org.owner_key).json["data"] == revoked
    assert api(client, "get", BASE, org.owner_key).json["data"]["items"] == [revoked]


def test_routing_keys_are_stored_hashed_and_secrets_sealed(client: Any, org: Org) -> None:
    from chalicelib.integration.tables import IntegrationRecord
    from chalicelib.settings import get_settings

    signed = integrate(client, org, "custom", signing=True)
    sentry = integrate(client, org, "sentry", client_secret="sentry-client-secret")
    records = {r.integration_id: r for r in IntegrationRecord.scan()}
    for data in (signed, sentry):
        stored = records[data["id"]]
        expected_hash = routing_keys.hash_routing_key(get_settings().api_key_hmac_secret, data["routing_key"])
        assert stored.routing_key_hash == expected_hash != data["routing_key"]
        for name, value in stored.attribute_values.items():
            assert value != data["routing_key"], name
    assert reveal_signing_secret(records[signed["id"]], settings=get_settings()) == signed["signing_secret"]
    assert reveal_client_secret(records[sentry["id"]], settings=get_settings()) == "sentry-client-secret"
    assert records[signed["id"]].signing_secret_sealed.startswith("v1:")

    # The raw items, as DynamoDB holds them: no routing key, no secret in clear anywhere.
    items = aws.client("dynamodb").scan(TableName=IntegrationRecord.Meta.table_name)["Items"]
    text = json.dumps(items)
    assert len(items) == 2
    for secret in (signed["routing_key"], sentry["routing_key"], signed["signing_secret"], "sentry-client-secret"):
        assert secret not in text


def test_default_service_may_be_named_by_its_id(client: Any, org: Org, services: list[Service]) -> None:
    # Issue 26: a SER- id was "not a service of this organization"; the answer keeps the key.
    for ref in (services[1].service_id, services[1].service_id.lower(), services[1].service_key):
        assert integrate(client, org, "custom", default_service=ref)["default_service"] == services[1].service_key
