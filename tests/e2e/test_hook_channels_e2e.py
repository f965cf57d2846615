"""ntfy, Mattermost and Pushover over real HTTP on the local stack: a person adds each method, verifies it
with the code the local sink received, is paged through a rule that uses both, and acts from the
page: an ntfy action button's POST acknowledges, a Mattermost button's POST resolves, Pushover's
acknowledgement callback (played by the local sink) acknowledges; a replay and a forgery are
refused and change nothing."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from tests.e2e.conftest import LocalStack, start_stack, stop_stack

NTFY_URL = "https://ntfy.sh/e2e-pages-Kq4"
MATTERMOST_URL = "https://chat.example.com/hooks/e2e0mattermost0hook"
PUSHOVER_KEY = "uE2eGracePushoverKey0000000001"


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    running = start_stack(tmp_path_factory.mktemp("stack"))
    yield running
    stop_stack(running)


def wait_for(condition: Any, seconds: float) -> Any:
    deadline = time.monotonic() + seconds
    while True:
        value = condition()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.5)


def outbox(stack: LocalStack, channel: str, **params: str) -> list[dict[str, Any]]:
    answer = requests.get(f"{stack.base_url}/local/outbox", params={"channel": channel, **params}, timeout=10)
    assert answer.status_code == 200, answer.text
    return list(answer.json()["data"]["items"])


def add_and_verify(stack: LocalStack, user_id: str, kind: str, url: str) -> str:
    created = stack.post(f"/api/v1/users/{user_id}/contact-methods", json={"type": kind, "address": url})
    assert created.status_code == 201, created.text
    method = created.json()["data"]
    assert method["verified"] is False and url not in created.text  # the URL is never answered
    sent = stack.post(f"/api/v1/users/{user_id}/contact-methods/{method['id']}/send-verification")
    assert sent.status_code == 202, sent.text
    message = wait_for(lambda: [m for m in outbox(stack, kind) if "verification code" in m["text"]], 20)
    assert message, stack.log()
    code = next(word.rstrip(".") for word in message[0]["text"].split() if word.rstrip(".").isdigit())
    verified = stack.post(f"/api/v1/users/{user_id}/contact-methods/{method['id']}/verify", json={"code": code})
    assert verified.status_code == 200 and verified.json()["data"]["verified"], verified.text
    return str(method["id"])


@pytest.fixture(scope="module")
def grace(stack: LocalStack) -> dict[str, Any]:
    user = stack.post("/api/v1/users", json={"name": "Grace Push", "email": "grace.push@demo.tocsin.dev"})
    assert user.status_code == 201, user.text
    user_id = user.json()["data"]["id"]
    ntfy = add_and_verify(stack, user_id, "ntfy", NTFY_URL)
    mattermost = add_and_verify(stack, user_id, "mattermost", MATTERMOST_URL)
    pushover = add_and_verify(stack, user_id, "pushover", PUSHOVER_KEY)
    steps = [{"contact_method_id": m, "delay_minutes": 0} for m in (ntfy, mattermost, pushover)]
    rules = stack.session.put(
        f"{stack.base_url}/api/v1/users/{user_id}/notification-rules",
        json={"high": steps, "low": steps},
        headers=stack.headers(),
    )
    assert rules.status_code == 200, rules.text
    policy = stack.post(
        "/api/v1/escalation-policies",
        json={"name": "Grace only", "levels": [{"targets": [{"kind": "user", "id": user_id}], "delay_minutes": 60}]},
    )
    assert policy.status_code == 201, policy.text
    service = stack.post(
        "/api/v1/services", json={"name": "Push checks", "escalation_policy_id": policy.json()["data"]["id"]}
    )
    assert service.status_code == 201, service.text
    return {"id": user_id, "service_key": service.json()["data"]["service_key"]}


def open_incident(stack: LocalStack, service_key: str) -> str:
    created = stack.post(
        "/api/v1/incidents", json={"title": "Push SEV1", "service_ids": [service_key], "severity": "SEV1"}
    )
    assert created.status_code == 201, created.text
    return str(created.json()["data"]["incident_number"])


def titles(stack: LocalStack, number: str) -> list[str]:
    return [str(e["title"]) for e in stack.get(f"/api/v1/incidents/{number}").json()["data"]["timeline"]]


def test_paged_by_ntfy_and_acknowledged_from_its_button(stack: LocalStack, grace: dict[str, Any]) -> None:
    number = open_incident(stack, grace["service_key"])
    pages = wait_for(lambda: outbox(stack, "ntfy", incident_number=number), 20)
    assert pages, stack.log()
    payload = pages[0]["payload"]
    assert (payload["topic"], payload["priority"], pages[0]["to"]) == ("e2e-pages-Kq4", 5, "https://ntfy.sh")
    acknowledge = next(a for a in payload["actions"] if a["label"] == "Acknowledge")
    assert acknowledge["action"] == "http" and acknowledge["method"] == "POST"
    tapped = requests.post(acknowledge["url"], timeout=10)  # what the phone's button does
    assert tapped.status_code == 200 and tapped.json()["done"], tapped.text
    assert tapped.json()["message"] == f"{number} acknowledged by grace.push@demo.tocsin.dev."
    replayed = requests.post(acknowledge["url"], timeout=10)
    assert replayed.status_code == 409, replayed.text
    forged = requests.post(acknowledge["url"][:-3] + "AAA", timeout=10)
    assert forged.status_code == 401, forged.text
    assert any("Paged Grace Push by ntfy" in t for t in titles(stack, number))
    assert any(t.endswith("via ntfy") and "grace.push@demo.tocsin.dev" in t for t in titles(stack, number))


def test_paged_by_mattermost_and_resolved_from_its_button(stack: LocalStack, grace: dict[str, Any]) -> None:
    number = open_incident(stack, grace["service_key"])
    pages = wait_for(lambda: outbox(stack, "mattermost", incident_number=number), 20)
    assert pages, stack.log()
    attachment = pages[0]["payload"]["attachments"][0]
    assert [b["name"] for b in attachment["actions"]] == ["Acknowledge", "Resolve", "Escalate"]
    resolve = next(b for b in attachment["actions"] if b["id"] == "resolve")
    press = {"user_id": "mm-user", "post_id": "p1", "context": resolve["integration"]["context"]}
    forged = dict(press, context=dict(press["context"], token="0" * 40))
    refused = requests.post(resolve["integration"]["url"], json=forged, timeout=10)
    assert refused.status_code == 401, refused.text
    answered = requests.post(resolve["integration"]["url"], json=press, timeout=10)  # what Mattermost posts
    assert answered.status_code == 200, answered.text
    assert answered.json()["update"]["message"] == f"{number} resolved by grace.push@demo.tocsin.dev."
    assert requests.post(resolve["integration"]["url"], json=press, timeout=10).status_code == 409
    incident = stack.get(f"/api/v1/incidents/{number}").json()["data"]
    assert incident["resolved_at"] is not None
    assert any("Paged Grace Push by" in t and "Mattermost" in t for t in titles(stack, number))
    assert any(t.endswith("via Mattermost") for t in titles(stack, number))


def test_paged_by_pushover_and_acknowledged_by_its_callback(stack: LocalStack, grace: dict[str, Any]) -> None:
    number = open_incident(stack, grace["service_key"])
    pages = wait_for(lambda: outbox(stack, "pushover", incident_number=number), 20)
    assert pages, stack.log()
    form = pages[0]["payload"]
    assert (form["user"], form["priority"], form["retry"], form["expire"]) == (PUSHOVER_KEY, "2", "60", "3600")
    assert "/integrations/pushover/callback/" in form["callback"]
    forged = requests.post(form["callback"], data={"receipt": "not-the-receipt", "acknowledged": "1"}, timeout=10)
    assert forged.status_code == 401, forged.text
    pressed = requests.post(  # the local sink plays Pushover: the callback with the receipt it answered
        f"{stack.base_url}/local/channel-sink/pushover/messages/{pages[0]['id']}/press",
        json={"action": "acknowledge"},
        timeout=10,
    )
    assert pressed.status_code == 200 and pressed.json()["done"], pressed.text
    again = requests.post(
        f"{stack.base_url}/local/channel-sink/pushover/messages/{pages[0]['id']}/press",
        json={"action": "acknowledge"},
        timeout=10,
    )
    assert again.status_code == 409, again.text
    assert any(t.endswith("via Pushover") for t in titles(stack, number))
