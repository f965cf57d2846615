"""Teams in the console: every role reads them; owners and admins create, rename, describe and
change members through the API's rules; a team's page shows its services, schedules and the
policies they page through; lower roles, forged posts and other organizations are refused."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from chalicelib.catalog import service as catalog
from chalicelib.directory import teams
from chalicelib.oncall import service as schedules
from tests.conftest import NOW, Org, make_org
from tests.console.conftest import CONFIRMED, ROLES, ConsoleClient, Person, action_forms
from tests.console.routing_world import World, build_world
from tests.kit.console import problems_at

MANAGERS = ("owner", "admin")
OTHERS = ("responder", "viewer")


@pytest.fixture
def world(org: Org, people: dict[str, Person]) -> World:
    return build_world(org, people)


@pytest.fixture
def team(org: Org, people: dict[str, Person], world: World) -> teams.Team:
    """Payments: the responder in it, the Payments API service and the primary schedule its own."""
    made = teams.create_team(
        organization_id=org.organization_id,
        name="Payments",
        now=NOW,
        description="Takes the money",
        member_ids=[people["responder"].user_id],
    )
    catalog.update_service(
        organization_id=org.organization_id, service_ref=world.service_key, now=NOW, team_id=made.team_id
    )
    schedules.update_schedule(
        organization_id=org.organization_id, schedule_id=world.schedule_id, now=NOW, team_id=made.team_id
    )
    return made


def api_team(client: Any, org: Org, team_id: str) -> dict[str, Any]:
    answer = client.http.get(f"/api/v1/teams/{team_id}", headers={"Authorization": f"Bearer {org.owner_key}"})
    assert answer.status_code == 200, answer.body
    return dict(json.loads(answer.body)["data"])


@pytest.mark.parametrize("role", ROLES)
def test_every_role_reads_teams_and_only_managers_get_forms(
    role: str, signed_in: Callable[[str], ConsoleClient], team: teams.Team
) -> None:
    browser = signed_in(role)
    listing = browser.get("/app/teams")
    assert listing.status == 200 and "Payments" in listing.text()
    assert "1 person" in listing.text() and "1 service" in listing.text()
    page = browser.get(f"/app/teams/{team.team_id}")
    assert page.status == 200 and page.dom().find("h1").text() == "Payments"
    text = page.text()
    assert "Responder Person" in text and "Payments API" in text and "Payments primary" in text
    assert "Payments escalation" in text  # the policy its service pages through
    if role in MANAGERS:
        forms = action_forms(page)
        assert f"/app/teams/{team.team_id}" in forms and f"/app/teams/{team.team_id}/members" in forms
        assert "/app/teams" in action_forms(listing)
    else:
        assert action_forms(listing) == [] and action_forms(page) == []


@pytest.mark.parametrize("role", MANAGERS)
def test_a_manager_makes_a_team_renames_it_and_changes_members(
    role: str, signed_in: Callable[[str], ConsoleClient], client: Any, org: Org, people: dict[str, Person]
) -> None:
    browser = signed_in(role)
    browser.get("/app/teams")
    made = browser.post("/app/teams", {"name": "Search", "description": "Finds things"})
    assert made.status == 303
    team_id = made.location.split("/app/teams/")[1].split("?")[0]
    assert "Team created" in browser.follow(made).text()
    added = browser.post(f"/app/teams/{team_id}/members", {"user_id": people["admin"].user_id})
    assert added.status == 303 and added.location.endswith("done=team_member_added")
    browser.post(f"/app/teams/{team_id}/members", {"user_id": people["viewer"].user_id})
    renamed = browser.post(f"/app/teams/{team_id}", {"name": "Search & discovery", "description": ""})
    assert renamed.status == 303
    data = api_team(client, org, team_id)
    assert (data["name"], data["description"]) == ("Search & discovery", None)
    assert data["member_ids"] == [people["admin"].user_id, people["viewer"].user_id]
    removed = browser.post(f"/app/teams/{team_id}/members/{people['admin'].user_id}/remove", CONFIRMED)
    assert removed.status == 303
    assert api_team(client, org, team_id)["member_ids"] == [people["viewer"].user_id]


def test_removing_a_member_asks_first(
    signed_in: Callable[[str], ConsoleClient], client: Any, org: Org, team: teams.Team, people: dict[str, Person]
) -> None:
    browser = signed_in("owner")
    browser.get(f"/app/teams/{team.team_id}")
    asked = browser.post(f"/app/teams/{team.team_id}/members/{people['responder'].user_id}/remove")
    assert asked.status == 200 and asked.dom().find("h1").text() == "Remove this member from the team?"
    assert api_team(client, org, team.team_id)["member_ids"] == [people["responder"].user_id]


@pytest.mark.parametrize(
    ("path", "fields", "field", "message"),
    [
        ("/app/teams", {"name": ""}, "name", "at least 1 character"),
        ("/app/teams", {"name": "payments"}, "name", "already in use"),
        ("{team}", {"name": ""}, "name", "at least 1 character"),
        ("{team}/members", {"user_id": ""}, "user_id", "choose a person"),
        ("{team}/members", {"user_id": "nobody-at-all"}, "user_id", "no such person"),
    ],
)
def test_bad_team_input_is_named_at_its_field_and_changes_nothing(
    path: str,
    fields: dict[str, str],
    field: str,
    message: str,
    signed_in: Callable[[str], ConsoleClient],
    client: Any,
    org: Org,
    team: teams.Team,
) -> None:
    browser = signed_in("admin")
    browser.get("/app/teams")
    url = path.replace("{team}", f"/app/teams/{team.team_id}")
    answer = browser.post(url, fields)
    assert answer.status in (400, 409), answer.text()
    shown = problems_at(answer, field)
    assert len(shown) == 1 and message in shown[0]
    assert f"{field}:" not in answer.dom().find(cls="problem").text()
    assert api_team(client, org, team.team_id)["name"] == "Payments"
    assert len(teams.list_teams(organization_id=org.organization_id)) == 1


@pytest.mark.parametrize("role", OTHERS)
def test_forged_team_posts_are_refused(
    role: str,
    signed_in: Callable[[str], ConsoleClient],
    client: Any,
    org: Org,
    team: teams.Team,
    people: dict[str, Person],
) -> None:
    browser = signed_in(role)
    browser.get("/app/teams")
    assert browser.post("/app/teams", {"name": "Mine"}).status == 403
    assert browser.post(f"/app/teams/{team.team_id}", {"name": "Taken"}).status == 403
    assert browser.post(f"/app/teams/{team.team_id}/members", {"user_id": people["viewer"].user_id}).status == 403
    gone = f"/app/teams/{team.team_id}/members/{people['responder'].user_id}/remove"
    assert browser.post(gone, CONFIRMED).status == 403
    data = api_team(client, org, team.team_id)
    assert (data["name"], data["member_ids"]) == ("Payments", [people["responder"].user_id])


def test_a_team_post_without_csrf_changes_nothing(
    signed_in: Callable[[str], ConsoleClient], client: Any, org: Org, team: teams.Team
) -> None:
    browser = signed_in("owner")
    browser.get("/app/teams")
    assert browser.post("/app/teams", {"name": "Mine"}, csrf="-").status == 403
    assert browser.post(f"/app/teams/{team.team_id}", {"name": "Renamed"}, csrf="wrong").status == 403
    assert api_team(client, org, team.team_id)["name"] == "Payments"
    assert len(teams.list_teams(organization_id=org.organization_id)) == 1


def test_another_organizations_team_is_not_found(signed_in: Callable[[str], ConsoleClient], aws_env: None) -> None:
    other = make_org("Other")
    theirs = teams.create_team(organization_id=other.organization_id, name="Theirs", now=NOW)
    browser = signed_in("owner")
    browser.get("/app/teams")
    assert browser.get(f"/app/teams/{theirs.team_id}").status == 404
    assert browser.post(f"/app/teams/{theirs.team_id}", {"name": "Ours now"}).status == 404
    assert teams.get_team(organization_id=other.organization_id, team_id=theirs.team_id).name == "Theirs"
    assert "Theirs" not in browser.get("/app/teams").text()
