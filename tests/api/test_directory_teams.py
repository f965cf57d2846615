"""/api/v1/teams through the Chalice test client."""

from __future__ import annotations

from tests.api.test_directory_services import error_of
from tests.conftest import make_org
from tests.kit.api import call

TEAM_FIELDS = {"id", "name", "description", "member_count", "is_active", "member_ids"}


def _user(client, key, email):
    status, document = call(client, "POST", "/api/v1/users", key, {"name": email.split("@")[0], "email": email})
    assert status == 201
    return document["data"]["id"]


def test_team_lifecycle_and_membership(client, org):
    key = org.owner_key
    ann = _user(client, key, "ann@example.com")
    bob = _user(client, key, "bob@example.com")
    status, created = call(client, "POST", "/api/v1/teams", key, {"name": "Core", "member_ids": [ann]})
    assert status == 201
    team = created["data"]
    assert set(team) == TEAM_FIELDS
    assert (team["name"], team["description"], team["member_count"], team["is_active"], team["member_ids"]) == (
        "Core",
        None,
        1,
        True,
        [ann],
    )
    path = f"/api/v1/teams/{team['id']}"
    assert call(client, "GET", path, key)[1]["data"] == team

    status, added = call(client, "PUT", f"{path}/members/{bob}", key)
    assert (status, added["data"]["member_ids"], added["data"]["member_count"]) == (200, [ann, bob], 2)
    status, again = call(client, "PUT", f"{path}/members/{bob}", key)
    assert (status, again["data"]["member_count"]) == (200, 2)
    status, removed = call(client, "DELETE", f"{path}/members/{ann}", key)
    assert (status, removed["data"]["member_ids"]) == (200, [bob])
    status, again = call(client, "DELETE", f"{path}/members/{ann}", key)
    assert (status, again["data"]["member_ids"]) == (200, [bob])

    status, patched = call(
        client, "PATCH", path, key, {"name": "Platform", "description": "Runs things", "member_ids": [ann, bob]}
    )
    assert status == 200
    assert patched["data"] == {
        **team,
        "name": "Platform",
        "description": "Runs things",
        "member_ids": [ann, bob],
        "member_count": 2,
    }
    status, deactivated = call(client, "PATCH", path, key, {"is_active": False, "description": None})
    assert (status, deactivated["data"]["is_active"], deactivated["data"]["description"]) == (200, False, None)


def test_list_teams(client, org):
    key = org.owner_key
    for name in ("Alpha", "Beta", "Alphabet"):
        assert call(client, "POST", "/api/v1/teams", key, {"name": name})[0] == 201
    _, listing = call(client, "GET", "/api/v1/teams?limit=2", key)
    data = listing["data"]
    assert (data["total"], data["has_more"], data["next_offset"], len(data["items"])) == (3, True, 2, 2)
    _, found = call(client, "GET", "/api/v1/teams?q=alpha", key)
    assert {t["name"] for t in found["data"]["items"]} == {"Alpha", "Alphabet"}
    beta = call(client, "GET", "/api/v1/teams?q=BETA", key)[1]["data"]["items"][0]
    call(client, "PATCH", f"/api/v1/teams/{beta['id']}", key, {"is_active": False})
    _, inactive = call(client, "GET", "/api/v1/teams?is_active=false", key)
    assert [t["name"] for t in inactive["data"]["items"]] == ["Beta"]


def test_team_validation_and_conflicts(client, org):
    key = org.owner_key
    ann = _user(client, key, "ann@example.com")
    _, core = call(client, "POST", "/api/v1/teams", key, {"name": "Core"})
    _, edge = call(client, "POST", "/api/v1/teams", key, {"name": "Edge"})

    status, document = call(client, "POST", "/api/v1/teams", key, {"name": "CORE"})
    assert status == 409
    assert error_of(document)["details"]["fields"] == [{"field": "name", "message": "already in use"}]
    assert call(client, "PATCH", f"/api/v1/teams/{edge['data']['id']}", key, {"name": "core"})[0] == 409

    cases = [
        {"name": ""},
        {"name": "x" * 101},
        {"name": "T", "description": "x" * 1001},
        {"name": "T", "member_ids": ["ghost"]},
        {"name": "T", "member_ids": "not-a-list"},
        {"name": "T", "member_ids": ["a/b"]},
        {"name": "T", "owner": ann},
    ]
    for body in cases:
        status, document = call(client, "POST", "/api/v1/teams", key, body)
        assert status == 400, body
        assert error_of(document)["code"] == "VALIDATION_ERROR"
        assert error_of(document)["details"]["fields"], body
    assert call(client, "POST", "/api/v1/teams", key, "nope")[0] == 400

    path = f"/api/v1/teams/{core['data']['id']}"
    for body in ({}, {"name": None}, {"member_ids": None}, {"is_active": "yes please"}, {"member_ids": ["ghost"]}):
        status, document = call(client, "PATCH", path, key, body)
        assert status == 400, body
        assert error_of(document)["code"] == "VALIDATION_ERROR"


def test_team_not_found_auth_and_isolation(client, org):
    key = org.owner_key
    ann = _user(client, key, "ann@example.com")
    _, created = call(client, "POST", "/api/v1/teams", key, {"name": "Core"})
    team_id = created["data"]["id"]
    path = f"/api/v1/teams/{team_id}"

    assert call(client, "GET", "/api/v1/teams/missing", key)[0] == 404
    assert call(client, "PATCH", "/api/v1/teams/missing", key, {"name": "x"})[0] == 404
    assert call(client, "PUT", f"/api/v1/teams/missing/members/{ann}", key)[0] == 404
    status, document = call(client, "PUT", f"{path}/members/ghost", key)
    assert (status, error_of(document)["code"]) == (404, "NOT_FOUND")
    assert call(client, "DELETE", f"/api/v1/teams/missing/members/{ann}", key)[0] == 404

    assert call(client, "GET", "/api/v1/teams")[0] == 401
    for method, sub, body, scope in (
        ("GET", "", None, "teams:read"),
        ("POST", None, {"name": "T"}, "teams:write"),
        ("PATCH", "", {"name": "T"}, "teams:write"),
        ("PUT", f"/members/{ann}", None, "teams:write"),
        ("DELETE", f"/members/{ann}", None, "teams:write"),
    ):
        target = "/api/v1/teams" if sub is None else path + sub
        status, document = call(client, method, target, org.readonly_key, body)
        assert status == 403, (method, target)
        assert error_of(document)["details"]["required_scope"] == scope
    assert call(client, "GET", "/api/v1/teams", org.readonly_key)[0] == 403

    other = make_org("Other")
    other_user = _user(client, other.owner_key, "mallory@example.com")
    assert call(client, "GET", path, other.owner_key)[0] == 404
    assert call(client, "PATCH", path, other.owner_key, {"name": "Stolen"})[0] == 404
    assert call(client, "PUT", f"{path}/members/{other_user}", other.owner_key)[0] == 404
    # A user of another organization cannot be added, even by the team's own organization.
    assert call(client, "PUT", f"{path}/members/{other_user}", key)[0] == 404
    assert call(client, "POST", "/api/v1/teams", key, {"name": "X", "member_ids": [other_user]})[0] == 400
    assert call(client, "GET", "/api/v1/teams", other.owner_key)[1]["data"]["items"] == []
    assert call(client, "GET", path, key)[1]["data"]["member_ids"] == []
