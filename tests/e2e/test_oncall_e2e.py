"""On-call as a new user would see it: the on-call answer names the demo engineer, a new incident
pages level 1 (visible in the local outbox), acknowledging stops the escalation."""

from __future__ import annotations

import time
from typing import Any

import requests

from tests.e2e.conftest import LocalStack

ESCALATION_DELAY_SECONDS = 60  # the demo policy's level 1 delay


def outbox(stack: LocalStack, incident_number: str) -> list[dict[str, Any]]:
    answer = requests.get(f"{stack.base_url}/local/outbox", params={"incident_number": incident_number}, timeout=10)
    assert answer.status_code == 200, answer.text
    # Pages only: the demo webhook subscription's deliveries are in the outbox too.
    return [item for item in answer.json()["data"]["items"] if item["channel"] != "webhook"]


def wait_for(condition: Any, seconds: float) -> Any:
    deadline = time.monotonic() + seconds
    while True:
        value = condition()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.5)


def test_on_call_names_the_demo_engineer(stack: LocalStack) -> None:
    answer = stack.get("/api/v1/on-call/current")
    assert answer.status_code == 200
    data = answer.json()["data"]
    checkout = next(s for s in data["services"] if s["service_key"] == stack.demo["services"][0]["service_key"])
    assert checkout["has_coverage"] is True
    assert checkout["primary_on_call"]["email"] in {u["email"] for u in stack.demo["users"]}
    assert checkout["schedule_names"]
    assert data["summary"]["total_services"] >= 2


def test_level_one_is_paged_and_acknowledging_stops_escalation(stack: LocalStack) -> None:
    service_key = stack.demo["services"][0]["service_key"]
    created = stack.post(
        "/api/v1/incidents", json={"title": "Escalation e2e", "service_ids": [service_key], "severity": "SEV1"}
    )
    assert created.status_code == 201
    number = created.json()["data"]["incident_number"]
    level_one = wait_for(lambda: outbox(stack, number), 20)
    assert level_one, "level 1 was not paged"
    paged = {item["to"] for item in level_one}
    detail = stack.get(f"/api/v1/incidents/{number}").json()["data"]
    assert detail["assigned_to"]["email"] in paged  # auto-assigned to the primary on call
    assert stack.post(f"/api/v1/incidents/{number}/acknowledge").status_code == 200
    time.sleep(ESCALATION_DELAY_SECONDS + 8)
    after = outbox(stack, number)
    assert {item["id"] for item in after} == {item["id"] for item in level_one}, "escalated after acknowledge"
    timeline = stack.get(f"/api/v1/incidents/{number}").json()["data"]["timeline"]
    assert [e["event_type"] for e in timeline].count("escalated") == 1
