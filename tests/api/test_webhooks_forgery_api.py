"""Forged and replayed deliveries on a signed custom webhook.

- Finding 6: the signature is checked before the routing key's bucket is charged; deliveries
  whose signature fails are charged to a bucket of their own (per routing key and address), so
  whoever knows the URL cannot spend the integration's budget and silence its real alerts. The
  forger is still rate limited.
- Finding 8: a replay of an identical signed request (same timestamp, same signature) inside the
  replay window opens no second incident: it answers 200 with the first incident, deduplicated,
  like a dedup hit.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from chalicelib import clock
from chalicelib.catalog.service import Service
from chalicelib.integration import signing
from tests.api.test_webhooks_api import api, assert_accepted, assert_error, integrate, post, reconfigure
from tests.api.test_webhooks_api import frozen_clock as frozen_clock
from tests.api.test_webhooks_api import services as services
from tests.conftest import NOW, Org

STAMP = int(NOW.timestamp())


def body_for(service: Service, **fields: Any) -> str:
    return json.dumps({"title": "Checkout latency", "service_id": service.service_id, **fields})


def test_forged_signatures_do_not_spend_the_routing_keys_budget(client: Any, org: Org, services: list[Service]) -> None:
    reconfigure(RATE_LIMIT_WEBHOOK="3", RATE_LIMIT_WEBHOOK_UNVERIFIED="5")
    hook = integrate(client, org, "custom", signing=True)
    key, secret = hook["routing_key"], hook["signing_secret"]
    body = body_for(services[0])
    forged = {"X-Service-Timestamp": str(STAMP), "X-Service-Signature": "sha256=" + "0" * 64}
    stale = signing.signed_headers(secret, STAMP - 301, body)  # authentic but expired: unverified too
    answers = [post(client, key, body, forged) for _ in range(4)] + [post(client, key, body, stale)]
    for response in answers:
        assert response.status_code == 401, response.body
        assert response.headers["X-RateLimit-Category"] == "webhook_unverified"
    assert [r.headers["X-RateLimit-Remaining"] for r in answers] == ["4", "3", "2", "1", "0"]
    for _ in range(3):
        limited = post(client, key, body, forged)
        assert_error(limited, "RATE_LIMITED")  # the forger is still rate limited
        assert limited.headers["X-RateLimit-Category"] == "webhook_unverified"
        assert int(limited.headers["Retry-After"]) > 0
    # The real sender's budget is untouched.
    for number in range(3):
        genuine = body_for(services[0], dedup_key=f"real-{number}")
        response = post(client, key, genuine, signing.signed_headers(secret, STAMP, genuine))
        assert_accepted(response, 201, deduplicated=False)
        assert response.headers["X-RateLimit-Category"] == "webhook"
        assert response.headers["X-RateLimit-Remaining"] == str(2 - number)


def test_forgeries_from_one_address_do_not_limit_another(client: Any, org: Org, services: list[Service]) -> None:
    from chalicelib.api import operation, pipeline
    from tests.unit.test_pipeline import FakeRequest

    reconfigure(RATE_LIMIT_WEBHOOK_UNVERIFIED="2")
    hook = integrate(client, org, "custom", signing=True)
    body = body_for(services[0]).encode()
    forged = {"X-Service-Timestamp": str(STAMP), "X-Service-Signature": "sha256=" + "0" * 64}
    deliver = operation.bound("POST", "/webhooks/{routing_key}")
    assert deliver is not None

    def attempt(address: str) -> str:
        # The test client cannot choose its address: the pipeline itself, with a request from `address`.
        request = FakeRequest(
            method="POST",
            headers={"x-forwarded-proto": "https", **{name.lower(): value for name, value in forged.items()}},
            raw_body=body,
            context={"identity": {"sourceIp": address}},
        )
        answer = pipeline.answer(deliver, request, {"routing_key": hook["routing_key"]})  # type: ignore[arg-type]
        return str(json.loads(answer.body)["error"]["code"]) if answer.status_code >= 400 else "admitted"

    assert [attempt("198.51.100.1") for _ in range(3)] == ["INVALID_SIGNATURE", "INVALID_SIGNATURE", "RATE_LIMITED"]
    assert attempt("198.51.100.2") == "INVALID_SIGNATURE"


def test_a_replayed_signed_request_opens_no_second_incident(client: Any, org: Org, services: list[Service]) -> None:
    hook = integrate(client, org, "custom", signing=True)
    key, secret = hook["routing_key"], hook["signing_secret"]
    body = body_for(services[0])  # no dedup_key: every distinct delivery opens an incident
    headers = signing.signed_headers(secret, STAMP, body)
    first = assert_accepted(post(client, key, body, headers), 201, deduplicated=False)
    for path in [key] * 18 + [f"/webhooks/custom/{key}"]:
        replay = post(client, path, body, headers)
        assert assert_accepted(replay, 200, deduplicated=True) == first
        assert "replay" in replay.json["message"]
    with clock.frozen(NOW + timedelta(seconds=299)):  # still inside the window
        assert post(client, key, body, headers).status_code == 200
    listed = api(client, "get", "/api/v1/incidents", org.owner_key)
    assert listed.json["data"]["total"] == 1

    # The same alert signed again at another time is a new delivery: without a dedup key, a new incident.
    again = post(client, key, body, signing.signed_headers(secret, STAMP + 1, body))
    assert assert_accepted(again, 201, deduplicated=False)["id"] != first["id"]


def test_a_refused_delivery_is_not_remembered_as_a_replay(client: Any, org: Org, services: list[Service]) -> None:
    hook = integrate(client, org, "custom", signing=True)
    key, secret = hook["routing_key"], hook["signing_secret"]
    unknown = json.dumps({"title": "x", "service_id": "SER-99999"})
    headers = signing.signed_headers(secret, STAMP, unknown)
    for _ in range(2):
        assert_error(post(client, key, unknown, headers), "INVALID_PAYLOAD")
