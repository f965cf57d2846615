"""Resolve an Authorization header to a Principal."""

from __future__ import annotations

from datetime import datetime

from chalicelib.apikey.keys import KEY_PREFIX
from chalicelib.apikey.service import authenticate_key
from chalicelib.auth.principal import Principal
from chalicelib.auth.sessions import authenticate_session, looks_like_jwt
from chalicelib.errors import Unauthorized


def bearer_credential(authorization: str | None) -> str:
    if not authorization:
        raise Unauthorized("Missing Authorization header; send 'Authorization: Bearer <API key>'.")
    scheme, _, credential = authorization.strip().partition(" ")
    if scheme.lower() != "bearer" or not credential.strip():
        raise Unauthorized("The Authorization header must use the Bearer scheme.")
    return credential.strip()


def authenticate(*, authorization: str | None, now: datetime) -> Principal:
    credential = bearer_credential(authorization)
    if credential.startswith(KEY_PREFIX):
        return authenticate_key(key=credential, now=now)
    if looks_like_jwt(credential):
        return authenticate_session(token=credential)
    raise Unauthorized("The bearer credential is neither an API key nor a session token.")
