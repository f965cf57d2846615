"""People's time zones through the API: the organization's default (GET/PATCH /api/v1/settings/organization),
a user's own (create, PATCH, PATCH /users/{id}/profile by the person themself), and every refusal."""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib.apikey import service as apikeys
from chalicelib.settings import get_settings
from tests.api.test_contact_methods_api import person, personal_key
from tests.api.test_directory_services import call, error_of
from tests.conftest import NOW, Org
from tests.kit.api import session_jwt

pytestmark = pytest.mark.filterwarnings("ignore::jwt.warnings.InsecureKeyLengthWarning")

SETTINGS = "/api/v1/settings/organization"


def user_path(user_id: str) -> str:
    return f"/api/v1/users/{user_id}"


def profile_path(user_id: str) -> str:
    return f"/api/v1/users/{user_id}/profile"


def field_problems(document: dict[str, Any]) -> list[str]:
    error = error_of(document)
    assert error["code"] == "VALIDATION_ERROR"
    return [problem["field"] for problem in error["details"]["fields"]]


def zone_of(client: Any, org: Org, user_id: str) -> tuple[str, bool]:
    status, found = call(client, "GET", user_path(user_id), org.owner_key)
    assert status == 200
    return found["data"]["time_zone"], found["data"]["time_zone_is_own"]


def test_a_user_follows_the_organization_until_they_choose_a_zone(client: Any, org: Org) -> None:
    status, settings = call(client, "GET", SETTINGS, org.owner_key)
    assert status == 200
    assert settings["data"] == {"id": org.organization_id, "name": org.name, "time_zone": "UTC"}

    status, created = call(client, "POST", "/api/v1/users", org.owner_key, {"name": "Ann", "email": "ann@example.com"})
    assert status == 201
    ann = created["data"]["id"]
    assert (created["data"]["time_zone"], created["data"]["time_zone_is_own"]) == ("UTC", False)

    status, changed = call(client, "PATCH", SETTINGS, org.owner_key, {"time_zone": "Europe/Paris"})
    assert status == 200 and changed["data"]["time_zone"] == "Europe/Paris"
    assert zone_of(client, org, ann) == ("Europe/Paris", False)  # follows the organization
    status, listed = call(client, "GET", "/api/v1/users", org.owner_key)
    assert status == 200 and [u["time_zone"] for u in listed["data"]["items"]] == ["Europe/Paris"]

    status, own = call(client, "PATCH", user_path(ann), org.owner_key, {"time_zone": "America/New_York"})
    assert status == 200 and (own["data"]["time_zone"], own["data"]["time_zone_is_own"]) == ("America/New_York", True)
    call(client, "PATCH", SETTINGS, org.owner_key, {"time_zone": "Asia/Kolkata"})
    assert zone_of(client, org, ann) == ("America/New_York", True)  # an own zone stays

    status, back = call(client, "PATCH", user_path(ann), org.owner_key, {"time_zone": None})
    assert status == 200 and (back["data"]["time_zone"], back["data"]["time_zone_is_own"]) == ("Asia/Kolkata", False)


def test_a_user_can_be_created_with_a_zone(client: Any, org: Org) -> None:
    body = {"name": "Bo", "email": "bo@example.com", "time_zone": "Australia/Adelaide"}
    status, created = call(client, "POST", "/api/v1/users", org.owner_key, body)
    assert status == 201
    assert (created["data"]["time_zone"], created["data"]["time_zone_is_own"]) == ("Australia/Adelaide", True)
    status, explicit_null = call(
        client, "POST", "/api/v1/users", org.owner_key, {"name": "Cy", "email": "cy@example.com", "time_zone": None}
    )
    assert status == 201 and explicit_null["data"]["time_zone_is_own"] is False


BAD_ZONES: list[tuple[Any, str]] = [
    ("Mars/Olympus", "IANA time zone"),  # the pattern fits, the database lacks it
    ("Europe/Pari", "IANA time zone"),
    ("../../etc/passwd", "IANA time zone"),  # never a path zoneinfo would open
    ("localtime", "IANA time zone"),
    ("Factory", "IANA time zone"),
    ("europe/paris ", "IANA time zone"),  # stripped, then case matters: the database's names are exact
    ("", "at least 1"),
    ("E" * 65, "at most 64"),
    ("Europe/Paris\nX", "line"),
    (42, "string"),
]


@pytest.mark.parametrize(("zone", "message"), BAD_ZONES)
def test_a_zone_the_database_lacks_is_a_400_naming_the_field_everywhere(
    client: Any, org: Org, zone: Any, message: str
) -> None:
    ann = person(org, "ann@example.com")
    attempts = [
        ("POST", "/api/v1/users", {"name": "Bo", "email": "bo@example.com", "time_zone": zone}),
        ("PATCH", user_path(ann), {"time_zone": zone}),
        ("PATCH", profile_path(ann), {"time_zone": zone}),
        ("PATCH", SETTINGS, {"time_zone": zone}),
    ]
    for method, path, body in attempts:
        status, answer = call(client, method, path, org.owner_key, body)
        assert status == 400, (path, answer)
        assert field_problems(answer) == ["time_zone"], path
        assert message.lower() in str(error_of(answer)["details"]["fields"][0]["message"]).lower(), (path, answer)
    # Nothing changed.
    assert zone_of(client, org, ann) == ("UTC", False)
    assert call(client, "GET", SETTINGS, org.owner_key)[1]["data"]["time_zone"] == "UTC"
    status, listed = call(client, "GET", "/api/v1/users", org.owner_key)
    assert [u["email"] for u in listed["data"]["items"]] == ["ann@example.com"]


def test_a_person_changes_their_own_zone_with_any_role_and_nobody_elses(client: Any, org: Org) -> None:
    ann = person(org, "ann@example.com", role="viewer")
    bo = person(org, "bo@example.com")
    anns_key = personal_key(org, ann, ["incidents:write"])  # no users:* scope: changing your own needs none
    read_only = personal_key(org, ann, ["incidents:read"])  # a read-only key stays read-only on its owner too
    status, refused = call(client, "PATCH", profile_path(ann), read_only, {"time_zone": "Europe/Berlin"})
    assert status == 403 and error_of(refused)["code"] == "FORBIDDEN"
    status, mine = call(client, "PATCH", profile_path(ann), anns_key, {"time_zone": "Europe/Berlin"})
    assert status == 200 and (mine["data"]["id"], mine["data"]["time_zone"]) == (ann, "Europe/Berlin")
    assert zone_of(client, org, ann) == ("Europe/Berlin", True)

    status, refused = call(client, "PATCH", profile_path(bo), anns_key, {"time_zone": "Europe/Berlin"})
    assert status == 403 and error_of(refused)["code"] == "FORBIDDEN"
    assert zone_of(client, org, bo) == ("UTC", False)

    # A session of the person works the same; the profile takes nothing but the zone.
    token = session_jwt(org.organization_id, ann, "viewer")
    status, cleared = call(client, "PATCH", profile_path(ann), token, {"time_zone": None})
    assert status == 200 and cleared["data"]["time_zone_is_own"] is False
    for body in ({"role": "owner"}, {"is_active": False}, {"email": "x@example.com"}, {}):
        status, answer = call(client, "PATCH", profile_path(ann), token, body)
        assert status == 400 and error_of(answer)["code"] == "VALIDATION_ERROR", body
    status, still = call(client, "GET", user_path(ann), org.owner_key)
    assert (still["data"]["role"], still["data"]["is_active"]) == ("viewer", True)
    # The general PATCH stays an admin's: the person cannot use it on themself.
    status, refused = call(client, "PATCH", user_path(ann), anns_key, {"time_zone": "Europe/Berlin"})
    assert status == 403


def test_only_an_admin_sets_the_organization_zone(client: Any, org: Org) -> None:
    status, refused = call(client, "PATCH", SETTINGS, org.readonly_key, {"time_zone": "Europe/Paris"})
    assert status == 403 and error_of(refused)["code"] == "FORBIDDEN"
    _, reader = apikeys.create_api_key(
        organization_id=org.organization_id,
        name="reader",
        kind="service_account",
        scopes=["users:read"],
        now=NOW,
        settings=get_settings(),
    )
    status, read = call(client, "GET", SETTINGS, reader)
    assert status == 200 and read["data"]["time_zone"] == "UTC"
    assert call(client, "PATCH", SETTINGS, reader, {"time_zone": "Europe/Paris"})[0] == 403
    for body in ({}, {"time_zone": None}, {"name": "Other"}):
        status, answer = call(client, "PATCH", SETTINGS, org.owner_key, body)
        assert status == 400 and error_of(answer)["code"] == "VALIDATION_ERROR", body
    assert call(client, "GET", SETTINGS, org.owner_key)[1]["data"]["time_zone"] == "UTC"


def test_unknown_users_are_404_on_the_profile(client: Any, org: Org) -> None:
    status, answer = call(client, "PATCH", profile_path("usr_nobody"), org.owner_key, {"time_zone": "UTC"})
    assert status == 404 and error_of(answer)["code"] == "NOT_FOUND"


def test_the_document_describes_the_zone_fields_and_the_self_rule(client: Any) -> None:
    import json

    document = json.loads(client.http.get("/api/v1/openapi.json").body)
    profile = document["paths"]["/api/v1/users/{user_id}/profile"]["patch"]
    assert profile["x-scope-not-needed-for-self"] == "user_id"
    schemas = document["components"]["schemas"]
    assert {"time_zone", "time_zone_is_own"} <= set(schemas["UserV1"]["required"])
    assert "time_zone" in schemas["UserCreate"]["properties"]
    assert "patch" in document["paths"][SETTINGS] and "get" in document["paths"][SETTINGS]
