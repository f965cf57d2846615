"""/api/v1/users through the Chalice test client."""

from __future__ import annotations

from tests.api.test_directory_services import error_of
from tests.conftest import make_org
from tests.kit.api import call

USER_FIELDS = {"id", "name", "email", "is_active", "slack_user_id", "role", "time_zone", "time_zone_is_own"}


def test_user_lifecycle(client, org):
    key = org.owner_key
    status, created = call(
        client, "POST", "/api/v1/users", key, {"name": "Ann Lee", "email": "Ann@Example.com", "slack_user_id": "U1"}
    )
    assert status == 201
    user = created["data"]
    assert set(user) == USER_FIELDS
    assert (user["name"], user["email"], user["is_active"], user["slack_user_id"], user["role"]) == (
        "Ann Lee",
        "ann@example.com",
        True,
        "U1",
        "responder",
    )
    assert call(client, "GET", f"/api/v1/users/{user['id']}", key)[1]["data"] == user

    status, patched = call(
        client,
        "PATCH",
        f"/api/v1/users/{user['id']}",
        key,
        {"email": "ann.lee@example.com", "slack_user_id": None, "role": "admin", "is_active": False},
    )
    assert status == 200
    assert patched["data"] == {
        **user,
        "email": "ann.lee@example.com",
        "slack_user_id": None,
        "role": "admin",
        "is_active": False,
    }
    # The old email is free again.
    assert call(client, "POST", "/api/v1/users", key, {"name": "New", "email": "ann@example.com"})[0] == 201


def test_list_and_search_users(client, org):
    key = org.owner_key
    for name, email in (("Ann Lee", "ann@example.com"), ("Bob Stone", "bob@corp.io"), ("Cyd", "cyd@example.com")):
        assert call(client, "POST", "/api/v1/users", key, {"name": name, "email": email, "role": "viewer"})[0] == 201
    _, everyone = call(client, "GET", "/api/v1/users", key)
    assert everyone["data"]["total"] == 3
    assert all(u["role"] == "viewer" for u in everyone["data"]["items"])
    _, found = call(client, "GET", "/api/v1/users?q=EXAMPLE.COM", key)
    assert {u["name"] for u in found["data"]["items"]} == {"Ann Lee", "Cyd"}
    _, found = call(client, "GET", "/api/v1/users?q=stone", key)
    assert [u["email"] for u in found["data"]["items"]] == ["bob@corp.io"]
    _, page = call(client, "GET", "/api/v1/users?limit=1&offset=1", key)
    assert (len(page["data"]["items"]), page["data"]["has_more"], page["data"]["next_offset"]) == (1, True, 2)
    bob = found["data"]["items"][0]
    call(client, "PATCH", f"/api/v1/users/{bob['id']}", key, {"is_active": False})
    _, active = call(client, "GET", "/api/v1/users?is_active=true", key)
    assert {u["name"] for u in active["data"]["items"]} == {"Ann Lee", "Cyd"}
    _, inactive = call(client, "GET", "/api/v1/users?is_active=false&q=b", key)
    assert [u["name"] for u in inactive["data"]["items"]] == ["Bob Stone"]


def test_user_validation_and_conflicts(client, org):
    key = org.owner_key
    _, ann = call(client, "POST", "/api/v1/users", key, {"name": "Ann", "email": "ann@example.com"})
    _, bob = call(client, "POST", "/api/v1/users", key, {"name": "Bob", "email": "bob@example.com"})

    status, document = call(client, "POST", "/api/v1/users", key, {"name": "Ann 2", "email": "ANN@example.com"})
    assert status == 409
    assert error_of(document)["details"]["fields"] == [{"field": "email", "message": "already in use"}]
    status, _ = call(client, "PATCH", f"/api/v1/users/{bob['data']['id']}", key, {"email": "ann@example.com"})
    assert status == 409

    cases = [
        {"name": "A", "email": "not-an-email"},
        {"name": "A"},
        {"email": "a@example.com"},
        {"name": "", "email": "a@example.com"},
        {"name": "x" * 101, "email": "a@example.com"},
        {"name": "A", "email": "a@example.com", "role": "root"},
        {"name": "A", "email": "a@example.com", "nickname": "x"},
        {"name": "A", "email": "a@example.com", "slack_user_id": "has space"},
    ]
    for body in cases:
        status, document = call(client, "POST", "/api/v1/users", key, body)
        assert status == 400, body
        assert error_of(document)["code"] == "VALIDATION_ERROR"
        assert error_of(document)["details"]["fields"], body
    assert call(client, "POST", "/api/v1/users", key, "{oops")[0] == 400

    path = f"/api/v1/users/{ann['data']['id']}"
    for body in ({}, {"email": None}, {"is_active": None}, {"role": "god"}, {"email": "bad"}, {"id": "x"}):
        status, document = call(client, "PATCH", path, key, body)
        assert status == 400, body
        assert error_of(document)["code"] == "VALIDATION_ERROR"
    status, cleared = call(client, "PATCH", path, key, {"name": None})
    assert (status, cleared["data"]["name"]) == (200, None)

    assert call(client, "GET", "/api/v1/users?q=" + "x" * 101, key)[0] == 400
    assert call(client, "GET", "/api/v1/users?search=x", key)[0] == 400


def test_user_not_found_auth_and_isolation(client, org):
    key = org.owner_key
    _, created = call(client, "POST", "/api/v1/users", key, {"name": "Ann", "email": "ann@example.com"})
    user_id = created["data"]["id"]

    for path in ("/api/v1/users/00000000-0000-0000-0000-000000000000", "/api/v1/users/" + "x" * 300):
        status, document = call(client, "GET", path, key)
        assert (status, error_of(document)["code"]) == (404, "NOT_FOUND")
    assert call(client, "PATCH", "/api/v1/users/missing", key, {"name": "x"})[0] == 404

    assert call(client, "GET", "/api/v1/users")[0] == 401
    assert call(client, "POST", "/api/v1/users", None, {"name": "A", "email": "a@b.io"})[0] == 401
    for method, path, body, scope in (
        ("GET", "/api/v1/users", None, "users:read"),
        ("GET", f"/api/v1/users/{user_id}", None, "users:read"),
        ("POST", "/api/v1/users", {"name": "A", "email": "a@b.io"}, "users:write"),
        ("PATCH", f"/api/v1/users/{user_id}", {"name": "B"}, "users:write"),
    ):
        status, document = call(client, method, path, org.readonly_key, body)
        assert status == 403
        assert error_of(document)["details"]["required_scope"] == scope

    other = make_org("Other")
    assert call(client, "GET", f"/api/v1/users/{user_id}", other.owner_key)[0] == 404
    assert call(client, "PATCH", f"/api/v1/users/{user_id}", other.owner_key, {"name": "Mallory"})[0] == 404
    assert call(client, "GET", "/api/v1/users", other.owner_key)[1]["data"]["items"] == []
    # Emails are unique per organization, not globally.
    assert call(client, "POST", "/api/v1/users", other.owner_key, {"name": "Ann", "email": "ann@example.com"})[0] == 201
    assert call(client, "GET", f"/api/v1/users/{user_id}", key)[1]["data"]["name"] == "Ann"
