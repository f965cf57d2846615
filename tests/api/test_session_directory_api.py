"""Session JWTs are checked against the directory on every request: the user named by `sub` must
exist in the organization named by `org` and be active, and the effective role is the lower of the
token's and the directory's. A malformed `role` claim is a 401 (with rate-limit headers), never a
500."""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib.auth.scopes import ROLE_SCOPES
from chalicelib.settings import get_settings
from tests.conftest import NOW, Org, make_org
from tests.kit.api import call, session_jwt

pytestmark = pytest.mark.filterwarnings("ignore::jwt.warnings.InsecureKeyLengthWarning")

VERIFY = "/api/v1/auth/verify"


def user(org: Org, email: str, role: str = "responder") -> str:
    from chalicelib.directory.users import create_user

    return create_user(organization_id=org.organization_id, name=None, email=email, role=role, now=NOW).user_id


def assert_unauthorized(response: Any) -> None:
    assert response.status_code == 401, response.body
    assert response.json["error"]["code"] == "UNAUTHORIZED"
    assert response.headers["X-RateLimit-Category"] == "anonymous"
    assert "X-RateLimit-Remaining" in response.headers


@pytest.mark.parametrize("role", [["admin"], {"name": "admin"}, 1, True, ["owner", "viewer"]])
def test_a_role_claim_that_is_not_a_string_is_401_with_rate_headers(client: Any, org: Org, role: Any) -> None:
    subject = user(org, "lists@example.com", "admin")
    assert_unauthorized(call(client, "get", VERIFY, session_jwt(org.organization_id, subject, role)))


def test_a_subject_missing_from_the_directory_is_401(client: Any, org: Org) -> None:
    assert_unauthorized(call(client, "get", VERIFY, session_jwt(org.organization_id, "no-such-user", "owner")))
    assert_unauthorized(
        call(client, "post", "/api/v1/api-keys", session_jwt(org.organization_id, "ghost", "owner"), {})
    )


def test_a_deactivated_users_session_is_401(client: Any, org: Org) -> None:
    subject = user(org, "leaver@example.com", "admin")
    session = session_jwt(org.organization_id, subject, "admin")
    assert call(client, "get", VERIFY, session).status_code == 200
    deactivated = call(client, "patch", f"/api/v1/users/{subject}", org.owner_key, {"is_active": False})
    assert deactivated.status_code == 200, deactivated.body
    assert_unauthorized(call(client, "get", VERIFY, session))
    created = call(client, "post", "/api/v1/api-keys", session, {"name": "backdoor", "scopes": ["admin"]})
    assert_unauthorized(created)


def test_a_session_for_another_organization_than_its_users_is_401(client: Any, org: Org) -> None:
    subject = user(org, "alice@example.com", "owner")
    other = make_org("Other")
    assert_unauthorized(call(client, "get", VERIFY, session_jwt(other.organization_id, subject, "owner")))
    assert call(client, "get", VERIFY, session_jwt(org.organization_id, subject, "owner")).status_code == 200


def test_the_effective_role_is_the_lower_of_token_and_directory(client: Any, org: Org) -> None:
    viewer = user(org, "viewer@example.com", "viewer")
    raised = call(client, "get", VERIFY, session_jwt(org.organization_id, viewer, "owner"))
    assert raised.status_code == 200
    assert raised.json["data"]["scopes"] == sorted(ROLE_SCOPES["viewer"])
    refused = call(client, "post", "/api/v1/api-keys", session_jwt(org.organization_id, viewer, "owner"), {"name": "k"})
    assert refused.status_code == 403

    admin = user(org, "admin@example.com", "admin")
    lowered = call(client, "get", VERIFY, session_jwt(org.organization_id, admin, "responder"))
    assert lowered.json["data"]["scopes"] == sorted(ROLE_SCOPES["responder"])

    # Demoting someone in the directory takes effect on their next request.
    session = session_jwt(org.organization_id, admin, "admin")
    assert call(client, "get", VERIFY, session).json["data"]["scopes"] == sorted(ROLE_SCOPES["admin"])
    assert call(client, "patch", f"/api/v1/users/{admin}", org.owner_key, {"role": "viewer"}).status_code == 200
    assert call(client, "get", VERIFY, session).json["data"]["scopes"] == sorted(ROLE_SCOPES["viewer"])


def test_the_directory_names_the_actor(client: Any, org: Org) -> None:
    subject = user(org, "Real.Person@example.com", "responder")
    forged_email = session_jwt(org.organization_id, subject, "responder", email="ceo@example.com")
    me = call(client, "get", VERIFY, forged_email)
    assert me.status_code == 200
    from chalicelib.api.credentials import authenticate
    from chalicelib.clock import now

    principal = authenticate(authorization=f"Bearer {forged_email}", now=now(), settings=get_settings())
    assert principal.email == "real.person@example.com"
    assert principal.user_id == subject


def test_an_identity_providers_subject_is_matched_by_a_verified_email(client: Any, org: Org) -> None:
    """Cognito names people by its own `sub`; a verified email finds the directory user."""
    from chalicelib.api.credentials import authenticate
    from chalicelib.clock import now

    subject = user(org, "sso.person@example.com", "responder")
    cognito = "4a1c2f5e-0000-4000-8000-00000000cafe"
    verified = session_jwt(org.organization_id, cognito, "admin", email="SSO.Person@example.com", email_verified=True)
    response = call(client, "get", VERIFY, verified)
    assert response.status_code == 200
    assert response.json["data"]["scopes"] == sorted(ROLE_SCOPES["responder"])  # the directory's, lower
    assert authenticate(authorization=f"Bearer {verified}", now=now(), settings=get_settings()).user_id == subject
    for claims in ({"email": "sso.person@example.com"}, {"email": "sso.person@example.com", "email_verified": False}):
        assert_unauthorized(call(client, "get", VERIFY, session_jwt(org.organization_id, cognito, "admin", **claims)))
    other = make_org("Other")
    elsewhere = session_jwt(
        other.organization_id, cognito, "admin", email="sso.person@example.com", email_verified=True
    )
    assert_unauthorized(call(client, "get", VERIFY, elsewhere))
