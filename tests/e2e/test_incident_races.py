"""Races against the real local stack over HTTP: one idempotency key, one acknowledge stamp."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import requests

from tests.e2e.conftest import LocalStack


def _parallel(count: int, action: Any) -> list[Any]:
    barrier = threading.Barrier(count)

    def run(index: int) -> Any:
        barrier.wait()
        return action(index)

    with ThreadPoolExecutor(max_workers=count) as pool:
        return list(pool.map(run, range(count)))


def test_eight_parallel_creates_with_one_key_make_one_incident(stack: LocalStack) -> None:
    service_key = stack.demo["services"][0]["service_key"]
    body = {"title": "Parallel create", "service_ids": [service_key]}
    headers = {**stack.headers(), "Idempotency-Key": "race-key-1"}

    def create(_: int) -> requests.Response:
        return requests.post(f"{stack.base_url}/api/v1/incidents", json=body, headers=headers, timeout=30)

    responses = _parallel(8, create)
    statuses = sorted(r.status_code for r in responses)
    assert set(statuses) <= {201, 409}, [r.text for r in responses]
    created = {r.json()["data"]["incident_number"] for r in responses if r.status_code == 201}
    assert len(created) == 1
    for response in responses:
        if response.status_code == 409:
            assert response.json()["error"]["code"] == "IDEMPOTENCY_IN_PROGRESS"
    # Once the first finished, a retry replays it.
    replay = create(0)
    assert replay.status_code == 201
    assert replay.json()["data"]["incident_number"] in created
    listed = stack.get("/api/v1/incidents?limit=100").json()["data"]["items"]
    assert sum(1 for item in listed if item["title"] == "Parallel create") == 1


def test_parallel_acknowledges_stamp_once(stack: LocalStack) -> None:
    service_key = stack.demo["services"][0]["service_key"]
    created = stack.post("/api/v1/incidents", json={"title": "Ack race", "service_ids": [service_key]})
    number = created.json()["data"]["incident_number"]

    def acknowledge(_: int) -> requests.Response:
        return requests.post(
            f"{stack.base_url}/api/v1/incidents/{number}/acknowledge", headers=stack.headers(), timeout=30
        )

    responses = _parallel(8, acknowledge)
    assert all(r.status_code == 200 for r in responses), [r.text for r in responses]
    stamps = {r.json()["data"]["acknowledged_at"] for r in responses}
    assert len(stamps) == 1
    detail = stack.get(f"/api/v1/incidents/{number}").json()["data"]
    assert [e["event_type"] for e in detail["timeline"]].count("acknowledged") == 1
    assert detail["status"] == "investigating"


def test_incident_lifecycle_as_a_user_would(stack: LocalStack) -> None:
    service_key = stack.demo["services"][0]["service_key"]
    created = stack.post(
        "/api/v1/incidents", json={"title": "Checkout 500s", "service_ids": [service_key], "severity": "SEV1"}
    )
    assert created.status_code == 201
    number = created.json()["data"]["incident_number"]
    assert stack.post(f"/api/v1/incidents/{number}/events", json={"comment": "Looking"}).status_code == 200
    resolved = stack.post(f"/api/v1/incidents/{number}/status", json={"status": "resolved", "comment": "fixed"})
    assert resolved.status_code == 200 and resolved.json()["data"]["resolved_at"]
    open_numbers = {i["incident_number"] for i in stack.get("/api/v1/incidents").json()["data"]["items"]}
    assert number not in open_numbers
    resolved_numbers = {
        i["incident_number"] for i in stack.get("/api/v1/incidents?status=resolved").json()["data"]["items"]
    }
    assert number in resolved_numbers
