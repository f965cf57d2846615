"""On-call as a new user would see it: the on-call answer names the demo engineer, a new incident
pages level 1 (visible in the local outbox), acknowledging stops the escalation.

This module's stack runs on a time scale (TIME_SCALE, local and test stages only): the demo
policy's 1-minute level delay passes in 60 / TIME_SCALE seconds, so the test waits seconds, not
a minute. The scale leaves the test time to acknowledge before level 2 is due."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from tests.e2e.conftest import LocalStack, start_stack, stop_stack

TIME_SCALE = 6
ESCALATION_DELAY_SECONDS = 60 / TIME_SCALE  # the demo policy's level 1 delay (1 minute), scaled


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    running = start_stack(tmp_path_factory.mktemp("stack"), TIME_SCALE=str(TIME_SCALE))
    yield running
    stop_stack(running)


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


def level_paged(stack: LocalStack, incident_number: str) -> list[dict[str, Any]]:
    """The incident's pages once its level has settled: a person's email and Slack message land a
    moment apart, so the first page seen is not the whole level (empty until one has landed).
    Two seconds is far below the level delay (10 s at TIME_SCALE=6)."""
    if not outbox(stack, incident_number):
        return []
    time.sleep(2)
    return outbox(stack, incident_number)


def create_incident(stack: LocalStack, title: str) -> str:
    service_key = stack.demo["services"][0]["service_key"]
    created = stack.post("/api/v1/incidents", json={"title": title, "service_ids": [service_key], "severity": "SEV1"})
    assert created.status_code == 201
    return str(created.json()["data"]["incident_number"])


def escalations(stack: LocalStack, number: str) -> int:
    timeline = stack.get(f"/api/v1/incidents/{number}").json()["data"]["timeline"]
    return [e["event_type"] for e in timeline].count("escalated")


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
    number = create_incident(stack, "Escalation e2e")
    level_one = wait_for(lambda: level_paged(stack, number), 20)
    assert level_one, "level 1 was not paged"
    paged = {item["to"] for item in level_one}
    detail = stack.get(f"/api/v1/incidents/{number}").json()["data"]
    # Auto-assigned to the primary on call, who is paged as their own rules say: the demo's Ada
    # by SMS, the others by email and Slack (who is on call depends on the day).
    assignee = detail["assigned_to"]
    person = next(user for user in stack.demo["users"] if user["email"] == assignee["email"])
    addresses = {assignee["email"]} | {method["address"] for method in person["contact_methods"]}
    assert paged & addresses, (paged, addresses)
    assert stack.post(f"/api/v1/incidents/{number}/acknowledge").status_code == 200

    # Instead of sleeping past the level delay: an incident opened now and never acknowledged
    # escalates to level 2 one delay later. Its timer is due after the acknowledged incident's, on
    # the same queue, so once its level 2 is paged the acknowledged incident's timer has fired too.
    control = create_incident(stack, "Escalation e2e, never acknowledged")
    control_level_one = wait_for(lambda: level_paged(stack, control), 20)
    assert control_level_one, "level 1 of the control incident was not paged"
    control_escalated = wait_for(
        lambda: escalations(stack, control) >= 2 and len(outbox(stack, control)) > len(control_level_one),
        ESCALATION_DELAY_SECONDS + 30,
    )
    assert control_escalated, "the unacknowledged control incident did not escalate to level 2"

    after = outbox(stack, number)
    assert {item["id"] for item in after} == {item["id"] for item in level_one}, "escalated after acknowledge"
    assert escalations(stack, number) == 1
