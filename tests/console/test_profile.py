"""My profile: every role manages its own contact methods and notification rules, and only its own."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from chalicelib import aws, clock
from chalicelib.contact import service
from chalicelib.queue.messages import EVENTS_QUEUE, Message
from tests.conftest import Org
from tests.console.conftest import CONFIRMED, ROLES, ConsoleClient, Person, action_forms

PHONE = "+15551234567"


def sent_code() -> str:
    sqs = aws.client("sqs")
    raw = sqs.receive_message(QueueUrl=aws.queue_url(EVENTS_QUEUE), MaxNumberOfMessages=10, WaitTimeSeconds=0)
    found = [Message.from_json(r["Body"]) for r in raw.get("Messages", [])]
    (message,) = [m for m in found if m.message_type == "contact.send_verification"]
    return str(message.payload["code"])


def methods_of(org: Org, person: Person) -> list[Any]:
    return service.list_methods(organization_id=org.organization_id, user_id=person.user_id, now=clock.now())


def api_rules(client: Any, person: Person, org: Org) -> dict[str, Any]:
    answer = client.http.get(
        f"/api/v1/users/{person.user_id}/notification-rules", headers={"Authorization": f"Bearer {org.owner_key}"}
    )
    assert answer.status_code == 200
    return dict(json.loads(answer.body)["data"])


@pytest.mark.parametrize("role", ROLES)
def test_every_role_sees_and_may_change_its_own_profile(
    role: str, signed_in: Callable[[str], ConsoleClient], people: dict[str, Person]
) -> None:
    browser = signed_in(role)
    page = browser.get("/app/profile")
    assert page.status == 200
    dom = page.dom()
    assert len(dom.find_all("h1")) == 1
    assert people[role].email in page.text()  # the default email method
    forms = action_forms(page)
    assert "/app/profile/contact-methods" in forms
    assert "/app/profile/notification-rules/add" in forms
    assert browser.post("/app/profile/contact-methods", {"type": "sms", "address": PHONE}).status == 303


def test_add_send_code_verify_and_remove_a_number(
    signed_in: Callable[[str], ConsoleClient], people: dict[str, Person], org: Org, client: Any
) -> None:
    viewer = people["viewer"]
    browser = signed_in("viewer")
    browser.get("/app/profile")
    added = browser.post("/app/profile/contact-methods", {"type": "sms", "address": PHONE, "label": "Mobile"})
    assert added.status == 303 and added.location == "/app/profile?done=profile_method_added_unverified"
    page = browser.follow(added)
    assert "Send a code to verify the number" in page.text()
    (sms,) = [m for m in methods_of(org, viewer) if m.type == "sms"]
    assert (sms.address, sms.label, sms.verified) == (PHONE, "Mobile", False)
    base = f"/app/profile/contact-methods/{sms.contact_method_id}"
    assert base + "/send-code" in action_forms(page)

    sent = browser.post(base + "/send-code")
    assert sent.status == 303 and sent.location.endswith("done=profile_code_sent")
    code = sent_code()
    again = browser.post(base + "/send-code")
    assert again.status == 429 and "retry-after" in again.headers
    assert "My profile" in again.text()

    wrong = browser.post(base + "/verify", {"code": f"{(int(code) + 1) % 10**6:06d}"})
    assert wrong.status == 400
    malformed = browser.post(base + "/verify", {"code": "12ab"})
    assert malformed.status == 400 and "code" in malformed.text()
    verified = browser.post(base + "/verify", {"code": code})
    assert verified.status == 303 and verified.location.endswith("done=profile_method_verified")
    listed = client.http.get(
        f"/api/v1/users/{viewer.user_id}/contact-methods", headers={"Authorization": f"Bearer {org.owner_key}"}
    )
    (through_api,) = [m for m in json.loads(listed.body)["data"]["items"] if m["type"] == "sms"]
    assert through_api["verified"] is True

    browser.get("/app/profile")
    removed = browser.post(base + "/remove", CONFIRMED)
    assert removed.status == 303 and removed.location.endswith("done=profile_method_removed")
    assert [m.type for m in methods_of(org, viewer)] == ["email"]
    gone = browser.post(base + "/remove", CONFIRMED)
    assert gone.status == 404 and "Contact method not found." in gone.text()


def test_bad_contact_method_input_is_shown_on_the_page(
    signed_in: Callable[[str], ConsoleClient], people: dict[str, Person], org: Org
) -> None:
    browser = signed_in("responder")
    browser.get("/app/profile")
    bad = browser.post("/app/profile/contact-methods", {"type": "sms", "address": "555-1234", "label": "Desk"})
    assert bad.status == 400
    dom = bad.dom()
    assert dom.find("input", name="address").attrs.get("aria-invalid") == "true"
    assert dom.find("input", name="address").attrs.get("value") == "555-1234"  # what was typed is kept
    unknown = browser.post("/app/profile/contact-methods", {"type": "pigeon", "address": "roof"})
    assert unknown.status == 400
    email = people["responder"].email
    duplicate = browser.post("/app/profile/contact-methods", {"type": "email", "address": email})
    assert duplicate.status == 409
    assert [m.type for m in methods_of(org, people["responder"])] == ["email"]


def test_notification_rule_steps_added_and_removed(
    signed_in: Callable[[str], ConsoleClient], people: dict[str, Person], org: Org, client: Any
) -> None:
    person = people["viewer"]
    browser = signed_in("viewer")
    browser.get("/app/profile")
    (email,) = methods_of(org, person)
    version = api_rules(client, person, org)["version"]
    added = browser.post(
        "/app/profile/notification-rules/add",
        {"urgency": "low", "contact_method_id": email.contact_method_id, "delay_minutes": "15", "version": version},
    )
    assert added.status == 303 and added.location.endswith("done=profile_rules_saved")
    rules = api_rules(client, person, org)
    assert [(s["contact_method_id"], s["delay_minutes"]) for s in rules["low"]] == [
        (email.contact_method_id, 0),
        (email.contact_method_id, 15),
    ]
    high_before = rules["high"]

    page = browser.get("/app/profile")
    assert "After 15 min" in page.text()
    stale = browser.post(
        "/app/profile/notification-rules/add",
        {"urgency": "low", "contact_method_id": email.contact_method_id, "delay_minutes": "30", "version": version},
    )
    assert stale.status == 409 and "changed since version" in stale.text()

    current = rules["version"]
    removed = browser.post(
        "/app/profile/notification-rules/remove",
        {"urgency": "low", "contact_method_id": email.contact_method_id, "delay_minutes": "0", "version": current},
    )
    assert removed.status == 303
    after = api_rules(client, person, org)
    assert [s["delay_minutes"] for s in after["low"]] == [15]
    assert after["high"] == high_before


@pytest.mark.parametrize(
    ("fields", "status"),
    [
        ({"urgency": "urgent", "delay_minutes": "5"}, 400),
        ({"urgency": "high", "delay_minutes": "1441"}, 400),
        ({"urgency": "high", "delay_minutes": "-1"}, 400),
        ({"urgency": "high", "delay_minutes": "soon"}, 400),
        ({"urgency": "high", "delay_minutes": "0"}, 400),  # the same (method, delay) twice
        ({"urgency": "high", "delay_minutes": "5", "contact_method_id": "not-mine"}, 400),
        ({"urgency": "high", "delay_minutes": "5", "version": "0"}, 400),
    ],
)
def test_bad_rule_steps_are_refused_with_the_rules_unchanged(
    fields: dict[str, str],
    status: int,
    signed_in: Callable[[str], ConsoleClient],
    people: dict[str, Person],
    org: Org,
    client: Any,
) -> None:
    person = people["responder"]
    browser = signed_in("responder")
    browser.get("/app/profile")
    (email,) = methods_of(org, person)
    before = api_rules(client, person, org)
    form = {"contact_method_id": email.contact_method_id, "version": str(before["version"]), **fields}
    answer = browser.post("/app/profile/notification-rules/add", form)
    assert answer.status == status, answer.text()
    assert answer.dom().find("h1").text() == "My profile"
    assert api_rules(client, person, org) == before


def test_removing_a_step_that_is_gone_says_so(
    signed_in: Callable[[str], ConsoleClient], people: dict[str, Person], org: Org, client: Any
) -> None:
    browser = signed_in("admin")
    browser.get("/app/profile")
    person = people["admin"]
    rules = api_rules(client, person, org)
    answer = browser.post(
        "/app/profile/notification-rules/remove",
        {"urgency": "high", "contact_method_id": "nope", "delay_minutes": "0", "version": rules["version"]},
    )
    assert answer.status == 400 and "no longer in your rules" in answer.text()


def test_a_person_cannot_reach_anothers_method(
    signed_in: Callable[[str], ConsoleClient], people: dict[str, Person], org: Org
) -> None:
    owner_browser = signed_in("owner")
    owner_browser.get("/app/profile")
    assert owner_browser.post("/app/profile/contact-methods", {"type": "sms", "address": PHONE}).status == 303
    (owners_sms,) = [m for m in methods_of(org, people["owner"]) if m.type == "sms"]
    viewer = signed_in("viewer")
    viewer.get("/app/profile")
    answer = viewer.post(f"/app/profile/contact-methods/{owners_sms.contact_method_id}/remove", CONFIRMED)
    assert answer.status == 404  # looked up among the viewer's own methods only
    assert any(m.type == "sms" for m in methods_of(org, people["owner"]))


@pytest.mark.parametrize("csrf", ["-", "bad"])
def test_profile_forms_refuse_a_missing_or_wrong_csrf_token(
    csrf: str, signed_in: Callable[[str], ConsoleClient], people: dict[str, Person], org: Org
) -> None:
    browser = signed_in("viewer")
    browser.get("/app/profile")
    answer = browser.post("/app/profile/contact-methods", {"type": "sms", "address": PHONE}, csrf=csrf)
    assert answer.status == 403
    assert [m.type for m in methods_of(org, people["viewer"])] == ["email"]


def test_a_teams_webhook_is_added_and_shown_by_its_hint_only(
    signed_in: Callable[[str], ConsoleClient], people: dict[str, Person], org: Org, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chalicelib.delivery import targets

    monkeypatch.setattr(targets, "default_resolve", lambda host, port: ["93.184.216.34"])
    url = "https://acme.webhook.office.com/webhookb2/abc/IncomingWebhook/def/secret-tail"
    browser = signed_in("responder")
    browser.get("/app/profile")
    added = browser.post("/app/profile/contact-methods", {"type": "teams", "address": url})
    assert added.status == 303 and added.location == "/app/profile?done=profile_method_added_unverified"
    page = browser.follow(added)
    assert "Microsoft Teams" in page.text() and "https://acme.webhook.office.com/\u2026tail" in page.text()
    assert "webhookb2" not in page.text()
    (teams,) = [m for m in methods_of(org, people["responder"]) if m.type == "teams"]
    assert f"/app/profile/contact-methods/{teams.contact_method_id}/send-code" in action_forms(page)
