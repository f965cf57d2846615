"""Deactivating a user revokes their personal API keys; service-account keys are untouched."""

from __future__ import annotations

import pytest

from chalicelib.apikey import service as apikeys
from chalicelib.directory import users
from chalicelib.errors import Unauthorized
from chalicelib.settings import get_settings
from tests.conftest import NOW, Org


def test_deactivation_revokes_personal_keys_only(org: Org) -> None:
    ada = users.create_user(organization_id=org.organization_id, name="Ada", email="ada@acme.test", now=NOW)
    _, personal = apikeys.create_api_key(
        organization_id=org.organization_id,
        name="ada laptop",
        kind="personal",
        scopes=["incidents:read"],
        user_id=ada.user_id,
        user_email=ada.email,
        user_name=ada.name,
        now=NOW,
        settings=get_settings(),
    )
    principal = apikeys.authenticate_key(key=personal, now=NOW, settings=get_settings())
    assert (principal.email, principal.name) == ("ada@acme.test", "Ada")
    users.update_user(organization_id=org.organization_id, user_id=ada.user_id, is_active=False, now=NOW)
    with pytest.raises(Unauthorized):
        apikeys.authenticate_key(key=personal, now=NOW, settings=get_settings())
    assert (
        apikeys.authenticate_key(key=org.owner_key, now=NOW, settings=get_settings()).organization_id
        == org.organization_id
    )
