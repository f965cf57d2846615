"""POST /integrations/slack/interactivity through chalice.test.Client: Slack's signed block_actions
clicks on a page's buttons. Slack's Web API (chat.update, chat.postEphemeral) is a loopback fake."""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Iterator
from typing import Any

import pytest

from chalicelib import clock
from chalicelib.paging import slack_actions
from chalicelib.settings import get_settings
from tests.conftest import NOW, Org, make_org, reconfigure
from tests.service.test_notification_slack import FakeSlack

SECRET = "test-signing-secret"
PATH = "/integrations/slack/interactivity"
UNTOUCHED = "new"
MESSAGE_BLOCKS = [{"type": "section", "block_id": "headline", "text": {"type": "mrkdwn", "text": "INC down"}}]


@pytest.fixture
def fake_slack(aws_env: None) -> Iterator[FakeSlack]:
    fake = FakeSlack().start()
    reconfigure(
        SLACK_API_BASE_URL=fake.base_url,
        SLACK_BOT_TOKEN="xoxb-test",
        SLACK_TIMEOUT_SECONDS="1",
        SLACK_SIGNING_SECRET=SECRET,
    )
    clock.freeze(NOW)
    yield fake
    clock.freeze(None)
    fake.stop()


@pytest.fixture
def world(org: Org, fake_slack: FakeSlack) -> dict[str, Any]:
    from chalicelib.catalog import service as services
    from chalicelib.directory import users
    from chalicelib.incident import service

    oid = org.organization_id
    users.create_user(organization_id=oid, name="Ana", email="ana@acme.test", slack_user_id="U0ANA", now=NOW)
    users.create_user(
        organization_id=oid, name="Vera", email="vera@acme.test", slack_user_id="U0VERA", role="viewer", now=NOW
    )
    svc = services.create_service(organization_id=oid, name="Checkout", now=NOW)
    created = service.create_incident(
        organization_id=oid,
        request=service.NewIncident(title="Checkout down", service_keys=[svc.service_key], severity="SEV1"),
        now=NOW,
        actor="seed",
        settings=get_settings(),
    )
    return {"number": created.incident_number}


def click_body(slack_user_id: str, value: str, action_id: str = "tocsin_acknowledge") -> bytes:
    payload = {
        "type": "block_actions",
        "user": {"id": slack_user_id, "username": "someone"},
        "container": {"type": "message", "channel_id": "D0PAGE", "message_ts": "1790000000.000100"},
        "channel": {"id": "D0PAGE"},
        "message": {"ts": "1790000000.000100", "blocks": MESSAGE_BLOCKS},
        "response_url": "https://hooks.slack.invalid/actions/1",
        "actions": [{"type": "button", "action_id": action_id, "value": value, "block_id": "tocsin_actions"}],
    }
    return urllib.parse.urlencode({"payload": json.dumps(payload)}).encode()


def post(client: Any, body: bytes, *, secret: str = SECRET, age_seconds: int = 0, signature: str | None = None) -> Any:
    timestamp = str(int(NOW.timestamp()) - age_seconds)
    headers = {
        "Content-Type": "application/x-www-form-urlencoded",
        "X-Slack-Request-Timestamp": timestamp,
        "X-Slack-Signature": signature or slack_actions.signature_of(secret, timestamp, body),
    }
    response = client.http.post(PATH, headers=headers, body=body)
    response.json = json.loads(response.body) if response.body else None
    return response


def timeline(org: Org, number: str) -> list[str]:
    from chalicelib.incident import repository

    return [entry.title or "" for entry in repository.get_with_timeline(org.organization_id, number).timeline]


def status(org: Org, number: str) -> str:
    """ "acknowledged" once acknowledged (the workflow names that status "investigating"), else the status."""
    from chalicelib.incident import repository

    incident = repository.get_incident(org.organization_id, number)
    if incident.status != "resolved" and incident.acknowledged_at is not None:
        return "acknowledged"
    return str(incident.status)


def test_a_signed_click_acknowledges_and_updates_the_message(
    client: Any, org: Org, world: dict[str, Any], fake_slack: FakeSlack
) -> None:
    number = world["number"]
    answer = post(client, click_body("U0ANA", f"{org.organization_id}/{number}"))
    assert answer.status_code == 200, answer.body
    assert answer.json == {
        "done": True,
        "message": f"{number} acknowledged by ana@acme.test.",
        "incident_number": number,
    }
    assert status(org, number) == "acknowledged"
    assert "Acknowledged by ana@acme.test via Slack" in timeline(org, number)
    [update] = fake_slack.requests
    assert update.path == "/api/chat.update"
    assert update.headers["authorization"] == "Bearer xoxb-test"
    assert update.body["channel"] == "D0PAGE" and update.body["ts"] == "1790000000.000100"
    *kept, outcome = update.body["blocks"]
    assert kept == MESSAGE_BLOCKS
    assert outcome["block_id"] == "tocsin_outcome"
    assert f"{number} acknowledged by ana@acme.test." in outcome["elements"][0]["text"]


def test_resolve_and_escalate_buttons_act_too(client: Any, org: Org, world: dict[str, Any]) -> None:
    number = world["number"]
    value = f"{org.organization_id}/{number}"
    escalated = post(client, click_body("U0ANA", value, "tocsin_escalate"))
    assert escalated.status_code == 200
    assert escalated.json["incident_number"] == number  # no policy: told there is no further level
    resolved = post(client, click_body("U0ANA", value, "tocsin_resolve"))
    assert resolved.json["done"] is True
    assert status(org, number) == "resolved"


def test_a_forged_signature_is_refused_and_changes_nothing(
    client: Any, org: Org, world: dict[str, Any], fake_slack: FakeSlack
) -> None:
    number = world["number"]
    body = click_body("U0ANA", f"{org.organization_id}/{number}")
    forged = post(client, body, secret="not-the-secret")
    assert forged.status_code == 401
    assert forged.json["error"]["code"] == "INVALID_SIGNATURE"
    tampered_body = click_body("U0ANA", f"{org.organization_id}/{number}", "tocsin_resolve")
    good_signature = slack_actions.signature_of(SECRET, str(int(NOW.timestamp())), body)
    tampered = post(client, tampered_body, signature=good_signature)
    assert tampered.status_code == 401
    unsigned = client.http.post(PATH, headers={"Content-Type": "application/x-www-form-urlencoded"}, body=body)
    assert unsigned.status_code == 401
    assert status(org, number) == UNTOUCHED
    assert fake_slack.requests == []


def test_a_stale_timestamp_is_refused(client: Any, org: Org, world: dict[str, Any]) -> None:
    number = world["number"]
    stale = post(client, click_body("U0ANA", f"{org.organization_id}/{number}"), age_seconds=301)
    assert stale.status_code == 401
    assert stale.json["error"]["code"] == "SIGNATURE_EXPIRED"
    ahead = post(client, click_body("U0ANA", f"{org.organization_id}/{number}"), age_seconds=-301)
    assert ahead.status_code == 401
    fresh_enough = post(client, click_body("U0ANA", f"{org.organization_id}/{number}"), age_seconds=299)
    assert fresh_enough.status_code == 200
    assert status(org, number) == "acknowledged"


def test_an_unlinked_slack_user_is_told_to_link_and_nothing_happens(
    client: Any, org: Org, world: dict[str, Any], fake_slack: FakeSlack
) -> None:
    number = world["number"]
    # A genuine click (valid signature) replayed by a Slack user no Tocsin user is linked to.
    answer = post(client, click_body("U0STRANGER", f"{org.organization_id}/{number}"))
    assert answer.status_code == 200
    assert answer.json["done"] is False
    assert "not linked" in answer.json["message"] and "U0STRANGER" in answer.json["message"]
    assert status(org, number) == UNTOUCHED
    [reply] = fake_slack.requests
    assert reply.path == "/api/chat.postEphemeral"
    assert reply.body == {"channel": "D0PAGE", "user": "U0STRANGER", "text": answer.json["message"]}


def test_a_viewer_click_is_refused_with_a_reply(
    client: Any, org: Org, world: dict[str, Any], fake_slack: FakeSlack
) -> None:
    number = world["number"]
    answer = post(client, click_body("U0VERA", f"{org.organization_id}/{number}"))
    assert answer.status_code == 200
    assert answer.json["done"] is False and "viewer" in answer.json["message"]
    assert status(org, number) == UNTOUCHED
    assert [request.path for request in fake_slack.requests] == ["/api/chat.postEphemeral"]


def test_a_button_naming_another_organization_acts_nowhere(
    client: Any, org: Org, world: dict[str, Any], fake_slack: FakeSlack
) -> None:
    from chalicelib.catalog import service as services
    from chalicelib.incident import service

    other = make_org("Other")
    svc = services.create_service(organization_id=other.organization_id, name="Theirs", now=NOW)
    theirs = service.create_incident(
        organization_id=other.organization_id,
        request=service.NewIncident(title="Their outage", service_keys=[svc.service_key], severity="SEV1"),
        now=NOW,
        actor="seed",
        settings=get_settings(),
    ).incident_number
    answer = post(client, click_body("U0ANA", f"{other.organization_id}/{theirs}"))
    assert answer.status_code == 200
    assert answer.json["done"] is False and "not a member" in answer.json["message"]
    assert status(other, theirs) == UNTOUCHED


def test_a_payload_that_is_not_slack_form_is_a_400_and_other_interactions_are_ignored(
    client: Any, org: Org, world: dict[str, Any]
) -> None:
    assert post(client, b"payload=%7Bnot-json").status_code == 400
    assert post(client, b"text=hello").status_code == 400
    view = urllib.parse.urlencode({"payload": json.dumps({"type": "view_submission"})}).encode()
    ignored = post(client, view)
    assert ignored.status_code == 200 and ignored.json["done"] is False
    link = click_body("U0ANA", f"{org.organization_id}/{world['number']}", "open_incident")
    assert post(client, link).json["done"] is False
    assert status(org, world["number"]) == UNTOUCHED


def test_without_a_signing_secret_every_click_is_refused(client: Any, org: Org, world: dict[str, Any]) -> None:
    reconfigure(TOCSIN_STAGE="prod", SLACK_SIGNING_SECRET="")
    answer = post(client, click_body("U0ANA", f"{org.organization_id}/{world['number']}"))
    assert answer.status_code == 401


def escalating(org: Org) -> str:
    """An incident whose three-level escalation (Ana at every level) has begun at level 1."""
    from chalicelib.catalog import service as services
    from chalicelib.directory.users import find_users_by_slack_user_id
    from chalicelib.escalation import service as policies
    from chalicelib.escalation.steps import Level, Target
    from chalicelib.incident import service
    from chalicelib.paging import escalation_runs

    [ana] = find_users_by_slack_user_id("U0ANA")
    level = Level((Target("user", ana.user_id),), 30)
    policy = policies.create_policy(
        organization_id=org.organization_id, name="Three", levels=[level, level, level], now=NOW
    )
    svc = services.create_service(
        organization_id=org.organization_id, name="Payments", now=NOW, escalation_policy_id=policy.policy.policy_id
    )
    number = service.create_incident(
        organization_id=org.organization_id,
        request=service.NewIncident(title="Payments down", service_keys=[svc.service_key], severity="SEV1"),
        now=NOW,
        actor="seed",
        settings=get_settings(),
    ).incident_number
    escalation_runs.begin(organization_id=org.organization_id, incident_number=number, now=NOW, settings=get_settings())
    return number


def slack_click(slack_user_id: str, value: str, action_id: str, **extra: Any) -> bytes:
    """A click as Slack sends it: with its workspace, its action_ts and the interaction's trigger_id."""
    payload = json.loads(urllib.parse.parse_qs(click_body(slack_user_id, value, action_id).decode())["payload"][0])
    payload["team"] = {"id": extra.pop("team_id", "T0LOCAL001"), "domain": "acme"}
    payload["trigger_id"] = extra.pop("trigger_id", "13345224609.738474920.8088930838d88f008e0")
    payload["actions"][0]["action_ts"] = extra.pop("action_ts", "1790000001.000200")
    return urllib.parse.urlencode({"payload": json.dumps(payload)}).encode()


def test_one_signed_click_sent_four_times_escalates_once_and_is_answered_the_same(
    client: Any, org: Org, world: dict[str, Any], fake_slack: FakeSlack
) -> None:
    from chalicelib.incident import repository

    number = escalating(org)
    body = slack_click("U0ANA", f"{org.organization_id}/{number}", "tocsin_escalate")
    answers = [post(client, body, age_seconds=age) for age in (0, 10, 60, 200)]  # re-signed each time
    assert [answer.status_code for answer in answers] == [200] * 4
    assert answers[0].json == {
        "done": True,
        "message": f"{number} escalated by ana@acme.test.",
        "incident_number": number,
    }
    assert all(answer.json == answers[0].json for answer in answers)
    assert sum(1 for title in timeline(org, number) if title.startswith("Escalated by hand")) == 1
    assert repository.get_incident(org.organization_id, number).escalation["level_index"] == 1  # level 2, not 4
    assert [request.path for request in fake_slack.requests] == ["/api/chat.update"]  # the replays touch nothing
    # Another click (a new action_ts and trigger_id) is another action.
    again = post(
        client,
        slack_click("U0ANA", f"{org.organization_id}/{number}", "tocsin_escalate", action_ts="2.0", trigger_id="9.9"),
    )
    assert again.json["done"] is True and "escalated" in again.json["message"]
    assert repository.get_incident(org.organization_id, number).escalation["level_index"] == 2


def test_a_replayed_click_without_slacks_ids_is_still_one_action(client: Any, org: Org, world: dict[str, Any]) -> None:
    number = escalating(org)
    body = click_body("U0ANA", f"{org.organization_id}/{number}", "tocsin_escalate")
    first, second = post(client, body), post(client, body, age_seconds=30)
    assert first.json == second.json and first.json["done"] is True
    assert sum(1 for title in timeline(org, number) if title.startswith("Escalated by hand")) == 1


def test_a_click_from_another_slack_workspace_acts_nowhere(
    client: Any, org: Org, world: dict[str, Any], fake_slack: FakeSlack
) -> None:
    number = world["number"]
    value = f"{org.organization_id}/{number}"
    foreign = post(client, slack_click("U0ANA", value, "tocsin_resolve", team_id="T0ELSEWHERE"))
    assert foreign.status_code == 200
    assert foreign.json["done"] is False and "not the one" in foreign.json["message"]
    assert org.organization_id not in foreign.json["message"] and "Acme" not in foreign.json["message"]
    assert status(org, number) == UNTOUCHED
    assert [request.path for request in fake_slack.requests] == ["/api/chat.postEphemeral"]
    reconfigure(SLACK_TEAM_ID="T0ELSEWHERE,T0SECOND")  # a deployment's own workspaces
    assert post(client, slack_click("U0ANA", value, "tocsin_acknowledge", team_id="T0LOCAL001")).json["done"] is False
    ours = post(client, slack_click("U0ANA", value, "tocsin_resolve", team_id="T0SECOND", action_ts="3.0"))
    assert ours.json["done"] is True and status(org, number) == "resolved"
