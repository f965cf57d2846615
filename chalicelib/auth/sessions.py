"""Session JWTs: HS256 with a shared secret, or RS256 against a JWKS (Cognito-style issuers).

Claims: `sub` (user id), `org` (organization id; `custom:org` also read), `role`
(owner, admin, responder, viewer; `custom:role` also read), `exp` (required).

Cognito ID tokens of the console's user pool (COGNITO_USER_POOL_ID) are accepted too: RS256
against the pool's keys, `iss` the pool, `aud` the console's app client, `token_use` "id",
`custom:org` the organization. They carry no role: the directory's role is the session's.

This module checks the token alone. The token is not the authority on who the person is:
chalicelib.api.credentials then checks `sub` and `org` against the directory on every request
(the user must exist there and be active) and lowers the role to the directory's when that is
lower (chalicelib.auth.scopes.lower_role). An identity provider's own subject ids (Cognito's)
are not directory ids: such a token is matched by its email when the issuer marked it verified.
"""

from __future__ import annotations

import json
from typing import Any, cast

from chalicelib.auth.principal import Principal
from chalicelib.auth.scopes import ROLE_SCOPES
from chalicelib.errors import Unauthorized
from chalicelib.settings import Settings

_jwks_client: Any = None
_cognito_jwks_clients: dict[str, Any] = {}


def looks_like_jwt(credential: str) -> bool:
    return credential.count(".") == 2


def _signing_key(token: str, settings: Settings) -> tuple[Any, list[str]]:
    import jwt  # imported lazily: only session traffic pays for it

    try:
        header = jwt.get_unverified_header(token)
    except jwt.PyJWTError:
        raise Unauthorized("The session token is malformed.") from None
    algorithm = header.get("alg")
    if algorithm == "HS256" and settings.jwt_secret:
        return settings.jwt_secret, ["HS256"]
    if algorithm == "RS256" and (settings.jwt_jwks_json or settings.jwt_jwks_url):
        kid = header.get("kid")
        if settings.jwt_jwks_json:
            key_set = jwt.PyJWKSet.from_dict(json.loads(settings.jwt_jwks_json))
            for candidate in key_set.keys:
                if candidate.key_id == kid:
                    return candidate.key, ["RS256"]
            raise Unauthorized("The session token's signing key is unknown.")
        global _jwks_client
        if _jwks_client is None:
            _jwks_client = jwt.PyJWKClient(settings.jwt_jwks_url or "", cache_keys=True)
        try:
            return _jwks_client.get_signing_key_from_jwt(token).key, ["RS256"]
        except jwt.PyJWTError:
            raise Unauthorized("The session token's signing key is unknown.") from None
    raise Unauthorized("Session tokens with this algorithm are not accepted.")


def _unverified_issuer(token: str) -> str | None:
    import jwt

    try:
        issuer = jwt.decode(token, options={"verify_signature": False}).get("iss")
    except jwt.PyJWTError:
        raise Unauthorized("The session token is malformed.") from None
    return issuer if isinstance(issuer, str) else None


def _cognito_key(token: str, settings: Settings) -> Any:
    import jwt

    try:
        kid = jwt.get_unverified_header(token).get("kid")
        if settings.cognito_jwks_json:
            for candidate in jwt.PyJWKSet.from_dict(json.loads(settings.cognito_jwks_json)).keys:
                if candidate.key_id == kid:
                    return candidate.key
            raise Unauthorized("The session token's signing key is unknown.")
        url = settings.cognito_jwks_url() or ""
        client = _cognito_jwks_clients.get(url)
        if client is None:
            client = _cognito_jwks_clients[url] = jwt.PyJWKClient(url, cache_keys=True, timeout=5)
        return client.get_signing_key_from_jwt(token).key
    except jwt.PyJWTError:
        raise Unauthorized("The session token's signing key is unknown.") from None


def _cognito_session(token: str, settings: Settings) -> Principal:
    """An ID token of the console's user pool; the directory then decides who and what role."""
    import jwt

    try:
        claims = jwt.decode(
            token,
            key=_cognito_key(token, settings),
            algorithms=["RS256"],
            audience=settings.cognito_client_id,
            issuer=settings.cognito_issuer(),
            options={"require": ["exp", "sub", "aud", "iss"]},
        )
    except jwt.ExpiredSignatureError:
        raise Unauthorized("The session token has expired.") from None
    except jwt.PyJWTError:
        raise Unauthorized("The session token is invalid.") from None
    if claims.get("token_use") != "id":
        raise Unauthorized("Send the Cognito ID token, not the access token.")
    organization_id = claims.get("custom:org")
    if not isinstance(organization_id, str) or not organization_id:
        raise Unauthorized("The session token names no organization.")
    email = claims.get("email")
    return Principal(
        organization_id=organization_id,
        credential_kind="session",
        scopes=frozenset(),  # the directory's role sets them (chalicelib.api.credentials)
        user_id=str(claims["sub"]),
        role=None,
        display_name=str(email or claims["sub"]),
        email=str(email).lower() if email else None,
        name=str(claims["name"]) if claims.get("name") else None,
        extra={
            "role_from": "directory",
            **({"email_verified": "true"} if claims.get("email_verified") in (True, "true") else {}),
        },
    )


def authenticate_session(*, token: str, settings: Settings) -> Principal:
    import jwt

    cognito_issuer = settings.cognito_issuer()
    if cognito_issuer and _unverified_issuer(token) == cognito_issuer:
        return _cognito_session(token, settings)
    key, algorithms = _signing_key(token, settings)
    options: dict[str, Any] = {"require": ["exp", "sub"]}
    try:
        claims = jwt.decode(
            token,
            key=key,
            algorithms=algorithms,
            audience=settings.jwt_audience,
            issuer=settings.jwt_issuer,
            options=cast(Any, options if settings.jwt_audience else {**options, "verify_aud": False}),
        )
    except jwt.ExpiredSignatureError:
        raise Unauthorized("The session token has expired.") from None
    except jwt.PyJWTError:
        raise Unauthorized("The session token is invalid.") from None
    organization_id = claims.get("org") or claims.get("custom:org")
    role = claims.get("role") or claims.get("custom:role")
    if not isinstance(organization_id, str) or not organization_id:
        raise Unauthorized("The session token names no organization.")
    if not isinstance(role, str) or role not in ROLE_SCOPES:  # a list or an object is no role either
        raise Unauthorized("The session token carries no known role.")
    return Principal(
        organization_id=organization_id,
        credential_kind="session",
        scopes=ROLE_SCOPES[role],
        user_id=str(claims["sub"]),
        role=role,
        display_name=str(claims.get("email") or claims["sub"]),
        email=str(claims["email"]).lower() if claims.get("email") else None,
        name=str(claims["name"]) if claims.get("name") else None,
        # Cognito-style ID tokens say whether the issuer verified the email; only then may the
        # directory find the person by it (chalicelib.api.credentials).
        extra={"email_verified": "true"} if claims.get("email_verified") in (True, "true") else {},
    )
