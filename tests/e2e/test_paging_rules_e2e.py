"""A person's notification rules over real HTTP on the local stack: the demo's Ada is texted at
once and called five (scaled) minutes later for a high-urgency incident; acknowledging first
stops the call; a low-urgency incident reaches her by email only.

The stack runs at TIME_SCALE=60, so Ada's 5-minute voice step comes due after 5 seconds."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from tests.e2e.conftest import LocalStack, start_stack, stop_stack

TIME_SCALE = 60
VOICE_STEP_SECONDS = 5 * 60 / TIME_SCALE


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    running = start_stack(tmp_path_factory.mktemp("stack"), TIME_SCALE=str(TIME_SCALE))
    yield running
    stop_stack(running)


@pytest.fixture(scope="module")
def ada_service(stack: LocalStack) -> str:
    """A service whose only level is Ada (so who is on call in the demo schedule does not matter)."""
    ada = stack.demo["users"][0]
    assert ada["name"] == "Ada Lovelace"
    assert sorted(m["type"] for m in ada["contact_methods"]) == ["email", "slack", "sms", "voice"]
    assert all(m["verified"] for m in ada["contact_methods"])
    assert [(s["type"], s["delay_minutes"]) for s in ada["notification_rules"]["high"]] == [("sms", 0), ("voice", 5)]
    policy = stack.post(
        "/api/v1/escalation-policies",
        json={"name": "Ada only", "levels": [{"targets": [{"kind": "user", "id": ada["id"]}], "delay_minutes": 60}]},
    )
    assert policy.status_code == 201, policy.text
    service = stack.post(
        "/api/v1/services", json={"name": "Phone checks", "escalation_policy_id": policy.json()["data"]["id"]}
    )
    assert service.status_code == 201, service.text
    return str(service.json()["data"]["service_key"])


def open_incident(stack: LocalStack, service_key: str, severity: str) -> str:
    created = stack.post(
        "/api/v1/incidents", json={"title": f"Checkout {severity}", "service_ids": [service_key], "severity": severity}
    )
    assert created.status_code == 201, created.text
    return str(created.json()["data"]["incident_number"])


def sent(stack: LocalStack, channel: str, incident_number: str) -> list[dict[str, Any]]:
    answer = requests.get(
        f"{stack.base_url}/local/outbox", params={"channel": channel, "incident_number": incident_number}, timeout=10
    )
    assert answer.status_code == 200, answer.text
    return list(answer.json()["data"]["items"])


def skipped_pages(stack: LocalStack, incident_number: str) -> list[dict[str, Any]]:
    """The stack's log entries for the incident's pages a worker decided not to send."""
    entries = [json.loads(line) for line in stack.log().splitlines() if '"page skipped"' in line]
    return [entry for entry in entries if entry.get("incident_number") == incident_number]


def wait_for(condition: Any, seconds: float) -> Any:
    deadline = time.monotonic() + seconds
    while True:
        value = condition()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.5)


def test_high_urgency_texts_at_once_then_calls(stack: LocalStack, ada_service: str) -> None:
    number = open_incident(stack, ada_service, "SEV1")
    texts = wait_for(lambda: sent(stack, "sms", number), 20)
    assert [(t["to"], t["text"]) for t in texts] == [
        (
            "+15555550100",
            f"[SEV1] {number} Phone checks: Checkout SEV1.\n{stack.base_url}/app/incidents/{number}\n"
            "Reply 4 to ack, 6 to resolve.",
        )
    ]
    assert sent(stack, "voice", number) == []  # not before its 5 minutes
    calls = wait_for(lambda: sent(stack, "voice", number), VOICE_STEP_SECONDS + 20)
    assert [c["to"] for c in calls] == ["+15555550100"]
    assert "Press 4 to acknowledge" in calls[0]["text"]
    incident = stack.get(f"/api/v1/incidents/{number}").json()["data"]
    assert incident["urgency"] == "high"
    titles = [entry["title"] for entry in incident["timeline"]]
    assert "Paged Ada Lovelace by sms" in titles and "Paged Ada Lovelace by voice" in titles


def test_acknowledging_before_the_call_stops_it(stack: LocalStack, ada_service: str) -> None:
    number = open_incident(stack, ada_service, "SEV0")
    assert wait_for(lambda: sent(stack, "sms", number), 20)
    acknowledged = stack.post(f"/api/v1/incidents/{number}/acknowledge")
    assert acknowledged.status_code == 200, acknowledged.text
    # Not a sleep past the step: its timer fires on time and the worker, finding the incident
    # acknowledged, logs the skip. Once that is in the log, the call can no longer come.
    skips = wait_for(lambda: skipped_pages(stack, number), VOICE_STEP_SECONDS + 20)
    assert [skip["reason"] for skip in skips] == ["incident acknowledged"], skips
    assert sent(stack, "voice", number) == []


def test_low_urgency_reaches_her_by_email_only(stack: LocalStack, ada_service: str) -> None:
    number = open_incident(stack, ada_service, "SEV3")
    emails = wait_for(lambda: sent(stack, "email", number), 20)
    assert [e["to"] for e in emails] == ["ada@demo.tocsin.dev"]
    assert "/app/incidents/" in emails[0]["text"] and "/api/v1/" not in emails[0]["text"]
    time.sleep(2)
    assert sent(stack, "sms", number) == [] and sent(stack, "slack", number) == []


@pytest.fixture(scope="module")
def quiet_service(stack: LocalStack) -> str:
    """A service without an escalation policy: its incidents page nobody unless someone is assigned."""
    service = stack.post("/api/v1/services", json={"name": "Quiet checks"})
    assert service.status_code == 201, service.text
    return str(service.json()["data"]["service_key"])


def paging_of(stack: LocalStack, number: str) -> dict[str, Any]:
    return dict(stack.get(f"/api/v1/incidents/{number}").json()["data"]["paging"])


def titles_of(stack: LocalStack, number: str) -> list[str]:
    return [str(entry["title"]) for entry in stack.get(f"/api/v1/incidents/{number}").json()["data"]["timeline"]]


def test_nobody_to_page_is_said_and_assigning_pages_the_assignee(stack: LocalStack, quiet_service: str) -> None:
    ada = stack.demo["users"][0]
    number = open_incident(stack, quiet_service, "SEV1")
    decided = wait_for(lambda: paging_of(stack, number)["status"] != "pending", 20)
    assert decided
    assert paging_of(stack, number) == {
        "status": "nobody",
        "reason": "Service Quiet checks has no escalation policy.",
        "level": None,
        "fallback_contacts": [],
    }
    assert "Nobody to page" in titles_of(stack, number)
    assert sent(stack, "sms", number) == []

    patched = stack.session.patch(
        f"{stack.base_url}/api/v1/incidents/{number}", json={"assigned_to": ada["email"]}, headers=stack.headers()
    )
    assert patched.status_code == 200, patched.text
    texts = wait_for(lambda: sent(stack, "sms", number), 20)
    assert [t["to"] for t in texts] == ["+15555550100"]
    assert any(t.startswith("Paged Ada Lovelace by sms (assigned by ") for t in titles_of(stack, number))
    again = stack.session.patch(  # the same person again: no change, no second page
        f"{stack.base_url}/api/v1/incidents/{number}", json={"assigned_to": ada["email"]}, headers=stack.headers()
    )
    assert again.status_code == 200, again.text
    time.sleep(2)
    assert len(sent(stack, "sms", number)) == 1


def test_the_fallback_contacts_are_paged_when_nobody_else_can_be(stack: LocalStack, quiet_service: str) -> None:
    ada = stack.demo["users"][0]
    settings = f"{stack.base_url}/api/v1/settings/paging"
    saved = stack.session.put(settings, json={"fallback_contacts": [ada["email"]]}, headers=stack.headers())
    assert saved.status_code == 200, saved.text
    assert [c["email"] for c in saved.json()["data"]["fallback_contacts"]] == [ada["email"]]
    try:
        number = open_incident(stack, quiet_service, "SEV1")
        texts = wait_for(lambda: sent(stack, "sms", number), 20)
        assert [t["to"] for t in texts] == ["+15555550100"]
        paging = paging_of(stack, number)
        assert (paging["status"], paging["fallback_contacts"]) == ("fallback", ["Ada Lovelace"])
        assert "Nobody to page: paging the fallback contacts Ada Lovelace" in titles_of(stack, number)
    finally:
        cleared = stack.session.put(settings, json={"fallback_contacts": []}, headers=stack.headers())
        assert cleared.status_code == 200, cleared.text
