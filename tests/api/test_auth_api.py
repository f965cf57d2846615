"""Authentication over HTTP: API keys (shown once, hashed, revocable, scope-gated) and session JWTs."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
import uuid
from datetime import timedelta
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from chalicelib import clock
from chalicelib.apikey import keys
from chalicelib.apikey import service as apikeys
from chalicelib.auth.scopes import ALL_SCOPES, ROLE_SCOPES
from chalicelib.settings import get_settings
from tests.conftest import NOW, Org
from tests.conftest import reconfigure as _reconfigure
from tests.kit.api import call, session_jwt

# conftest's JWT_SECRET is shorter than PyJWT recommends; the warning is about the fixture, not the code.
pytestmark = pytest.mark.filterwarnings("ignore::jwt.warnings.InsecureKeyLengthWarning")

JWT_SECRET = "test-jwt-secret"  # set by conftest
HMAC_SECRET = "test-hmac-secret"  # set by conftest


def reconfigure(**environment: str) -> None:
    """conftest.reconfigure, then read settings now: inside a chalice.test call the 'dev' stage's
    environment (TABLE_PREFIX=tocsin-dev-) is in effect, and lazily read settings would pick it up."""
    from chalicelib import aws
    from chalicelib.settings import get_settings

    _reconfigure(**environment)
    get_settings()
    aws.bind_tables()


def bearer(credential: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {credential}"}


def directory_user(organization_id: str, role: str) -> str:
    """A user of the organization's directory with `role`: sessions are checked against it."""
    from chalicelib.directory.users import create_user

    email = f"{uuid.uuid4().hex[:12]}@example.com"
    return create_user(organization_id=organization_id, name=None, email=email, role=role, now=NOW).user_id


def session_token(organization: Org | str, /, role: str = "viewer", secret: str = JWT_SECRET, **overrides: Any) -> str:
    """A session for a new directory user holding `role` (for an Org; a bare id gets no user)."""
    organization_id = organization if isinstance(organization, str) else organization.organization_id
    sub = "user-1"
    if isinstance(organization, Org):
        sub = directory_user(organization_id, role if role in ROLE_SCOPES else "viewer")
    return session_jwt(organization_id, sub, role, secret=secret, **overrides)


def create_key(client: Any, credential: str, **body: Any) -> tuple[int, Any]:
    payload = {"name": "ci", "scopes": ["incidents:read"], **body}
    status, document = call(client, "POST", "/api/v1/api-keys", credential, payload)
    return status, document


# --- API keys -------------------------------------------------------------------------------------


def test_verify_with_an_api_key(client: Any, org: Org) -> None:
    status, document = call(client, "GET", "/api/v1/auth/verify", org.owner_key)
    assert status == 200
    assert document["data"] == {"valid": True, "scopes": sorted(ALL_SCOPES), "organization_name": "Acme"}


def test_verify_lists_only_the_keys_scopes(client: Any, org: Org) -> None:
    status, document = call(client, "GET", "/api/v1/auth/verify", org.readonly_key)
    assert status == 200
    assert document["data"]["scopes"] == ["incidents:read"]


def test_created_key_is_shown_once_and_listing_has_only_its_prefix(client: Any, org: Org) -> None:
    status, document = create_key(client, org.owner_key, name="deploy bot", scopes=["incidents:write", "admin"])
    assert status == 201
    created = document["data"]
    plaintext = created["key"]
    assert keys.looks_like_key(plaintext)
    assert created["prefix"] == plaintext[:10]
    assert created["scopes"] == ["admin", "incidents:write"]
    assert created["kind"] == "service_account"
    assert created["revoked_at"] is None

    status, listing = call(client, "GET", "/api/v1/api-keys", org.owner_key)
    assert status == 200
    assert plaintext not in json.dumps(listing)
    by_id = {item["id"]: item for item in listing["data"]["items"]}
    assert "key" not in by_id[created["id"]]
    assert by_id[created["id"]]["prefix"] == plaintext[:10]
    assert listing["data"]["total"] == 3  # owner, readonly, and the new one

    status, verified = call(client, "GET", "/api/v1/auth/verify", plaintext)
    assert status == 200
    assert verified["data"]["scopes"] == ["admin", "incidents:write"]


def test_key_record_stores_only_the_hmac(client: Any, org: Org) -> None:
    from chalicelib import aws
    from chalicelib.apikey.tables import ApiKeyRecord

    _, document = create_key(client, org.owner_key)
    plaintext = document["data"]["key"]
    items = aws.client("dynamodb").scan(TableName=ApiKeyRecord.Meta.table_name)["Items"]
    [item] = [i for i in items if i["key_id"]["S"] == document["data"]["id"]]
    assert item["key_hash"]["S"] != plaintext
    assert item["key_hash"]["S"] == hmac.new(HMAC_SECRET.encode(), plaintext.encode(), hashlib.sha256).hexdigest()
    assert plaintext not in json.dumps(items)


def test_list_paginates(client: Any, org: Org) -> None:
    status, document = call(client, "GET", "/api/v1/api-keys?limit=1&offset=1", org.owner_key)
    assert status == 200
    assert len(document["data"]["items"]) == 1
    assert document["data"]["total"] == 2
    assert document["data"]["has_more"] is False
    assert document["data"]["next_offset"] is None


def test_revoked_key_is_refused_on_the_next_request(client: Any, org: Org) -> None:
    _, document = create_key(client, org.owner_key)
    plaintext, key_id = document["data"]["key"], document["data"]["id"]
    assert call(client, "GET", "/api/v1/auth/verify", plaintext).status == 200

    status, revoked = call(client, "DELETE", f"/api/v1/api-keys/{key_id}", org.owner_key)
    assert status == 200
    assert revoked["data"]["revoked_at"] is not None

    status, refused = call(client, "GET", "/api/v1/auth/verify", plaintext)
    assert status == 401
    assert refused["error"]["code"] == "UNAUTHORIZED"
    assert refused["success"] is False


def test_revoke_unknown_key_is_404(client: Any, org: Org) -> None:
    status, document = call(client, "DELETE", "/api/v1/api-keys/not-a-key", org.owner_key)
    assert status == 404
    assert document["error"]["code"] == "NOT_FOUND"


def test_cannot_revoke_another_organizations_key(client: Any, org: Org) -> None:
    from tests.conftest import make_org

    other = make_org("Other")
    [theirs] = [k for k in apikeys.list_api_keys(organization_id=other.organization_id) if k.name == "owner"]
    status, _ = call(client, "DELETE", f"/api/v1/api-keys/{theirs.key_id}", org.owner_key)
    assert status == 404
    assert call(client, "GET", "/api/v1/auth/verify", other.owner_key).status == 200


def test_rotating_the_hmac_secret_invalidates_existing_keys(client: Any, org: Org) -> None:
    assert call(client, "GET", "/api/v1/auth/verify", org.owner_key).status == 200
    reconfigure(API_KEY_HMAC_SECRET="other")
    for key in (org.owner_key, org.readonly_key):
        status, document = call(client, "GET", "/api/v1/auth/verify", key)
        assert status == 401
        assert document["error"]["code"] == "UNAUTHORIZED"


def test_last_used_is_stamped_once_not_on_every_request(client: Any, org: Org) -> None:
    def readonly_last_used() -> Any:
        listing = call(client, "GET", "/api/v1/api-keys", org.owner_key).json
        [readonly] = [k for k in listing["data"]["items"] if k["name"] == "readonly"]
        return readonly["last_used_at"]

    assert readonly_last_used() is None
    with clock.frozen(NOW + timedelta(seconds=1)):
        assert call(client, "GET", "/api/v1/auth/verify", org.readonly_key).status == 200
    assert readonly_last_used() == "2026-11-22T12:00:01Z"
    for seconds in (5, 30, 120):
        with clock.frozen(NOW + timedelta(seconds=seconds)):
            assert call(client, "GET", "/api/v1/auth/verify", org.readonly_key).status == 200
    assert readonly_last_used() == "2026-11-22T12:00:01Z"


def test_scope_escalation_is_refused(client: Any, org: Org) -> None:
    _, admin_only = apikeys.create_api_key(
        organization_id=org.organization_id,
        name="admin",
        kind="service_account",
        scopes=["admin"],
        now=NOW,
        settings=get_settings(),
    )
    status, document = create_key(client, admin_only, scopes=["incidents:write"])
    assert status == 403
    assert document["error"]["code"] == "FORBIDDEN"
    assert document["error"]["details"] == {"required_scope": "incidents:write"}
    # Within its own scopes it may create keys.
    assert create_key(client, admin_only, scopes=["admin"])[0] == 201


def test_missing_scope_is_403_with_the_required_scope(client: Any, org: Org) -> None:
    status, document = create_key(client, org.readonly_key)
    assert status == 403
    assert document["error"]["code"] == "FORBIDDEN"
    assert document["error"]["details"]["required_scope"] == "admin"
    for method, path in (("GET", "/api/v1/api-keys"), ("DELETE", "/api/v1/api-keys/x")):
        status, document = call(client, method, path, org.readonly_key)
        assert status == 403
        assert document["error"]["details"]["required_scope"] == "admin"


def test_unknown_scope_is_a_validation_error(client: Any, org: Org) -> None:
    # Not an escalation: the scope does not exist, so it is a 400 whoever asks.
    for credential in (org.owner_key, session_token(org, "admin")):
        status, document = create_key(client, credential, scopes=["incidents:read", "incidents:delete"])
        assert status == 400
        assert document["error"]["code"] == "VALIDATION_ERROR"
        assert document["error"]["details"]["fields"][0]["field"] == "scopes"
        assert "incidents:delete" in document["error"]["details"]["fields"][0]["message"]


def test_personal_key_needs_a_user(client: Any, org: Org) -> None:
    status, document = create_key(client, org.owner_key, kind="personal")
    assert status == 400
    assert document["error"]["code"] == "VALIDATION_ERROR"
    assert document["error"]["details"]["fields"][0]["field"] == "user_id"


INVALID_AUTHORIZATIONS: dict[str, str | None] = {
    "missing": None,
    "empty": "",
    "basic": "Basic dXNlcjpwYXNzd29yZA==",
    "other-scheme": "Token tcs_" + "a" * 40,
    "no-credential": "Bearer",
    "malformed-short": "Bearer tcs_short",
    "malformed-chars": "Bearer tcs_" + "!" * 40,
    "unknown-key": "Bearer tcs_" + "a" * 40,
    "garbage": "Bearer garbage",
    "garbage-jwt": "Bearer a.b.c",
    "huge": "Bearer " + "x" * 5000,
}


def test_invalid_credentials_are_401(client: Any, org: Org) -> None:
    # One test, many cases: each test pays for a fresh moto account, so cheap cases share one.
    for case, authorization in INVALID_AUTHORIZATIONS.items():
        headers = {"Authorization": authorization} if authorization is not None else {}
        response = client.http.get("/api/v1/auth/verify", headers=headers)
        assert response.status_code == 401, case
        document = json.loads(response.body)
        assert document["success"] is False, case
        assert document["error"]["code"] == "UNAUTHORIZED", case
        assert document["error"]["message"], case
        assert "tcs_" + "a" * 40 not in response.body.decode(), case


# --- Session JWTs ---------------------------------------------------------------------------------


def test_viewer_session_can_verify_but_not_administer(client: Any, org: Org) -> None:
    token = session_token(org, "viewer")
    reply = call(client, "GET", "/api/v1/auth/verify", token)
    status, document, headers = reply.status, reply.json, reply.headers
    assert status == 200
    assert document["data"]["scopes"] == sorted(ROLE_SCOPES["viewer"])
    assert document["data"]["organization_name"] == "Acme"
    assert headers["X-RateLimit-Category"] == "session"

    status, document = create_key(client, token)
    assert status == 403
    assert document["error"]["code"] == "FORBIDDEN"
    assert document["error"]["details"]["required_scope"] == "admin"


def test_admin_session_can_create_keys(client: Any, org: Org) -> None:
    status, document = create_key(client, session_token(org, "admin"), scopes=["incidents:read"])
    assert status == 201
    assert call(client, "GET", "/api/v1/auth/verify", document["data"]["key"]).status == 200


def test_bad_session_claims_are_401(client: Any, org: Org) -> None:
    cases: dict[str, dict[str, Any]] = {
        "expired": {"exp": int(time.time()) - 60},
        "unknown-role": {"role": "superuser"},
        "no-role": {"role": None},
        "no-org": {"org": None},
        "no-sub": {"sub": None},
        "no-exp": {"exp": None},
    }
    for case, overrides in cases.items():
        status, document = call(client, "GET", "/api/v1/auth/verify", session_token(org, **overrides))
        assert status == 401, case
        assert document["error"]["code"] == "UNAUTHORIZED", case


def test_session_naming_an_unknown_organization_cannot_verify(client: Any, org: Org) -> None:
    status, document = call(client, "GET", "/api/v1/auth/verify", session_token("no-such-organization", "owner"))
    assert status == 401
    assert document["error"]["code"] == "UNAUTHORIZED"


def test_session_signed_with_another_secret_is_401(client: Any, org: Org) -> None:
    token = session_token(org, secret="not-the-configured-secret-at-all")
    assert call(client, "GET", "/api/v1/auth/verify", token).status == 401


def _jwks(private_key: rsa.RSAPrivateKey, kid: str) -> str:
    public = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(private_key.public_key()))
    public.update({"kid": kid, "alg": "RS256", "use": "sig"})
    return json.dumps({"keys": [public]})


def test_rs256_session_against_an_inline_jwks(client: Any, org: Org) -> None:
    issuer_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    reconfigure(JWT_JWKS_JSON=_jwks(issuer_key, "kid-1"))
    sub = directory_user(org.organization_id, "responder")
    claims = {"sub": sub, "org": org.organization_id, "role": "responder", "exp": int(time.time()) + 600}

    token = jwt.encode(claims, issuer_key, algorithm="RS256", headers={"kid": "kid-1"})
    status, document = call(client, "GET", "/api/v1/auth/verify", token)
    assert status == 200
    assert document["data"]["scopes"] == sorted(ROLE_SCOPES["responder"])

    impostor = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    forged = jwt.encode(claims, impostor, algorithm="RS256", headers={"kid": "kid-1"})
    assert call(client, "GET", "/api/v1/auth/verify", forged).status == 401
    unknown_kid = jwt.encode(claims, issuer_key, algorithm="RS256", headers={"kid": "kid-2"})
    assert call(client, "GET", "/api/v1/auth/verify", unknown_kid).status == 401
