"""A user created through the API is invited to the console's pool once; the invitation binds the
sign-in to no organization until the person accepts it (tests/console/test_sign_in_organizations.py)."""

from __future__ import annotations

import json
from typing import Any

from chalicelib import aws
from chalicelib.queue.messages import EVENTS_QUEUE, Message
from chalicelib.settings import get_settings
from tests.conftest import Org, reconfigure


def _messages() -> list[Message]:
    sqs = aws.client("sqs")
    url = aws.queue_url(EVENTS_QUEUE)
    found = []
    for _ in range(3):
        for raw in sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", []):
            found.append(Message.from_json(raw["Body"]))
            sqs.delete_message(QueueUrl=url, ReceiptHandle=raw["ReceiptHandle"])
    return found


def _create(client: Any, org: Org, email: str) -> None:
    answer = client.http.post(
        "/api/v1/users",
        headers={"Authorization": f"Bearer {org.owner_key}", "Content-Type": "application/json"},
        body=json.dumps({"name": "New Hire", "email": email, "role": "responder"}),
    )
    assert answer.status_code == 201, answer.body


def _pool_user(email: str) -> dict[str, Any]:
    from chalicelib.settings import get_settings

    found: dict[str, Any] = aws.client("cognito-idp").admin_get_user(
        UserPoolId=get_settings().cognito_user_pool_id, Username=email
    )
    return found


def test_a_new_user_is_invited_with_a_temporary_password_once(
    client: Any, org: Org, cognito_pool: tuple[str, str]
) -> None:
    from chalicelib.directory import invitations

    _create(client, org, "hire@acme.test")
    [message] = [m for m in _messages() if m.message_type == "directory.user_created"]
    from chalicelib.identity import memberships

    invitations.invite_to_console(message, get_settings())
    invited = _pool_user("hire@acme.test")
    attributes = {a["Name"]: a["Value"] for a in invited["UserAttributes"]}
    assert "custom:org" not in attributes  # bound to no organization until an invitation is accepted
    assert attributes["email_verified"] == "true"
    assert invited["UserStatus"] == "FORCE_CHANGE_PASSWORD"
    [waiting] = memberships.memberships_of("hire@acme.test")
    assert (waiting.organization_id, waiting.accepted) == (org.organization_id, False)
    invitations.invite_to_console(message, get_settings())  # redelivered: nothing changes, nothing fails
    assert _pool_user("hire@acme.test")["UserStatus"] == "FORCE_CHANGE_PASSWORD"
    assert [m.accepted for m in memberships.memberships_of("hire@acme.test")] == [False]


def test_without_a_pool_nobody_is_invited(client: Any, org: Org) -> None:
    from chalicelib.directory import invitations

    reconfigure(COGNITO_USER_POOL_ID="", COGNITO_CLIENT_ID="")
    _create(client, org, "other@acme.test")
    [message] = [m for m in _messages() if m.message_type == "directory.user_created"]
    invitations.invite_to_console(message, get_settings())  # returns quietly: no pool to call
