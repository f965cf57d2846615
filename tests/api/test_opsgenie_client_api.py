"""The official Opsgenie Python SDK (PyPI `opsgenie-sdk`, pinned in requirements-dev.txt) against the
drop-in, in process: its `Configuration.host` points at the app and its urllib3 pool is replaced by
one that hands each request, unchanged, to chalice.test.Client (the same client runs against the
real local stack in tests/e2e/test_opsgenie_e2e.py). It creates, acknowledges, closes and adds notes
to alerts, reads them back, and polls what each request became."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode, urlsplit

import opsgenie_sdk
import opsgenie_sdk.exceptions
import pytest

from chalicelib.catalog.service import Service
from tests.api.test_webhooks_api import api, drain_events, incident, integrate

# Fixtures of test_webhooks_api, re-exported so pytest finds them here (frozen_clock is autouse).
from tests.api.test_webhooks_api import frozen_clock as frozen_clock
from tests.api.test_webhooks_api import services as services
from tests.conftest import Org

HOST = "https://api.tocsin.test"


class Answer:
    """What the SDK reads of a urllib3 response."""

    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.status, self.reason, self.data, self._headers = status, "", body, headers

    def getheaders(self) -> dict[str, str]:
        return self._headers

    def getheader(self, name: str, default: str | None = None) -> str | None:
        return next((v for k, v in self._headers.items() if k.lower() == name.lower()), default)


class InProcessPool:
    """Stands in for the SDK's urllib3 PoolManager: the request goes to the app as API Gateway would
    hand it over (the client spoke https)."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.seen: list[tuple[str, str]] = []

    def request(
        self, method: str, url: str, fields: Any = None, body: Any = None, headers: Any = None, **_: Any
    ) -> Answer:
        parts = urlsplit(url)
        assert f"{parts.scheme}://{parts.netloc}" == HOST
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        if fields and method in ("GET", "HEAD"):
            path += ("&" if "?" in path else "?") + urlencode(fields)
        self.seen.append((method, path))
        answer = self.client.http.request(
            method, path, headers={**(headers or {}), "X-Forwarded-Proto": "https"}, body=body or b""
        )
        return Answer(answer.status_code, dict(answer.headers), answer.body)


def official_client(client: Any, key: str) -> tuple[opsgenie_sdk.AlertApi, InProcessPool]:
    configuration = opsgenie_sdk.Configuration()
    configuration.host = HOST
    # New dicts: Configuration() is a shallow copy of one default, whose dicts every client would share.
    configuration.api_key = {"Authorization": key}
    configuration.api_key_prefix = {"Authorization": "GenieKey"}
    configuration.retry_enabled = False  # an error must surface, not be retried for a minute
    api_client = opsgenie_sdk.ApiClient(configuration=configuration)
    pool = InProcessPool(client)
    api_client.rest_client.pool_manager = pool
    return opsgenie_sdk.AlertApi(api_client=api_client), pool


@pytest.fixture
def key(client: Any, org: Org, services: list[Service]) -> str:
    return str(integrate(client, org, "opsgenie", default_service=services[0].service_key)["routing_key"])


def test_create_acknowledge_note_close_and_poll(client: Any, org: Org, key: str) -> None:
    alerts, pool = official_client(client, key)
    payload = opsgenie_sdk.CreateAlertPayload(
        message="Checkout p99 over 2 s",
        alias="checkout/latency",
        description="p99 2.4 s for 10 minutes",
        responders=[{"name": "Payments", "type": "team"}],
        tags=["env:prod", "checkout"],
        details={"region": "eu-west-1"},
        entity="checkout",
        source="grafana",
        priority="P1",
        user="ana",
        note="created by the SDK",
    )
    created = alerts.create_alert(create_alert_payload=payload)
    assert created.result == "Request will be processed"
    alert_id = created.id  # the SDK polls GET /v2/alerts/requests/{requestId} for it
    assert alert_id.startswith("alr_")
    status = alerts.get_request_status(request_id=created.request_id).data
    assert (status.action, status.is_success, status.status, status.alias) == (
        "Create",
        True,
        "Created alert",
        "checkout/latency",
    )
    seen = alerts.get_alert(identifier=alert_id).data
    assert (seen.message, seen.priority, seen.status, seen.acknowledged) == (
        "Checkout p99 over 2 s",
        "P1",
        "open",
        False,
    )
    assert (seen.tags, seen.details, seen.entity, seen.source) == (
        ["env:prod", "checkout"],
        {"region": "eu-west-1"},
        "checkout",
        "grafana",
    )
    assert [(r.type, r.id) for r in seen.responders] == [("team", "Payments")]
    number = api(client, "get", f"/api/v1/alerts/{alert_id}", org.owner_key).json["data"]["incident_number"]
    assert incident(client, org, number)["severity"] == "SEV0"

    acknowledged = alerts.acknowledge_alert(
        identifier="checkout/latency",
        identifier_type="alias",
        acknowledge_alert_payload=opsgenie_sdk.AcknowledgeAlertPayload(user="bo", note="looking"),
    )
    assert acknowledged.retrieve_result().data.status == "Acknowledged alert"
    by_tiny = alerts.get_alert(identifier=seen.tiny_id, identifier_type="tiny").data
    assert (by_tiny.id, by_tiny.acknowledged, by_tiny.owner) == (alert_id, True, "bo")

    noted = alerts.add_note(
        identifier=alert_id, add_note_to_alert_payload=opsgenie_sdk.AddNoteToAlertPayload(note="rolled back", user="bo")
    )
    assert noted.retrieve_result().data.is_success is True
    closed = alerts.close_alert(
        identifier=alert_id, close_alert_payload=opsgenie_sdk.CloseAlertPayload(user="bo", note="fixed by rollback")
    )
    assert closed.retrieve_result().data.status == "Closed alert"
    assert alerts.get_alert(identifier="checkout/latency", identifier_type="alias").data.status == "closed"

    detail = incident(client, org, number)
    assert detail["status"] == "resolved"
    drain_events()
    comments = [e["description"] for e in incident(client, org, number)["timeline"] if e["event_type"] == "comment"]
    assert sorted(comments) == sorted(["created by the SDK", "looking", "rolled back", "fixed by rollback"])
    assert ("POST", "/v2/alerts/checkout%2Flatency/acknowledge?identifierType=alias") in pool.seen


def test_errors_reach_the_sdk_as_opsgenies(client: Any, key: str) -> None:
    alerts, _ = official_client(client, key)
    with pytest.raises(opsgenie_sdk.ApiException) as not_found:
        alerts.get_alert(identifier="alr_0123456789abcdef0123456789abcdef")
    assert not_found.value.status == 404
    with pytest.raises(opsgenie_sdk.exceptions.AuthenticationException) as unauthorized:
        official_client(client, "0123456789abcdef0123456789abcdef")[0].create_alert(
            create_alert_payload=opsgenie_sdk.CreateAlertPayload(message="x")
        )
    assert unauthorized.value.status == 401
    unknown = alerts.close_alert(identifier="nope", identifier_type="alias")
    status = alerts.get_request_status(request_id=unknown.request_id).data
    assert (status.is_success, status.status) == (False, "Alert does not exist")
