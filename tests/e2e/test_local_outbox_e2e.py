"""The outbox of the real local stack: a page on every channel is listed for its incident as it was
sent, and the same list comes back after a restart (SMS included: the emulator keeps no SNS state,
the outbox table is kept like every table).

The stack runs at TIME_SCALE=60, so Ada's call (5 minutes after her SMS) comes after 5 seconds."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.e2e.conftest import LocalStack, start_stack, stop_stack

CHANNELS = ["email", "slack", "sms", "voice"]


def listed(stack: LocalStack, **params: str) -> list[dict[str, Any]]:
    answer = stack.get("/local/outbox", params=params)
    assert answer.status_code == 200, answer.text
    return list(answer.json()["data"]["items"])


def wait_for(condition: Callable[[], Any], seconds: float) -> Any:
    deadline = time.monotonic() + seconds
    while True:
        value = condition()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.5)


def ada_only_service(stack: LocalStack) -> str:
    ada = stack.demo["users"][0]
    policy = stack.post(
        "/api/v1/escalation-policies",
        json={"name": "Ada only", "levels": [{"targets": [{"kind": "user", "id": ada["id"]}], "delay_minutes": 60}]},
    )
    assert policy.status_code == 201, policy.text
    service = stack.post(
        "/api/v1/services", json={"name": "Outbox", "escalation_policy_id": policy.json()["data"]["id"]}
    )
    assert service.status_code == 201, service.text
    return str(service.json()["data"]["service_key"])


def test_a_page_on_every_channel_is_listed_for_its_incident_and_kept_across_a_restart(tmp_path: Path) -> None:
    first = start_stack(tmp_path, TIME_SCALE="60")
    try:
        ada = first.demo["users"][0]
        created = first.post(
            "/api/v1/incidents",
            json={"title": "Outbox <kept>", "service_ids": [ada_only_service(first)], "severity": "SEV1"},
        )
        assert created.status_code == 201, created.text
        number = created.json()["data"]["incident_number"]
        paged = first.post(
            f"/api/v1/incidents/{number}/page",
            json={"email": ada["email"], "channels": ["email", "slack"], "message": "Join the bridge"},
        )
        assert paged.status_code == 200, paged.text
        # Her rules text her at once and call her 5 (scaled) minutes later.
        wait_for(lambda: listed(first, channel="voice", incident_number=number), 30)

        pages = [i for i in listed(first, incident_number=number) if i["channel"] != "webhook"]
        assert sorted({i["channel"] for i in pages}) == CHANNELS
        email = next(i for i in pages if i["channel"] == "email")
        assert email["subject"].endswith(f"{number}: Outbox <kept>") and "Join the bridge" in email["text"]
        assert sorted(email["action_links"]) == ["Acknowledge", "Resolve"] and email["sent_at"]
        sms = [i for i in pages if i["channel"] == "sms"]
        assert len(sms) == 1 and sms[0]["sent_at"] is None and pages[-1] == sms[0]  # untimed: last
        phone = next(m["address"] for m in ada["contact_methods"] if m["type"] == "sms")
        assert listed(first, channel="sms", incident_number=number.lower(), to=phone) == sms
        before = listed(first, incident_number=number, limit="500")
    finally:
        assert stop_stack(first) == 0

    second = start_stack(tmp_path)
    try:
        assert "(restored from the last run)" in second.log()
        after = listed(second, incident_number=number, limit="500")
        kept = {i["id"] for i in before}
        assert len(kept) == len(before) and [i for i in after if i["id"] in kept] == before
        assert listed(second, channel="sms", to=phone) == sms
    finally:
        assert stop_stack(second) == 0
