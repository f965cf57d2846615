"""Resolve an Authorization header to a Principal.

A session JWT proves who signed it, not that the person is still one of ours: every session is
checked against the directory (one GetItem). The user named by `sub` must exist in the
organization named by `org` and be active; the session's role is the lower of the token's and
the directory's, so a demotion or a deactivation takes effect on the next request, while a
promotion waits for a new token. Name and email come from the directory, not the token.

An identity provider such as Cognito names people by its own `sub`, not a directory id: when
`sub` is no user of the organization, a token whose `email` the issuer marked verified
(`email_verified: true`) is matched to the directory user with that email (one Query on the
email index); the session then acts as that user (its id, not the provider's `sub`). Such
tokens (the console's Cognito pool) carry no role, so the directory's role is the session's.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime

from chalicelib.apikey.keys import KEY_PREFIX
from chalicelib.apikey.service import authenticate_key
from chalicelib.auth.principal import Principal
from chalicelib.auth.scopes import ROLE_SCOPES, ROLES, lower_role
from chalicelib.auth.sessions import authenticate_session, looks_like_jwt
from chalicelib.directory.users import User, find_user_by_email, get_user
from chalicelib.errors import NotFound, Unauthorized
from chalicelib.settings import Settings


def bearer_credential(authorization: str | None) -> str:
    if not authorization:
        raise Unauthorized("Missing Authorization header; send 'Authorization: Bearer <API key>'.")
    scheme, _, credential = authorization.strip().partition(" ")
    if scheme.lower() != "bearer" or not credential.strip():
        raise Unauthorized("The Authorization header must use the Bearer scheme.")
    return credential.strip()


def authenticate(*, authorization: str | None, now: datetime, settings: Settings) -> Principal:
    credential = bearer_credential(authorization)
    if credential.startswith(KEY_PREFIX):
        return authenticate_key(key=credential, now=now, settings=settings)
    if looks_like_jwt(credential):
        return _checked_against_directory(authenticate_session(token=credential, settings=settings))
    raise Unauthorized("The bearer credential is neither an API key nor a session token.")


def _checked_against_directory(session: Principal) -> Principal:
    """The session as the directory allows it; 401 for a user unknown in its organization or inactive."""
    person = _directory_user(session)
    if person is None:
        raise Unauthorized("The session's user does not exist in its organization.")
    if not person.is_active:
        raise Unauthorized("The session's user is deactivated.")
    directory_role = person.role if person.role in ROLE_SCOPES else ROLES[-1]
    # A Cognito ID token carries no role: the directory's is the session's.
    token_role = directory_role if session.extra.get("role_from") == "directory" else (session.role or ROLES[-1])
    role = lower_role(token_role, directory_role)
    return dataclasses.replace(
        session,
        user_id=person.user_id,
        role=role,
        scopes=ROLE_SCOPES[role],
        email=person.email or session.email,
        name=person.name or session.name,
        display_name=person.email or session.display_name,
    )


def _directory_user(session: Principal) -> User | None:
    try:
        return get_user(organization_id=session.organization_id, user_id=session.user_id or "")
    except NotFound:
        pass
    if session.email and session.extra.get("email_verified") == "true":
        return find_user_by_email(organization_id=session.organization_id, email=session.email)
    return None
