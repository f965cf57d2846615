"""One incident's page: every field and the timeline for every role, and each action (the API's
operation, scope and rules) checked through the API; refused input re-renders the page."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from chalicelib.settings import get_settings
from tests.conftest import NOW, Org, reconfigure
from tests.console.conftest import ROLES, ConsoleClient, Person, action_forms
from tests.console.incident_data import World, incident_via_api, seed
from tests.service.test_notification_slack import FakeSlack

Browser = Callable[[str], ConsoleClient]


@pytest.fixture
def world(org: Org, people: dict[str, Person]) -> World:
    return seed(org, people)


@pytest.fixture
def fake_slack(aws_env: None) -> Iterator[FakeSlack]:
    fake = FakeSlack(behaviours={"U_FAIL": ("error", "channel_not_found")}).start()
    reconfigure(SLACK_API_BASE_URL=fake.base_url, SLACK_BOT_TOKEN="xoxb-test", SLACK_TIMEOUT_SECONDS="1")
    yield fake
    fake.stop()


def at(world: World) -> str:
    return f"/app/incidents/{world.checkout_down}"


def timeline_titles(answer: Any) -> list[str]:
    return [p.text() for p in answer.dom().find("ol", cls="timeline").find_all("p", cls="what")]


def buttons(answer: Any) -> list[str]:
    return [b.text() for b in answer.dom().find("main").find_all("button")]


@pytest.mark.parametrize("role", ROLES)
def test_every_role_sees_every_field_and_the_timeline_newest_last(signed_in: Browser, world: World, role: str) -> None:
    answer = signed_in(role).get(at(world))
    assert answer.status == 200
    dom = answer.dom()
    assert dom.find("h1").text() == f"{world.checkout_down} Checkout down"
    text = answer.text()
    for fact in ("new", "SEV1", "high urgency", "Payments", "Checkout", "Seen by a probe.", "Acknowledge by"):
        assert fact in text, fact
    facts = {dt.text(): dd.text() for dt, dd in zip(dom.find_all("dt"), dom.find_all("dd"), strict=True)}
    assert facts["Assignee"] == "Nobody" and facts["Escalation"] == "None"
    assert facts["Created"] == "22 Nov 2026, 10:00 UTC by seed"
    assert timeline_titles(answer) == ["Incident created: Checkout down"]
    if role == "viewer":
        assert action_forms(answer) == []
        assert buttons(answer) == []
        assert facts["Postmortem"] == "None yet"
    else:
        base = at(world)
        assert sorted(set(action_forms(answer))) == sorted(
            base + suffix
            for suffix in ("/acknowledge", "/status", "/escalate", "/comment", "/assign", "/page", "/edit")
        )
        assert facts["Postmortem"] == "Start the postmortem"
        assert buttons(answer) == [
            *("Acknowledge", "Resolve", "Escalate"),
            *("Move to investigating", "Move to identified", "Move to monitoring"),
            "Change status",  # any of the moves, with a note for the timeline
            *("Add comment", "Reassign", "Send page", "Save changes"),
        ]


def test_an_unknown_or_malformed_incident_is_404(signed_in: Browser, world: World) -> None:
    browser = signed_in("viewer")
    assert browser.get("/app/incidents/INC-2026-9999").status == 404
    assert browser.get("/app/incidents/nonsense").status == 404
    assert browser.get(f"/app/incidents/{world.checkout_down.lower()}").status == 200


def test_acknowledge_then_resolve_as_the_api_sees_it(
    signed_in: Browser, world: World, client: Any, org: Org, people: dict[str, Person]
) -> None:
    browser = signed_in("responder")
    browser.get(at(world))
    answer = browser.post(at(world) + "/acknowledge")
    assert answer.status == 303 and answer.location == at(world) + "?done=acknowledged"
    page = browser.follow(answer)
    assert "Acknowledged. You are assigned" in page.text()
    assert "Acknowledge" not in buttons(page)  # once is enough
    seen = incident_via_api(client, org, world.checkout_down)
    assert seen["status"] == "investigating" and seen["acknowledged_at"] is not None
    assert seen["assigned_to"]["email"] == people["responder"].email
    answer = browser.post(at(world) + "/status", {"status": "resolved"})
    assert answer.location == at(world) + "?done=status_changed"
    page = browser.follow(answer)
    assert buttons(page)[:2] == ["Close", "Reopen as investigating"]  # a resolved incident: close or reopen
    seen = incident_via_api(client, org, world.checkout_down)
    assert seen["status"] == "resolved" and seen["resolved_by"]["email"] == people["responder"].email
    titles = timeline_titles(page)
    assert (
        titles[0] == "Incident created: Checkout down" and titles[-1] == "Status changed from investigating to resolved"
    )
    assert [e["title"] for e in seen["timeline"]] == list(reversed(titles))  # the API's order, newest first


def test_a_move_the_workflow_does_not_allow_or_does_not_know_is_refused(
    signed_in: Browser, world: World, client: Any, org: Org
) -> None:
    browser = signed_in("admin")
    browser.get(at(world))
    refused = browser.post(at(world) + "/status", {"status": "closed"})
    assert refused.status == 400  # the API's TRANSITION_NOT_ALLOWED
    assert "An incident cannot move from 'new' to 'closed'." in refused.text()
    assert refused.dom().find("h1").text().endswith("Checkout down")  # the page itself, to try again
    unknown = browser.post(at(world) + "/status", {"status": "sleeping"})
    assert unknown.status == 400 and "'sleeping' is not a status" in unknown.text()
    assert incident_via_api(client, org, world.checkout_down)["status"] == "new"


def test_escalate_notifies_the_next_level_or_says_there_is_none(
    signed_in: Browser, world: World, client: Any, org: Org, people: dict[str, Person]
) -> None:
    from chalicelib.catalog import service as services
    from chalicelib.escalation import service as policies
    from chalicelib.escalation.steps import Level, Target
    from chalicelib.paging import escalation_runs

    browser = signed_in("responder")
    browser.get(at(world))
    nothing = browser.follow(browser.post(at(world) + "/escalate"))
    assert "Nobody was notified" in nothing.text()
    policy = policies.create_policy(
        organization_id=org.organization_id,
        name="Payments",
        levels=[
            Level((Target("user", people["responder"].user_id),), 5),
            Level((Target("user", people["admin"].user_id),), 5),
        ],
        now=NOW,
    )
    services.update_service(
        organization_id=org.organization_id,
        service_ref=world.checkout_key,
        now=NOW,
        escalation_policy_id=policy.policy.policy_id,
    )
    escalation_runs.begin(
        organization_id=org.organization_id, incident_number=world.checkout_down, now=NOW, settings=get_settings()
    )
    page = browser.get(at(world))
    assert "Payments: level 1 of 2" in page.text()
    answer = browser.post(at(world) + "/escalate")
    assert answer.location == at(world) + "?done=escalated"
    page = browser.follow(answer)
    assert "Payments: level 2 of 2" in page.text()
    seen = incident_via_api(client, org, world.checkout_down)
    assert seen["timeline"][0]["event_type"] in ("escalated", "paged", "notification_failed")
    assert any(e["title"] == "Escalated by hand to level 2" for e in seen["timeline"])


def test_reassign_to_someone_then_nobody(
    signed_in: Browser, world: World, client: Any, org: Org, people: dict[str, Person]
) -> None:
    browser = signed_in("owner")
    page = browser.get(at(world))
    choices = [o.attrs["value"] for o in page.dom().find("select", name="assigned_to").find_all("option")]
    assert choices == ["", *sorted(p.email for p in people.values())]  # by name: Admin, Owner, Responder, Viewer
    answer = browser.post(at(world) + "/assign", {"assigned_to": people["admin"].email})
    assert answer.location == at(world) + "?done=assigned"
    assert incident_via_api(client, org, world.checkout_down)["assigned_to"]["email"] == people["admin"].email
    browser.follow(answer)
    browser.post(at(world) + "/assign", {"assigned_to": ""})
    assert incident_via_api(client, org, world.checkout_down)["assigned_to"] is None
    refused = browser.post(at(world) + "/assign", {"assigned_to": "nobody@acme.test"})
    assert refused.status == 400
    assert "nobody@acme.test is not an active user of this organization" in refused.text()
    select = refused.dom().find("select", name="assigned_to")
    assert select.attrs.get("aria-invalid") == "true"


def test_comment_and_an_empty_comment(signed_in: Browser, world: World, client: Any, org: Org) -> None:
    browser = signed_in("responder")
    browser.get(at(world))
    answer = browser.post(at(world) + "/comment", {"comment": "  Rolling back the deploy.\nETA 5 min  "})
    assert answer.location == at(world) + "?done=commented"
    page = browser.follow(answer)
    assert "Rolling back the deploy.\nETA 5 min" in page.body
    assert incident_via_api(client, org, world.checkout_down)["timeline"][0]["event_type"] == "comment"
    refused = browser.post(at(world) + "/comment", {"comment": "   "})
    assert refused.status == 400
    assert refused.dom().find("textarea", name="comment").attrs.get("aria-invalid") == "true"
    assert len(incident_via_api(client, org, world.checkout_down)["timeline"]) == 2


def test_edit_title_description_and_severity(signed_in: Browser, world: World, client: Any, org: Org) -> None:
    browser = signed_in("admin")
    browser.get(at(world))
    fields = {"title": "Checkout down in EU", "severity": "SEV2", "description": "Only EU."}
    answer = browser.post(at(world) + "/edit", fields)
    assert answer.location == at(world) + "?done=updated"
    seen = incident_via_api(client, org, world.checkout_down)
    assert (seen["title"], seen["severity"], seen["description"], seen["urgency"]) == (
        "Checkout down in EU",
        "SEV2",
        "Only EU.",
        "low",
    )
    browser.follow(answer)
    cleared = browser.post(at(world) + "/edit", {**fields, "description": ""})
    assert cleared.status == 303 and incident_via_api(client, org, world.checkout_down)["description"] is None
    browser.follow(cleared)
    refused = browser.post(at(world) + "/edit", {**fields, "title": "", "description": "kept as typed"})
    assert refused.status == 400
    dom = refused.dom()
    assert dom.find("input", name="title").attrs.get("aria-invalid") == "true"
    assert dom.find("textarea", name="description").text() == "kept as typed"
    bad_severity = browser.post(at(world) + "/edit", {**fields, "severity": "SEV9"})
    assert bad_severity.status == 400 and "Severity must be one of" in bad_severity.text()
    assert incident_via_api(client, org, world.checkout_down)["title"] == "Checkout down in EU"


def test_page_a_person_by_slack_and_the_failures(
    signed_in: Browser, world: World, client: Any, org: Org, fake_slack: FakeSlack
) -> None:
    from chalicelib.directory import users

    users.create_user(
        organization_id=org.organization_id, name="Ana Lima", email="ana@acme.test", slack_user_id="U0ANA", now=NOW
    )
    users.create_user(
        organization_id=org.organization_id, name="Fay Lure", email="fay@acme.test", slack_user_id="U_FAIL", now=NOW
    )
    browser = signed_in("responder")
    browser.get(at(world))
    answer = browser.post(
        at(world) + "/page", [("email", "ana@acme.test"), ("channels", "slack"), ("message", "Join the bridge")]
    )
    assert answer.location == at(world) + "?done=paged"
    assert [r.body["channel"] for r in fake_slack.requests] == ["U0ANA"]
    assert incident_via_api(client, org, world.checkout_down)["timeline"][0]["title"] == "Paged Ana Lima by slack"
    page = browser.follow(answer)
    missing = browser.post(at(world) + "/page", [("email", "viewer@acme.test"), ("channels", "slack")])
    assert missing.status == 409 and "lacks the contact details for slack" in missing.text()
    failed = browser.post(at(world) + "/page", [("email", "fay@acme.test"), ("channels", "slack")])
    assert failed.status == 502 and "the provider failed" in failed.text()
    chosen = [
        o.attrs["value"] for o in failed.dom().find("select", name="email").find_all("option") if "selected" in o.attrs
    ]
    assert chosen == ["fay@acme.test"]
    no_channel = browser.post(at(world) + "/page", [("email", "ana@acme.test")])
    assert no_channel.status == 400
    assert page.status == 200


ACTIONS = (
    ("/acknowledge", {}),
    ("/status", {"status": "resolved"}),
    ("/escalate", {}),
    ("/assign", {"assigned_to": "viewer@acme.test"}),
    ("/comment", {"comment": "forged"}),
    ("/page", {"email": "owner@acme.test", "channels": "email"}),
    ("/edit", {"title": "Forged", "severity": "SEV4", "description": ""}),
)


def test_a_viewers_forged_post_to_each_action_is_403_and_changes_nothing(
    signed_in: Browser, world: World, client: Any, org: Org
) -> None:
    before = incident_via_api(client, org, world.checkout_down)
    viewer = signed_in("viewer")
    viewer.get(at(world))
    for suffix, fields in ACTIONS:
        answer = viewer.post(at(world) + suffix, fields)
        assert answer.status == 403, suffix
    assert incident_via_api(client, org, world.checkout_down) == before


def test_an_action_refuses_a_missing_or_wrong_csrf_token(
    signed_in: Browser, world: World, client: Any, org: Org
) -> None:
    owner = signed_in("owner")
    owner.get(at(world))
    assert owner.post(at(world) + "/acknowledge", csrf="-").status == 403
    assert owner.post(at(world) + "/acknowledge", csrf="0" * 43).status == 403
    assert incident_via_api(client, org, world.checkout_down)["acknowledged_at"] is None


def test_the_postmortem_is_linked_once_it_exists(signed_in: Browser, world: World, org: Org) -> None:
    from chalicelib.postmortem import service as postmortems

    browser = signed_in("responder")
    link = (
        browser.get(f"/app/incidents/{world.old_outage}")
        .dom()
        .find("a", href=f"/app/incidents/{world.old_outage}/postmortem")
    )
    assert link.text() == "Start the postmortem"
    created = postmortems.create_postmortem(
        organization_id=org.organization_id,
        incident_number=world.old_outage,
        level="standard",
        content={},
        response_timeline_overrides={},
        now=NOW,
        actor="seed",
    )
    link = (
        browser.get(f"/app/incidents/{world.old_outage}")
        .dom()
        .find("a", href=f"/app/incidents/{world.old_outage}/postmortem")
    )
    assert link.text() == created.postmortem_number


def test_a_status_change_with_a_note_puts_the_note_on_the_timeline(
    signed_in: Browser, world: World, client: Any, org: Org
) -> None:
    browser = signed_in("responder")
    page = browser.get(at(world))
    form = next(
        f for f in page.dom().find_all("form") if f.find_all("textarea", name="comment") and f.find_all("select")
    )
    assert "resolved" in [o.attrs.get("value") for o in form.find("select").find_all("option")]
    answer = browser.post(at(world) + "/status", {"status": "resolved", "comment": "Rolled back 4.2.1; errors gone."})
    assert answer.status == 303
    seen = incident_via_api(client, org, world.checkout_down)
    assert seen["status"] == "resolved"
    assert any("Rolled back 4.2.1; errors gone." in str(entry) for entry in seen["timeline"])
    too_long = browser.post(at(world) + "/status", {"status": "closed", "comment": "x" * 20000})
    assert too_long.status == 400
    assert too_long.dom().find("textarea", id="f-note-comment").attrs.get("aria-invalid") == "true"
