"""DynamoDB throttling and transient errors, injected at the botocore client (tests/faults.py):
botocore retries them with backoff; what persists is a 503 SERVICE_UNAVAILABLE with Retry-After,
in every route family, and never a partial write."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chalicelib import aws
from chalicelib.incident import repository
from chalicelib.incident.listing import list_incidents
from chalicelib.incident.models import IncidentListQuery
from chalicelib.settings import get_settings
from tests.api.test_incidents_api import create, error_code
from tests.conftest import NOW, Org
from tests.faults import THROTTLED, dynamodb_errors, record_backoff_waits
from tests.kit import factories as make
from tests.kit.api import call

TRANSACT = frozenset({"TransactWriteItems"})
ATTEMPTS = aws.RETRIES["total_max_attempts"]


@pytest.fixture
def service_key(org: Org) -> str:
    return make.service(org, "Checkout").service_key


@pytest.fixture
def backoff_waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    return record_backoff_waits(monkeypatch)


def no_incidents(org: Org) -> bool:
    return list_incidents(organization_id=org.organization_id, query=IncidentListQuery()).items == []


def new_incident(client: Any, org: Org, service_key: str, **headers: str) -> Any:
    body = {"title": "Checkout down", "service_ids": [service_key]}
    return call(client, "post", "/api/v1/incidents", org.owner_key, body, headers=headers)


@pytest.mark.parametrize(
    ("code", "status"),
    [
        (THROTTLED, 400),
        ("ThrottlingException", 400),
        ("RequestLimitExceeded", 400),
        ("InternalServerError", 500),
    ],
)
def test_a_passing_fault_is_retried_with_backoff_and_the_request_succeeds(
    client: Any, org: Org, service_key: str, backoff_waits: list[float], code: str, status: int
) -> None:
    with dynamodb_errors(code, status=status, operations=TRANSACT, fail=lambda index: index < 2) as injected:
        response = new_incident(client, org, service_key)
    assert response.status_code == 201, response.body
    assert injected.failed == ["TransactWriteItems"] * 2
    assert len(backoff_waits) == 2  # botocore waited (jittered, possibly 0) before each retry


def test_a_persistent_fault_is_a_503_with_retry_after_and_writes_nothing(
    client: Any, org: Org, service_key: str, backoff_waits: list[float]
) -> None:
    # The use case writes twice: the incident counter (UpdateItem), then the incident with its
    # timeline and service links (one transaction). The second write is throttled throughout.
    with dynamodb_errors(operations=TRANSACT) as injected:
        response = new_incident(client, org, service_key, **{"Idempotency-Key": "retry-me"})
    assert response.status_code == 503, response.body
    assert error_code(response) == "SERVICE_UNAVAILABLE"
    assert response.headers["Retry-After"] == "2"
    assert "X-RateLimit-Limit" in response.headers
    assert response.json["meta"]["request_id"]
    assert injected.failed == ["TransactWriteItems"] * ATTEMPTS
    # Nothing half-written: no incident, and so no timeline, in the list or by number.
    assert no_incidents(org)
    # The client retries with the same Idempotency-Key once DynamoDB recovers: the claim was released.
    retried = new_incident(client, org, service_key, **{"Idempotency-Key": "retry-me"})
    assert retried.status_code == 201, retried.body
    number = retried.json["data"]["incident_number"]
    found = repository.get_with_timeline(org.organization_id, number)
    assert [entry.event_type for entry in found.timeline] == ["created"]


def test_a_transaction_cancelled_for_throttling_is_a_503(
    client: Any, org: Org, service_key: str, backoff_waits: list[float]
) -> None:
    # DynamoDB can also cancel a transaction item by item: ThrottlingError on one of them.
    reasons: list[str | None] = [None, "ThrottlingError"]
    with dynamodb_errors("TransactionCanceledException", operations=TRANSACT, reasons=reasons):
        response = new_incident(client, org, service_key)
    assert (response.status_code, error_code(response)) == (503, "SERVICE_UNAVAILABLE")
    assert no_incidents(org)


def test_throttled_reads_are_a_503_too(client: Any, org: Org, service_key: str, backoff_waits: list[float]) -> None:
    number = create(client, org, service_key)["incident_number"]
    with dynamodb_errors(operations=frozenset({"Query", "GetItem"}), fail=lambda index: index > 0):
        response = call(client, "get", f"/api/v1/incidents/{number}", org.owner_key)
    assert (response.status_code, error_code(response)) == (503, "SERVICE_UNAVAILABLE")
    assert response.headers["Retry-After"] == "2"


def test_a_bad_request_from_dynamodb_stays_a_500(client: Any, org: Org, service_key: str) -> None:
    with dynamodb_errors("ValidationException", operations=TRANSACT):
        response = new_incident(client, org, service_key)
    assert (response.status_code, error_code(response)) == (500, "INTERNAL_ERROR")
    assert "Retry-After" not in response.headers


def test_a_throttled_webhook_is_a_503_in_the_webhook_body(
    client: Any, org: Org, service_key: str, backoff_waits: list[float]
) -> None:
    from chalicelib.integration import admin

    created = admin.create_integration(
        organization_id=org.organization_id,
        name="Custom",
        integration_type="custom",
        default_service_key=service_key,
        now=NOW,
        settings=get_settings(),
    )
    body = json.dumps({"title": "Disk full", "severity": "Critical"})
    with dynamodb_errors(operations=TRANSACT):
        response = client.http.post(
            f"/webhooks/{created.routing_key}",
            headers={"Content-Type": "application/json", "X-Forwarded-Proto": "https"},
            body=body,
        )
    assert response.status_code == 503, response.body
    assert json.loads(response.body) == {
        "success": False,
        "error": {
            "code": "SERVICE_UNAVAILABLE",
            "message": "The service is busy; retry after the number of seconds in Retry-After.",
        },
    }
    assert response.headers["Retry-After"] == "2"
