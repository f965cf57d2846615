"""/api/v1/webhook-subscriptions through the Chalice test client: the lifecycle, the secret shown
once, every error path (401, 403, 404, 400, 409), the delivery listing's cursor, and the OpenAPI
`webhooks` section describing the bodies the delivery worker sends."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from openapi_spec_validator import validate

from chalicelib import clock
from chalicelib.apikey import service as apikeys
from chalicelib.auth.scopes import ALL_SCOPES
from chalicelib.delivery import targets
from chalicelib.directory import users
from chalicelib.integration import admin
from chalicelib.outbound import events, subscriptions
from chalicelib.outbound.tables import WebhookDeliveryRecord
from chalicelib.settings import get_settings
from tests.conftest import NOW, Org, make_org
from tests.kit.api import call

BASE = "/api/v1/webhook-subscriptions"
URL = "https://93.184.216.34/hooks/tocsin"
FIELDS = {
    "subscription_id",
    "url",
    "event_types",
    "description",
    "enabled",
    "disabled_reason",
    "disabled_at",
    "owner_email",
    "sync_integration_id",
    "version",
    "created_at",
    "updated_at",
}
DELIVERY_FIELDS = {
    "delivery_id",
    "event_id",
    "event_type",
    "status",
    "attempts",
    "last_attempt_at",
    "next_attempt_at",
    "last_error",
    "response_code",
    "created_at",
}
STAMP = "2026-11-22T12:00:00Z"


@pytest.fixture(autouse=True)
def frozen() -> None:
    clock.freeze(NOW)  # the aws_env fixture unfreezes


def error(document: dict[str, Any]) -> dict[str, Any]:
    assert document["success"] is False
    return dict(document["error"])


def fields_of(document: dict[str, Any]) -> list[str]:
    return [f["field"] for f in error(document)["details"]["fields"]]


def subscribe(client: Any, org: Org, **fields: Any) -> dict[str, Any]:
    status, document = call(client, "POST", BASE, org.owner_key, {"url": URL, "event_types": ["*"], **fields})
    assert status == 201, document
    return dict(document["data"])


# --- lifecycle -------------------------------------------------------------------------------------


def test_lifecycle_and_the_secret_shown_once(client: Any, org: Org) -> None:
    created = subscribe(
        client, org, event_types=["incident.resolved", "incident.triggered"], description="Bridge", enabled=True
    )
    assert set(created) == FIELDS | {"secret"}
    assert created["secret"].startswith("whsec_") and created["subscription_id"].startswith("whs_")
    assert created == {
        **created,
        "url": URL,
        "event_types": ["incident.triggered", "incident.resolved"],
        "description": "Bridge",
        "enabled": True,
        "disabled_reason": None,
        "disabled_at": None,
        "owner_email": None,  # a service-account key belongs to nobody
        "sync_integration_id": None,
        "version": 1,
        "created_at": STAMP,
        "updated_at": None,
    }
    item = f"{BASE}/{created['subscription_id']}"
    shown = {k: v for k, v in created.items() if k != "secret"}
    status, got = call(client, "GET", item, org.owner_key)
    assert (status, got["data"]) == (200, shown)
    status, listed = call(client, "GET", BASE, org.owner_key)
    assert (status, listed["data"]) == (200, {"items": [shown]})

    status, patched = call(client, "PATCH", item, org.owner_key, {"description": None, "event_types": ["*"]})
    assert status == 200
    assert (patched["data"]["description"], patched["data"]["event_types"], patched["data"]["version"]) == (
        None,
        ["*"],
        2,
    )

    status, rotated = call(client, "POST", f"{item}/rotate-secret", org.owner_key)
    assert status == 200 and set(rotated["data"]) == FIELDS | {"secret"}
    assert rotated["data"]["secret"].startswith("whsec_") and rotated["data"]["secret"] != created["secret"]
    assert rotated["data"]["version"] == 3
    record = subscriptions.get_subscription(
        organization_id=org.organization_id, subscription_id=created["subscription_id"]
    )
    assert subscriptions.get_secret(record, settings=get_settings()) == rotated["data"]["secret"]

    for path in (item, BASE, f"{item}/deliveries"):
        text = json.dumps(call(client, "GET", path, org.owner_key)[1])
        assert created["secret"] not in text and rotated["data"]["secret"] not in text and "secret" not in text

    status, deleted = call(client, "DELETE", item, org.owner_key)
    assert (status, deleted["data"]) == (200, {"id": created["subscription_id"], "deleted": True})
    assert call(client, "GET", item, org.owner_key)[0] == 404
    assert call(client, "GET", BASE, org.owner_key)[1]["data"] == {"items": []}


def test_owner_email_defaults_to_the_calling_user(client: Any, org: Org) -> None:
    user = users.create_user(organization_id=org.organization_id, name="Ann", email="ann@example.com", now=NOW)
    _, personal = apikeys.create_api_key(
        organization_id=org.organization_id,
        name="ann",
        kind="personal",
        scopes=list(ALL_SCOPES),
        now=NOW,
        user_id=user.user_id,
        user_email=user.email,
        settings=get_settings(),
    )
    status, mine = call(client, "POST", BASE, personal, {"url": URL, "event_types": ["*"]})
    assert (status, mine["data"]["owner_email"]) == (201, "ann@example.com")
    status, chosen = call(
        client, "POST", BASE, personal, {"url": URL, "event_types": ["*"], "owner_email": "Ops@Example.com"}
    )
    assert chosen["data"]["owner_email"] == "ops@example.com"
    status, nobody = call(client, "POST", BASE, personal, {"url": URL, "event_types": ["*"], "owner_email": None})
    assert (status, nobody["data"]["owner_email"]) == (201, None)


def test_sync_target_of_an_integration(client: Any, org: Org) -> None:
    integration = admin.create_integration(
        organization_id=org.organization_id, integration_type="custom", name="tool", now=NOW, settings=get_settings()
    ).integration
    created = subscribe(client, org, sync_integration_id=integration.integration_id)
    assert created["sync_integration_id"] == integration.integration_id
    status, document = call(
        client, "POST", BASE, org.owner_key, {"url": URL, "event_types": ["*"], "sync_integration_id": "nope"}
    )
    assert (status, fields_of(document)) == (400, ["sync_integration_id"])
    item = f"{BASE}/{created['subscription_id']}"
    status, document = call(client, "PATCH", item, org.owner_key, {"sync_integration_id": "nope"})
    assert (status, fields_of(document)) == (400, ["sync_integration_id"])
    status, cleared = call(client, "PATCH", item, org.owner_key, {"sync_integration_id": None})
    assert (status, cleared["data"]["sync_integration_id"]) == (200, None)


def test_re_enabling_clears_the_disabled_state(client: Any, org: Org) -> None:
    created = subscribe(client, org)
    item = f"{BASE}/{created['subscription_id']}"
    later = NOW + timedelta(hours=3)
    assert subscriptions.disable_for_failures(org.organization_id, created["subscription_id"], later) is not None
    got = call(client, "GET", item, org.owner_key)[1]["data"]
    assert (got["enabled"], got["disabled_reason"], got["disabled_at"]) == (
        False,
        "delivery_failures",
        "2026-11-22T15:00:00Z",
    )
    status, enabled = call(client, "PATCH", item, org.owner_key, {"enabled": True})
    assert status == 200
    assert (enabled["data"]["enabled"], enabled["data"]["disabled_reason"], enabled["data"]["disabled_at"]) == (
        True,
        None,
        None,
    )
    status, off = call(client, "PATCH", item, org.owner_key, {"enabled": False})
    assert (off["data"]["enabled"], off["data"]["disabled_reason"], off["data"]["disabled_at"]) == (
        False,
        "manual",
        STAMP,
    )
    status, created_off = call(
        client, "POST", BASE, org.owner_key, {"url": URL, "event_types": ["*"], "enabled": False}
    )
    assert (status, created_off["data"]["disabled_reason"]) == (201, "manual")


def test_patch_with_a_stale_version_is_409_and_loses_nothing(client: Any, org: Org) -> None:
    item = f"{BASE}/{subscribe(client, org)['subscription_id']}"
    assert call(client, "PATCH", item, org.owner_key, {"description": "one", "version": 1})[0] == 200
    status, document = call(client, "PATCH", item, org.owner_key, {"description": "stale", "version": 1})
    assert (status, error(document)["code"]) == (409, "CONFLICT")
    assert error(document)["details"] == {"expected_version": 1, "current_version": 2}
    status, document = call(client, "PATCH", item, org.owner_key, {"owner_email": "b@example.com"})
    assert (status, document["data"]["description"], document["data"]["version"]) == (200, "one", 3)
    status, document = call(client, "PATCH", item, org.owner_key, {"version": 3})
    assert (status, error(document)["code"]) == (400, "VALIDATION_ERROR")  # a version alone changes nothing


# --- error paths -----------------------------------------------------------------------------------


def every_operation(subscription_id: str) -> list[tuple[str, str, Any]]:
    item = f"{BASE}/{subscription_id}"
    return [
        ("POST", BASE, {"url": URL, "event_types": ["*"]}),
        ("GET", BASE, None),
        ("GET", item, None),
        ("PATCH", item, {"description": "x"}),
        ("DELETE", item, None),
        ("POST", f"{item}/rotate-secret", None),
        ("GET", f"{item}/deliveries", None),
    ]


def test_401_without_a_valid_credential_and_403_without_the_scope(client: Any, org: Org) -> None:
    sid = subscribe(client, org)["subscription_id"]
    _, almost = apikeys.create_api_key(
        organization_id=org.organization_id,
        name="almost",
        kind="service_account",
        scopes=[s for s in ALL_SCOPES if s != "webhooks:write"],
        now=NOW,
        settings=get_settings(),
    )
    for method, path, body in every_operation(sid):
        for key in (None, "tcs_not_a_key"):
            status, document = call(client, method, path, key, body)
            assert (status, error(document)["code"]) == (401, "UNAUTHORIZED"), (method, path)
        for key in (org.readonly_key, almost):
            status, document = call(client, method, path, key, body)
            assert (status, error(document)["code"]) == (403, "FORBIDDEN"), (method, path)
            assert error(document)["details"] == {"required_scope": "webhooks:write"}
    assert len(subscriptions.list_subscriptions(organization_id=org.organization_id)) == 1


def test_404_for_unknown_and_foreign_subscriptions(client: Any, org: Org) -> None:
    other = make_org("Other")
    foreign = subscribe(client, other)["subscription_id"]
    for sid in (foreign, "whs_" + "0" * 32, "nope"):
        for method, path, body in every_operation(sid)[2:]:
            status, document = call(client, method, path, org.owner_key, body)
            assert (status, error(document)["code"]) == (404, "NOT_FOUND"), (method, path)
    assert call(client, "GET", f"{BASE}/{foreign}", other.owner_key)[1]["data"]["version"] == 1


@pytest.mark.parametrize(
    ("body", "fields"),
    [
        ({"event_types": ["*"]}, ["url"]),
        ({"url": URL}, ["event_types"]),
        ({"url": URL, "event_types": []}, ["event_types"]),
        ({"url": URL, "event_types": ["incident.exploded"]}, ["event_types.0"]),
        ({"url": URL, "event_types": ["*", "incident.triggered"]}, ["event_types"]),
        ({"url": URL, "event_types": "*"}, ["event_types"]),
        ({"url": "http://93.184.216.34/x", "event_types": ["*"]}, ["url"]),
        ({"url": "https://10.0.0.1/x", "event_types": ["*"]}, ["url"]),
        ({"url": "https://[fd00::1]/x", "event_types": ["*"]}, ["url"]),
        ({"url": "https://[::ffff:127.0.0.1]/x", "event_types": ["*"]}, ["url"]),
        ({"url": "https://169.254.169.254/latest/meta-data/", "event_types": ["*"]}, ["url"]),
        ({"url": URL, "event_types": ["*"], "owner_email": "nope"}, ["owner_email"]),
        ({"url": URL, "event_types": ["*"], "enabled": "maybe"}, ["enabled"]),
        ({"url": URL, "event_types": ["*"], "secret": "mine"}, ["secret"]),
        ({"url": URL, "event_types": ["*"], "headers": {}}, ["headers"]),
    ],
)
def test_create_validation(client: Any, org: Org, body: dict[str, Any], fields: list[str]) -> None:
    status, document = call(client, "POST", BASE, org.owner_key, body)
    assert (status, error(document)["code"], fields_of(document)) == (400, "VALIDATION_ERROR", fields)


def test_names_resolving_inside_are_refused_on_create_and_patch(
    client: Any, org: Org, monkeypatch: pytest.MonkeyPatch
) -> None:
    item = f"{BASE}/{subscribe(client, org)['subscription_id']}"
    for address in ("127.0.0.1", "169.254.169.254", "10.9.8.7"):
        monkeypatch.setattr(targets, "default_resolve", lambda host, port, a=address: [a])
        body = {"url": "https://hooks.example.com/x", "event_types": ["*"]}
        status, document = call(client, "POST", BASE, org.owner_key, body)
        assert (status, fields_of(document)) == (400, ["url"])
        assert f"resolves to {address}" in error(document)["details"]["fields"][0]["message"]
        status, document = call(client, "PATCH", item, org.owner_key, {"url": "https://hooks.example.com/x"})
        assert (status, fields_of(document)) == (400, ["url"])
    assert call(client, "GET", item, org.owner_key)[1]["data"]["url"] == URL


def test_patch_validation(client: Any, org: Org) -> None:
    item = f"{BASE}/{subscribe(client, org)['subscription_id']}"
    for body, fields in (
        ({}, ["body"]),
        ({"url": None}, ["url"]),
        ({"enabled": None}, ["enabled"]),
        ({"event_types": None}, ["event_types"]),
        ({"event_types": []}, ["event_types"]),
        ({"url": "http://93.184.216.34/"}, ["url"]),
        ({"secret": "x"}, ["secret"]),
        ({"version": 0, "description": "x"}, ["version"]),
    ):
        status, document = call(client, "PATCH", item, org.owner_key, body)
        assert (status, fields_of(document)) == (400, fields), body
    status, document = call(client, "PATCH", item, org.owner_key, "{not json")
    assert (status, error(document)["code"]) == (400, "VALIDATION_ERROR")
    assert call(client, "GET", item, org.owner_key)[1]["data"]["version"] == 1


def test_unknown_query_parameters_are_refused(client: Any, org: Org) -> None:
    sid = subscribe(client, org)["subscription_id"]
    for path, fields in (
        (f"{BASE}?limit=5", ["limit"]),
        (f"{BASE}/{sid}?x=1", ["x"]),
        (f"{BASE}/{sid}/deliveries?offset=3", ["offset"]),
        (f"{BASE}/{sid}/deliveries?limit=0", ["limit"]),
        (f"{BASE}/{sid}/deliveries?limit=101", ["limit"]),
        (f"{BASE}/{sid}/deliveries?cursor=!!", ["cursor"]),
    ):
        status, document = call(client, "GET", path, org.owner_key)
        assert (status, fields_of(document)) == (400, fields), path


def test_too_many_subscriptions_is_409(client: Any, org: Org, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(subscriptions, "MAX_SUBSCRIPTIONS", 2)
    subscribe(client, org)
    subscribe(client, org)
    status, document = call(client, "POST", BASE, org.owner_key, {"url": URL, "event_types": ["*"]})
    assert (status, error(document)["code"]) == (409, "CONFLICT")


# --- deliveries ------------------------------------------------------------------------------------


def test_deliveries_newest_first_across_pages(client: Any, org: Org) -> None:
    sid = subscribe(client, org)["subscription_id"]
    written = []
    for minute in range(7):
        occurred = NOW - timedelta(minutes=minute)
        event_id = f"evt_{minute:032x}"
        record = WebhookDeliveryRecord(
            sid,
            f"{clock.isoformat(occurred)}#{event_id}",
            organization_id=org.organization_id,
            event_id=event_id,
            event_type="incident.resolved",
            body="{}",
            status="failed" if minute == 0 else "succeeded",
            attempts=5 if minute == 0 else 1,
            last_attempt_at=occurred,
            next_attempt_at=None,
            last_error="HTTP 500" if minute == 0 else None,
            response_code=500 if minute == 0 else 204,
            created_at=occurred,
            expires_at=occurred + timedelta(days=30),
        )
        record.save()
        written.append(record.delivery_key)
    seen: list[dict[str, Any]] = []
    path = f"{BASE}/{sid}/deliveries?limit=3"
    sizes = []
    while True:
        status, document = call(client, "GET", path, org.owner_key)
        assert status == 200 and set(document["data"]) == {"items", "next_cursor"}
        seen.extend(document["data"]["items"])
        sizes.append(len(document["data"]["items"]))
        cursor = document["data"]["next_cursor"]
        if cursor is None:
            break
        path = f"{BASE}/{sid}/deliveries?limit=3&cursor={cursor}"
    assert sizes == [3, 3, 1]
    assert [d["delivery_id"] for d in seen] == written
    assert all(set(d) == DELIVERY_FIELDS for d in seen)
    assert seen[0] == {
        "delivery_id": written[0],
        "event_id": "evt_" + "0" * 32,
        "event_type": "incident.resolved",
        "status": "failed",
        "attempts": 5,
        "last_attempt_at": STAMP,
        "next_attempt_at": None,
        "last_error": "HTTP 500",
        "response_code": 500,
        "created_at": STAMP,
    }
    default = call(client, "GET", f"{BASE}/{sid}/deliveries", org.owner_key)[1]["data"]
    assert len(default["items"]) == 7 and default["next_cursor"] is None


# --- OpenAPI webhooks ------------------------------------------------------------------------------


def test_openapi_describes_every_event_and_real_bodies_match(client: Any, org: Org) -> None:
    from chalicelib.api.openapi import build_document
    from chalicelib.incident.models import IncidentV1

    document = build_document()
    validate(document)
    assert set(document["webhooks"]) == set(events.EVENT_TYPES)
    schemas = document["components"]["schemas"]
    incident = IncidentV1(
        incident_number="INC-2026-7",
        title="Disk full",
        description=None,
        status="investigating",
        severity="SEV2",
        assigned_to=None,
        team=None,
        created_at=NOW,
        acknowledged_at=None,
        resolved_at=None,
    ).model_dump(mode="json")
    samples = events.plan_events(
        message_type="incident.status_changed",
        message_id="m1",
        occurred_at=STAMP,
        payload={
            "incident_number": "INC-2026-7",
            "previous_status": "investigating",
            "status": "resolved",
            "previous_category": "active",
            "category": "resolved",
        },
    ) + events.plan_events(
        message_type="incident.assigned",
        message_id="m2",
        occurred_at=STAMP,
        payload={"incident_number": "INC-2026-7", "assigned_to": {"name": "Ann", "email": "ann@example.com"}},
    )
    assert [s.event_type for s in samples] == ["incident.status_changed", "incident.resolved", "incident.assigned"]
    for planned in samples:
        hook = document["webhooks"][planned.event_type]["post"]
        headers = {p["name"] for p in hook["parameters"] if p["in"] == "header"}
        assert {
            "X-Service-Signature",
            "X-Service-Timestamp",
            "X-Tocsin-Event-Id",
            "X-Tocsin-Delivery-Attempt",
        } <= headers
        reference = hook["requestBody"]["content"]["application/json"]["schema"]
        validator = Draft202012Validator({**reference, "components": {"schemas": schemas}})
        for sync in (False, True):
            body = events.event_document(
                planned,
                organization_id=org.organization_id,
                organization_name=org.name,
                incident=incident,
                incident_category="active",
                include_sync_status=sync,
            )
            assert list(validator.iter_errors(body)) == [], planned.event_type
        wrong = {**body, "type": "incident.other"}
        assert list(validator.iter_errors(wrong)) != []
