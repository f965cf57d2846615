"""People in the console: the list and a person's page for every role; inviting, changing a role,
deactivating (asked first, listing where they are; then out of rotations and policy targets) and
reactivating for owners and admins; forged posts, other organizations and the console's own
guards (not oneself, not the last owner) refused with nothing changed."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from chalicelib.directory.users import create_user, get_user, list_users
from chalicelib.escalation import service as policies
from chalicelib.oncall import service as schedules
from chalicelib.queue.messages import Message
from chalicelib.settings import get_settings
from tests.conftest import NOW, Org, make_org
from tests.console.conftest import CONFIRMED, ROLES, ConsoleClient, Person, action_forms
from tests.console.routing_world import World, build_world
from tests.kit.console import problems_at

MANAGERS = ("owner", "admin")
OTHERS = ("responder", "viewer")


@pytest.fixture
def world(org: Org, people: dict[str, Person]) -> World:
    return build_world(org, people)


def api_user(client: Any, org: Org, user_id: str) -> dict[str, Any]:
    answer = client.http.get(f"/api/v1/users/{user_id}", headers={"Authorization": f"Bearer {org.owner_key}"})
    assert answer.status_code == 200, answer.body
    return dict(json.loads(answer.body)["data"])


@pytest.mark.parametrize("role", ROLES)
def test_every_role_sees_the_people_and_only_managers_see_forms(
    role: str, signed_in: Callable[[str], ConsoleClient], people: dict[str, Person], world: World
) -> None:
    browser = signed_in(role)
    listing = browser.get("/app/people")
    assert listing.status == 200
    rows = listing.dom().find("table", cls="people-table").find_all("tr")[1:]
    assert len(rows) == 4
    text = listing.text()
    assert "Responder Person" in text and "responder@acme.test" in text and "Verified" in text
    person = browser.get(f"/app/people/{people['responder'].user_id}")
    assert person.status == 200
    assert person.dom().find("h1").text() == "Responder Person"
    assert "Payments primary" in person.text()  # the rotation they are in (routing_world)
    if role in MANAGERS:
        assert "/app/people" in action_forms(listing)
        assert f"/app/people/{people['responder'].user_id}/deactivate" in action_forms(person)
        assert f"/app/people/{people['responder'].user_id}/role" in action_forms(person)
    else:
        assert action_forms(listing) == [] and action_forms(person) == []
        assert "Only owners and admins invite people" in text


def test_the_list_says_which_contact_methods_are_verified_and_the_teams(
    signed_in: Callable[[str], ConsoleClient], org: Org, people: dict[str, Person]
) -> None:
    from chalicelib.contact import service as contacts
    from chalicelib.directory import teams

    contacts.create_method(
        organization_id=org.organization_id,
        user_id=people["responder"].user_id,
        method_type="sms",
        address="+15551234567",
        label="Phone",
        now=NOW,
        settings=get_settings(),
    )
    teams.create_team(
        organization_id=org.organization_id, name="Payments", now=NOW, member_ids=[people["responder"].user_id]
    )
    page = signed_in("viewer").get("/app/people")
    (row,) = [r for r in page.dom().find_all("tr") if "Responder Person" in r.text()]
    assert "Payments" in row.text()
    assert "SMS · Phone Not verified" in row.text() and "Email Verified" in row.text()
    assert "Email · Email" not in row.text()  # a label that only repeats the kind is not said twice


@pytest.mark.parametrize("role", MANAGERS)
def test_a_manager_invites_a_person_who_gets_the_invitation(
    role: str, signed_in: Callable[[str], ConsoleClient], org: Org, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chalicelib.directory import users

    sent: list[Message] = []
    monkeypatch.setattr(users, "publish", sent.append)
    browser = signed_in(role)
    browser.get("/app/people")
    answer = browser.post(
        "/app/people",
        {"name": "Ana Ruiz", "email": "Ana@Example.com", "role": "responder", "time_zone": "Europe/Madrid"},
    )
    assert answer.status == 303, answer.text()
    (ana,) = [u for u in list_users(organization_id=org.organization_id) if u.email == "ana@example.com"]
    assert (ana.name, ana.role, ana.time_zone, ana.is_active) == ("Ana Ruiz", "responder", "Europe/Madrid", True)
    assert answer.location == f"/app/people/{ana.user_id}?done=person_invited"
    assert "Invitation sent" in browser.follow(answer).text()
    # The same message the API's user creation publishes: its consumer sends the invitation email.
    assert [(m.message_type, m.payload["email"]) for m in sent] == [("directory.user_created", "ana@example.com")]


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"name": "", "email": "x@example.com", "role": "responder"}, "name", "at least 1 character"),
        ({"name": "X", "email": "not an email", "role": "responder"}, "email", "expected form"),
        ({"name": "X", "email": "x@example.com", "role": "boss"}, "role", "Input should be"),
        ({"name": "X", "email": "responder@acme.test", "role": "viewer"}, "email", "already in use"),
    ],
)
def test_bad_invitations_keep_the_form_and_name_the_field_as_labelled(
    fields: dict[str, str], field: str, message: str, signed_in: Callable[[str], ConsoleClient], org: Org
) -> None:
    browser = signed_in("owner")
    browser.get("/app/people")
    before = len(list_users(organization_id=org.organization_id))
    answer = browser.post("/app/people", fields)
    assert answer.status in (400, 409)
    assert answer.dom().find("h1").text() == "People"
    shown = problems_at(answer, field)
    assert len(shown) == 1 and message in shown[0]  # at its input, once
    assert f"{field}:" not in answer.dom().find(cls="problem").text()  # never the API's path
    assert answer.dom().find("input", name="name").attrs.get("value") == fields["name"]  # the form kept
    assert len(list_users(organization_id=org.organization_id)) == before


@pytest.mark.parametrize("role", OTHERS)
def test_forged_people_posts_from_lower_roles_are_refused(
    role: str, signed_in: Callable[[str], ConsoleClient], org: Org, people: dict[str, Person]
) -> None:
    browser = signed_in(role)
    browser.get("/app/people")
    target = people["admin"].user_id
    assert browser.post("/app/people", {"name": "Eve", "email": "eve@example.com"}).status == 403
    assert browser.post(f"/app/people/{target}/role", {"role": "viewer"}).status == 403
    assert browser.post(f"/app/people/{target}/deactivate", CONFIRMED).status == 403
    assert browser.post(f"/app/people/{target}/reactivate").status == 403
    admin = get_user(organization_id=org.organization_id, user_id=target)
    assert (admin.role, admin.is_active) == ("admin", True)
    assert len(list_users(organization_id=org.organization_id)) == 4


def test_posts_without_the_csrf_token_change_nothing(
    signed_in: Callable[[str], ConsoleClient], org: Org, people: dict[str, Person]
) -> None:
    browser = signed_in("owner")
    browser.get("/app/people")
    target = people["viewer"].user_id
    assert browser.post("/app/people", {"name": "Eve", "email": "eve@example.com"}, csrf="-").status == 403
    assert browser.post(f"/app/people/{target}/role", {"role": "admin"}, csrf="-").status == 403
    assert browser.post(f"/app/people/{target}/deactivate", CONFIRMED, csrf="wrong").status == 403
    viewer = get_user(organization_id=org.organization_id, user_id=target)
    assert (viewer.role, viewer.is_active) == ("viewer", True)
    assert len(list_users(organization_id=org.organization_id)) == 4


def test_another_organizations_person_is_not_found(
    signed_in: Callable[[str], ConsoleClient], aws_env: None, people: dict[str, Person]
) -> None:
    other = make_org("Other")
    stranger = create_user(organization_id=other.organization_id, name="Stranger", email="s@other.test", now=NOW)
    browser = signed_in("owner")
    browser.get("/app/people")
    assert browser.get(f"/app/people/{stranger.user_id}").status == 404
    assert browser.post(f"/app/people/{stranger.user_id}/role", {"role": "viewer"}).status == 404
    assert browser.post(f"/app/people/{stranger.user_id}/deactivate", CONFIRMED).status == 404
    assert get_user(organization_id=other.organization_id, user_id=stranger.user_id).role == "responder"
    assert "Stranger" not in browser.get("/app/people").text()


def test_an_admin_changes_a_role_through_the_api_rules(
    signed_in: Callable[[str], ConsoleClient], client: Any, org: Org, people: dict[str, Person]
) -> None:
    browser = signed_in("admin")
    target = people["viewer"].user_id
    browser.get(f"/app/people/{target}")
    answer = browser.post(f"/app/people/{target}/role", {"role": "responder"})
    assert answer.status == 303 and answer.location == f"/app/people/{target}?done=person_role_changed"
    assert api_user(client, org, target)["role"] == "responder"
    refused = browser.post(f"/app/people/{target}/role", {"role": "root"})
    assert refused.status == 400 and len(problems_at(refused, "role")) == 1
    assert api_user(client, org, target)["role"] == "responder"


def test_nobody_changes_themself_and_the_last_owner_stays(
    signed_in: Callable[[str], ConsoleClient], org: Org, people: dict[str, Person]
) -> None:
    owner = signed_in("owner")
    me = people["owner"].user_id
    owner.get(f"/app/people/{me}")
    assert f"/app/people/{me}/role" not in action_forms(owner.get(f"/app/people/{me}"))
    refused = owner.post(f"/app/people/{me}/role", {"role": "viewer"})
    assert refused.status == 409 and "own role" in refused.text()
    assert owner.post(f"/app/people/{me}/deactivate", CONFIRMED).status == 409
    admin = signed_in("admin")
    admin.get(f"/app/people/{me}")
    last = admin.post(f"/app/people/{me}/role", {"role": "admin"})
    assert last.status == 409 and "last active owner" in last.text()
    assert admin.post(f"/app/people/{me}/deactivate", CONFIRMED).status == 409
    assert get_user(organization_id=org.organization_id, user_id=me).role == "owner"
    promoted = admin.post(f"/app/people/{people['responder'].user_id}/role", {"role": "owner"})
    assert promoted.status == 303
    assert admin.post(f"/app/people/{me}/role", {"role": "admin"}).status == 303  # no longer the last
    assert get_user(organization_id=org.organization_id, user_id=me).role == "admin"


def test_deactivating_asks_first_listing_where_they_are_then_takes_them_out(
    signed_in: Callable[[str], ConsoleClient], client: Any, org: Org, people: dict[str, Person], world: World
) -> None:
    from chalicelib.escalation.steps import Level, Target

    browser = signed_in("owner")
    responder = people["responder"].user_id
    # The responder is in the schedule's layer and the only target of the policy's level 2.
    policies.update_policy(
        organization_id=org.organization_id,
        policy_id=world.policy_id,
        now=NOW,
        levels=[Level((Target("schedule", world.schedule_id),), 5), Level((Target("user", responder),), 15)],
    )
    browser.get(f"/app/people/{responder}")
    asked = browser.post(f"/app/people/{responder}/deactivate")
    assert asked.status == 200
    assert asked.dom().find("h1").text() == "Deactivate Responder Person?"
    assert "Payments escalation" in asked.text() and "level 2 is removed" in asked.text()
    assert "leaves the layer Weekly" in asked.text()
    assert api_user(client, org, responder)["is_active"] is True  # asking changes nothing
    done = browser.post(f"/app/people/{responder}/deactivate", CONFIRMED)
    assert done.status == 200 and done.dom().find("h1").text() == "Responder Person deactivated"
    assert "level 2 was removed (they were its only target)" in done.text()
    assert "left the layer Weekly" in done.text()
    assert api_user(client, org, responder)["is_active"] is False
    policy = policies.get_policy(organization_id=org.organization_id, policy_id=world.policy_id).policy
    assert [[t.id for t in level.targets] for level in policy.levels] == [[world.schedule_id]]
    schedule = schedules.get_schedule(organization_id=org.organization_id, schedule_id=world.schedule_id).schedule
    assert [layer.members for layer in schedule.layers] == [(people["admin"].user_id,)]
    page = browser.get(f"/app/people/{responder}")
    assert "Deactivated" in page.text() and f"/app/people/{responder}/reactivate" in action_forms(page)


def test_a_schedule_they_alone_make_keeps_them_and_says_so(
    signed_in: Callable[[str], ConsoleClient], org: Org, people: dict[str, Person], world: World
) -> None:
    from chalicelib.oncall.schedule import Layer

    admin = people["admin"].user_id
    solo = schedules.create_schedule(
        organization_id=org.organization_id,
        name="Solo nights",
        time_zone="UTC",
        layers=[Layer("lyr_solo", "Nights", (admin,), "daily", "20:00", NOW)],
        now=NOW,
    )
    browser = signed_in("owner")
    browser.get(f"/app/people/{admin}")
    asked = browser.post(f"/app/people/{admin}/deactivate")
    assert "Solo nights" in asked.text() and "only member of every layer" in asked.text()
    done = browser.post(f"/app/people/{admin}/deactivate", CONFIRMED)
    assert "Still names them" in done.text() and "edit or delete the schedule" in done.text()
    kept = schedules.get_schedule(organization_id=org.organization_id, schedule_id=solo.schedule_id).schedule
    assert kept.layers[0].members == (admin,)
    # Payments primary had them beside the responder: they left it.
    primary = schedules.get_schedule(organization_id=org.organization_id, schedule_id=world.schedule_id).schedule
    assert primary.layers[0].members == (people["responder"].user_id,)


def test_reactivating_lets_them_back_without_putting_them_back(
    signed_in: Callable[[str], ConsoleClient], client: Any, org: Org, people: dict[str, Person], world: World
) -> None:
    browser = signed_in("admin")
    responder = people["responder"].user_id
    browser.get(f"/app/people/{responder}")
    browser.post(f"/app/people/{responder}/deactivate", CONFIRMED)
    answer = browser.post(f"/app/people/{responder}/reactivate")
    assert answer.status == 303 and answer.location.endswith("done=person_reactivated")
    assert api_user(client, org, responder)["is_active"] is True
    schedule = schedules.get_schedule(organization_id=org.organization_id, schedule_id=world.schedule_id).schedule
    assert responder not in schedule.layers[0].members
    assert "add them back to rotations" in browser.follow(answer).text()
