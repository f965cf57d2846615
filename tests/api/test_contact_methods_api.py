"""/api/v1/users/{user_id}/contact-methods and /notification-rules through the Chalice test client:
every route, who may call it (the user themself, users:read, users:write), and its error paths."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chalicelib import aws
from chalicelib.apikey import service as apikeys
from chalicelib.directory import users
from chalicelib.queue.messages import EVENTS_QUEUE, Message
from chalicelib.settings import get_settings
from tests.api.test_directory_services import error_of
from tests.conftest import NOW, Org, make_org
from tests.kit.api import call, session_jwt

pytestmark = pytest.mark.filterwarnings("ignore::jwt.warnings.InsecureKeyLengthWarning")

METHOD_FIELDS = {"id", "type", "address", "label", "verified", "follows_account_email", "created_at", "updated_at"}


def methods(user_id: str) -> str:
    return f"/api/v1/users/{user_id}/contact-methods"


def rules_of(user_id: str) -> str:
    return f"/api/v1/users/{user_id}/notification-rules"


def person(org: Org, email: str, slack: str | None = None, role: str = "responder") -> str:
    return users.create_user(
        organization_id=org.organization_id, name=None, email=email, slack_user_id=slack, role=role, now=NOW
    ).user_id


def personal_key(org: Org, user_id: str, scopes: list[str]) -> str:
    _, key = apikeys.create_api_key(
        organization_id=org.organization_id,
        name="mine",
        kind="personal",
        scopes=scopes,
        now=NOW,
        user_id=user_id,
        settings=get_settings(),
    )
    return key


def sent_code() -> str:
    sqs = aws.client("sqs")
    url = aws.queue_url(EVENTS_QUEUE)
    raw = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=0).get("Messages", [])
    found = [Message.from_json(r["Body"]) for r in raw]
    (message,) = [m for m in found if m.message_type == "contact.send_verification"]
    return str(message.payload["code"])


def test_defaults_then_add_verify_and_rules(client: Any, org: Org) -> None:
    ann = person(org, "ann@example.com", slack="U1")
    key = personal_key(org, ann, ["incidents:write"])  # no users:* scope: managing your own needs none

    status, listed = call(client, "GET", methods(ann), key)
    assert status == 200
    items = listed["data"]["items"]
    assert [(m["id"], m["type"], m["address"], m["verified"]) for m in items] == [
        ("default-email", "email", "ann@example.com", True),
        ("default-slack", "slack", "U1", True),
    ]
    assert set(items[0]) == METHOD_FIELDS and items[0]["follows_account_email"] is True
    assert (listed["data"]["total"], listed["data"]["has_more"]) == (2, False)

    status, created = call(client, "POST", methods(ann), key, {"type": "sms", "address": "+15551234567"})
    assert status == 201
    sms = created["data"]
    assert (sms["type"], sms["label"], sms["verified"], sms["follows_account_email"]) == ("sms", "SMS", False, False)
    assert call(client, "GET", f"{methods(ann)}/{sms['id']}", key)[1]["data"] == sms

    status, sent = call(client, "POST", f"{methods(ann)}/{sms['id']}/send-verification", key)
    assert status == 202
    assert sent["data"]["contact_method_id"] == sms["id"]
    assert sent["data"]["attempts_allowed"] == 5
    code = sent_code()
    assert code not in str(sent)
    status, verified = call(client, "POST", f"{methods(ann)}/{sms['id']}/verify", key, {"code": code})
    assert (status, verified["data"]["verified"]) == (200, True)

    status, current = call(client, "GET", rules_of(ann), key)
    assert status == 200
    assert current["data"]["version"] == 1
    assert [(s["contact_method_id"], s["delay_minutes"]) for s in current["data"]["high"]] == [
        ("default-email", 0),
        ("default-slack", 0),
    ]
    body = {
        "high": [
            {"contact_method_id": "default-slack", "delay_minutes": 5},
            {"contact_method_id": sms["id"], "delay_minutes": 0},
        ],
        "low": [{"contact_method_id": "default-email", "delay_minutes": 0}],
        "version": 1,
    }
    status, put = call(client, "PUT", rules_of(ann), key, body)
    assert status == 200
    assert put["data"]["version"] == 2
    assert put["data"]["high"] == [
        {
            "contact_method_id": sms["id"],
            "delay_minutes": 0,
            "type": "sms",
            "label": "SMS",
            "address": "+15551234567",
            "verified": True,
        },
        {
            "contact_method_id": "default-slack",
            "delay_minutes": 5,
            "type": "slack",
            "label": "Slack",
            "address": "U1",
            "verified": True,
        },
    ]
    status, stale = call(client, "PUT", rules_of(ann), key, body)
    assert status == 409
    assert error_of(stale)["details"] == {"expected_version": 1, "current_version": 2}

    status, patched = call(
        client, "PATCH", f"{methods(ann)}/{sms['id']}", key, {"label": "Mobile", "address": "+15557654321"}
    )
    assert status == 200
    assert (patched["data"]["label"], patched["data"]["address"], patched["data"]["verified"]) == (
        "Mobile",
        "+15557654321",
        False,
    )
    status, deleted = call(client, "DELETE", f"{methods(ann)}/{sms['id']}", key)
    assert (status, deleted["data"]) == (200, {"id": sms["id"], "deleted": True})
    status, after = call(client, "GET", rules_of(ann), key)
    assert [s["contact_method_id"] for s in after["data"]["high"]] == ["default-slack"]
    assert after["data"]["version"] == 3
    assert call(client, "GET", f"{methods(ann)}/{sms['id']}", key)[0] == 404


def test_who_may_manage_whose_methods(client: Any, org: Org) -> None:
    ann = person(org, "ann@example.com")
    bob = person(org, "bob@example.com")
    admin = person(org, "root@example.com", role="admin")
    viewer = person(org, "view@example.com", role="viewer")
    anns_key = personal_key(org, ann, ["incidents:write"])
    new_sms = {"type": "sms", "address": "+15551234567"}

    # Ann's own key: hers yes, Bob's no (reading needs users:read, writing users:write).
    assert call(client, "GET", methods(ann), anns_key)[0] == 200
    for method, path, body in (
        ("GET", methods(bob), None),
        ("POST", methods(bob), new_sms),
        ("GET", rules_of(bob), None),
        ("PUT", rules_of(bob), {"high": [], "low": []}),
        ("POST", f"{methods(bob)}/default-email/send-verification", None),
        ("DELETE", f"{methods(bob)}/default-email", None),
    ):
        status, document = call(client, method, path, anns_key, body)
        assert status == 403, (method, path)
        assert error_of(document)["details"]["required_scope"] in ("users:read", "users:write")

    # A viewer session reads anyone's (users:read) but changes only their own.
    viewing = session_jwt(org.organization_id, viewer, "viewer")
    assert call(client, "GET", methods(bob), viewing)[0] == 200
    assert call(client, "GET", rules_of(bob), viewing)[0] == 200
    assert call(client, "POST", methods(bob), viewing, new_sms)[0] == 403
    assert call(client, "POST", methods(viewer), viewing, new_sms)[0] == 201

    # An admin session and the owner key (users:write) manage anyone's.
    assert call(client, "POST", methods(bob), session_jwt(org.organization_id, admin, "admin"), new_sms)[0] == 201
    assert call(client, "PUT", rules_of(bob), org.owner_key, {"high": [], "low": []})[0] == 200

    # A service-account key without users:* scopes manages nobody's.
    assert call(client, "GET", methods(bob), org.readonly_key)[0] == 403
    # No credential: 401.
    assert call(client, "GET", methods(bob))[0] == 401


def test_unknown_and_foreign_users_are_404(client: Any, org: Org) -> None:
    other = make_org("Other")
    stranger = person(other, "x@other.io")
    for user_id in ("no-such-user", stranger):
        for method, path in (
            ("GET", methods(user_id)),
            ("GET", rules_of(user_id)),
            ("GET", f"{methods(user_id)}/default-email"),
        ):
            status, document = call(client, method, path, org.owner_key)
            assert (status, error_of(document)["code"]) == (404, "NOT_FOUND")
    ann = person(org, "ann@example.com")
    for method, suffix, body in (
        ("GET", "/nope", None),
        ("PATCH", "/nope", {"label": "x"}),
        ("DELETE", "/nope", None),
        ("POST", "/nope/send-verification", None),
        ("POST", "/nope/verify", {"code": "123456"}),
    ):
        assert call(client, method, methods(ann) + suffix, org.owner_key, body)[0] == 404, (method, suffix)


def test_bad_input_is_400_and_conflicts_are_409(client: Any, org: Org) -> None:
    ann = person(org, "ann@example.com")
    key = org.owner_key
    for body in (
        {"type": "sms", "address": "555-1234"},
        {"type": "voice", "address": "+1 555 123 4567"},
        {"type": "email", "address": "nope"},
        {"type": "pager", "address": "+15551234567"},
        {"type": "sms"},
        {"type": "sms", "address": "+15551234567", "extra": 1},
        {"type": "slack", "address": "U1", "label": "two\nlines"},
    ):
        status, document = call(client, "POST", methods(ann), key, body)
        assert (status, error_of(document)["code"]) == (400, "VALIDATION_ERROR"), body
    assert call(client, "POST", methods(ann), key, {"type": "sms", "address": "+15551234567"})[0] == 201
    status, document = call(client, "POST", methods(ann), key, {"type": "sms", "address": "+15551234567"})
    assert (status, error_of(document)["code"]) == (409, "CONFLICT")
    status, document = call(client, "PATCH", f"{methods(ann)}/default-email", key, {"address": "x@example.com"})
    assert status == 400
    assert call(client, "PATCH", f"{methods(ann)}/default-email", key, {})[0] == 400
    assert call(client, "PATCH", f"{methods(ann)}/default-email", key, {"address": None})[0] == 400

    for body in (
        {"high": [{"contact_method_id": "ghost", "delay_minutes": 0}], "low": []},
        {"high": [{"contact_method_id": "default-email", "delay_minutes": 1441}], "low": []},
        {"high": [{"contact_method_id": "default-email", "delay_minutes": -1}], "low": []},
        {"high": [{"contact_method_id": "default-email", "delay_minutes": n} for n in range(11)], "low": []},
        {"high": [], "low": [], "version": None},
        {"high": [], "low": [], "version": 0},
        {"high": []},
    ):
        status, document = call(client, "PUT", rules_of(ann), key, body)
        assert (status, error_of(document)["code"]) == (400, "VALIDATION_ERROR"), body
    status, document = call(
        client, "PUT", rules_of(ann), key, {"high": [{"contact_method_id": "ghost", "delay_minutes": 0}], "low": []}
    )
    assert error_of(document)["details"]["fields"] == [
        {"field": "high.0.contact_method_id", "message": "not a contact method of this user"}
    ]


def test_verification_errors(client: Any, org: Org) -> None:
    ann = person(org, "ann@example.com")
    key = personal_key(org, ann, ["incidents:write"])
    sms = call(client, "POST", methods(ann), key, {"type": "sms", "address": "+15551234567"})[1]["data"]
    item = f"{methods(ann)}/{sms['id']}"

    status, document = call(client, "POST", f"{item}/verify", key, {"code": "123456"})
    assert (status, error_of(document)["code"], error_of(document)["details"]) == (
        409,
        "NO_VERIFICATION_CODE",
        {"reason": "not_sent"},
    )
    assert call(client, "POST", f"{item}/send-verification", key)[0] == 202
    code = sent_code()
    too_soon = client.http.request("POST", f"{item}/send-verification", headers={"Authorization": f"Bearer {key}"})
    assert (too_soon.status_code, json.loads(too_soon.body)["error"]["code"]) == (429, "RATE_LIMITED")
    assert 1 <= int(too_soon.headers["Retry-After"]) <= 30

    wrong = f"{(int(code) + 1) % 10**6:06d}"
    status, document = call(client, "POST", f"{item}/verify", key, {"code": wrong})
    assert (status, error_of(document)["code"], error_of(document)["details"]) == (
        400,
        "INVALID_VERIFICATION_CODE",
        {"attempts_left": 4},
    )
    for bad in ("12345", "1234567", "abcdef", 123456):
        assert call(client, "POST", f"{item}/verify", key, {"code": bad})[0] == 400
    assert call(client, "POST", f"{item}/verify", key, {})[0] == 400
    assert call(client, "POST", f"{item}/verify", key, {"code": code})[1]["data"]["verified"] is True
    status, document = call(client, "POST", f"{item}/verify", key, {"code": code})
    assert (status, error_of(document)["code"]) == (409, "CONFLICT")
    for method_id in ("default-email", sms["id"]):
        status, document = call(client, "POST", f"{methods(ann)}/{method_id}/send-verification", key)
        assert (status, error_of(document)["code"]) == (409, "CONFLICT")


def test_the_document_describes_the_self_rule(client: Any) -> None:
    document = json.loads(client.http.get("/api/v1/openapi.json").body)
    put = document["paths"]["/api/v1/users/{user_id}/notification-rules"]["put"]
    assert put["x-required-scope"] == "users:write"
    assert put["x-scope-not-needed-for-self"] == "user_id"
    assert "unless the credential is the user `user_id` names" in put["description"]
    send = document["paths"]["/api/v1/users/{user_id}/contact-methods/{contact_method_id}/send-verification"]["post"]
    assert {"202", "404", "409", "429"} <= set(send["responses"])


def test_a_read_only_personal_key_reads_its_owners_methods_and_changes_nothing(client: Any, org: Org) -> None:
    ann = person(org, "ann@example.com")
    for scopes in (["incidents:read"], []):
        key = personal_key(org, ann, scopes)
        assert call(client, "GET", methods(ann), key)[0] == 200
        assert call(client, "GET", rules_of(ann), key)[0] == 200
        for method, path, body in (
            ("POST", methods(ann), {"type": "sms", "address": "+15551234567"}),
            ("PUT", rules_of(ann), {"high": [], "low": []}),
            ("DELETE", f"{methods(ann)}/default-email", None),
        ):
            status, document = call(client, method, path, key, body)
            assert (status, error_of(document)["code"]) == (403, "FORBIDDEN"), (method, path)
    assert call(client, "GET", f"{methods(ann)}/default-email", org.owner_key)[0] == 200  # nothing was deleted
