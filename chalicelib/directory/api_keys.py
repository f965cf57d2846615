"""Issuing an API key for a caller: the checks the API and the console share.

A key never carries more than its creator holds, and a personal key belongs to an active user of
the organization (the caller, unless another user is named). The key itself is made by
`apikey.service`; this module sits in the directory because the owner check reads it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from chalicelib.apikey import service as apikeys
from chalicelib.apikey.service import ApiKey
from chalicelib.auth.principal import Principal
from chalicelib.auth.scopes import ALL_SCOPES
from chalicelib.directory.users import get_user
from chalicelib.errors import Forbidden, NotFound, ValidationFailed
from chalicelib.settings import Settings


def _active_user_contact(organization_id: str, user_id: str) -> tuple[str | None, str | None]:
    """A personal key belongs to an active user of the organization."""
    try:
        user = get_user(organization_id=organization_id, user_id=user_id)
    except NotFound:
        raise ValidationFailed.for_field("user_id", "no such user in this organization") from None
    if not user.is_active:
        raise ValidationFailed.for_field("user_id", "the user is deactivated")
    return user.email, user.name


def issue_api_key(
    *,
    principal: Principal,
    name: str,
    kind: str,
    scopes: Sequence[str],
    now: datetime,
    user_id: str | None = None,
    settings: Settings,
) -> tuple[ApiKey, str]:
    """Create a key for `principal`'s organization; returns it and the full key (shown once)."""
    # Unknown scopes are left to validation (a 400); only real scopes beyond the caller's are refused.
    beyond = sorted(scope for scope in set(scopes) - principal.scopes if scope in ALL_SCOPES)
    if beyond:
        raise Forbidden(
            f"You cannot grant scopes you do not hold: {', '.join(beyond)}.",
            details={"required_scope": beyond[0]},
        )
    owner_id = user_id or principal.user_id
    owner_email = owner_name = None
    if kind == "personal" and owner_id:
        owner_email, owner_name = _active_user_contact(principal.organization_id, owner_id)
    return apikeys.create_api_key(
        organization_id=principal.organization_id,
        name=name,
        kind=kind,
        scopes=list(scopes),
        user_id=owner_id,
        user_email=owner_email,
        user_name=owner_name,
        created_by=principal.user_id or principal.key_id,
        now=now,
        settings=settings,
    )
