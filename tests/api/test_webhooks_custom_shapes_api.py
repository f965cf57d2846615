"""The custom webhook's two payload shapes on its three paths (/webhooks/{key},
/webhooks/custom/{key}, /v1/incidents): one shape detection and one validation for all three.

- A legacy payload may be a title alone (`service` is optional): the incident opens on the
  integration's default service with the legacy default severity (Medium = SEV2); without a
  default service it is a 400 that says how to name one.
- The signed schema's `service_id` may be a service id (SER-00001) or a service key (svc_...).
- The legacy path validates like the others: a malformed `service_id` or a `dedup_key` too long
  is a 400 there too, and an unknown `service_id` goes to the default service with the same
  warning (a 400 without a default service), never silently ignored.
"""

from __future__ import annotations

from typing import Any

from chalicelib.catalog.service import Service
from tests.api.test_webhooks_api import assert_accepted, assert_error, incident, integrate, post
from tests.api.test_webhooks_api import frozen_clock as frozen_clock
from tests.api.test_webhooks_api import services as services
from tests.conftest import Org


def paths(key: str) -> list[tuple[str, dict[str, str]]]:
    return [(key, {}), (f"/webhooks/custom/{key}", {}), ("/v1/incidents", {"Authorization": f"Bearer {key}"})]


def test_a_legacy_payload_with_only_a_title_opens_an_incident_on_the_default_service(
    client: Any, org: Org, services: list[Service]
) -> None:
    hook = integrate(client, org, "custom", default_service=services[1].service_key)
    for path, headers in paths(hook["routing_key"]):
        for body in ({"title": "Disk full on db-1"}, {"title": "Disk full", "description": "95% used"}):
            made = assert_accepted(post(client, path, body, headers), 201, deduplicated=False)
            assert (made["title"], made["severity"], made["status"]) == (body["title"], "SEV2", "new"), path
            assert incident(client, org, made["id"])["service_keys"] == [services[1].service_key]


def test_a_title_alone_without_a_default_service_is_a_clear_400(client: Any, org: Org, services: list[Service]) -> None:
    hook = integrate(client, org, "custom")
    for path, headers in paths(hook["routing_key"]):
        response = post(client, path, {"title": "Disk full"}, headers)
        assert_error(response, "INVALID_PAYLOAD")
        assert "default service" in response.json["error"]["message"]


def test_service_id_may_be_a_service_key(client: Any, org: Org, services: list[Service]) -> None:
    hook = integrate(client, org, "custom", default_service=services[0].service_key)
    for path, headers in paths(hook["routing_key"]):
        body = {"title": "Checkout latency", "service_id": services[1].service_key}
        made = assert_accepted(post(client, path, body, headers), 201, deduplicated=False)
        assert incident(client, org, made["id"])["service_keys"] == [services[1].service_key]
    unknown = {"title": "Checkout latency", "service_id": "svc_zzzzzzzzzz"}
    # Issue 26: an unknown service goes to the integration's default, with a warning.
    routed = post(client, hook["routing_key"], unknown)
    made = assert_accepted(routed, 201, deduplicated=False)
    assert incident(client, org, made["id"])["service_keys"] == [services[0].service_key]
    assert routed.json["warnings"] == [
        f"Unknown or inactive service 'svc_zzzzzzzzzz'; routed to the integration's default service "
        f"{services[0].name!r}."
    ]
    bare = integrate(client, org, "custom")
    assert_error(post(client, bare["routing_key"], unknown), "INVALID_PAYLOAD")
    malformed = {"title": "Checkout latency", "service_id": "svc_short"}
    assert_error(post(client, hook["routing_key"], malformed), "INVALID_PAYLOAD")


def test_the_legacy_path_validates_like_the_custom_one(client: Any, org: Org, services: list[Service]) -> None:
    hook = integrate(client, org, "custom", default_service=services[0].service_key)
    bare = integrate(client, org, "custom")  # no default service: an unknown one is refused
    answers = {
        path: post(client, path, {"title": "x", "service_id": "SER-99999"}, headers)
        for path, headers in paths(bare["routing_key"])
    }
    for path, response in answers.items():
        assert_error(response, "INVALID_PAYLOAD")
        assert response.json["error"]["message"] == answers[bare["routing_key"]].json["error"]["message"], path
    for body in (
        {"title": "x", "service_id": "svc_short"},
        {"title": "x", "service_id": services[0].service_id, "dedup_key": "k" * 256},
        {"title": "", "dedup_key": "k"},
    ):
        answers = {path: post(client, path, body, headers) for path, headers in paths(hook["routing_key"])}
        for path, response in answers.items():
            assert_error(response, "INVALID_PAYLOAD")
            assert response.json["error"]["message"] == answers[hook["routing_key"]].json["error"]["message"], path


def test_the_legacy_path_warns_like_the_custom_one(client: Any, org: Org, services: list[Service]) -> None:
    # Issue 26: a bad status, a dedup_key of the wrong type or an unknown service (with a default
    # service) no longer loses the alert, on any path.
    hook = integrate(client, org, "custom", default_service=services[0].service_key)
    for body in (
        {"title": "x", "service_id": "SER-99999"},  # well formed, no such service here
        {"title": "x", "service_id": services[0].service_id, "status": "bogus"},
        {"title": "x", "service_id": services[0].service_id, "dedup_key": {"a": 1}},
        {"title": "x", "status": "resolved-ish"},
        {"title": "x", "dedup_key": ["k"]},
    ):
        answers = {path: post(client, path, body, headers) for path, headers in paths(hook["routing_key"])}
        for path, response in answers.items():
            assert_accepted(response, 201, deduplicated=False)
            assert response.json["warnings"] == answers[hook["routing_key"]].json["warnings"] != [], path


def test_a_numeric_dedup_key_is_read_as_its_text(client: Any, org: Org, services: list[Service]) -> None:
    hook = integrate(client, org, "custom", default_service=services[0].service_key)
    body = {"title": "x", "service_id": services[0].service_id, "dedup_key": 42}
    first = assert_accepted(post(client, hook["routing_key"], body), 201, deduplicated=False)
    again = post(client, hook["routing_key"], {**body, "dedup_key": "42"})
    assert assert_accepted(again, 200, deduplicated=True)["id"] == first["id"]
