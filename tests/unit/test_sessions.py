"""Session JWTs resolved to a Principal: HS256 with a shared secret, RS256 against a JWKS. No AWS."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from chalicelib.api.credentials import authenticate, bearer_credential
from chalicelib.auth import sessions
from chalicelib.auth.scopes import ROLE_SCOPES
from chalicelib.errors import Unauthorized
from chalicelib.settings import Settings, get_settings

SECRET = "unit-jwt-secret-of-at-least-32-bytes"


def hs_settings(**overrides: Any) -> Settings:
    return Settings(jwt_secret=SECRET, jwt_jwks_json=None, jwt_jwks_url=None, **overrides)


def claims(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"sub": "user-1", "org": "org-1", "role": "viewer", "exp": int(time.time()) + 600}
    base.update(overrides)
    return {k: v for k, v in base.items() if v is not None}


def hs256(payload: dict[str, Any], secret: str = SECRET) -> str:
    return jwt.encode(payload, secret, algorithm="HS256")


def rsa_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def jwks_json(private_key: rsa.RSAPrivateKey, kid: str) -> str:
    public = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(private_key.public_key()))
    public.update({"kid": kid, "alg": "RS256", "use": "sig"})
    return json.dumps({"keys": [public]})


@pytest.fixture(scope="module")
def signing_key() -> rsa.RSAPrivateKey:
    return rsa_key()


@pytest.mark.parametrize("role", sorted(ROLE_SCOPES))
def test_hs256_token_maps_role_to_scopes(role: str) -> None:
    principal = sessions.authenticate_session(token=hs256(claims(role=role)), settings=hs_settings())
    assert principal.credential_kind == "session"
    assert principal.organization_id == "org-1"
    assert principal.user_id == "user-1"
    assert principal.role == role
    assert principal.scopes == ROLE_SCOPES[role]
    assert principal.rate_limit_category == "session"
    assert principal.rate_limit_identity == "user-1"


def test_viewer_reads_but_cannot_administer() -> None:
    scopes = ROLE_SCOPES["viewer"]
    assert "incidents:read" in scopes
    assert "incidents:write" not in scopes
    assert "admin" not in scopes


def test_cognito_style_custom_claims() -> None:
    token = hs256(claims(org=None, role=None, **{"custom:org": "org-9", "custom:role": "responder"}))
    principal = sessions.authenticate_session(token=token, settings=hs_settings())
    assert principal.organization_id == "org-9"
    assert principal.role == "responder"


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"exp": -10}, "expired"),  # seconds from now, when the test runs (not when it is collected)
        ({"exp": None}, "invalid"),
        ({"sub": None}, "invalid"),
        ({"org": None}, "organization"),
        ({"org": ""}, "organization"),
        ({"role": None}, "role"),
        ({"role": "superuser"}, "role"),
    ],
)
def test_rejected_claims(changes: dict[str, Any], message: str) -> None:
    if isinstance(changes.get("exp"), int):
        changes = {**changes, "exp": int(time.time()) + changes["exp"]}
    with pytest.raises(Unauthorized) as caught:
        sessions.authenticate_session(token=hs256(claims(**changes)), settings=hs_settings())
    assert message in caught.value.message


def test_wrong_secret() -> None:
    with pytest.raises(Unauthorized):
        sessions.authenticate_session(
            token=hs256(claims(), "another-secret-entirely-32-bytes-long"), settings=hs_settings()
        )


def test_hs256_refused_when_no_secret_is_configured() -> None:
    with pytest.raises(Unauthorized):
        sessions.authenticate_session(token=hs256(claims()), settings=Settings(jwt_secret=None, jwt_jwks_json=None))


def test_unsigned_token_refused() -> None:
    token = jwt.encode(claims(), "", algorithm="none")
    with pytest.raises(Unauthorized):
        sessions.authenticate_session(token=token, settings=hs_settings())


def test_algorithm_confusion_refused(signing_key: rsa.RSAPrivateKey) -> None:
    """An RS256 header does not make the HS256 secret acceptable, nor the reverse."""
    token = jwt.encode(claims(), signing_key, algorithm="RS256", headers={"kid": "k1"})
    with pytest.raises(Unauthorized):
        sessions.authenticate_session(token=token, settings=hs_settings())


def test_issuer_and_audience_are_checked_when_configured() -> None:
    settings = hs_settings(jwt_issuer="https://issuer.example", jwt_audience="tocsin")
    good = hs256(claims(iss="https://issuer.example", aud="tocsin"))
    assert sessions.authenticate_session(token=good, settings=settings).user_id == "user-1"
    for bad in (claims(iss="https://evil.example", aud="tocsin"), claims(iss="https://issuer.example", aud="x")):
        with pytest.raises(Unauthorized):
            sessions.authenticate_session(token=hs256(bad), settings=settings)


@pytest.mark.parametrize("token", ["a.b.c", "...", "eyJhbGciOiJIUzI1NiJ9.e30.", "x.y.z"])
def test_malformed_tokens(token: str) -> None:
    with pytest.raises(Unauthorized):
        sessions.authenticate_session(token=token, settings=hs_settings())


def test_rs256_against_inline_jwks(signing_key: rsa.RSAPrivateKey) -> None:
    settings = Settings(jwt_secret=None, jwt_jwks_json=jwks_json(signing_key, "k1"))
    token = jwt.encode(claims(role="admin"), signing_key, algorithm="RS256", headers={"kid": "k1"})
    principal = sessions.authenticate_session(token=token, settings=settings)
    assert principal.role == "admin"
    assert "admin" in principal.scopes


def test_rs256_signed_by_another_key_is_refused(signing_key: rsa.RSAPrivateKey) -> None:
    settings = Settings(jwt_secret=None, jwt_jwks_json=jwks_json(signing_key, "k1"))
    forged = jwt.encode(claims(), rsa_key(), algorithm="RS256", headers={"kid": "k1"})
    with pytest.raises(Unauthorized):
        sessions.authenticate_session(token=forged, settings=settings)


def test_rs256_with_unknown_kid_is_refused(signing_key: rsa.RSAPrivateKey) -> None:
    settings = Settings(jwt_secret=None, jwt_jwks_json=jwks_json(signing_key, "k1"))
    token = jwt.encode(claims(), signing_key, algorithm="RS256", headers={"kid": "k2"})
    with pytest.raises(Unauthorized) as caught:
        sessions.authenticate_session(token=token, settings=settings)
    assert "signing key" in caught.value.message


def test_rs256_via_jwks_url_uses_the_client(signing_key: rsa.RSAPrivateKey, monkeypatch: pytest.MonkeyPatch) -> None:
    public_jwk = jwt.PyJWK(json.loads(jwks_json(signing_key, "k1"))["keys"][0])

    class FakeJwksClient:
        """Stands in for PyJWKClient so no network is needed."""

        def __init__(self) -> None:
            self.calls = 0

        def get_signing_key_from_jwt(self, token: str) -> jwt.PyJWK:
            self.calls += 1
            if jwt.get_unverified_header(token).get("kid") != "k1":
                raise jwt.PyJWKClientError("unknown kid")
            return public_jwk

    fake = FakeJwksClient()
    monkeypatch.setattr(sessions, "_jwks_client", fake)
    settings = Settings(jwt_secret=None, jwt_jwks_json=None, jwt_jwks_url="https://issuer.example/jwks.json")
    token = jwt.encode(claims(), signing_key, algorithm="RS256", headers={"kid": "k1"})
    assert sessions.authenticate_session(token=token, settings=settings).user_id == "user-1"
    unknown = jwt.encode(claims(), signing_key, algorithm="RS256", headers={"kid": "k9"})
    with pytest.raises(Unauthorized):
        sessions.authenticate_session(token=unknown, settings=settings)
    assert fake.calls == 2


@pytest.mark.parametrize(
    "authorization",
    [None, "", "Bearer", "Bearer   ", "Basic dXNlcjpwYXNz", "Token tcs_abc", "bearertcs_abc"],
)
def test_bearer_credential_refuses_missing_or_other_schemes(authorization: str | None) -> None:
    with pytest.raises(Unauthorized):
        bearer_credential(authorization)


def test_bearer_scheme_is_case_insensitive() -> None:
    assert bearer_credential("bearer abc") == "abc"
    assert bearer_credential("  BEARER   abc  ") == "abc"


@pytest.mark.filterwarnings("ignore::jwt.warnings.InsecureKeyLengthWarning")  # conftest's short JWT_SECRET
def test_authenticate_routes_jwt_shaped_credentials_to_sessions(monkeypatch: pytest.MonkeyPatch) -> None:
    from chalicelib.api import credentials
    from chalicelib.directory.users import User
    from chalicelib.settings import get_settings, reset_settings

    # The directory check (one GetItem) is tested against moto in tests/api/test_session_directory_api.py.
    person = User("user-1", "org-1", None, "a@example.com", None, "viewer", True, datetime.now(UTC))
    monkeypatch.setattr(credentials, "get_user", lambda organization_id, user_id: person)
    reset_settings()
    token = hs256(claims(), get_settings().jwt_secret or "")
    principal = authenticate(authorization=f"Bearer {token}", now=datetime.now(UTC), settings=get_settings())
    assert principal.credential_kind == "session"


@pytest.mark.parametrize("credential", ["garbage", "tcs_short", "a.b"])
def test_authenticate_refuses_garbage_without_touching_aws(credential: str) -> None:
    with pytest.raises(Unauthorized):
        authenticate(authorization=f"Bearer {credential}", now=datetime.now(UTC), settings=get_settings())
