"""POST /api/v1/incidents/{id}/page through chalice.test.Client: the spec's 200/409/502 rules,
validation, auth, 404, and the timeline entries. SES is moto's; Slack a loopback fake."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import NOW, Org, make_org, reconfigure
from tests.kit import factories as make
from tests.kit.api import call
from tests.service.test_notification_slack import FakeSlack


@pytest.fixture
def fake_slack(aws_env: None) -> Iterator[FakeSlack]:
    fake = FakeSlack(behaviours={"U_FAIL": ("error", "channel_not_found")}).start()
    reconfigure(SLACK_API_BASE_URL=fake.base_url, SLACK_BOT_TOKEN="xoxb-test", SLACK_TIMEOUT_SECONDS="1")
    yield fake
    fake.stop()


@pytest.fixture
def setup(client: Any, org: Org, fake_slack: FakeSlack) -> dict[str, Any]:
    from chalicelib.directory import users

    svc = make.service(org, "Checkout")
    for name, email, slack in [
        ("Ana Lima", "ana@example.com", "U0ANA"),
        ("Bo Chen", "bo@example.com", None),
        ("Fay Lure", "fay@example.com", "U_FAIL"),
    ]:
        users.create_user(organization_id=org.organization_id, name=name, email=email, slack_user_id=slack, now=NOW)
    created = call(
        client,
        "post",
        "/api/v1/incidents",
        org.owner_key,
        {"title": "Checkout down", "service_ids": [svc.service_key], "severity": "SEV1"},
    )
    assert created.status_code == 201, created.body
    return {"number": created.json["data"]["incident_number"]}


def page(client: Any, org: Org, number: str, body: Any, key: str | None = "owner") -> Any:
    credential = org.owner_key if key == "owner" else key
    return call(client, "post", f"/api/v1/incidents/{number}/page", credential, body)


def events(client: Any, org: Org, number: str) -> list[dict[str, Any]]:
    detail = call(client, "get", f"/api/v1/incidents/{number}", org.owner_key)
    return [e for e in detail.json["data"]["timeline"] if e["event_type"] in ("paged", "notification_failed")]


def ses_messages() -> list[Any]:
    from moto.ses.models import ses_backends

    return list(ses_backends["123456789012"]["us-east-1"].sent_messages)


def test_200_both_channels_delivered(client: Any, org: Org, setup: dict[str, Any], fake_slack: FakeSlack) -> None:
    number = setup["number"]
    response = page(
        client, org, number, {"email": "ana@example.com", "channels": ["email", "slack"], "message": "Join the call"}
    )
    assert response.status_code == 200, response.body
    assert response.json["data"] == {
        "incident_number": number,
        "sent": True,
        "channels": ["email", "slack"],
        "deliveries": [
            {"channel": "email", "sent": True, "error_code": None, "message": None},
            {"channel": "slack", "sent": True, "error_code": None, "message": None},
        ],
    }
    assert [m.subject for m in ses_messages()] == [f"[SEV1][high] {number}: Checkout down"]
    assert [r.body["channel"] for r in fake_slack.requests] == ["U0ANA"]
    [entry] = events(client, org, number)
    assert entry["event_type"] == "paged"
    assert entry["title"] == "Paged Ana Lima by email, slack"
    assert entry["description"] == "Join the call"
    assert entry["user"] == "owner (API key)"  # the caller


def test_200_when_one_channel_delivers_and_the_other_lacks_a_slack_id(
    client: Any, org: Org, setup: dict[str, Any], fake_slack: FakeSlack
) -> None:
    number = setup["number"]
    response = page(client, org, number, {"email": "bo@example.com", "channels": ["slack", "email"]})
    assert response.status_code == 200, response.body
    data = response.json["data"]
    assert (data["sent"], data["channels"]) == (True, ["slack", "email"])
    assert data["deliveries"] == [
        {
            "channel": "slack",
            "sent": False,
            "error_code": "CONTACT_DETAILS_MISSING",
            "message": "The person has no Slack user id.",
        },
        {"channel": "email", "sent": True, "error_code": None, "message": None},
    ]
    assert fake_slack.requests == []
    assert sorted((e["event_type"], e["title"]) for e in events(client, org, number)) == [
        ("notification_failed", "Slack notification to Bo Chen failed"),
        ("paged", "Paged Bo Chen by email"),
    ]


def test_409_when_every_channel_lacks_contact_details(
    client: Any, org: Org, setup: dict[str, Any], fake_slack: FakeSlack
) -> None:
    number = setup["number"]
    response = page(client, org, number, {"email": "bo@example.com", "channels": ["slack"]})
    assert response.status_code == 409, response.body
    error = response.json["error"]
    assert error["code"] == "CONTACT_DETAILS_MISSING"
    assert error["details"]["deliveries"] == [
        {
            "channel": "slack",
            "sent": False,
            "error_code": "CONTACT_DETAILS_MISSING",
            "message": "The person has no Slack user id.",
        }
    ]
    assert [e["event_type"] for e in events(client, org, number)] == ["notification_failed"]
    assert ses_messages() == [] and fake_slack.requests == []


def test_502_when_slack_refuses(client: Any, org: Org, setup: dict[str, Any], fake_slack: FakeSlack) -> None:
    number = setup["number"]
    response = page(client, org, number, {"email": "fay@example.com", "channels": ["slack"]})
    assert response.status_code == 502, response.body
    error = response.json["error"]
    assert error["code"] == "DELIVERY_FAILED"
    [delivery] = error["details"]["deliveries"]
    assert (delivery["channel"], delivery["sent"], delivery["error_code"]) == (
        "slack",
        False,
        "SLACK_channel_not_found",
    )
    [entry] = events(client, org, number)
    assert entry["event_type"] == "notification_failed"
    assert entry["description"].startswith("SLACK_channel_not_found")


def test_502_when_ses_rejects_the_unverified_sender(
    client: Any, org: Org, setup: dict[str, Any], fake_slack: FakeSlack
) -> None:
    number = setup["number"]
    reconfigure(SES_SENDER="nobody@unverified.example")
    response = page(client, org, number, {"email": "bo@example.com", "channels": ["email", "slack"]})
    assert response.status_code == 502, response.body
    assert [d["error_code"] for d in response.json["error"]["details"]["deliveries"]] == [
        "SES_MessageRejected",
        "CONTACT_DETAILS_MISSING",
    ]
    assert len(events(client, org, number)) == 2


def test_502_when_slack_is_down(client: Any, org: Org, setup: dict[str, Any], fake_slack: FakeSlack) -> None:
    number = setup["number"]
    fake_slack.behaviours["U0ANA"] = ("status", 503)
    response = page(client, org, number, {"email": "ana@example.com", "channels": ["slack"]})
    assert response.status_code == 502
    assert response.json["error"]["details"]["deliveries"][0]["error_code"] == "SLACK_UNAVAILABLE"


BAD_BODIES: list[tuple[dict[str, Any], str]] = [
    ({"email": "not-an-email", "channels": ["email"]}, "email"),
    ({"channels": ["email"]}, "email"),
    ({"email": "ana@example.com", "channels": []}, "channels"),
    ({"email": "ana@example.com"}, "channels"),
    ({"email": "ana@example.com", "channels": ["sms"]}, "channels.0"),
    ({"email": "ana@example.com", "channels": ["email"], "message": "x" * 501}, "message"),
    ({"email": "ana@example.com", "channels": ["email"], "urgency": "high"}, "urgency"),
    ({"email": "nobody@example.com", "channels": ["email"]}, "email"),
]


def test_400_validation(client: Any, org: Org, setup: dict[str, Any]) -> None:
    # One test, many cases: each test pays for a fresh moto account.
    for body, field in BAD_BODIES:
        response = page(client, org, setup["number"], body)
        assert response.status_code == 400, (body, response.body)
        assert response.json["error"]["code"] == "VALIDATION_ERROR"
        assert field in [f["field"] for f in response.json["error"]["details"]["fields"]], body
    assert ses_messages() == []
    assert events(client, org, setup["number"]) == []


def test_400_malformed_json_and_a_500_character_message_is_fine(
    client: Any, org: Org, setup: dict[str, Any], fake_slack: FakeSlack
) -> None:
    response = page(client, org, setup["number"], "{not json")
    assert (response.status_code, response.json["error"]["code"]) == (400, "VALIDATION_ERROR")
    response = page(
        client, org, setup["number"], {"email": "ana@example.com", "channels": ["email"], "message": "x" * 500}
    )
    assert response.status_code == 200


def test_401_and_403(client: Any, org: Org, setup: dict[str, Any]) -> None:
    body = {"email": "ana@example.com", "channels": ["email"]}
    response = page(client, org, setup["number"], body, key=None)
    assert (response.status_code, response.json["error"]["code"]) == (401, "UNAUTHORIZED")
    response = page(client, org, setup["number"], body, key=org.readonly_key)
    assert (response.status_code, response.json["error"]["code"]) == (403, "FORBIDDEN")
    assert response.json["error"]["details"] == {"required_scope": "incidents:write"}
    assert ses_messages() == []


def test_404_for_an_unknown_or_malformed_incident_or_another_organizations(
    client: Any, org: Org, setup: dict[str, Any]
) -> None:
    body = {"email": "ana@example.com", "channels": ["email"]}
    for number in ("INC-2026-9999", "nonsense"):
        response = page(client, org, number, body)
        assert (response.status_code, response.json["error"]["code"]) == (404, "NOT_FOUND")
    other = make_org("Other")
    response = page(client, org, setup["number"], body, key=other.owner_key)
    assert response.status_code == 404
    assert ses_messages() == []


def test_incident_number_is_case_insensitive(
    client: Any, org: Org, setup: dict[str, Any], fake_slack: FakeSlack
) -> None:
    response = page(client, org, setup["number"].lower(), {"email": "ana@example.com", "channels": ["email"]})
    assert response.status_code == 200
    assert response.json["data"]["incident_number"] == setup["number"]


def test_the_operation_is_documented(client: Any) -> None:
    document = json.loads(client.http.get("/api/v1/openapi.json").body)
    operation = document["paths"]["/api/v1/incidents/{id}/page"]["post"]
    assert operation["x-required-scope"] == "incidents:write"
    assert {"200", "400", "401", "403", "404", "409", "502"} <= set(operation["responses"])
