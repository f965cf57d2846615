"""The local stage's webhook sink (POST /local/webhook-sink/{sink_name}) and its deliveries in
GET /local/outbox, through chalice.test.Client. Subscriptions are written as records here, so the
sink's signature check is tested without the subscriptions service."""

from __future__ import annotations

import hashlib
import hmac
import json
from datetime import timedelta
from typing import Any

import pytest

import chalicelib.outbound.tables  # noqa: F401  (registers the subscriptions table before provisioning)
from chalicelib import clock
from chalicelib.settings import get_settings
from tests.conftest import NOW, Org, make_org, reconfigure

# The plain app has no /local routes: only the local server mounts them (tests/api/conftest.py).
pytestmark = pytest.mark.usefixtures("local_routes")

SINK = "/local/webhook-sink"
OUTBOX = "/local/outbox"
SECRET = "whsec_sink-test-secret"
TIMESTAMP = int(NOW.timestamp())


def add_subscription(organization_id: str, url: str, secret: str = SECRET, suffix: str = "1") -> str:
    from chalicelib.outbound.tables import WebhookSubscriptionRecord
    from chalicelib.secrets_box import seal

    subscription_id = f"whs_{suffix * 32}"[:36]
    WebhookSubscriptionRecord(
        organization_id,
        subscription_id,
        url=url,
        event_types={"*"},
        sealed_secret=seal(secret, context=subscription_id, settings=get_settings()),
        created_at=NOW,
    ).save()
    return subscription_id


def event_body(organization_id: str, number: str = "INC-2026-0007", event_type: str = "incident.triggered") -> str:
    event = {
        "id": "evt_0123456789abcdef",
        "type": event_type,
        "occurred_at": clock.isoformat(NOW),
        "organization": {"id": organization_id, "name": "Acme"},
        "data": {"incident": {"incident_number": number, "title": "Checkout down", "status": "new"}},
    }
    return json.dumps(event, separators=(",", ":"))


def signed(body: str, secret: str = SECRET, timestamp: int = TIMESTAMP, attempt: int = 1) -> dict[str, str]:
    digest = hmac.new(secret.encode(), f"{timestamp}.{body}".encode(), hashlib.sha256).hexdigest()
    return {
        "Content-Type": "application/json",
        "User-Agent": "Tocsin-Webhooks/1.0",
        "X-Service-Timestamp": str(timestamp),
        "X-Service-Signature": f"sha256={digest}",
        "X-Tocsin-Event-Id": "evt_0123456789abcdef",
        "X-Tocsin-Event-Type": "incident.triggered",
        "X-Tocsin-Delivery-Attempt": str(attempt),
    }


def post(client: Any, path: str, body: str, headers: dict[str, str] | None = None) -> Any:
    return client.http.post(SINK + path, headers=headers or {"Content-Type": "application/json"}, body=body)


def outbox(client: Any, query: str = "") -> list[dict[str, Any]]:
    response = client.http.get(OUTBOX + query)
    assert response.status_code == 200, response.body
    return list(json.loads(response.body)["data"]["items"])


@pytest.fixture(autouse=True)
def frozen_now(aws_env: None) -> None:
    clock.freeze(NOW)  # the sink checks the signature's timestamp against the clock


def test_a_signed_delivery_is_kept_verified_and_answered_204(client: Any, org: Org) -> None:
    subscription_id = add_subscription(org.organization_id, "http://127.0.0.1:8000/local/webhook-sink/demo")
    body = event_body(org.organization_id)
    response = post(client, "/demo", body, signed(body))
    assert (response.status_code, response.body) == (204, b"")

    [item] = outbox(client, "?channel=webhook")
    assert (item["channel"], item["to"], item["subject"]) == ("webhook", "demo", "incident.triggered")
    assert item["text"] == body and item["incident_number"] == "INC-2026-0007"
    assert item["sent_at"] == clock.isoformat(NOW)
    receipt = item["webhook"]
    assert receipt["signature_verified"] is True and receipt["subscription_id"] == subscription_id
    assert receipt["signature_error"] is None
    assert (receipt["answered_status"], receipt["event_id"], receipt["attempt"]) == (204, "evt_0123456789abcdef", 1)
    assert receipt["headers"]["x-service-signature"] == signed(body)["X-Service-Signature"]
    assert receipt["headers"]["user-agent"] == "Tocsin-Webhooks/1.0"


def test_a_wrong_secret_or_a_stale_timestamp_does_not_verify(client: Any, org: Org) -> None:
    add_subscription(org.organization_id, "http://localhost:8000/local/webhook-sink/demo?x=1")
    body = event_body(org.organization_id)
    assert post(client, "/demo", body, signed(body, secret="whsec_other")).status_code == 204
    clock.freeze(NOW + timedelta(seconds=1))
    assert post(client, "/demo", body, signed(body, timestamp=TIMESTAMP - 300)).status_code == 204
    clock.freeze(NOW + timedelta(seconds=2))
    assert post(client, "/demo", body, {"Content-Type": "application/json"}).status_code == 204
    unsigned, stale, wrong = (item["webhook"] for item in outbox(client, "?channel=webhook"))
    assert [r["signature_verified"] for r in (unsigned, stale, wrong)] == [False, False, False]
    assert "does not match" in wrong["signature_error"]
    assert "301 s old" in stale["signature_error"]
    assert "Missing X-Service-Signature" in unsigned["signature_error"]
    assert {r["subscription_id"] for r in (unsigned, stale, wrong)} == {None}


def test_verification_is_unknown_without_a_subscription_pointing_at_the_sink(client: Any, org: Org) -> None:
    add_subscription(org.organization_id, "http://127.0.0.1:8000/local/webhook-sink/other")
    elsewhere = make_org("Elsewhere")
    add_subscription(elsewhere.organization_id, "http://127.0.0.1:8000/local/webhook-sink/demo", suffix="2")
    body = event_body(org.organization_id)
    assert post(client, "/demo", body, signed(body)).status_code == 204
    clock.freeze(NOW + timedelta(seconds=1))
    assert post(client, "/demo", "not json at all", signed("not json at all")).status_code == 204
    not_json, foreign = outbox(client, "?channel=webhook")
    assert foreign["webhook"]["signature_verified"] is None  # the org's subscription targets another sink
    assert not_json["webhook"]["signature_verified"] is None  # no organization to look in
    assert not_json["text"] == "not json at all" and not_json["incident_number"] is None
    assert not_json["subject"] == "incident.triggered"  # from X-Tocsin-Event-Type when the body says nothing


def test_fail_answers_the_status_asked_for_and_is_still_recorded(client: Any, org: Org) -> None:
    add_subscription(org.organization_id, "http://127.0.0.1:8000/local/webhook-sink/flaky?fail=500")
    body = event_body(org.organization_id)
    failed = post(client, "/flaky?fail=500", body, signed(body))
    assert failed.status_code == 500
    assert json.loads(failed.body)["status"] == 500
    clock.freeze(NOW + timedelta(seconds=60))
    assert post(client, "/flaky?fail=429", body, signed(body, timestamp=TIMESTAMP + 60, attempt=2)).status_code == 429
    clock.freeze(NOW + timedelta(seconds=360))
    assert post(client, "/flaky?fail=200", body, signed(body, timestamp=TIMESTAMP + 360, attempt=3)).status_code == 200
    receipts = [item["webhook"] for item in outbox(client, "?to=flaky")]
    assert [(r["answered_status"], r["attempt"]) for r in receipts] == [(200, 3), (429, 2), (500, 1)]
    assert all(r["signature_verified"] is True for r in receipts)


@pytest.mark.parametrize(
    ("path", "field"),
    [
        ("/demo?fail=abc", "fail"),
        ("/demo?fail=199", "fail"),
        ("/demo?fail=600", "fail"),
        ("/demo?fail=", "fail"),
        ("/demo?delay=5", "delay"),
        ("/bad!name", "sink_name"),
        ("/" + "x" * 65, "sink_name"),
    ],
)
def test_bad_requests_are_refused_and_not_recorded(client: Any, path: str, field: str) -> None:
    response = post(client, path, "{}")
    assert response.status_code == 400, path
    error = json.loads(response.body)["error"]
    assert error["code"] == "VALIDATION_ERROR"
    assert [f["field"] for f in error["details"]["fields"]] == [field]
    assert outbox(client, "?channel=webhook") == []


def test_a_body_over_256_kib_is_413(client: Any) -> None:
    response = post(client, "/demo", "x" * (256 * 1024 + 1))
    assert response.status_code == 413
    assert json.loads(response.body)["error"]["code"] == "PAYLOAD_TOO_LARGE"
    assert post(client, "/demo", "x" * (256 * 1024)).status_code == 204
    assert len(outbox(client, "?channel=webhook")) == 1


def test_the_outbox_merges_webhooks_with_slack_and_filters_them(client: Any, org: Org) -> None:
    slack = client.http.post(
        "/local/slack/api/chat.postMessage",
        headers={"Content-Type": "application/json", "Authorization": "Bearer xoxb-x"},
        body=json.dumps({"channel": "U0ANA", "text": "INC-2026-0007 paged"}),
    )
    assert json.loads(slack.body)["ok"] is True
    clock.freeze(NOW + timedelta(seconds=1))
    body = event_body(org.organization_id)
    assert post(client, "/demo", body, signed(body)).status_code == 204
    clock.freeze(NOW + timedelta(seconds=2))
    other = event_body(org.organization_id, number="INC-2026-0008", event_type="incident.acknowledged")
    assert post(client, "/audit", other, signed(other)).status_code == 204

    everything = outbox(client)
    assert [(i["channel"], i["to"]) for i in everything] == [
        ("webhook", "audit"),
        ("webhook", "demo"),
        ("slack", "U0ANA"),
    ]
    assert "webhook" not in everything[2]  # emails and Slack messages keep their shape
    assert [i["to"] for i in outbox(client, "?incident_number=INC-2026-0007")] == ["demo", "U0ANA"]
    assert [i["subject"] for i in outbox(client, "?to=audit")] == ["incident.acknowledged"]
    assert [i["channel"] for i in outbox(client, "?channel=slack")] == ["slack"]
    assert len(outbox(client, "?channel=webhook&limit=1")) == 1


def test_the_sink_is_404_outside_the_local_stage(client: Any) -> None:
    from chalicelib.settings import get_settings

    reconfigure(TOCSIN_STAGE="dev")
    assert not get_settings().is_local
    response = post(client, "/demo", "{}")
    assert response.status_code == 404
    assert json.loads(response.body)["error"]["code"] == "NOT_FOUND"


def test_the_sink_is_documented_as_local_only(client: Any) -> None:
    document = json.loads(client.http.get("/api/v1/openapi.json").body)
    operation = document["paths"][SINK + "/{sink_name}"]["post"]
    assert "Local stage only" in operation["summary"]
    assert operation["security"] == []
    assert {"204", "400", "404", "413"} <= set(operation["responses"])
    item = document["components"]["schemas"]["LocalOutboxItemV1"]
    assert "webhook" in item["properties"]["channel"]["enum"]


def test_the_demo_subscription_targets_the_sink_and_seeding_twice_keeps_it(client: Any) -> None:
    from chalicelib.local import demo
    from chalicelib.outbound import subscriptions
    from chalicelib.outbound.events import EVENT_TYPES

    reconfigure(LOCAL_ALLOW_HTTP_WEBHOOKS="true", PUBLIC_BASE_URL="http://127.0.0.1:8123")
    first = demo.seed(NOW)["webhook_subscription"]
    assert first["url"] == "http://127.0.0.1:8123/local/webhook-sink/demo"
    assert first["secret"].startswith("whsec_") and first["description"] == "Demo receiver"
    record = subscriptions.get_subscription(
        organization_id=demo.demo_id("organization"), subscription_id=first["subscription_id"]
    )
    assert record.enabled and record.owner_email == demo.DEMO_USERS[0].email
    assert set(subscriptions.event_types_of(record)) in ({"*"}, set(EVENT_TYPES))

    reconfigure(PUBLIC_BASE_URL="http://127.0.0.1:8124")  # the same emulator, another port
    second = demo.seed(NOW)["webhook_subscription"]
    assert (second["subscription_id"], second["secret"]) == (first["subscription_id"], first["secret"])
    assert second["url"] == "http://127.0.0.1:8124/local/webhook-sink/demo"
    moved = subscriptions.get_subscription(
        organization_id=demo.demo_id("organization"), subscription_id=first["subscription_id"]
    )
    assert moved.url == second["url"]
    assert len(subscriptions.list_subscriptions(organization_id=demo.demo_id("organization"))) == 1
