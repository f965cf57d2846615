"""The outbound budget through chalice.test.Client: the probe's verification loop (finding 1), the
page operation's 429 past a person's burst, a subscriber's confirmations however the address is
spelled (finding 4), and GET/PATCH /api/v1/settings/limits."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from chalicelib import clock
from tests.api.test_paging_api import fake_slack, page, setup
from tests.api.test_status_subscribers_api import drain, emails, site, subscribe_json
from tests.conftest import NOW, Org, make_org, reconfigure
from tests.kit import factories as make
from tests.kit.api import call, session_jwt
from tests.service.fake_twilio import FakeTwilio

__all__ = ["fake_slack", "setup", "site"]  # fixtures
pytestmark = pytest.mark.filterwarnings("ignore::jwt.warnings.InsecureKeyLengthWarning")
LIMITS = "/api/v1/settings/limits"
VICTIM = "+15550199999"


@pytest.fixture
def frozen(aws_env: None) -> Iterator[None]:
    with clock.frozen(NOW):
        yield


@pytest.fixture
def twilio(aws_env: None) -> Iterator[FakeTwilio]:
    fake = FakeTwilio().start()
    reconfigure(VOICE_API_BASE_URL=fake.base_url, VOICE_TIMEOUT_SECONDS="1")
    yield fake
    fake.stop()


def sns_texts_to(phone: str) -> list[str]:
    from moto.sns.models import sns_backends

    return [text for to, text, *_ in sns_backends["123456789012"]["us-east-1"].sms_messages.values() if to == phone]


def test_the_probe_loop_create_send_delete_twelve_times_sends_three_codes(
    client: Any, org: Org, frozen: None, twilio: FakeTwilio
) -> None:
    viewer = make.person(org, "Vic", role="viewer")
    token = session_jwt(org.organization_id, viewer.user_id, "viewer")
    methods = f"/api/v1/users/{viewer.user_id}/contact-methods"
    answers = []
    for round_ in range(12):
        kind = "sms" if round_ % 2 == 0 else "voice"  # alternating SMS and calls: one phone, one count
        method = call(client, "POST", methods, token, {"type": kind, "address": VICTIM}).data
        answers.append(call(client, "POST", f"{methods}/{method['id']}/send-verification", token))
        assert call(client, "DELETE", f"{methods}/{method['id']}", token).status == 200
    assert [answer.status for answer in answers] == [202] * 3 + [429] * 9
    refused = answers[3]
    assert refused.error_code == "RATE_LIMITED"
    assert refused.json["error"]["details"]["limit"] == "verification_per_destination"
    assert 3000 < int(refused.headers["Retry-After"]) <= 3600 + 1200
    assert "At most 3 verification codes sent to one phone number an hour" in refused.json["error"]["message"]
    drain()  # the worker sends what was queued: the three codes, each once, and nothing else
    assert len(sns_texts_to(VICTIM)) == 2 and all("verification code" in text for text in sns_texts_to(VICTIM))
    assert [request.form["To"] for request in twilio.requests] == [VICTIM]


def test_a_person_gets_a_handful_of_codes_an_hour_whatever_the_numbers(client: Any, org: Org, frozen: None) -> None:
    ana = make.person(org, "Ana")
    token = session_jwt(org.organization_id, ana.user_id, "responder")
    methods = f"/api/v1/users/{ana.user_id}/contact-methods"
    statuses = []
    for n in range(7):
        method = call(client, "POST", methods, token, {"type": "sms", "address": f"+1555019{n:04d}"}).data
        statuses.append(call(client, "POST", f"{methods}/{method['id']}/send-verification", token).status)
    assert statuses == [202] * 5 + [429] * 2


def test_the_page_operation_answers_429_once_the_persons_burst_is_spent(
    client: Any, org: Org, setup: dict[str, Any]
) -> None:
    number = setup["number"]
    body = {"email": "bo@example.com", "channels": ["email"]}
    statuses = [page(client, org, number, body).status for _ in range(5)]
    assert statuses == [200] * 5
    refused = page(client, org, number, body)
    assert refused.status == 429 and int(refused.headers["Retry-After"]) >= 1
    assert refused.json["error"]["details"]["deliveries"] == [
        {
            "channel": "email",
            "sent": False,
            "error_code": "PAGE_DIGESTED",
            "message": refused.json["error"]["details"]["deliveries"][0]["message"],
        }
    ]
    detail = call(client, "GET", f"/api/v1/incidents/{number}", org.owner_key).data
    titles = [entry["title"] for entry in detail["timeline"]]
    assert "Included Bo Chen in their email digest" in titles
    # Another person is paged as usual.
    assert page(client, org, number, {"email": "ana@example.com", "channels": ["email"]}).status == 200


def test_confirmations_reach_one_mailbox_three_times_however_it_is_spelled(client: Any, site: dict[str, Any]) -> None:
    spellings = ["victim@gmail.com", "Victim@Gmail.com", "victim+1@gmail.com", "v.i.c.t.i.m@gmail.com"]
    spellings += [f"victim+{n}@googlemail.com" for n in range(5)]
    # The subscribe budget counts the mailbox too (docs/SECURITY.md): the 4th request is a 429.
    assert [subscribe_json(client, {"email": spelling}).status_code for spelling in spellings] == [202] * 3 + [429] * 6
    drain()
    assert len(emails()) == 3


def test_an_admin_reads_and_lowers_the_limits(client: Any, org: Org) -> None:
    listed = call(client, "GET", LIMITS, org.owner_key).data["limits"]
    by_name = {limit["name"]: limit for limit in listed}
    assert len(listed) == 12
    assert by_name["verification_per_destination"] == {
        "name": "verification_per_destination",
        "counts": "verification codes sent to one phone number",
        "per": "destination",
        "window_seconds": 3600,
        "value": 3,
        "deployment_value": 3,
        "lowered": False,
        "owner_may_lower": True,
    }
    assert by_name["page_burst_per_person"]["window_seconds"] == 600
    assert by_name["unknown_sender_reply_per_number"]["owner_may_lower"] is False

    lowered = call(client, "PATCH", LIMITS, org.owner_key, {"limits": {"sms_per_organization": 100}}).data["limits"]
    assert {limit["name"]: (limit["value"], limit["lowered"]) for limit in lowered}["sms_per_organization"] == (
        100,
        True,
    )
    again = call(client, "GET", LIMITS, org.owner_key).data["limits"]
    assert {limit["name"]: limit["value"] for limit in again}["sms_per_organization"] == 100
    back = call(client, "PATCH", LIMITS, org.owner_key, {"limits": {"sms_per_organization": None}}).data["limits"]
    assert {limit["name"]: limit["value"] for limit in back}["sms_per_organization"] == 1000
    other = make_org()
    assert {limit["name"]: limit["value"] for limit in call(client, "GET", LIMITS, other.owner_key).data["limits"]}[
        "sms_per_organization"
    ] == 1000


@pytest.mark.parametrize(
    ("body", "fields"),
    [
        ({"limits": {"sms_per_organization": 1001}}, ["limits.sms_per_organization"]),
        ({"limits": {"sms_per_organization": 0}}, ["limits.sms_per_organization"]),
        ({"limits": {"unknown_sender_replies": 1}}, ["limits.unknown_sender_replies"]),
        ({"limits": {"nope": 1, "voice_per_organization": 10_000}}, ["limits.nope", "limits.voice_per_organization"]),
    ],
)
def test_an_owner_cannot_raise_a_limit(client: Any, org: Org, body: dict[str, Any], fields: list[str]) -> None:
    refused = call(client, "PATCH", LIMITS, org.owner_key, body)
    assert (refused.status, refused.error_code, refused.fields) == (400, "VALIDATION_ERROR", fields)


def test_only_an_admin_sees_or_sets_the_limits(client: Any, org: Org) -> None:
    assert call(client, "GET", LIMITS, org.readonly_key).status == 403
    assert call(client, "PATCH", LIMITS, org.readonly_key, {"limits": {"sms_per_organization": 1}}).status == 403
    assert call(client, "PATCH", LIMITS, org.owner_key, json.dumps({"limits": []})).status == 400
