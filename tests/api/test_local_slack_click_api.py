"""The local stack, end to end: a Slack page in the outbox carries its buttons, a curl-style signed
"click" on the interactivity URL (demo.json's signing secret) acts, and the sink keeps the
message update (or the ephemeral reply) the click answered with."""

from __future__ import annotations

import json
import urllib.parse
import urllib.request
from typing import Any

from chalicelib import clock
from chalicelib.paging import slack_actions
from tests.api.test_local_outbox_api import http, served
from tests.conftest import NOW, Org
from tests.kit import factories as make

__all__ = ["served"]  # the fixture, shared with the outbox tests


def click(served: str, slack_user_id: str, button: dict[str, Any], secret: str) -> dict[str, Any]:
    payload = {
        "type": "block_actions",
        "user": {"id": slack_user_id},
        "container": {"type": "message", "channel_id": "D0ANA", "message_ts": "1790000000.000100"},
        "message": {"ts": "1790000000.000100", "blocks": []},
        "actions": [{"action_id": button["action_id"], "value": button["value"], "type": "button"}],
    }
    body = urllib.parse.urlencode({"payload": json.dumps(payload)}).encode()
    timestamp = str(int(clock.now().timestamp()))
    request = urllib.request.Request(
        f"{served}/integrations/slack/interactivity",
        data=body,
        headers={
            "Content-Type": "application/x-www-form-urlencoded",
            "X-Slack-Request-Timestamp": timestamp,
            "X-Slack-Signature": slack_actions.signature_of(secret, timestamp, body),
        },
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        answer: dict[str, Any] = json.loads(response.read())
    return answer


def test_click_a_paged_button_on_the_local_stack(served: str, org: Org) -> None:
    from chalicelib.directory import users
    from chalicelib.settings import get_settings

    secret = get_settings().slack_signing_key()
    assert secret  # the local stage's own, written to demo.json
    svc = make.service(org, "Checkout")
    users.create_user(
        organization_id=org.organization_id, name="Ana", email="ana@example.com", slack_user_id="U0ANA", now=NOW
    )
    status, created = http(
        "POST",
        f"{served}/api/v1/incidents",
        org.owner_key,
        {"title": "Checkout down", "service_ids": [svc.service_key]},
    )
    assert status == 201, created
    number = created["data"]["incident_number"]
    status, paged = http(
        "POST",
        f"{served}/api/v1/incidents/{number}/page",
        org.owner_key,
        {"email": "ana@example.com", "channels": ["slack"]},
    )
    assert status == 200, paged

    _, listed = http("GET", f"{served}/local/outbox?channel=slack&incident_number={number}")
    [page] = listed["data"]["items"]
    [actions] = [block for block in page["blocks"] if block["type"] == "actions"]
    buttons = {element["action_id"]: element for element in actions["elements"]}
    assert buttons["tocsin_acknowledge"]["value"] == f"{org.organization_id}/{number}"
    assert {"tocsin_acknowledge", "tocsin_resolve", "tocsin_escalate"} <= set(buttons)

    stranger = click(served, "U0NOBODY", buttons["tocsin_acknowledge"], secret)
    assert stranger["done"] is False
    acknowledged = click(served, "U0ANA", buttons["tocsin_acknowledge"], secret)
    assert acknowledged == {
        "done": True,
        "message": f"{number} acknowledged by ana@example.com.",
        "incident_number": number,
    }

    _, listed = http("GET", f"{served}/local/outbox?channel=slack")
    answers = {item["subject"]: item for item in listed["data"]["items"] if item["subject"]}
    assert answers["chat.update"]["to"] == "D0ANA" and answers["chat.update"]["incident_number"] == number
    assert answers["chat.update"]["blocks"][-1]["block_id"] == "tocsin_outcome"
    assert answers["chat.postEphemeral"]["to"] == "U0NOBODY" and "not linked" in answers["chat.postEphemeral"]["text"]


def test_the_sink_refuses_an_update_without_ts_and_an_ephemeral_without_user(client: Any, local_routes: None) -> None:
    headers = {"Content-Type": "application/json", "Authorization": "Bearer xoxb-any"}

    def call(method: str, body: dict[str, Any]) -> dict[str, Any]:
        response = client.http.post(f"/local/slack/api/{method}", headers=headers, body=json.dumps(body))
        assert response.status_code == 200
        answer: dict[str, Any] = json.loads(response.body)
        return answer

    assert call("chat.update", {"channel": "D1", "text": "x"}) == {"ok": False, "error": "message_not_found"}
    assert call("chat.postEphemeral", {"channel": "D1", "text": "x"}) == {"ok": False, "error": "user_not_in_channel"}
    assert call("chat.update", {"channel": "D1", "ts": "1.2", "text": "x"})["ts"] == "1.2"
    assert call("chat.postEphemeral", {"channel": "D1", "user": "U1", "text": "x"})["ok"] is True
