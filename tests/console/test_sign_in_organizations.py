"""Console identities and organizations (issue 27, finding 6): an organization that creates a user
with another organization's employee's email first gains nothing, the employee's own organization
still onboards them, and a person in two organizations chooses at sign-in. Nothing of one
organization is told to the other."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from chalicelib import aws, clock
from chalicelib.identity import memberships
from chalicelib.queue.messages import EVENTS_QUEUE, Message
from chalicelib.settings import get_settings
from tests.conftest import NOW, Org, make_org
from tests.console.conftest import PASSWORD, Answer, ConsoleClient

TEMPORARY = "Temporary-password-1"
EMAIL = "dana@acme.test"


def invited_by(client: Any, org: Org, email: str = EMAIL) -> None:
    """The organization creates the user through the API, and the invitation consumer runs."""
    import json

    from chalicelib.directory import invitations

    answer = client.http.post(
        "/api/v1/users",
        headers={"Authorization": f"Bearer {org.owner_key}", "Content-Type": "application/json"},
        body=json.dumps({"name": "Dana", "email": email, "role": "responder"}),
    )
    assert answer.status_code == 201, answer.body
    sqs, url = aws.client("sqs"), aws.queue_url(EVENTS_QUEUE)
    for raw in sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", []):
        message = Message.from_json(raw["Body"])
        if message.message_type == "directory.user_created":
            invitations.invite_to_console(message, get_settings())
            invitations.invite_to_console(message, get_settings())  # a redelivery changes nothing and sends nothing
        sqs.delete_message(QueueUrl=url, ReceiptHandle=raw["ReceiptHandle"])


def emails_to(address: str) -> list[Any]:
    from moto.ses.models import ses_backends

    sent = ses_backends["123456789012"]["us-east-1"].sent_messages
    return [m for m in sent if address in (m.destinations or {}).get("ToAddresses", [])]


def first_sign_in(browser: ConsoleClient, email: str = EMAIL) -> Answer:
    """The temporary password, then the person's own: what the choice of organization follows."""
    challenged = browser.sign_in(email, TEMPORARY)
    assert challenged.dom().find("h1").text() == "Choose a new password", challenged.text()[:300]
    hidden = {
        e.attrs["name"]: e.attrs.get("value") or ""
        for e in challenged.dom().find_all("input")
        if e.attrs.get("type") == "hidden" and e.attrs["name"] != "csrf_token"
    }
    return browser.post("/app/new-password", {**hidden, "new_password": PASSWORD})


def choices(answer: Answer) -> dict[str, dict[str, str]]:
    """Each button of the choice page by its label and organization: its form's hidden fields."""
    found = {}
    for form in answer.dom().find_all("form"):
        fields = {e.attrs["name"]: e.attrs.get("value") or "" for e in form.find_all("input")}
        label = form.find("button").text()
        if "organization_id" in fields:
            found[f"{label}|{fields['organization_id']}"] = fields
    return found


def press(browser: ConsoleClient, answer: Answer, label: str, org: Org) -> Answer:
    fields = dict(choices(answer)[f"{label}|{org.organization_id}"])
    fields.pop("csrf_token")
    return browser.post("/app/sign-in/organization", fields)


def signed_in_organization(browser: ConsoleClient) -> str:
    from chalicelib.console import sessions

    session = sessions.resume(browser.cookies["tocsin_session"], now=clock.now(), settings=get_settings())
    assert session is not None
    return session.organization_id


@pytest.fixture
def known_password(monkeypatch: pytest.MonkeyPatch) -> None:
    from chalicelib.directory import invitations

    monkeypatch.setattr(invitations, "temporary_password", lambda: TEMPORARY)


@pytest.fixture
def squatter(aws_env: None) -> Org:
    return make_org("Squatter Inc")


def test_an_organization_that_invites_first_gains_nothing(
    client: Any, org: Org, squatter: Org, cognito_pool: Any, known_password: None
) -> None:
    invited_by(client, squatter)  # B first: the sign-in is created by B's invitation ...
    invited_by(client, org)  # ... and A's invitation still counts
    assert [m.organization_id for m in memberships.memberships_of(EMAIL) if not m.accepted] == sorted(
        [org.organization_id, squatter.organization_id]
    )
    # The sign-in existed when A invited: one email names A (the redelivery sent no second one).
    [told] = emails_to(EMAIL)
    assert told.subject == "Acme added you to Tocsin" and "Squatter" not in told.body

    browser = ConsoleClient(client.http)
    choice = first_sign_in(browser)
    assert choice.status == 200 and choice.dom().find("h1").text() == "Choose an organization"
    assert "tocsin_session" not in browser.cookies  # nothing opens before a choice
    assert set(choices(choice)) == {
        f"Accept and open|{org.organization_id}",
        f"Decline|{org.organization_id}",
        f"Accept and open|{squatter.organization_id}",
        f"Decline|{squatter.organization_id}",
    }
    declined = press(browser, choice, "Decline", squatter)
    assert declined.status == 200 and set(choices(declined)) == {
        f"Accept and open|{org.organization_id}",
        f"Decline|{org.organization_id}",
    }
    opened = press(browser, declined, "Accept and open", org)
    assert opened.status == 303 and signed_in_organization(browser) == org.organization_id
    [accepted] = memberships.memberships_of(EMAIL)
    assert (accepted.organization_id, accepted.accepted) == (org.organization_id, True)

    # From now on the one accepted organization opens at once, as sign-in always did.
    again = ConsoleClient(client.http)
    assert again.sign_in(EMAIL).status == 303 and signed_in_organization(again) == org.organization_id


def test_a_person_in_two_organizations_chooses_at_sign_in(
    client: Any, org: Org, squatter: Org, cognito_pool: Any, known_password: None
) -> None:
    invited_by(client, org)
    invited_by(client, squatter)
    browser = ConsoleClient(client.http)
    press(browser, first_sign_in(browser), "Accept and open", org)
    assert signed_in_organization(browser) == org.organization_id

    second = ConsoleClient(client.http)
    choice = second.sign_in(EMAIL)  # one accepted, one invitation waiting: the person chooses
    assert set(choices(choice)) == {
        f"Open Acme|{org.organization_id}",
        f"Accept and open|{squatter.organization_id}",
        f"Decline|{squatter.organization_id}",
    }
    assert press(second, choice, "Accept and open", squatter).status == 303
    assert signed_in_organization(second) == squatter.organization_id

    third = ConsoleClient(client.http)
    both = third.sign_in(EMAIL)
    assert set(choices(both)) == {f"Open Acme|{org.organization_id}", f"Open Squatter Inc|{squatter.organization_id}"}
    assert press(third, both, "Open Acme", org).status == 303
    assert signed_in_organization(third) == org.organization_id
    # The identity's ID tokens name the organization last chosen (the API reads custom:org).
    attributes = aws.client("cognito-idp").admin_get_user(UserPoolId=cognito_pool[0], Username=EMAIL)
    assert {"Name": "custom:org", "Value": org.organization_id} in attributes["UserAttributes"]


def test_a_choice_needs_its_ticket_from_this_browser_and_in_time(
    client: Any, org: Org, squatter: Org, cognito_pool: Any, known_password: None
) -> None:
    clock.freeze(NOW)  # the aws_env fixture unfreezes
    invited_by(client, org)
    browser = ConsoleClient(client.http)
    choice = first_sign_in(browser)
    fields = dict(choices(choice)[f"Accept and open|{org.organization_id}"])
    fields.pop("csrf_token")

    def chosen(**changed: str) -> Answer:
        return browser.post("/app/sign-in/organization", {**fields, **changed})

    altered = fields["ticket"][:-1] + ("1" if fields["ticket"].endswith("0") else "0")
    assert chosen(ticket=altered).status == 401
    assert chosen(email="someone@acme.test").status == 401  # the ticket is for Dana alone
    assert chosen(legacy=squatter.organization_id).status == 401  # nor can it claim an organization
    assert chosen(organization_id=squatter.organization_id).status == 403  # not one of Dana's
    other = ConsoleClient(client.http)
    other.get("/app/sign-in")  # another browser: its own form token, so Dana's ticket is not its
    assert other.post("/app/sign-in/organization", fields).status in (401, 403)
    with clock.frozen(NOW + timedelta(minutes=10, seconds=1)):
        assert chosen().status == 401
    assert "tocsin_session" not in browser.cookies and memberships.memberships_of(EMAIL)[0].accepted is False
    assert chosen().status == 303 and signed_in_organization(browser) == org.organization_id


def test_a_sign_in_known_to_no_organization_any_more_is_refused(
    client: Any, org: Org, cognito_pool: Any, known_password: None, signed_in: Callable[[str], ConsoleClient]
) -> None:
    from chalicelib.directory.users import find_user_by_email, update_user

    invited_by(client, org)
    person = find_user_by_email(organization_id=org.organization_id, email=EMAIL)
    assert person is not None
    update_user(organization_id=org.organization_id, user_id=person.user_id, is_active=False, now=NOW)
    browser = ConsoleClient(client.http)
    refused = first_sign_in(browser)
    assert refused.status == 403 and "no active Tocsin user has this email" in refused.text()
